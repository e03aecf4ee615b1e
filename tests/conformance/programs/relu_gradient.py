# The gradient of tf.nn.relu is one ReluGrad op (gradients * (features > 0)),
# as in TF's graph: its name, its values at 0, NaN and infinities, and its own
# gradient (the same mask on the incoming gradient, zero for the features).
import numpy as np

from engine import tf

x = tf.constant([-1.0, 0.0, 2.0, np.nan, 5.0], name="x")
y = tf.nn.relu(x)
g = tf.gradients(tf.reduce_sum(y * [1.0, 2.0, 3.0, 4.0, np.inf]), x)[0]
print(g.op.name, g.op.type, [t.op.type for t in g.op.inputs])
h = tf.placeholder(tf.float32, [None, 3], name="h")
w = tf.constant([[1.0, -2.0, 0.5]] * 3)
loss = tf.reduce_sum(tf.nn.relu(tf.matmul(h, w)) ** 2)
dh = tf.gradients(loss, h)[0]
ddh = tf.gradients(tf.reduce_sum(dh), h)[0]
print(sorted(op.type for op in tf.get_default_graph().get_operations()
             if "Relu_1_grad" in op.name))
with tf.Session() as sess:
    print(sess.run(g).tolist())
    feed = {h: [[1.0, 2.0, -1.0], [-3.0, 0.5, 0.0]]}
    print(np.round(sess.run(dh, feed), 5).tolist(), np.round(sess.run(ddh, feed), 5).tolist())
