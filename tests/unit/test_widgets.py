"""minitf.widgets, built from real traces of a two-task run.

Each test checks what a view *draws* (its data model, tables, repr and PNG)
against the trace or the servers it was built from.
"""

import base64
import collections
import io
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import matplotlib.image  # noqa: E402

import minitf.compat.v1 as tf  # noqa: E402
from minitf.distributed.inspect import variable_values  # noqa: E402
from minitf.runtime.config import RunMetadata, Transfer  # noqa: E402
from minitf.widgets import (ClusterView, PlacementView, TransferView,  # noqa: E402
                            VariableStateView)
from two_task_run import start_two_task_step, stop_two_task_step  # noqa: E402

TASK0 = "/job:local/replica:0/task:0"
CPU0, CPU1 = TASK0 + "/device:CPU:0", "/job:local/replica:0/task:1/device:CPU:0"


@pytest.fixture(scope="module")
def step():
    s = start_two_task_step()
    yield s
    stop_two_task_step(s)


def assert_png_not_blank(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert pixels[..., :3].std() > 0.05  # not one flat colour


def assert_bundle(view):
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view)
    assert_png_not_blank(base64.b64decode(bundle["image/png"]))
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == view.model_id


# -- PlacementView --------------------------------------------------------------------------------
def test_placement_view_draws_every_op_in_its_devices_colour(step):
    view = PlacementView(step.graph, run_metadata=step.md)
    expected = collections.Counter(step.md.placement.values())
    assert view.nodes_per_device() == dict(expected)
    assert set(view.nodes()) == set(step.md.placement)
    assert len(view.colors) == 2 and len(set(view.colors.values())) == 2
    assert "%d ops on 2 devices: %s %d, %s %d" % (
        len(step.md.placement), CPU0, expected[CPU0], CPU1, expected[CPU1]) in repr(view)
    assert_png_not_blank(view.image.value)
    assert_bundle(view)
    view.close()


def test_placement_view_crossing_edges_are_the_send_recv_pairs(step):
    sends = [n for part in step.md.partition_graphs for n in part["nodes"]
             if n["op"] == "_Send"]
    assert sends, "the step should have Send/Recv pairs"
    for view in (PlacementView(step.graph, run_metadata=step.md), PlacementView(step.md)):
        crossing = view.crossing_edges()
        assert sorted(t for t, _, _ in crossing) == sorted(
            n["attrs"]["tensor_name"] for n in sends)
        assert all((a, b) == (CPU0, CPU1) for _, a, b in crossing)
        assert "%d Send/Recv pairs" % len(sends) in repr(view)
        view.close()


def test_placement_view_from_run_metadata_alone_matches_the_graph(step):
    from_graph = PlacementView(step.graph, run_metadata=step.md)
    from_md = PlacementView(step.md)
    assert from_md.nodes_per_device() == from_graph.nodes_per_device()
    # The partition graphs' edges, with each Send/Recv pair followed back.
    assert sorted(from_md.model.ops["layer/y"].inputs) == ["w/read:0", "x:0"]
    for v in (from_graph, from_md):
        v.close()


def test_placement_view_details_of_one_op(step):
    view = PlacementView(step.graph, run_metadata=step.md)
    view.op_selector.value = "layer/y"
    details = view.op_details.value
    for text in ("MatMul", "/job:local/task:1", CPU1, "x:0", "w/read:0", "float32[1, 3]"):
        assert text in details
    view.op_selector.value = "x"
    assert "local/task:1/CPU:0" in view.op_details.value  # "sent to" task 1
    view.close()


def test_placement_view_marks_soft_placed_ops():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/device:CPU:7"):  # there is no CPU:7: soft placement moves it
            a = tf.constant(2.0, name="a")
        b = tf.add(a, 1.0, name="b")
    with tf.Session(graph=g, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        md = tf.RunMetadata()
        sess.run(b, run_metadata=md)
        assert "a" in md.soft_placed
        view = PlacementView(g, run_metadata=md)
        assert view.model.soft_placed() == sorted(md.soft_placed)
        assert "%d moved by soft placement" % len(md.soft_placed) in repr(view)
        # From the session alone, the placer's own record says the same.
        assert PlacementView(g, session=sess).model.soft_placed() == sorted(md.soft_placed)
    view.close()


def test_placement_view_collapses_a_300_op_graph_by_name_scope():
    g = tf.Graph()
    with g.as_default():
        h = tf.constant(np.ones((2, 2), np.float32), name="input")
        for layer in range(12):
            with tf.device("/device:CPU:%d" % (layer % 2)), tf.name_scope("layer%d" % layer):
                for _ in range(6):
                    h = tf.tanh(h * 0.5 + 0.1)
                h = tf.identity(h, name="out")
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(graph=g, config=config) as sess:
        md = tf.RunMetadata()
        sess.run(h, run_metadata=md)
    assert len(md.placement) >= 250
    view = PlacementView(g, run_metadata=md)
    drawn = {id(n) for n in view.nodes().values()}
    assert view.depth == 1 and len(drawn) <= 60
    assert view.nodes_per_device() == dict(collections.Counter(md.placement.values()))
    assert_png_not_blank(view.image.value)
    view.group_selector.value = 0  # every op: still draws
    assert len({id(n) for n in view.nodes().values()}) == len(md.placement)
    view.close()


def test_placement_view_of_a_graph_that_did_not_run_shows_requests():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.constant(1.0, name="v")
        tf.identity(v, name="w")
    view = PlacementView(g)
    assert not view.model.placed
    assert view.nodes_per_device() == {"/job:ps/task:0": 1, "(unplaced)": 1}
    view.close()


# -- TransferView ---------------------------------------------------------------------------------
def test_transfer_view_rows_and_bytes_equal_the_trace(step):
    transfers = step.md.step_stats.transfers
    view = TransferView(step.md)
    assert len(view.rows) == len(transfers) > 0
    assert sorted((r.tensor, r.bytes) for r in view.rows) == sorted(
        (t.tensor, t.bytes) for t in transfers)
    assert view.table.value.count("<tr>") == len(transfers) + 1  # plus the header
    total = sum(t.bytes for t in transfers)
    assert "%d transfers, %d bytes" % (len(transfers), total) in repr(view)
    # Two links: inputs task 0 -> task 1, and the fetched result back to the
    # master on task 0.
    assert view.totals.value.count("<tr>") == 3
    assert all(r.kind == "network" for r in view.rows)
    assert {r.link for r in view.rows if not r.tensor.endswith("(fetch)")} == {(CPU0, CPU1)}
    assert {r.link for r in view.rows if r.tensor.endswith("(fetch)")} == {(CPU1, CPU0)}
    n_ops = sum(len(d.node_stats) for d in step.md.step_stats.dev_stats)
    assert len(view.spans) == n_ops
    assert_png_not_blank(view.image.value)
    assert_bundle(view)
    view.close()


def test_transfer_view_of_several_steps(step):
    view = TransferView([step.md, step.md2])
    n = len(step.md.step_stats.transfers) + len(step.md2.step_stats.transfers)
    assert len(view.shown_rows()) == n and repr(view).startswith("TransferView(2 steps")
    view.step_selector.value = 2
    assert sorted(r.tensor for r in view.shown_rows()) == sorted(
        t.tensor for t in step.md2.step_stats.transfers)
    assert_png_not_blank(view.image.value)
    view.close()


def test_transfer_view_shows_host_to_gpu_copies_like_transfers(step):
    md = RunMetadata()
    md.CopyFrom(step.md)
    gpu = TASK0 + "/device:GPU:0"
    start = step.md.step_stats.transfers[0].start_micros
    md.step_stats.transfers = list(step.md.step_stats.transfers) + [
        Transfer(tensor="x:0", src_device=CPU0, dst_device=gpu, bytes=16,
                 start_micros=start, end_micros=start + 40, wire_bytes=16)]
    view = TransferView(md)
    copies = [r for r in view.rows if r.kind == "device copy"]
    assert len(copies) == 1 and copies[0].mb_per_s == pytest.approx(0.4)
    assert gpu in view.colors and "device copy" in view.table.value
    assert_png_not_blank(view.image.value)
    view.close()


# -- VariableStateView ----------------------------------------------------------------------------
def test_variable_view_shows_the_servers_values(step):
    view = VariableStateView(step.cluster, refresh=0)
    assert view.thread is None
    truth = variable_values(step.cluster)
    shown = view.values()
    assert set(shown) == set(truth) == {(TASK0, "w"), (TASK0, "b")}
    for key in truth:
        np.testing.assert_array_equal(shown[key], truth[key])
    b = float(truth[(TASK0, "b")])
    assert "%s b float32[] = %.4g" % (TASK0, b) in repr(view)
    assert "%s w float32[4, 3] mean=1" % TASK0 in repr(view)
    assert_png_not_blank(view.image.value)
    assert_bundle(view)
    view.close()


def test_variable_view_polls_in_the_background_and_stops_on_close(step):
    view = VariableStateView(step.cluster, variables=["b"], refresh=0.05, timeout=0.5)
    assert view.thread.daemon and view.thread.is_alive()
    assert set(view.values()) == {(TASK0, "b")}
    before = float(view.values()[(TASK0, "b")])
    new = step.sess.run(step.update_b)  # the kernel stays free while the view polls
    deadline = time.monotonic() + 10
    while float(view.values()[(TASK0, "b")]) != new and time.monotonic() < deadline:
        time.sleep(0.02)
    assert float(view.values()[(TASK0, "b")]) == new == before + 1
    history = [v for _, v in view.history[(TASK0, "b")]]
    assert history[0] == before and history[-1] == new
    view.close()
    assert not view.thread.is_alive()
    assert view.thread not in threading.enumerate()


def test_variable_view_of_a_local_session():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        view = VariableStateView(sess, refresh=0)
        (key, value), = view.values().items()
        assert key == ("/job:localhost/replica:0/task:0", "v")
        np.testing.assert_array_equal(value, [[1.0, 2.0], [3.0, 4.0]])
        view.close()


# -- ClusterView ----------------------------------------------------------------------------------
def test_cluster_view_of_in_process_servers(step):
    view = ClusterView(step.cluster)
    assert [t["up"] for t in view.tasks] == [True, True]
    assert view.start_button.disabled  # not started by the launcher
    assert repr(view) == ("ClusterView(2 tasks, 2 answering: %s up [CPU:0] holds [b, w]; "
                          "/job:local/replica:0/task:1 up [CPU:0] holds [])" % TASK0)
    assert "CPU:0" in view.table.value and "48 B" not in view.table.value  # 48 + 4 bytes
    assert "52 B" in view.table.value
    assert_png_not_blank(view.image.value)
    assert_bundle(view)
    view.close()


def test_cluster_view_shortens_long_names_to_fit_the_box(step):
    from minitf.widgets.cluster_view import HELD_WIDTH
    from minitf.widgets.names import ellipsize
    assert ellipsize("tower_1/dense/kernel/Adam_1", 20) == "tower_1/de…el/Adam_1"
    assert len(ellipsize("x" * 100, 20)) == 20 and ellipsize("short", 20) == "short"
    view = ClusterView(step.cluster)
    long_name = "model/tower_3/encoder/layer_11/attention/query/kernel/Adam_1"
    view.tasks[0]["resources"][CPU0]["localhost"][long_name] = {
        "kind": "variable", "dtype": "float32", "shape": [512, 512]}
    fig = matplotlib.figure.Figure()
    view.draw(fig)
    held = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("model/")]
    assert held == [ellipsize(long_name + "  variable float32[512, 512]", HELD_WIDTH)]
    assert len(held[0]) == HELD_WIDTH and held[0].startswith("model/tower_3/") and \
        held[0].endswith("float32[512, 512]")
    view.close()


@pytest.mark.slow
def test_cluster_view_buttons_stop_and_start_a_local_cluster():
    from minitf.distributed.launcher import LocalCluster
    cluster = LocalCluster({"worker": 2}, echo=False)
    try:
        view = ClusterView(cluster)
        assert not view.stop_button.disabled
        assert repr(view).startswith("ClusterView(2 tasks, 2 answering")
        view.stop_button.click()
        assert not any(cluster.is_alive(*t) for t in cluster.tasks())
        assert repr(view).startswith("ClusterView(2 tasks, 0 answering")
        assert_png_not_blank(view.image.value)
        view.start_button.click()
        assert repr(view).startswith("ClusterView(2 tasks, 2 answering")
        view.close()
    finally:
        cluster.stop()


# -- the runtime stays free of widget code --------------------------------------------------------
def test_the_runtime_never_imports_widget_libraries():
    code = ("import sys, minitf.compat.v1 as tf, minitf.timeline\n"
            "with tf.Session() as s: s.run(tf.constant(1) + 1)\n"
            "bad = [m for m in ('ipywidgets', 'matplotlib', 'minitf.widgets') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
