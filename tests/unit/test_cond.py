"""tf.cond in every executor: inline, dataflow over two devices, on a virtual
GPU, and split over two server processes, where an untaken branch's value
crosses the wire as a "dead" marker. Values and side effects are compared
with real TF by tests/conformance/programs/cond.py."""

import numpy as np
import pytest

import minitf.compat.v1 as tf


def test_untaken_branch_runs_nothing_even_with_control_dependencies():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        hits = tf.Variable(0)
        other = tf.Variable(0)

        def true_branch():
            with tf.control_dependencies([tf.assign_add(other, 5)]):
                return tf.constant(1.0)                 # no data input: waits on the pivot
        y = tf.cond(p, true_branch, lambda: tf.cast(tf.assign_add(hits, 1), tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert [sess.run(y, {p: v}) for v in (False, False, True)] == [1.0, 2.0, 1.0]
            assert sess.run([hits, other]) == [2, 5]


def test_fetching_a_tensor_of_the_branch_that_did_not_run_is_an_error():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        inside = []

        def true_branch():
            inside.append(tf.constant(2.0) * 3.0)
            return inside[0]
        y = tf.cond(p, true_branch, lambda: tf.constant(0.0))
        with tf.Session() as sess:
            assert sess.run([y, inside[0]], {p: True}) == [6.0, 6.0]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Retval\\[1\\] does not have value: it is on the branch "
                                     "of a tf.cond that did not run"):
                sess.run([y, inside[0]], {p: False})
            assert sess.run(y, {p: False}) == 0.0          # the session still works


def test_branches_on_two_devices_run_in_the_dataflow_executor():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        with tf.device("/cpu:0"):
            a = tf.constant(np.arange(4.0))
        with tf.device("/cpu:1"):
            b = tf.constant(np.ones(4))

        def on_cpu1():
            with tf.device("/cpu:1"):
                return tf.reduce_sum(a * b)
        y = tf.cond(p, on_cpu1, lambda: tf.reduce_sum(a))
        with tf.Session(config=config) as sess:
            assert sess.run(y, {p: True}) == 6.0 and sess.run(y, {p: False}) == 6.0
            md = tf.RunMetadata()
            sess.run(y, {p: True}, run_metadata=md)
        assert any(dev.endswith("CPU:1") for dev in md.placement.values())


def test_cond_on_a_virtual_gpu_keeps_its_predicate_on_the_host():
    config = tf.ConfigProto(device_count={"GPU": 1})
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/gpu:0"):
            y = tf.cond(p, lambda: tf.exp(x), lambda: tf.square(x))
        with tf.Session(config=config) as sess:
            got = sess.run(y, {p: True, x: [0.0, 1.0, 2.0]})
            np.testing.assert_allclose(got, np.exp([0.0, 1.0, 2.0]), rtol=1e-6)
            assert sess.run(y, {p: False, x: [1.0, 2.0, 3.0]}).tolist() == [1, 4, 9]


def test_dead_values_cross_tasks_without_hanging():
    """Each branch reads a value made on the other task, so the partition of
    the untaken branch receives a dead value over the network every step."""
    from minitf.distributed.launcher import LocalCluster
    with LocalCluster({"worker": 2}, echo=False) as cluster:
        with tf.Graph().as_default():
            p = tf.placeholder(tf.bool, [])
            with tf.device("/job:worker/task:0"):
                a = tf.constant([1.0, 2.0])
            with tf.device("/job:worker/task:1"):
                b = tf.constant([10.0, 20.0])

            def on_task1():
                with tf.device("/job:worker/task:1"):
                    return a + b
            with tf.device("/job:worker/task:0"):
                y = tf.cond(p, on_task1, lambda: a * 2.0)
            config = tf.ConfigProto(operation_timeout_in_ms=20000)
            with tf.Session(cluster.target("worker", 0), config=config) as sess:
                for _ in range(3):
                    assert sess.run(y, {p: True}).tolist() == [11.0, 22.0]
                    assert sess.run(y, {p: False}).tolist() == [2.0, 4.0]


def test_nested_conds_capture_through_the_outer_one_and_train():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        q = tf.placeholder(tf.bool, [])
        w = tf.Variable(2.0)
        loss = tf.cond(p, lambda: tf.cond(q, lambda: w * w, lambda: 3.0 * w),
                       lambda: tf.constant(0.0))
        grad = tf.gradients(loss, w)[0]
        with tf.Session() as sess:
            sess.run(w.initializer)
            grads = [float(sess.run(grad, {p: pv, q: qv}))
                     for pv, qv in ((True, True), (True, False), (False, True))]
    assert grads == [4.0, 3.0, 0.0]


def test_a_variable_made_inside_a_branch_belongs_to_the_whole_graph():
    """As TF's init_scope: it initializes without feeding the predicate."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.constant([[1.0, 2.0]])
        y = tf.cond(p, lambda: tf.layers.dense(x, 2, kernel_initializer=tf.ones_initializer()),
                    lambda: x * 0.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(y, {p: True}).tolist() == [[3.0, 3.0]]
            assert sess.run(y, {p: False}).tolist() == [[0.0, 0.0]]


def test_bad_predicates_and_branches_are_refused():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        with pytest.raises(TypeError, match="pred must be a scalar bool tensor, got float32"):
            tf.cond(x, lambda: x, lambda: x)
        with pytest.raises(TypeError, match="must be callable"):
            tf.cond(tf.constant(True), x, lambda: x)
        with pytest.raises(ValueError, match="same number of results, got 2 and 1"):
            tf.cond(tf.constant(True), lambda: (x, x), lambda: x)
