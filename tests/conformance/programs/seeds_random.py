# Random ops and seeds: facts every engine must share. (The numbers themselves
# are TF's too; the random_*.py programs print them.)
import numpy as np

from engine import tf


def build(graph_seed, op_seed):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        r = tf.random_uniform([3], seed=op_seed, name="r")
        n = tf.random_normal([2, 2], mean=5.0, seed=op_seed, name="n")
    return g, r, n


def first_values(graph_seed, op_seed):
    g, r, n = build(graph_seed, op_seed)
    with tf.Session(graph=g) as sess:
        return sess.run(r)


g, r, n = build(1, 2)
print("uniform:", r.shape, r.dtype.name, " normal:", n.shape, n.dtype.name)
with tf.Session(graph=g) as sess:
    first, second = sess.run(r), sess.run(r)
    print("in [0, 1):", bool(np.all((first >= 0) & (first < 1))))
    print("dtype of value:", first.dtype, first.shape)
    print("second run differs:", not np.array_equal(first, second))
    print("normal dtype:", sess.run(n).dtype)
with tf.Session(graph=g) as sess:
    print("new session repeats:", np.array_equal(sess.run(r), first))

# Same graph seed and op seed in a brand-new graph: same numbers.
print("new graph, same seeds:", np.array_equal(first_values(1, 2), first))
print("graph seed only is reproducible:",
      np.array_equal(first_values(1, None), first_values(1, None)))
print("other op seed differs:",
      not np.array_equal(first_values(1, 3), first))
print("no seeds differ:",
      not np.array_equal(first_values(None, None), first_values(None, None)))
