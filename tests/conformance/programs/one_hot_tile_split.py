# tf.one_hot, tf.tile and tf.split: shapes, values, gradients and bad input.
import numpy as np

from engine import tf

labels = tf.placeholder(tf.int32, [None], name="labels")
hot = tf.one_hot(labels, 4)
hot_axis0 = tf.one_hot(tf.constant([1, 3]), 3, on_value=5, off_value=-1, axis=0)
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
tiled = tf.tile(x, [2, 3])
a, b = tf.split(tf.reshape(tf.range(12.0), [3, 4]), 2, axis=1)
p, q, r = tf.split(tf.range(10), [2, -1, 3])
for t in (hot, hot_axis0, tiled, a, b, p, q, r):
    print(t.op.type, t.name, t.shape, t.dtype.name)

w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
weights = tf.constant(np.arange(24, dtype=np.float32).reshape(4, 6))
left, right = tf.split(w, 2, axis=1)
loss = tf.reduce_sum(tf.tile(w, [2, 3]) * weights) + tf.reduce_sum(left * 10.0)
grad = tf.gradients(loss, w)[0]

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in sess.run([hot, hot_axis0, tiled, a, b, p, q, r], {labels: [0, 3, 7, -1, 2]}):
        print(v.dtype, v.tolist())
    print("grad", sess.run(grad).tolist())
    for bad in (lambda: tf.split(tf.range(10), 3),
                lambda: tf.tile(x, [2]),
                lambda: tf.one_hot(tf.constant([1.0]), 3)):
        try:
            bad()
        except (ValueError, TypeError) as e:
            print(type(e).__name__, str(e).splitlines()[0][:90])
