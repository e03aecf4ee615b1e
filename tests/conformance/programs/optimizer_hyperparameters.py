# apply_gradients makes each hyperparameter one tensor, under the optimizer's
# name scope (GradientDescent/learning_rate), that every update op reads; a
# float64 variable gets it through a Cast of the float32 constant, so 0.1
# arrives as 0.10000000149011612.
import numpy as np

from engine import tf

results = {}
for make in (lambda: tf.train.GradientDescentOptimizer(0.1),
             lambda: tf.train.MomentumOptimizer(0.1, 0.9),
             lambda: tf.train.AdagradOptimizer(0.1),
             lambda: tf.train.RMSPropOptimizer(0.1),
             lambda: tf.train.AdamOptimizer(0.1)):
    g = tf.Graph()
    with g.as_default():
        w32 = tf.Variable([1.0, 2.0], name="w32")
        w64 = tf.Variable(np.array([1.0, 2.0]), name="w64")
        loss = tf.reduce_sum(tf.square(w32)) + tf.cast(tf.reduce_sum(w64 * w64), tf.float32)
        opt = make()
        train = opt.minimize(loss)
        consts = sorted(op.name for op in g.get_operations()
                        if op.type == "Const" and op.name.startswith(opt.get_name() + "/"))
        casts = sorted(op.name for op in g.get_operations()
                       if op.type == "Cast" and op.name.startswith(opt.get_name() + "/"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            print(opt.get_name(), consts, casts)
            print("  w32", sess.run(w32).tolist(), "w64", repr(sess.run(w64).tolist()))
