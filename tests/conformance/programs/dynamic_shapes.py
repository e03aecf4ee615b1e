# Shapes computed in the graph: tf.shape(x), [tf.shape(x)[0], -1], zeros/ones/fill.
import numpy as np

from engine import tf

x = tf.placeholder(tf.float32, [None, 2, 3], name="x")
y = tf.placeholder(tf.float32, [None, 6], name="y")
n = tf.shape(x)[0]

outputs = [
    tf.reshape(x, [n, -1]),                 # the batch size is only known at run time
    tf.reshape(x, [-1, 6]),
    tf.reshape(x, tf.shape(y)),
    tf.fill(tf.shape(x), 7.0),
    tf.zeros(tf.shape(y)),
    tf.ones([n, 3], dtype=tf.int32),
    tf.zeros_like(x) + tf.reshape(tf.ones(tf.shape(y)), [-1, 2, 3]),
]
for t in outputs:
    print(t.op.type, t.shape, t.dtype.name)

with tf.Session() as sess:
    values = sess.run(outputs, {x: np.arange(24, dtype=np.float32).reshape(4, 2, 3),
                                y: np.ones((4, 6), np.float32)})
    for v in values:
        print(v.shape, v.dtype, v.reshape(-1)[:7].tolist())
    try:
        sess.run(tf.reshape(x, [n, 5]), {x: np.ones((4, 2, 3), np.float32)})
    except tf.errors.InvalidArgumentError as e:
        # (TF 2.x prefixes where the node was defined; the cause is the same line)
        print("InvalidArgumentError",
              next(line for line in e.message.splitlines() if "reshape" in line))
