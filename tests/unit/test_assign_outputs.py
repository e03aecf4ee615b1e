"""An assign op's output is the value it wrote, read under the variable's lock.

TF1's Assign/AssignAdd output a *reference* that is read later, so a counter
bumped by several threads usually, but not always, hands out distinct values;
minitf's output is the value written, so the counter pattern is exact."""

import numpy as np

import minitf.compat.v1 as tf


def test_three_enqueue_threads_of_a_counter_get_distinct_values():
    for _ in range(3):
        with tf.Graph().as_default():
            counter = tf.Variable(0, name="counter")
            q = tf.FIFOQueue(1000, tf.int32, shapes=[[]])
            enqueue = q.enqueue(counter.assign_add(1))
            tf.train.add_queue_runner(tf.train.QueueRunner(q, [enqueue] * 3))
            taken = q.dequeue_many(300)
            with tf.Session() as sess:
                sess.run(counter.initializer)
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                values = sess.run(taken)
                coord.request_stop()
                sess.run(q.close(cancel_pending_enqueues=True))
                coord.join(threads)
        # Every value distinct. (Not exactly 1..300: a thread may enqueue 301 while
        # another, holding 300, has not enqueued it yet; three threads, so at most
        # two values above 300 can overtake.)
        got = values.tolist()
        assert len(set(got)) == 300 and min(got) >= 1 and max(got) <= 302


def test_the_output_does_not_change_when_the_source_variable_does():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        w = tf.Variable([1.0, 2.0], name="w")
        copied = v.assign(w[0] * 1.0)
        whole = tf.Variable([0.0, 0.0], name="whole")
        copied_whole = whole.assign(w)           # the value is a view of w's buffer
        with tf.control_dependencies([copied_whole]):
            overwrite = w.assign([9.0, 9.0])
        with tf.Session() as sess:
            sess.run([v.initializer, w.initializer, whole.initializer])
            got, _ = sess.run([copied_whole, overwrite])
            np.testing.assert_array_equal(got, [1.0, 2.0])
            assert sess.run(copied) == 9.0


def test_ref_consumers_of_an_assign_write_the_variable_after_it():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        chained = tf.assign(tf.assign(v, 5.0), 7.0)
        added = tf.assign_add(tf.assign_add(v, 1.0), 10.0)
        initialized = tf.is_variable_initialized(v.assign(3.0))
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(chained) == 7.0 and sess.run(v) == 7.0
            assert sess.run(added) == 18.0 and sess.run(v) == 18.0
            assert sess.run(initialized) and sess.run(v) == 3.0
