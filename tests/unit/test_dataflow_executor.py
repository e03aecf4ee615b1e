"""The dataflow executor (steps with blocking ops or several devices): the
caller's thread runs the home device's ready ops itself, blocking ops and
the other devices' ops run on the pools. Values, control dependencies and
errors are what they would be with every op on a pool thread."""

import time

import numpy as np
import pytest

import minitf.compat.v1 as tf


def _two_cpus():
    return tf.ConfigProto(device_count={"CPU": 2})


def test_values_and_control_dependencies_across_devices_with_a_blocking_op():
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(10, tf.float32, shapes=[[2]])
        enqueue = q.enqueue_many([[[1.0, 2.0], [3.0, 4.0]]])
        with tf.device("/cpu:0"):
            counter = tf.Variable(0.0)
            bump = tf.assign_add(counter, 1.0)
            row = q.dequeue()                       # blocking: a pool thread
            with tf.control_dependencies([bump]):
                seen = counter + 0.0
        with tf.device("/cpu:1"):
            doubled = row * 2.0                     # the other device: the inter-op pool
        with tf.device("/cpu:0"):
            out = tf.reduce_sum(doubled) + seen
        with tf.Session(graph=g, config=_two_cpus()) as sess:
            sess.run(counter.initializer)
            sess.run(enqueue)
            # counter is bumped before it is read, every step.
            assert sess.run(out) == pytest.approx(2 * 3.0 + 1.0)
            assert sess.run(out) == pytest.approx(2 * 7.0 + 2.0)


def test_an_inline_error_stops_the_step_while_a_dequeue_waits():
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        x = tf.placeholder(tf.float32, [None])
        waiting = q.dequeue()                       # nothing is ever enqueued
        bad = tf.reshape(x, [3])                    # fails for 2 values
        out = bad + waiting
        ok = x * 2.0
        with tf.Session(graph=g) as sess:
            start = time.monotonic()
            with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
                sess.run(out, {x: [1.0, 2.0]})
            assert time.monotonic() - start < 5.0   # not a wait for the dequeue
            np.testing.assert_allclose(sess.run(ok, {x: [1.0, 2.0]}), [2.0, 4.0])
            # The dequeue that was cancelled took nothing out of the queue.
            assert sess.run(q.size()) == 0
