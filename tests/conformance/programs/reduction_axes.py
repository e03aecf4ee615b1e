# How reductions get their axes: names, shapes, unknown ranks, computed axes.
import numpy as np

from engine import tf

x = tf.placeholder(tf.float32, [2, 3], name="x")
anything = tf.placeholder(tf.float32, name="anything")      # rank unknown until run
axis = tf.placeholder(tf.int32, [], name="axis")

outputs = [
    tf.reduce_sum(x),                       # every axis: a Const named "Const"
    tf.reduce_mean(x, name="mean"),
    tf.reduce_max(x, axis=0),               # "Max/reduction_indices"
    tf.reduce_min(x, axis=-1, keepdims=True),
    tf.reduce_prod(x, [0, 1]),
    tf.reduce_sum(anything),                # range(0, rank(anything))
    tf.reduce_max(x, axis=axis),            # axes known only at run time
    tf.reduce_sum(x, axis=axis, keepdims=True),
    tf.reduce_all(x > 0, axis=1),
]
for t in outputs:
    print(t.name, t.shape, [i.op.name for i in t.op.inputs])
print(sorted(op.name for op in tf.get_default_graph().get_operations()))

with tf.Session() as sess:
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3),
            anything: np.ones((2, 2, 2), np.float32), axis: 1}
    for t, value in zip(outputs, sess.run(outputs, feed)):
        print(t.name, np.asarray(value).tolist())
    print("scalar", sess.run(tf.reduce_sum(anything), {anything: 5.0}))

# Gradients through axis=-1 and axis=None.
w = tf.constant([[1.0, 2.0], [3.0, 4.0]])
loss = tf.reduce_sum(tf.reduce_mean(w * w, axis=-1))
with tf.Session() as sess:
    print("grad", sess.run(tf.gradients(loss, w)[0]).tolist())
