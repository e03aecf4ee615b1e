# The first graph of the course, then a tour of everyday ops.
import numpy as np

from engine import tf

x = tf.constant(2, name="x")
y1 = x + 300
y2 = x - 66
y = y1 + y2
with tf.Session() as sess:
    print("y =", sess.run(y))
    print("y1, y2 =", sess.run([y1, y2]))

m = tf.constant([[1, 2, 3], [4, 5, 6]], name="m")
f = tf.constant([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]], name="f")
row = tf.constant([10, 20, 30], name="row")
p = tf.constant([7, -7, 9], name="p")
q = tf.constant([2, 2, -4], name="q")
logits = tf.constant([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], name="logits")

checks = [
    ("reduce_sum", tf.reduce_sum(m)),
    ("reduce_sum axis 0", tf.reduce_sum(m, axis=0)),
    ("reduce_sum axis 1 keepdims", tf.reduce_sum(m, axis=1, keepdims=True)),
    ("reduce_mean ints", tf.reduce_mean(m)),            # integer mean: 21 // 6
    ("matmul", tf.matmul(tf.cast(m, tf.float32), f)),
    ("broadcast add", m + row),
    ("broadcast scalar", m * 2),
    ("int //", p // q),                                 # floors, like Python
    ("int %", p % q),                                   # sign of the divisor
    ("int /", p / q),                                   # int32 / int32 -> float64
    ("float /", tf.constant(7.0) / 2.0),
    ("greater", p > q),
    ("equal", tf.equal(p, q)),
    ("where", tf.where(p > q, p, q)),
    ("where coordinates", tf.where(p > 0)),
    ("cast to int", tf.cast(tf.constant([1.7, -1.7]), tf.int32)),
    ("cast to bool", tf.cast(p, tf.bool)),
    ("argmax axis 1", tf.argmax(m, axis=1)),
    ("argmax axis 0", tf.argmax(logits, axis=0)),       # ties -> first index
]
with tf.Session() as sess:
    for label, t in checks:
        print(f"{label}: {sess.run(t)!r}")
    probs = sess.run(tf.nn.softmax(logits))
    print("softmax:", repr(np.round(probs, 4)), probs.dtype)
    print("softmax rows sum to 1:", np.allclose(probs.sum(axis=1), 1.0))
