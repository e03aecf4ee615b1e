"""Ops whose values nobody reads are not run (minitf/runtime/dependency_optimizer.py),
and what waited for one waits for its inputs instead."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import errors

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _ran(sess, fetch, feed=None):
    md = tf.RunMetadata()
    value = sess.run(fetch, feed, options=FULL, run_metadata=md)
    return value, {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}


def test_an_unread_op_does_not_run_and_its_waiter_waits_for_its_inputs():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        bump = tf.assign_add(v, 1.0, name="bump")
        bumped = tf.identity(bump, name="bumped")   # kept: the value a stateful op made
        doubled = tf.multiply(bumped, 2.0, name="doubled")   # read by nobody
        with tf.control_dependencies([doubled]):
            after = tf.identity(v.read_value(), name="after")
        with tf.Session() as sess:
            sess.run(v.initializer)
            value, ran = _ran(sess, after)
            assert value == 1.0                  # the assign ran first, through doubled
            assert {"bump", "bumped", "after"} <= ran and "doubled" not in ran
            value, ran = _ran(sess, [after, doubled])   # fetched, it runs
            assert value == [2.0, 4.0] and "doubled" in ran


def test_a_chain_of_unread_ops_goes_and_stateful_or_checking_ops_stay():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        a = tf.exp(x, name="a")
        b = tf.log(a, name="b")                               # a and b: unread
        check = tf.check_numerics(x, "x is not finite", name="check")
        with tf.control_dependencies([b, check]):
            out = tf.identity(x * 3.0, name="out")
        with tf.Session() as sess:
            value, ran = _ran(sess, out, {x: [1.0, 2.0, 3.0]})
            np.testing.assert_allclose(value, [3.0, 6.0, 9.0])
            assert not {"a", "b"} & ran and "check" in ran
            with pytest.raises(errors.InvalidArgumentError, match="x is not finite"):
                sess.run(out, {x: [1.0, np.inf, 3.0]})


def test_training_skips_the_gradient_for_the_fed_input_and_trains_the_same():
    """opt_level L0 runs every op as built: the skipped gradient then runs."""
    def train(optimize):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [4, 3], name="x")
            w = tf.Variable(tf.constant(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)))
            loss = tf.reduce_sum(tf.square(tf.nn.relu(tf.matmul(x, w)) - 1.0))
            step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3) / 10}
            config = tf.ConfigProto()
            if not optimize:
                config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                _, ran = _ran(sess, step, feed)
                return sess.run(w), ran
    w_skipped, ran = train(True)
    assert "gradients/MatMul_grad/MatMul_1" in ran
    assert "gradients/MatMul_grad/MatMul" not in ran
    w_all, ran_all = train(False)
    assert "gradients/MatMul_grad/MatMul" in ran_all
    np.testing.assert_array_equal(w_skipped, w_all)
