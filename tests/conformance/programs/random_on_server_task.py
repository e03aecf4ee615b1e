# The same seeded program with its random ops pinned to a server task: a
# session on task 0 runs ops placed on task 1, and every number is the one a
# local session draws (compare random_graph_seed.expected). The streams live
# in the worker's state for that session: a new session starts them over.
# A RandomShuffleQueue with a shared name lives on its server across
# sessions, and so does its stream: the second session continues it.
import socket

import random_catalog
from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


tasks = ["localhost:%d" % free_port(), "localhost:%d" % free_port()]
cluster = tf.train.ClusterSpec({"local": tasks})
servers = [tf.train.Server(cluster, job_name="local", task_index=i) for i in range(2)]

random_catalog.show(graph_seed=42, op_seed=None, target=servers[0].target,
                    device="/job:local/task:1")

with tf.Graph().as_default():
    with tf.device("/job:local/task:1"):
        q = tf.RandomShuffleQueue(50, 0, [tf.int32], shapes=[[]], seed=4, shared_name="rsq")
        fill = q.enqueue_many([tf.range(20)])
        take = q.dequeue_many(5)
    with tf.Session(servers[0].target) as sess:
        sess.run(fill)
        print("shared queue on task 1, session 1:", sess.run(take).tolist())
    with tf.Session(servers[1].target) as sess:
        print("session 2 (from task 1) continues it:", sess.run(take).tolist(),
              sess.run(take).tolist())
