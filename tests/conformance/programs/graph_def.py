# Graph.as_graph_def(): TF's GraphDef of a small graph - node names, op types,
# inputs, requested devices and attrs (with TF's defaults) - printed in
# protobuf text format, with and without _output_shapes.
from engine import tf

x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
labels = tf.placeholder(tf.int32, shape=[None], name="labels")
with tf.device("/job:ps/task:0"):
    w = tf.Variable(tf.zeros([3, 2]), name="w")
    b = tf.Variable([0.5, -0.5], name="b")
with tf.device("/job:worker/task:0"):
    with tf.name_scope("layer"):
        logits = tf.nn.relu(tf.matmul(x, w) + b)
        total = tf.reduce_sum(logits, axis=1, keepdims=True, name="total")
    with tf.device("/cpu:0"):
        mean = tf.reduce_mean(tf.cast(labels, tf.float32), name="mean")
with tf.control_dependencies([total]):
    done = tf.identity(mean, name="done")
with tf.colocate_with(w):
    inc = tf.assign_add(w, tf.ones([3, 2]), name="inc")
words = tf.constant(["a", "bb"], name="words")
counts = tf.constant([1, 2, 3], dtype=tf.int64, name="counts")
small = tf.constant(7, name="small")
loss = tf.summary.scalar("loss", mean)

graph = tf.get_default_graph()
graph_def = graph.as_graph_def()
print(type(graph_def).__name__, len(graph_def.node), "nodes, producer", graph_def.versions.producer)
print(graph_def)
later = graph.version
extra = tf.square(mean, name="extra")
print("from_version:", [n.name for n in graph.as_graph_def(from_version=later).node])
with_shapes = graph.as_graph_def(add_shapes=True)
for node in with_shapes.node:
    print(node.name, node.attr["_output_shapes"])
