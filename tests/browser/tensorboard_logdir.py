"""A TensorBoard log directory written by minitf: one ps and two workers.

The graph is lesson 9's last section: the variables on ``/job:ps/task:0``,
one tower of the model on each worker (in-graph replication), the averaged
gradients applied on the ps. Twenty steps write a ``loss`` scalar each; step
5 is traced (``FULL_TRACE``) and written with ``add_run_metadata`` under the
tag ``step_5``, so TensorBoard can colour each node by the device it ran on.
The three tasks are servers in this process, stopped before returning.
"""

import socket

import numpy as np

import minitf.compat.v1 as tf

STEPS = 20
TRACED = 5
PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKERS = ["/job:worker/replica:0/task:%d/device:CPU:0" % i for i in range(2)]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(num_workers=2):
    """The graph: returns ``(graph, train, loss, merged summaries, init, x, y)``."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.zeros([2, 1]), name="w")
            b = tf.Variable(0.0, name="b")
            step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        xs, ys = tf.split(x, num_workers), tf.split(y, num_workers)
        losses, grads = [], []
        for i in range(num_workers):
            with tf.device("/job:worker/task:%d" % i), tf.name_scope("tower_%d" % i):
                loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) + b - ys[i]), name="loss")
                losses.append(loss)
                grads.append(tf.gradients(loss, [w, b]))
        with tf.device("/job:ps/task:0"):
            mean_loss = tf.add_n(losses, name="loss") / num_workers
            averaged = [tf.add_n([g[k] for g in grads]) / num_workers for k in range(2)]
            train = tf.train.GradientDescentOptimizer(0.2).apply_gradients(
                zip(averaged, [w, b]), global_step=step)
            tf.summary.scalar("mse", mean_loss)
            merged = tf.summary.merge_all()
        init = tf.global_variables_initializer()
    return graph, train, mean_loss, merged, init, x, y


def write(logdir):
    """Train 20 steps on a 1 ps + 2 worker cluster, writing TensorBoard's files."""
    cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % _free_port()],
                                    "worker": ["localhost:%d" % _free_port(),
                                               "localhost:%d" % _free_port()]})
    servers = [tf.train.Server(cluster, job_name=job, task_index=i)
               for job, i in (("ps", 0), ("worker", 0), ("worker", 1))]
    try:
        graph, train, loss, merged, init, x, y = build()
        data_x = np.random.RandomState(0).rand(16, 2).astype(np.float32)
        data_y = data_x.dot([[2.0], [-1.0]]).astype(np.float32) + 0.5
        writer = tf.summary.FileWriter(logdir, graph)
        losses = []
        with tf.Session(servers[1].target, graph=graph) as sess:
            sess.run(init)
            for i in range(STEPS):
                md = tf.RunMetadata()
                options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) \
                    if i == TRACED else None
                summary, value, _ = sess.run([merged, loss, train], {x: data_x, y: data_y},
                                             options=options, run_metadata=md)
                writer.add_summary(summary, i)
                losses.append(float(value))
                if i == TRACED:
                    writer.add_run_metadata(md, "step_%d" % i, global_step=i)
        writer.close()
        return losses
    finally:
        for s in servers:
            s.stop()
