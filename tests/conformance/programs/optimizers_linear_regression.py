# Linear regression trained by each of TF1's optimizers: after 30 steps from
# the same start the weights agree with real TF to 3 decimals, and after 300
# both have converged to the true weights (RMSProp keeps oscillating around
# them by about its learning rate, in TF as in minitf, so the final check
# uses a tolerance).
import numpy as np

from engine import tf

rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, (32, 3)).astype(np.float32)
Y = X.dot(np.array([[2.0], [-1.0], [0.5]], np.float32)) + 0.3

OPTIMIZERS = [
    ("GradientDescent", lambda: tf.train.GradientDescentOptimizer(0.2)),
    ("Momentum", lambda: tf.train.MomentumOptimizer(0.05, 0.9)),
    ("Nesterov", lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True)),
    ("Adagrad", lambda: tf.train.AdagradOptimizer(0.5)),
    ("RMSProp", lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5)),
    ("Adam", lambda: tf.train.AdamOptimizer(0.05)),
]

for label, make in OPTIMIZERS:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        y = tf.constant(Y)
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        b = tf.Variable(0.0, name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = tf.train.get_or_create_global_step()
        opt = make()
        train = opt.minimize(loss, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(30):
                sess.run(train)
            early = sess.run(w).ravel()
            for _ in range(270):
                sess.run(train)
            final = sess.run(w).ravel()
            print("%-15s step %d after 30: %s  converged: %s (loss < 1e-3: %s)" % (
                label, sess.run(step), np.round(early, 3),
                bool(np.allclose(final, [2.0, -1.0, 0.5], atol=0.02)
                     and abs(sess.run(b) - 0.3) < 0.02), bool(sess.run(loss) < 1e-3)))
            print("   slots:", opt.get_slot_names(),
                  sorted(v.op.name for v in opt.variables()))
