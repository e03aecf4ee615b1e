# A while loop whose body is split over two tasks: every iteration's tensors
# cross between the tasks (per-iteration Send/Recv keys), and so do the
# gradients of the backward loop.
import socket

import numpy as np

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


cluster = tf.train.ClusterSpec({"worker": ["localhost:%d" % free_port(),
                                          "localhost:%d" % free_port()]})
servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
with tf.device("/job:worker/task:0"):
    x = tf.constant(1.5)
    w = tf.Variable([0.5, -0.25])


def body(i, a):
    with tf.device("/job:worker/task:1"):
        b = tf.tanh(a * w + x)
    with tf.device("/job:worker/task:0"):
        c = b * 2.0 - 0.5
    return i + 1, c


with tf.device("/job:worker/task:0"):
    steps, final = tf.while_loop(lambda i, a: i < 6, body, [0, tf.constant([0.1, 0.2])])
    gw, gx = tf.gradients(tf.reduce_sum(final), [w, x])
with tf.Session(servers[0].target) as sess:
    sess.run(tf.global_variables_initializer())
    for run in range(2):
        n, f, a, b = sess.run([steps, final, gw, gx])
        print("run", run, "steps:", n, "final:", np.round(f, 4).tolist(),
              "d/dw:", np.round(a, 4).tolist(), "d/dx:", round(float(b), 4))
with tf.Session(servers[1].target) as sess:    # the other task as master
    print("from task 1:", np.round(sess.run(final), 4).tolist())
