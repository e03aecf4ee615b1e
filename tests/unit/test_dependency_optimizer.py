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


# -- going around Identity and NoOp ops (dependency_optimizer.Bypass) ----------------------------
L0 = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))


def _mlp_step(config):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        h = tf.layers.dense(x, 5, activation=tf.nn.relu)
        loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1) - 1.0))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        feed = {x: np.arange(12, dtype=np.float32).reshape(3, 4) / 10}
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            _, ran = _ran(sess, train, feed)
            losses = [sess.run([loss, train], feed)[0] for _ in range(3)]
            return losses, ran


def test_gradient_groups_are_gone_round_and_train_the_same():
    losses, ran = _mlp_step(None)
    plain, ran_l0 = _mlp_step(L0)
    assert losses == plain and losses[2] < losses[0]
    gates = {n for n in ran_l0 if "_grad_gate/" in n}
    identities = {n for n in gates if "/Identity" in n}
    assert len(identities) == 8 and not identities & ran     # every tuple Identity
    # and every group's NoOp but one, that would add edges (3 waiters on 2 waits)
    assert len(gates - identities) == 5
    assert gates & ran == {"gradients/dense_1/BiasAdd_grad_gate/tuple"}
    assert {"dense/kernel/read", "GradientDescent"} <= ran   # a read and the target stay


def test_an_identity_that_waits_passes_its_wait_on():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        counter = tf.Variable(0, name="counter")
        bump = tf.assign_add(counter, 1, name="bump")
        with tf.control_dependencies([bump]):
            after = tf.identity(x, name="after")
        seven, zero = tf.constant(7, name="seven"), tf.constant(0, name="zero")
        with tf.control_dependencies([after]):
            waiter = tf.add(seven, zero, name="waiter")
        doubled = tf.multiply(after, 2.0, name="doubled")
        with tf.Session() as sess:
            sess.run(counter.initializer)
            (value, w), ran = _ran(sess, [doubled, waiter], {x: [1.0, 2.0]})
            assert value.tolist() == [2.0, 4.0] and w == 7
            assert "after" not in ran and "bump" in ran and sess.run(counter) == 1
            (value, kept), ran = _ran(sess, [doubled, after], {x: [1.0, 2.0]})
            assert "after" in ran and kept.tolist() == [1.0, 2.0]   # fetched: it runs
            assert sess.run(counter) == 2


def test_a_wait_on_an_identity_becomes_a_wait_on_its_input():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        update = tf.assign_add(v, 1.0, name="update")
        passed = tf.identity(tf.identity(update, name="inner"), name="outer")
        with tf.control_dependencies([passed]):
            read = tf.identity(v.read_value(), name="read_after")
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(read) == 2.0 and sess.run(read) == 3.0   # the update ran first


def test_loop_and_cond_pivots_stay_and_values_match():
    def build():
        x = tf.placeholder(tf.float32, [], name="x")
        i, s = tf.while_loop(lambda i, s: i < 4,
                             lambda i, s: (i + 1, s + tf.identity(tf.cast(i, tf.float32))),
                             [tf.constant(0), x], name="loop")
        y = tf.cond(s > 5.0, lambda: tf.identity(s * 2.0), lambda: tf.identity(s - 1.0))
        return x, s, y

    for config in (None, L0):
        with tf.Graph().as_default():
            x, s, y = build()
            with tf.Session(config=config) as sess:
                (sv, yv), ran = _ran(sess, [s, y], {x: 0.0})
                assert (sv, yv) == (6.0, 12.0)
                assert sess.run(y, {x: -2.0}) == 3.0
                assert "loop/Identity" in ran              # the body's pivot
                if config is None:
                    assert "loop/Identity_1" not in ran    # a plain Switch -> Identity
                else:
                    assert "loop/Identity_1" in ran
