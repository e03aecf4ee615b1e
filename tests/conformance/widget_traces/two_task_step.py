"""One traced training step on a two-task cluster (a ps and a worker), the
same program for minitf and for real TensorFlow.

The widgets must draw real TF's RunMetadata as well as minitf's, so this
program records one with each. Run it with real TF to refresh the fixture
the conformance tests read (no TensorFlow is needed to *read* it: the
``tensorboard`` package ships TF's protos)::

    MINITF_ENGINE=tf ~/.cache/minitf/tf-venv/bin/python \\
        tests/conformance/widget_traces/two_task_step.py \\
        tests/conformance/widget_traces/tf_two_task_step.pb

What crosses between the tasks: the weights ``w`` and ``b`` (ps -> worker),
the learning rate and the gradients (worker -> ps), and a control signal
(ps -> worker): ``loss_after_update`` waits for the update on the ps.
"""

import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/conformance, for engine.py

import numpy as np  # noqa: E402

from engine import tf  # noqa: E402


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_step():
    """``(RunMetadata, Graph)`` of one traced step; every server is stopped."""
    cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % _free_port()],
                                    "worker": ["localhost:%d" % _free_port()]})
    servers = [tf.train.Server(cluster, job_name="ps", task_index=0),
               tf.train.Server(cluster, job_name="worker", task_index=0)]
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                w = tf.Variable(np.full((4, 3), 0.5, np.float32), name="w")
                b = tf.Variable(0.1, name="b")
            with tf.device("/job:worker/task:0"):
                x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4), name="x")
                with tf.name_scope("model"):
                    y = tf.matmul(x, w) + b
                    loss = tf.reduce_mean(tf.square(y), name="loss")
                train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
                with tf.control_dependencies([train]):
                    after = tf.identity(loss, name="loss_after_update")
            init = tf.global_variables_initializer()
        with tf.Session(servers[1].target, graph=g) as sess:
            sess.run(init)
            sess.run(train)
            md = tf.RunMetadata()
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                    output_partition_graphs=True)
            sess.run(after, options=options, run_metadata=md)
        return md, g
    finally:
        for server in servers:
            if hasattr(server, "stop"):  # minitf; TF's in-process servers stop at exit
                server.stop()


if __name__ == "__main__":
    md, _ = run_step()
    with open(sys.argv[1], "wb") as f:
        f.write(md.SerializeToString())
