"""``RunOptions(trace_level=FULL_TRACE)`` + ``RunMetadata``: per-op step stats."""

import time

import numpy as np

import minitf.compat.v1 as tf

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def stats_by_name(md):
    return {n.node_name: (d.device, n) for d in md.step_stats.dev_stats for n in d.node_stats}


def test_full_trace_lists_every_op_that_ran():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1000], name="x")
        y = tf.multiply(x, 2.0, name="y")
        z = tf.reduce_sum(y, name="z")
        unused = tf.constant(5.0, name="unused")  # noqa: F841  (pruned: not traced)
        with tf.Session() as sess:
            md = tf.RunMetadata()
            before = int(time.time() * 1e6)
            sess.run(z, {x: np.ones(1000, np.float32)}, options=FULL, run_metadata=md)
            after = int(time.time() * 1e6)
    stats = stats_by_name(md)
    assert set(stats) == {"y/y", "y", "Const", "z"}         # "Const": the axes, as TF names them
    assert [d.device for d in md.step_stats.dev_stats] == [CPU0]
    for name, (device, n) in stats.items():
        assert device == CPU0
        assert before - 1000 <= n.all_start_micros <= after
        assert n.all_start_micros + n.all_end_rel_micros <= after + 1000   # ended in the run
        assert n.op_end_rel_micros >= n.op_start_rel_micros
    assert stats["y"][1].op_type == "Mul"
    assert stats["z"][1].op_type == "Sum"
    out = stats["y"][1].output
    assert len(out) == 1 and out[0].slot == 0
    assert out[0].tensor_description.requested_bytes == 4000
    assert out[0].tensor_description.shape == [1000]
    assert out[0].tensor_description.dtype == "float32"
    assert stats["z"][1].output[0].tensor_description.requested_bytes == 4
    # Stats are in start order per device.
    starts = [n.all_start_micros for n in md.step_stats.dev_stats[0].node_stats]
    assert starts == sorted(starts)


def test_no_trace_without_options_or_with_no_trace():
    with tf.Graph().as_default():
        a = tf.constant(1.0) + 1.0
        with tf.Session() as sess:
            md = tf.RunMetadata()
            sess.run(a, run_metadata=md)
            assert md.step_stats.dev_stats == []
            sess.run(a, options=tf.RunOptions(trace_level=tf.RunOptions.NO_TRACE),
                     run_metadata=md)
            assert md.step_stats.dev_stats == []
            sess.run(a, options=FULL)  # no RunMetadata to fill: fine


def test_trace_names_both_devices():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            one = tf.placeholder(tf.float32, name="one")   # fed: nothing folds
            a = tf.fill([1000], one, name="a")
        with tf.device("/cpu:1"):
            b = tf.multiply(a, 3.0, name="b")
        with tf.device("/cpu:0"):
            c = tf.add(b, 1.0, name="c")
        config = tf.ConfigProto(device_count={"CPU": 2})
        with tf.Session(config=config) as sess:
            md = tf.RunMetadata()
            out = sess.run(c, {one: 1.0}, options=FULL, run_metadata=md)
    np.testing.assert_array_equal(out, np.full(1000, 4.0, np.float32))
    assert sorted(d.device for d in md.step_stats.dev_stats) == [CPU0, CPU1]
    stats = stats_by_name(md)
    assert stats["a"][0] == CPU0 and stats["c"][0] == CPU0
    assert stats["b"][0] == CPU1
    assert stats["b"][1].op_type == "Mul"
    assert stats["b"][1].output[0].tensor_description.requested_bytes == 4000
    # b ran after a finished and before c started.
    a_end = stats["a"][1].all_start_micros + stats["a"][1].all_end_rel_micros
    assert stats["b"][1].all_start_micros >= a_end
    b_end = stats["b"][1].all_start_micros + stats["b"][1].all_end_rel_micros
    assert stats["c"][1].all_start_micros >= b_end


def test_trace_is_per_run():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        inc = v.assign_add(1.0, name="inc")
        with tf.Session() as sess:
            sess.run(v.initializer)
            md = tf.RunMetadata()
            sess.run(inc, options=FULL, run_metadata=md)
            first = set(stats_by_name(md))
            md2 = tf.RunMetadata()
            sess.run(v, options=FULL, run_metadata=md2)
    assert first == {"v", "inc/value", "inc"}
    assert set(stats_by_name(md2)) == {"v"}
    assert stats_by_name(md)["inc"][1].op_type == "AssignAdd"
