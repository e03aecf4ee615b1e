# tf.nn.moments and tf.nn.l2_normalize: values, shapes, gradients.
import numpy as np

from engine import tf

x = tf.constant([[1.0, 2.0, 6.0], [3.0, 4.0, 0.0]])
mean, var = tf.nn.moments(x, axes=[0])
mean_all, var_all = tf.nn.moments(x, axes=[0, 1], keep_dims=True)
unit_rows = tf.nn.l2_normalize(x, axis=1)
unit_all = tf.nn.l2_normalize(x)
zero = tf.nn.l2_normalize(tf.zeros([2]), axis=0)
for t in (mean, var, mean_all, var_all, unit_rows, unit_all, zero):
    print(t.shape, t.dtype.name)
w = tf.Variable([[1.0, 2.0], [3.0, 5.0]])
m, v = tf.nn.moments(w, axes=[1])
grad = tf.gradients(tf.reduce_sum(v) + tf.reduce_sum(tf.nn.l2_normalize(w, axis=1)), w)[0]
with tf.Session() as sess:
    sess.run(w.initializer)
    for value in sess.run([mean, var, mean_all, var_all, unit_rows, unit_all, zero]):
        print(np.round(value, 5).tolist())
    print("grad", np.round(sess.run(grad), 5).tolist())
