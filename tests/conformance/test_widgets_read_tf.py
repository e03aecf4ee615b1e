"""The widgets draw real TensorFlow's traces, and the same step looks the
same whichever runtime ran it.

``widget_traces/tf_two_task_step.pb`` is the RunMetadata (FULL_TRACE, with
partition graphs) of one training step of ``widget_traces/two_task_step.py``
recorded with TensorFlow 2.21: a ps and a worker in one process. It is read
with TF's own protos from the ``tensorboard`` package (no TensorFlow
needed). With the oracle installed, the step is recorded again live and
must draw like the fixture; and minitf's run of the same program must show
the same tasks, variables and crossing tensors.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")
config_pb2 = pytest.importorskip("tensorboard.compat.proto.config_pb2")

import conformance_harness as harness  # noqa: E402
from minitf.widgets import ClusterView, PlacementView, TransferView, VariableStateView  # noqa: E402
from minitf.widgets.step_trace import read_step  # noqa: E402

HERE = Path(__file__).resolve().parent
TRACES = HERE / "widget_traces"
FIXTURE = TRACES / "tf_two_task_step.pb"
PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"


def _load(path):
    md = config_pb2.RunMetadata()
    md.ParseFromString(Path(path).read_bytes())
    return md


@pytest.fixture(scope="module")
def tf_md():
    return _load(FIXTURE)


@pytest.fixture(scope="module")
def live_tf_md(tmp_path_factory):
    python = harness.oracle_python()
    if python is None or not Path(python).exists():
        pytest.skip("real TensorFlow not available: set MINITF_TF_PYTHON "
                    "(see scripts/setup_tf_oracle.sh)")
    out = tmp_path_factory.mktemp("tf") / "step.pb"
    env = dict(os.environ, MINITF_ENGINE="tf", TF_CPP_MIN_LOG_LEVEL="3")
    # On a loaded machine TF sometimes hands back the step's stats before the
    # ps has recorded its RecvTensor entries (the gradients it pulled), so a
    # recording with fewer than the six receptions is taken again.
    for _ in range(3):
        run = subprocess.run([python, str(TRACES / "two_task_step.py"), str(out)], env=env,
                             capture_output=True, text=True, timeout=harness.TIMEOUT_S)
        assert run.returncode == 0, run.stderr[-3000:]
        md = _load(out)
        if _receptions(md) == 6:
            break
    return md


def _receptions(md):
    return sum(1 for d in md.step_stats.dev_stats for ns in d.node_stats
               if ns.node_name == "RecvTensor")


@pytest.fixture(scope="module")
def minitf_md():
    sys.path.insert(0, str(TRACES))
    try:
        import two_task_step
    finally:
        sys.path.remove(str(TRACES))
    md, _ = two_task_step.run_step()
    return md


def summary(md):
    """What any runtime's picture of this step must show."""
    trace = read_step(md)
    transfers = [t for t in trace.transfers if not t.fetch]
    view = VariableStateView(md)
    variables = {name: tuple(s["shape"]) for (task, name), s in view.variables.items()
                 if task == PS}
    view.close()
    return {
        "tasks": sorted({d.rsplit("/device:", 1)[0] for d in trace.devices()}),
        "variables": variables,
        "weights to the worker": sorted(t.tensor for t in transfers if not t.control
                                        and t.src_device.startswith(PS)
                                        and t.tensor.startswith(("w/", "b/"))),
        "gradient bytes to the ps": sorted(t.bytes for t in transfers if not t.control
                                           and t.dst_device.startswith(PS)
                                           and t.tensor.startswith("gradients/")),
        "control signals from the ps": sum(1 for t in transfers if t.control
                                           and t.src_device.startswith(PS)) > 0,
    }


def _check_every_view(md):
    """Each view builds from ``md``, draws what the trace says, and every
    classed mark of its SVG has a tooltip."""
    import xml.etree.ElementTree as ET
    trace = read_step(md)
    views = [TransferView(md), PlacementView(md), VariableStateView(md), ClusterView(md)]
    for view in views:
        root = ET.fromstring(view.svg())
        classed = [e for e in root.iter() if e.get("class") and e.tag.endswith(
            ("rect", "circle", "path", "polygon"))]
        assert classed and all(e.find("{http://www.w3.org/2000/svg}title") is not None
                               for e in classed if e.get("class") not in ("selected",))
        assert view._repr_mimebundle_()["image/png"]
        view.close()
    return trace


def test_every_view_draws_the_recorded_tf_trace(tf_md):
    trace = _check_every_view(tf_md)
    assert trace.source == "tensorflow"
    # TF records each tensor a worker received as a RecvTensor entry.
    received = [ns for d in tf_md.step_stats.dev_stats for ns in d.node_stats
                if ns.node_name == "RecvTensor"]
    transfers = TransferView(tf_md)
    assert len(transfers.transfers) == len(received) == _receptions(tf_md) == 6
    runs = {(o.device, o.name): o for o in transfers.ops}
    for t in transfers.transfers:  # each arrow starts when its producer finished
        producer = runs[(t.src_device, t.sender)]
        assert t.ready == min(producer.end, t.arrived) and t.ready_from.endswith("finished")
    (control,) = [t for t in transfers.transfers if t.control]
    assert control.tensor == "^GradientDescent" and control not in transfers.shown_transfers()
    assert sum(t.bytes for t in transfers.transfers) == sum(
        ns.output[0].tensor_description.allocation_description.requested_bytes
        for ns in received)
    transfers.close()
    placement = PlacementView(tf_md)
    nodes = [n for g in tf_md.partition_graphs for n in g.node
             if n.op not in ("_Send", "_Recv") and n.name not in ("_SOURCE", "_SINK")]
    assert sum(placement.nodes_per_device().values()) == len(nodes)
    assert len(placement.crossing_edges()) == 6
    assert {t for t, _, _ in placement.crossing_edges()} >= {"w/read:0", "b/read:0"}
    placement.close()
    variables = VariableStateView(tf_md)
    w = variables.variables[(PS, "w")]
    assert w["shape"] == [4, 3] and w["bytes"] == 48
    assert [t for _, t, _ in w["writes"]] == ["ApplyGradientDescent"]
    variables.close()
    cluster = ClusterView(tf_md)
    assert [t["task"] for t in cluster.tasks] == [PS, WORKER]
    assert "holds [b, w]" in repr(cluster)
    cluster.close()


def test_a_live_tf_trace_draws_like_the_fixture(live_tf_md, tf_md):
    _check_every_view(live_tf_md)
    assert summary(live_tf_md) == summary(tf_md)


def test_minitf_and_tensorflow_draw_the_same_step(minitf_md, tf_md):
    _check_every_view(minitf_md)
    ours, theirs = summary(minitf_md), summary(tf_md)
    assert ours == theirs, (ours, theirs)
    assert theirs["variables"] == {"w": (4, 3), "b": ()}
    assert theirs["weights to the worker"] == ["b/read:0", "w/read:0"]
    assert theirs["gradient bytes to the ps"] == [4, 48]
