# A TF1 textbook's TensorBoard cells (Geron, chapter 9), unchanged: a FileWriter
# with the graph, a scalar summary evaluated every 10 batches and added with
# the step, then the event file read back with tf.train.summary_iterator.
import os
import tempfile
from datetime import datetime

import numpy as np

from engine import tf

now = datetime.utcnow().strftime("%Y%m%d%H%M%S")
root_logdir = os.path.join(tempfile.mkdtemp(), "tf_logs")
logdir = "{}/run-{}/".format(root_logdir, now)

rng = np.random.RandomState(42)
data = np.c_[np.ones((100, 1)), rng.rand(100, 2)].astype(np.float32)
target = data.dot(np.array([[4.0], [3.0], [-2.0]], dtype=np.float32))

n_epochs, batch_size, learning_rate = 3, 20, 0.05
n_batches = int(np.ceil(len(data) / batch_size))
X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
theta = tf.Variable(tf.constant([[0.1], [0.2], [0.3]]), name="theta")
y_pred = tf.matmul(X, theta, name="predictions")
error = y_pred - y
mse = tf.reduce_mean(tf.square(error), name="mse")
optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
training_op = optimizer.minimize(mse)
init = tf.global_variables_initializer()

mse_summary = tf.summary.scalar("MSE", mse)
file_writer = tf.summary.FileWriter(logdir, tf.get_default_graph())

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(n_epochs):
        for batch_index in range(n_batches):
            X_batch = data[batch_index * batch_size:(batch_index + 1) * batch_size]
            y_batch = target[batch_index * batch_size:(batch_index + 1) * batch_size]
            if batch_index % 2 == 0:
                summary_str = mse_summary.eval(feed_dict={X: X_batch, y: y_batch})
                step = epoch * n_batches + batch_index
                file_writer.add_summary(summary_str, step)
            sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
    best_theta = theta.eval()
file_writer.close()
print("best_theta", np.round(best_theta, 4).ravel().tolist())

(event_file,) = os.listdir(logdir)
print(event_file.startswith("events.out.tfevents."))
for event in tf.train.summary_iterator(os.path.join(logdir, event_file)):
    kind = event.WhichOneof("what")
    if kind == "summary":
        for value in event.summary.value:
            print(event.step, "summary", value.tag, "%.4f" % value.simple_value)   # (float32 means)
    elif kind == "file_version":
        print(event.step, kind, event.file_version)
    elif kind in ("graph_def", "meta_graph_def"):
        print(event.step, kind, len(getattr(event, kind)) > 100)
    else:
        print(event.step, kind)
