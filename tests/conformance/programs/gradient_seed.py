# The seed of tf.gradients, dy/dy = 1, is Fill(shape of y, 1) named grad_ys_0.
# When y's shape is static that shape is a constant, so the seed does not read
# y, and a training step that fetches only the update never runs the loss's
# last op (here the forward Mean); with an unknown shape it is a Shape op.
import numpy as np

from engine import tf

x = tf.placeholder(tf.float32, [4, 3], name="x")
w = tf.Variable(tf.constant([[0.5, -1.0], [1.0, 0.25], [-0.5, 2.0]]), name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w)), name="loss")
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
graph = tf.get_default_graph()


def described(prefix):
    return [(op.name, op.type, [t.name for t in op.inputs]) for op in graph.get_operations()
            if op.name.startswith(prefix + "/grad_ys") or op.name == prefix + "/Shape"]


print(described("gradients"))
u = tf.placeholder(tf.float32, None, name="u")
tf.gradients(u * 2.0, u, name="dynamic")   # y of unknown shape
print(described("dynamic"))
feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3) / 10}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    md = tf.RunMetadata()
    sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    ran = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    print("loss" in ran)
    print(np.round(sess.run(w), 5).tolist(), round(float(sess.run(loss, feed)), 5))
