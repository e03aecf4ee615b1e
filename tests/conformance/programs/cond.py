# tf.cond: only the chosen branch runs (side effects too), nesting, gradients.
import numpy as np

from engine import tf

p = tf.placeholder(tf.bool, [], name="p")
q = tf.placeholder(tf.bool, [], name="q")
x = tf.constant(3.0, name="x")
counter = tf.Variable(0, name="counter")

y = tf.cond(p, lambda: x * 2.0, lambda: x + 100.0)
pair = tf.cond(p, lambda: (tf.constant(1), x), lambda: (tf.constant(2), x * 0.0))
bump = tf.cond(p, lambda: tf.assign_add(counter, 1), lambda: tf.assign_add(counter, 10))
nested = tf.cond(p, lambda: tf.cond(q, lambda: x, lambda: -x), lambda: x * 0.0)
passthrough = tf.cond(q, lambda: x, lambda: y)
print(y.name, y.shape, y.dtype.name, [t.name for t in pair], bump.dtype.name)
print(sorted(op.type for op in tf.get_default_graph().get_operations()
             if op.name.startswith("cond/")))

w = tf.Variable([1.0, 2.0], name="w")
loss = tf.cond(p, lambda: tf.reduce_sum(w * w), lambda: tf.reduce_sum(w) * 5.0)
grad = tf.gradients(loss, w)[0]
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for pv, qv in ((True, True), (True, False), (False, True), (False, False)):
        feed = {p: pv, q: qv}
        print(pv, qv, sess.run([y, pair, nested, passthrough], feed))
    print("counter", [int(sess.run(bump, {p: v})) for v in (True, False, True)],
          int(sess.run(counter)))
    print("grad", sess.run([loss, grad], {p: True}), sess.run([loss, grad], {p: False}))
    sess.run(train, {p: True})
    sess.run(train, {p: False})
    print("w", np.round(sess.run(w), 5).tolist())
    for bad in (lambda: tf.cond(tf.constant(1), lambda: x, lambda: x),
                lambda: tf.cond(p, lambda: (x, x), lambda: x)):
        try:
            bad()
        except (TypeError, ValueError) as e:
            print(type(e).__name__)
