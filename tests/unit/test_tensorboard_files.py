"""What minitf writes for TensorBoard, read back by tensorboard's own reader.

``tensorboard.backend.event_processing.event_accumulator`` is the code
TensorBoard's server uses to load a log directory: if it finds the scalars,
histograms, images, text, graph and run metadata minitf's FileWriter wrote
(from a local session and from a remote one, the summary op running on a
parameter server), TensorBoard shows them. Also: the step stats conversion
has TF's shape (compared with a real TF RunMetadata the widgets' fixture
holds), and without the tensorboard package the FileWriter says which extra
to install.
"""

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitf.compat.v1 as tf

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
config_pb2 = pytest.importorskip("tensorboard.compat.proto.config_pb2")

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "conformance" / "widget_traces" / "tf_two_task_step.pb"


def _accumulator(logdir):
    acc = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.IMAGES: 0,
                                    event_accumulator.HISTOGRAMS: 0,
                                    event_accumulator.TENSORS: 0})
    acc.Reload()
    return acc


def _png_pixels(data):
    matplotlib_image = pytest.importorskip("matplotlib.image")
    return (matplotlib_image.imread(io.BytesIO(data), format="png") * 255).round().astype(np.uint8)


def test_the_reader_finds_everything_a_local_session_wrote(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.device("/cpu:0"):
            w = tf.Variable([[1.0], [2.0]], name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)), name="loss")
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        tf.summary.scalar("cost", loss)        # ("loss" would be tagged loss_1: the op exists)
        tf.summary.histogram("weights", w)
        tf.summary.image("picture", tf.reshape(tf.cast(tf.range(12), tf.uint8) * 20,
                                               [1, 2, 2, 3]))
        tf.summary.text("note", tf.constant("step **done**"))
        merged = tf.summary.merge_all()
        init = tf.global_variables_initializer()
    writer = tf.summary.FileWriter(str(tmp_path), graph)
    assert writer.get_logdir() == str(tmp_path)
    losses = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(5):
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if step == 2 else None
            md = tf.RunMetadata()
            summary, value, _ = sess.run([merged, loss, train], {x: [[1.0, 1.0], [0.5, 2.0]]},
                                         options=options, run_metadata=md)
            writer.add_summary(summary, step)
            losses.append(value)
            if step == 2:
                writer.add_run_metadata(md, "step2", global_step=step)
                with pytest.raises(ValueError, match="already used"):
                    writer.add_run_metadata(md, "step2")
    writer.close()
    acc = _accumulator(tmp_path)
    tags = acc.Tags()
    assert tags["scalars"] == ["cost"] and tags["histograms"] == ["weights"]
    assert tags["images"] == ["picture/image/0"] and tags["run_metadata"] == ["step2"]
    assert tags["graph"] and tags["meta_graph"] and tags["tensors"] == ["note"]
    scalars = acc.Scalars("cost")
    assert [s.step for s in scalars] == [0, 1, 2, 3, 4]
    assert np.allclose([s.value for s in scalars], losses)
    histo = acc.Histograms("weights")[-1].histogram_value
    assert histo.num == 2 and histo.max > histo.min
    image = acc.Images("picture/image/0")[0]
    assert (image.height, image.width) == (2, 2)
    pixels = _png_pixels(image.encoded_image_string)
    assert pixels[..., :3].reshape(-1).tolist() == [20 * i for i in range(12)]
    text = acc.Tensors("note")[0].tensor_proto
    assert text.string_val == [b"step **done**"]
    names = {n.name for n in acc.Graph().node}
    assert {"x", "w", "loss", "GradientDescent", "save/SaveV2"} - names == {"save/SaveV2"}
    assert "loss" in names and "w/read" in names
    stats = acc.RunMetadata("step2").step_stats
    devices = {d.device for d in stats.dev_stats}
    assert devices == {"/job:localhost/replica:0/task:0/device:CPU:0"}
    ran = {n.node_name for d in stats.dev_stats for n in d.node_stats}
    assert {"loss", "MatMul", "w"} <= ran
    matmul = next(n for d in stats.dev_stats for n in d.node_stats if n.node_name == "MatMul")
    shape = [d.size for d in matmul.output[0].tensor_description.shape.dim]
    assert shape == [2, 1] and matmul.output[0].tensor_description.dtype == 1   # DT_FLOAT
    assert matmul.all_end_rel_micros >= 0 and matmul.all_start_micros > 0


def test_closed_writer_drops_events_and_reopen_starts_a_new_file(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    first = tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)])
    writer.add_summary(first, 1)
    writer.close()
    with pytest.warns(UserWarning, match="closed FileWriter"):
        writer.add_summary(first, 2)
    writer.reopen()
    writer.add_summary(first.SerializeToString(), 3)
    writer.flush()
    writer.close()
    files = sorted(p for p in os.listdir(tmp_path) if p.startswith("events.out.tfevents"))
    assert len(files) == 2
    assert [s.step for s in _accumulator(tmp_path).Scalars("a")] == [1, 3]
    with pytest.raises(TypeError, match="Summary protocol buffer"):
        writer.add_summary("not a summary")


def test_file_writer_cache_shares_one_writer_per_directory(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not a
    tf.summary.FileWriterCache.clear()


def test_summaries_and_run_metadata_of_a_remote_step(tmp_path):
    """The summary op runs on the ps task; its bytes reach the client, which writes them."""
    cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % _free_port()],
                                    "worker": ["localhost:%d" % _free_port()]})
    servers = [tf.train.Server(cluster, job_name="ps", task_index=0),
               tf.train.Server(cluster, job_name="worker", task_index=0)]
    try:
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                w = tf.Variable([1.0, 2.0, 3.0], name="w")
                total = tf.reduce_sum(w, name="total")
                on_ps = tf.summary.scalar("sum_on_ps", total)
            with tf.device("/job:worker/task:0"):
                doubled = tf.multiply(w, 2.0, name="doubled")
                on_worker = tf.summary.histogram("doubled_on_worker", doubled)
            init = tf.global_variables_initializer()
        writer = tf.summary.FileWriter(str(tmp_path), graph)
        with tf.Session(servers[1].target, graph=graph) as sess:
            sess.run(init)
            md = tf.RunMetadata()
            a, b = sess.run([on_ps, on_worker], options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
                run_metadata=md)
        writer.add_summary(a, 7)
        writer.add_summary(b, 7)
        writer.add_run_metadata(md, "remote")
        writer.close()
    finally:
        for s in servers:
            s.stop()
    acc = _accumulator(tmp_path)
    assert [(s.step, s.value) for s in acc.Scalars("sum_on_ps")] == [(7, 6.0)]
    assert acc.Histograms("doubled_on_worker")[0].histogram_value.sum == 12.0
    run = acc.RunMetadata("remote")
    by_device = {d.device: {n.node_name for n in d.node_stats} for d in run.step_stats.dev_stats}
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    worker = "/job:worker/replica:0/task:0/device:CPU:0"
    assert "total" in by_device[ps] and "doubled" in by_device[worker]
    placed = {n.name: n.device for g in run.partition_graphs for n in g.node}
    assert placed["total"] == ps and placed["doubled"] == worker


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_step_stats_have_the_shape_of_tfs(tmp_path):
    """minitf's two-task step, converted, reads like TF's fixture of the same step."""
    sys.path.insert(0, str(FIXTURE.parent))
    try:
        import two_task_step
    finally:
        sys.path.remove(str(FIXTURE.parent))
    ours, _ = two_task_step.run_step()
    pb = ours.to_proto()
    theirs = config_pb2.RunMetadata.FromString(FIXTURE.read_bytes())
    assert isinstance(pb, config_pb2.RunMetadata)
    assert config_pb2.RunMetadata.FromString(ours.SerializeToString()) == pb

    def tasks(md):
        return {d.device.rsplit("/device:", 1)[0] for d in md.step_stats.dev_stats}
    assert tasks(pb) == tasks(theirs)

    def named(md):
        return {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    shared = named(pb) & named(theirs)
    assert {"w", "b", "model/MatMul", "model/loss", "GradientDescent"} <= shared
    for md in (pb, theirs):
        for d in md.step_stats.dev_stats:
            for n in d.node_stats:
                if n.node_name == "model/MatMul":
                    out = n.output[0].tensor_description
                    assert [x.size for x in out.shape.dim] == [2, 3] and out.dtype == 1
                    assert out.allocation_description.requested_bytes == 24
                    assert n.all_start_micros > 0 and n.all_end_rel_micros >= 0
    # The widgets read TF's messages: the converted step draws like minitf's own.
    pytest.importorskip("ipywidgets")
    from minitf.widgets.step_trace import read_step
    mine, converted = read_step(ours), read_step(pb)
    assert sorted(mine.devices()) == sorted(converted.devices())


def test_without_tensorboard_the_writer_names_the_extra(tmp_path):
    """Hide the tensorboard package: minitf still imports and trains and saves,
    the FileWriter raises an ImportError that says what to install."""
    program = textwrap.dedent("""
        import sys, warnings
        sys.modules["tensorboard"] = None           # as if it were not installed
        import minitf.compat.v1 as tf
        v = tf.Variable(1.0, name="v")
        s = tf.summary.scalar("v", v)               # building a summary op needs nothing
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                print("saved", saver.save(sess, sys.argv[1] + "/model") is not None)
            print("warned", any("no .meta file" in str(w.message) for w in caught))
            try:
                sess.run(s)
            except Exception as e:
                print("run summary:", type(e).__name__, "minitf-edu[tensorboard]" in str(e))
        try:
            tf.summary.FileWriter(sys.argv[1])
        except ImportError as e:
            print("FileWriter: ImportError", "pip install 'minitf-edu[tensorboard]'" in str(e))
        try:
            tf.get_default_graph().as_graph_def()
        except ImportError as e:
            print("as_graph_def: ImportError", "minitf-edu[tensorboard]" in str(e))
    """)
    run = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "saved True", "warned True", "run summary: InternalError True",
        "FileWriter: ImportError True", "as_graph_def: ImportError True"]
