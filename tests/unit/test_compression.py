"""Transfer compression: a graph rewrite at partitioning time that encodes
float32 tensors crossing tasks, traced as bytes before and on the wire."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed import launcher


@pytest.fixture(scope="module")
def servers():
    cluster = {"a": ["localhost:%d" % launcher.free_port() for _ in range(2)]}
    started = [tf.train.Server(cluster, "a", i) for i in range(2)]
    yield started
    for s in started:
        s.stop()


@pytest.mark.parametrize("mode,ratio,max_err", [("", 1.0, 0.0), ("bfloat16", 0.5, 2e-2),
                                                ("int8", 0.25, 3e-2)])
def test_compressed_transfers_are_smaller_and_close(servers, mode, ratio, max_err):
    x = np.random.default_rng(1).uniform(-2, 2, 50000).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:a/task:1"):
            v = tf.Variable(x, name="v")
            y = v * 1.0
            n = tf.constant([1, 2, 3]) * 2          # int32: never compressed
        with tf.device("/job:a/task:0"):
            out = tf.identity(y)
            ints = tf.identity(n)
        config = tf.ConfigProto()
        config.graph_options.transfer_compression = mode
        with tf.Session(servers[0].target, graph=g, config=config) as sess:
            sess.run(v.initializer)
            md = tf.RunMetadata()
            got, got_ints = sess.run([out, ints], options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
                run_metadata=md)
    assert got.dtype == np.float32 and got_ints.tolist() == [2, 4, 6]
    assert np.abs(got - x).max() <= max_err
    transfers = {t.tensor: t for t in md.step_stats.transfers}
    assert set(transfers) == {"mul:0", "mul_1:0"}
    floats = transfers["mul:0"]
    assert floats.bytes == x.nbytes
    assert floats.wire_bytes == int(x.nbytes * ratio) + (8 if mode == "int8" else 0)
    assert transfers["mul_1:0"].wire_bytes == transfers["mul_1:0"].bytes == 12
    ops = {n.op for g in md.partition_graphs for n in g.node}
    expected = {"": set(), "bfloat16": {"Cast"},
                "int8": {"QuantizeLinear8", "DequantizeLinear8"}}[mode]
    assert expected <= ops


def test_unknown_compression_is_refused(servers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:a/task:1"):
            y = tf.constant(1.0) * 2.0
        with tf.device("/job:a/task:0"):
            out = tf.identity(y)
        config = tf.ConfigProto()
        config.graph_options.transfer_compression = "zip"
        with tf.Session(servers[0].target, graph=g, config=config) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="transfer_compression"):
                sess.run(out)
