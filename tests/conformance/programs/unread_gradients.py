# optimizer.minimize builds a gradient for every input of every op on the way
# back (the images' too) and groups each op's gradients (gate_gradients=GATE_OP),
# but a step runs only the ops whose values are read: the gradient for the fed
# images is in the graph, waited for by the group, and not run (TF's graph
# optimizer turns it into a NoOp). The trained values are the same either way.
import numpy as np

from engine import tf

x = tf.placeholder(tf.float32, [4, 3], name="x")
w = tf.Variable(tf.constant([[0.5, -1.0], [1.0, 0.25], [-0.5, 2.0]]), name="w")
h = tf.nn.relu(tf.matmul(x, w))
loss = tf.reduce_sum(tf.square(h - 1.0))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
graph = tf.get_default_graph()
print([op.type for op in graph.get_operations()
       if op.name in ("gradients/MatMul_grad/MatMul", "gradients/MatMul_grad/MatMul_1")])
feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3) / 10}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train, feed)
    md = tf.RunMetadata()
    sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    ran = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    print(sorted(n for n in ran if n.startswith("gradients/MatMul_grad/MatMul")))
    print(np.round(sess.run(w), 5).tolist())
    # Fetched, the same gradient runs.
    dx = graph.get_tensor_by_name("gradients/MatMul_grad/MatMul:0")
    print(np.round(sess.run(dx, feed), 5).tolist())
