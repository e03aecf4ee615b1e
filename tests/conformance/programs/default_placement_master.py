# Unpinned ops run on the task whose target the session uses (its master).
# So two sessions on two different masters create two different variables.
import socket

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


cluster = tf.train.ClusterSpec({"worker": ["localhost:%d" % free_port(),
                                           "localhost:%d" % free_port()]})
s0 = tf.train.Server(cluster, job_name="worker", task_index=0)
s1 = tf.train.Server(cluster, job_name="worker", task_index=1)

counter = tf.Variable(10, name="counter")        # no tf.device: unpinned
bump = counter.assign_add(1)
with tf.Session(s0.target) as sess:
    sess.run(counter.initializer)
    print("on worker 0 after bump:", sess.run(bump))
with tf.Session(s1.target) as sess:
    try:
        sess.run(counter)
    except tf.errors.FailedPreconditionError as e:
        print("on worker 1: FailedPreconditionError, uninitialized:",
              "Attempting to use uninitialized value counter" in e.message)
    sess.run(counter.initializer)
    print("worker 1 has its own copy:", sess.run(bump), sess.run(bump))
with tf.Session(s0.target) as sess:
    print("worker 0 still has:", sess.run(counter))
