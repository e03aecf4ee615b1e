# tf.data iterators in sessions on a server: the pipeline runs on the task the
# iterator is placed on; with a shared_name two sessions share one iterator.
import socket

import numpy as np

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


cluster = tf.train.ClusterSpec({"worker": ["localhost:%d" % free_port() for _ in range(2)]})
servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]


def pipeline(limit):
    base = tf.data.Dataset.range(limit).map(lambda x: x * 2).filter(
        lambda x: tf.not_equal(x % 3, 0))
    return base.batch(2)


def shared_iterator():
    with tf.device("/job:worker/task:1"):
        data = tf.data.Dataset.from_tensor_slices(
            {"x": np.arange(6, dtype=np.float32), "y": np.arange(6) % 2})
        it = data.repeat(2).make_initializable_iterator(shared_name="shared_input")
    return it, it.get_next()


g1 = tf.Graph()
with g1.as_default():
    limit = tf.placeholder(tf.int64, [])
    with tf.device("/job:worker/task:1"):
        it = pipeline(limit).make_initializable_iterator()
        batch = it.get_next()
    one_shot = tf.data.Dataset.from_tensor_slices(tf.constant([[1, 2], [3, 4], [5, 6]])) \
        .interleave(lambda row: tf.data.Dataset.from_tensor_slices(row), cycle_length=2) \
        .make_one_shot_iterator().get_next()
    shared, shared_next = shared_iterator()
    print("iterator op on:", it._iterator_resource.op.device if hasattr(
        it, "_iterator_resource") else batch.op.device)

with g1.as_default(), tf.Session(servers[0].target) as sess:
    sess.run(it.initializer, {limit: 10})
    out = []
    try:
        while True:
            out.append(sess.run(batch).tolist())
    except tf.errors.OutOfRangeError:
        print("remote pipeline, range(10):", out)
    sess.run(it.initializer, {limit: 3})
    print("re-initialized, range(3):", sess.run(batch).tolist())
    print("one-shot interleave:", [int(sess.run(one_shot)) for _ in range(6)])
    sess.run(shared.initializer)
    first = sess.run(shared_next)
    print("session 1 takes:", first["x"].tolist(), first["y"].tolist())

g2 = tf.Graph()
with g2.as_default():
    shared2, shared_next2 = shared_iterator()
with g2.as_default(), tf.Session(servers[0].target) as other:
    taken = [float(other.run(shared_next2)["x"]) for _ in range(3)]
    print("session 2 (another graph) continues the shared iterator:", taken)
with g1.as_default(), tf.Session(servers[1].target) as sess:
    print("a session on the other task continues it too:", float(sess.run(shared_next)["x"]))
