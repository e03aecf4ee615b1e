# Randomness with neither a graph seed nor op seeds: every random op carries
# seeds (0, 0) and draws from a fresh random stream in each session. What is
# still deterministic, and must agree with TF, is printed here.
import numpy as np

import random_catalog
from engine import tf

g, draws, variables, dense_out = random_catalog.build(graph_seed=None, op_seed=None)
print("every random op has seeds (0, 0):",
      all((op.get_attr("seed"), op.get_attr("seed2")) == (0, 0)
          for op in random_catalog.random_ops_of(g)))
with g.as_default():
    by_label = {label: t for label, t, _ in draws}
    with tf.Session() as sess:
        a, b = sess.run(by_label["uniform [2,3]"]), sess.run(by_label["uniform [2,3]"])
        print("uniform: shape", a.shape, "dtype", a.dtype, "in [0, 1):",
              bool(((a >= 0) & (a < 1)).all()), "second draw differs:", not np.array_equal(a, b))
        r = sess.run(by_label["uniform in [-2, 3)"])
        print("uniform in [-2, 3):", bool(((r >= -2) & (r < 3)).all()))
        ints = sess.run(by_label["uniform int32 in [0, 100)"])
        print("int32:", ints.dtype, bool(((ints >= 0) & (ints < 100)).all()))
        perm = sess.run(by_label["random_shuffle range(12)"])
        print("shuffle is a permutation:", sorted(perm.tolist()) == list(range(12)))
        m = sess.run(by_label["multinomial"])
        print("multinomial:", m.shape, m.dtype, bool(((m >= 0) & (m < 3)).all()))
        d = sess.run(by_label["dropout rate 0.5"])
        print("dropout values:", sorted(set(d.reshape(-1).tolist())) in ([0.0, 2.0], [0.0], [2.0]))
        t = sess.run(by_label["truncated normal stddev 0.5"])
        print("truncated normal within 2 stddev:", bool((np.abs(t) < 1.0).all()))
        sess.run(tf.global_variables_initializer())
        w = sess.run(variables[0][1])
        limit = np.sqrt(6.0 / (3 + 2))
        print("glorot uniform within its limit:", bool((np.abs(w) < limit).all()))
    with tf.Session() as sess:
        print("a new session draws other numbers:",
              not np.array_equal(sess.run(by_label["uniform [2,3]"]), a))
    q = tf.RandomShuffleQueue(10, 0, [tf.int32], shapes=[[]])
    print("queue seeds:", q.queue_ref.op.get_attr("seed"), q.queue_ref.op.get_attr("seed2"))
    with tf.Session() as sess:
        sess.run(q.enqueue_many([tf.range(10)]))
        print("queue order is a permutation:",
              sorted(sess.run(q.dequeue_many(10)).tolist()) == list(range(10)))
