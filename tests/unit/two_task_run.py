"""A real two-task step for the widget and timeline tests.

Two in-process ``tf.train.Server``s on free ports; task 0 holds the
variables ``w`` (4x3) and ``b`` (scalar) and the input ``x``; task 1 does the
math, so ``x``, ``w`` and ``b`` cross from task 0 to task 1 in Send/Recv pairs.
"""

import collections

import minitf.compat.v1 as tf
from minitf.distributed.launcher import free_port

TwoTaskStep = collections.namedtuple(
    "TwoTaskStep", "cluster servers graph sess md md2 out update_b")


def start_two_task_step():
    cluster = tf.train.ClusterSpec(
        {"local": ["localhost:%d" % free_port(), "localhost:%d" % free_port()]})
    servers = [tf.train.Server(cluster, job_name="local", task_index=i) for i in range(2)]
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:local/task:0"):
            w = tf.Variable(tf.ones([4, 3]), name="w")
            b = tf.Variable(0.5, name="b")
            x = tf.constant([[1.0, 2.0, 3.0, 4.0]], name="x")
            update_b = tf.assign_add(b, 1.0, name="update_b")
        with tf.device("/job:local/task:1"):
            with tf.name_scope("layer"):
                out = tf.reduce_sum(tf.matmul(x, w, name="y"), name="z") + b
        init = tf.global_variables_initializer()
    sess = tf.Session(servers[0].target, graph=g)
    sess.run(init)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                            output_partition_graphs=True)
    md, md2 = tf.RunMetadata(), tf.RunMetadata()
    sess.run(out, options=options, run_metadata=md)
    sess.run(out, options=options, run_metadata=md2)
    return TwoTaskStep(cluster, servers, g, sess, md, md2, out, update_b)


def stop_two_task_step(step):
    step.sess.close()
    for server in step.servers:
        server.stop()
