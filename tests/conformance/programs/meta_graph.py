# export_meta_graph / import_meta_graph in one program: a graph, its
# collections and its saver written to a .meta file, read back into a new
# graph, trained there, and saved and restored through the imported Saver.
import os
import tempfile

import numpy as np

from engine import tf

root = tempfile.mkdtemp()
data_x = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0]],
                  dtype=np.float32)
data_y = data_x.dot(np.array([[1.0], [-2.0], [0.5]], dtype=np.float32))

with tf.Graph().as_default():
    X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
    y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
    theta = tf.Variable(tf.zeros([3, 1]), name="theta")
    mse = tf.reduce_mean(tf.square(tf.matmul(X, theta, name="predictions") - y), name="mse")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(mse, global_step=step)
    tf.summary.scalar("MSE", mse)
    tf.add_to_collection("my_strings", "hello")
    tf.add_to_collection("my_numbers", 7)
    saver = tf.train.Saver()
    meta = tf.train.export_meta_graph(os.path.join(root, "model.meta"))
    print(type(meta).__name__, sorted(meta.collection_def))
    print(meta.saver_def)
    for key in sorted(meta.collection_def):
        print(key, meta.collection_def[key].WhichOneof("kind"), meta.collection_def[key])
    listed = {o.name for o in meta.meta_info_def.stripped_op_list.op}
    print("stripped_op_list: every op type of the graph, once:",
          listed == {n.op for n in meta.graph_def.node}, sorted(listed & {"MatMul", "SaveV2"}))
    text = tf.train.export_meta_graph(os.path.join(root, "model.pbtxt"), as_text=True)

for name in ("model.meta", "model.pbtxt"):
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(root, name))
        print(name, type(saver).__name__, [v.name for v in tf.global_variables()],
              [v.name for v in tf.trainable_variables()])
        print("train_op:", [t.name for t in tf.get_collection("train_op")],
              "summaries:", [t.name for t in tf.get_collection("summaries")],
              "strings:", tf.get_collection("my_strings"),
              "numbers:", tf.get_collection("my_numbers"))
        mse = g.get_tensor_by_name("mse:0")
        train = tf.get_collection("train_op")[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(30):
                loss, _ = sess.run([mse, train], {"X:0": data_x, "y:0": data_y})
            print("loss after 30 steps: %.5f" % loss)
            print("theta:", np.round(sess.run("theta:0"), 4).ravel().tolist())
            prefix = saver.save(sess, os.path.join(root, "trained"),
                                global_step=tf.train.get_global_step())
            print("saved", prefix.replace(root, "<dir>"))
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            print("restored step", sess.run("global_step:0"),
                  np.round(sess.run("theta:0"), 4).ravel().tolist())

with tf.Graph().as_default():
    meta = tf.train.import_meta_graph(os.path.join(root, "model.meta"), import_scope="copy")
    print("scoped:", [v.name for v in tf.global_variables()],
          tf.get_default_graph().get_operation_by_name("copy/mse").type)
