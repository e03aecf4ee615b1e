"""Placement in a local session: several CPUs, the placement log, colocation,
unplaceable ops, soft placement and pruning before placement."""

import re

import numpy as np
import pytest

import minitf.compat.v1 as tf

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
LOG_LINE = re.compile(r"^(\S+): \((\w+)\): (/job:localhost/replica:0/task:0/device:CPU:\d)$")


def placement_log(text):
    """{op name: (type, device)} from log_device_placement lines."""
    out = {}
    for line in text.splitlines():
        m = LOG_LINE.match(line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def test_two_cpus_and_the_placement_log(capsys):
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a = tf.constant([1.0, 2.0], name="a")
            b = a * 2.0
        c = b + 1.0
        config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
        with tf.Session(config=config) as sess:
            assert [d.name for d in sess.list_devices()] == [CPU0, CPU1]
            capsys.readouterr()
            np.testing.assert_array_equal(sess.run(c), [3.0, 5.0])
            log = placement_log(capsys.readouterr().out)
            assert log == {"a": ("Const", CPU1), "mul/y": ("Const", CPU1),
                           "mul": ("Mul", CPU1), "add/y": ("Const", CPU0),
                           "add": ("AddV2", CPU0)}
            # A second run places nothing new and logs nothing.
            sess.run(c)
            assert placement_log(capsys.readouterr().out) == {}
            md = tf.RunMetadata()
            sess.run(c, run_metadata=md)
            assert md.placement == {"a": CPU1, "mul/y": CPU1, "mul": CPU1,
                                    "add/y": CPU0, "add": CPU0}


def test_no_log_without_the_option(capsys):
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="quiet")
        with tf.Session() as sess:
            sess.run(a)
    assert "quiet" not in capsys.readouterr().out


def test_variable_ops_are_colocated_with_the_variable(capsys):
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            v = tf.Variable([1.0, 2.0], name="v")
        inc = tf.assign_add(v, [1.0, 1.0], name="inc")      # created outside the scope
        with tf.device("/cpu:0"):
            doubled = v * 2.0
        config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
        with tf.Session(config=config) as sess:
            sess.run(v.initializer)
            sess.run(inc)
            np.testing.assert_array_equal(sess.run(doubled), [4.0, 6.0])
            log = placement_log(capsys.readouterr().out)
    for name in ("v", "v/Assign", "v/read", "v/initial_value", "inc"):
        assert log[name][1] == CPU1, name
    assert log["mul"] == ("Mul", CPU0)


def test_unpinned_ops_go_to_cpu0_and_pinned_ones_stay():
    with tf.Graph().as_default():
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:1"):
            a = tf.constant(1.0, name="a")
        b = tf.identity(a, name="b")
        md = tf.RunMetadata()
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(b, run_metadata=md)
        assert md.placement == {"a": CPU1, "b": CPU0}


def test_gpu_request_without_gpu_fails_naming_the_devices():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            g = tf.constant(1.0, name="gg")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(g)
        e = info.value
        assert e.message.startswith(
            "Cannot assign a device for operation gg: {{node gg}} was explicitly assigned to "
            "/device:GPU:0 but available devices are [ %s ]. Make sure the device "
            "specification refers to a valid device." % CPU0)
        assert e.op is g.op


def test_unknown_cpu_index_fails():
    with tf.Graph().as_default():
        with tf.device("/cpu:5"):
            c = tf.constant(1.0, name="c5")
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"^Cannot assign a device for operation c5: .* available "
                                     r"devices are \[ %s %s \]" % (CPU0, CPU1)):
                sess.run(c)


def test_soft_placement_moves_the_op(capsys):
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            g = tf.constant(1.0, name="gg")
        config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
        with tf.Session(config=config) as sess:
            assert sess.run(g) == 1.0
        assert placement_log(capsys.readouterr().out) == {"gg": ("Const", CPU0)}


def test_pruning_keeps_unplaceable_ops_from_failing_other_runs():
    with tf.Graph().as_default():
        ok = tf.constant(2.0, name="ok") * 3.0
        with tf.device("/gpu:0"):
            bad = tf.constant(1.0, name="bad")
        with tf.Session() as sess:
            assert sess.run(ok) == 6.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Cannot assign a device for operation bad"):
                sess.run(bad)
            assert sess.run(ok) == 6.0


def test_placement_is_sticky_across_runs():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        inc = v.assign_add(1.0)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(v.initializer)
            md1, md2 = tf.RunMetadata(), tf.RunMetadata()
            sess.run(inc, run_metadata=md1)
            sess.run(v, run_metadata=md2)
            assert md1.placement["v"] == md2.placement["v"] == CPU0
            assert sess.run(v) == 2.0
