"""A real data-parallel training step on 1 ps + 2 workers, for the widget tests.

Three in-process ``tf.train.Server``s on OS-picked ports. The model's
variables live on the ps; each worker computes the gradients of its half of
the batch (``in_graph_replicas``), the ps averages them and applies Adam.
float32 tensors that cross tasks are int8-compressed
(``graph_options.transfer_compression``), and ``loss_after_update`` on
worker 0 waits for the update on the ps, so a control signal crosses too.
"""

import collections

import numpy as np

import minitf.compat.v1 as tf
from minitf import datasets
from minitf.distributed.launcher import free_port
from minitf.train.parallel import in_graph_replicas

TrainingStep = collections.namedtuple("TrainingStep", "cluster servers graph sess md")
WORKERS = ["/job:worker/task:0", "/job:worker/task:1"]


def _make_variables():
    rng = np.random.RandomState(0)
    return {"w1": tf.Variable(rng.randn(2, 16).astype(np.float32) * 0.5, name="w1"),
            "b1": tf.Variable(tf.zeros([16]), name="b1"),
            "w2": tf.Variable(rng.randn(16, 3).astype(np.float32) * 0.1, name="w2"),
            "b2": tf.Variable(tf.zeros([3]), name="b2")}


def _build_loss(p, x, y):
    h = tf.nn.relu(tf.matmul(x, p["w1"]) + p["b1"])
    return tf.losses.sparse_softmax_cross_entropy(labels=y, logits=tf.matmul(h, p["w2"]) + p["b2"])


def start_training_step(compression="int8"):
    cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % free_port()],
                                    "worker": ["localhost:%d" % free_port() for _ in range(2)]})
    servers = [tf.train.Server(cluster, job_name=job, task_index=i)
               for job, n in (("ps", 1), ("worker", 2)) for i in range(n)]
    try:
        x_data, y_data = datasets.spiral(points_per_class=20, classes=3, seed=0)
        graph = tf.Graph()
        with graph.as_default():
            train, tower_losses, _ = in_graph_replicas(
                _make_variables, _build_loss, [tf.constant(x_data), tf.constant(y_data)],
                WORKERS, tf.train.AdamOptimizer(0.02), variables_device="/job:ps/task:0")
            with tf.device(WORKERS[0]):
                loss = tf.add_n(tower_losses) / 2
                with tf.control_dependencies([train]):
                    tf.identity(loss, name="loss_after_update")
            init = tf.global_variables_initializer()
        config = tf.ConfigProto()
        config.graph_options.transfer_compression = compression
        sess = tf.Session(servers[1].target, graph=graph, config=config)
        sess.run(init)
        for _ in range(3):
            sess.run(train)
        md = tf.RunMetadata()
        sess.run("loss_after_update:0", options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
            run_metadata=md)
    except BaseException:
        for s in servers:
            s.stop()
        raise
    return TrainingStep(cluster, servers, graph, sess, md)


def stop_training_step(step):
    step.sess.close()
    for server in step.servers:
        server.stop()
