# Gradients through tf.while_loop (the backward loop of TF1's design): through
# captured values and initial values, a tf.cond inside the loop, a TensorArray
# loop, nested loops, maximum_iterations, and a loop with back_prop=False.
import numpy as np

from engine import tf


def r(values):
    return np.round(np.asarray(values, dtype=np.float64), 4).tolist()


x = tf.constant(2.0)
_, p = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * x), [0, tf.constant(1.0)])
g_p = tf.gradients(p, x)

w = tf.Variable([1.0, 2.0])
v0 = tf.constant([0.5, -1.0])
_, v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.tanh(v * w + 0.1)), [0, v0])
loss = tf.reduce_sum(v * v)
g_v = tf.gradients(loss, [w, v0])

_, c = tf.while_loop(
    lambda i, a: i < 6,
    lambda i, a: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a * x, lambda: a + x)),
    [0, tf.constant(1.0)])
g_c = tf.gradients(c, x)

inp = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 4.0)
ta = tf.TensorArray(tf.float32, size=3).unstack(inp)


def rnn_body(t, h, out):
    h = tf.sigmoid(h * w + ta.read(t))
    return t + 1, h, out.write(t, h)


_, h, out = tf.while_loop(lambda t, *_: t < 3, rnn_body,
                          [0, tf.zeros([2]), tf.TensorArray(tf.float32, size=3)])
seq = out.stack()
l2 = tf.reduce_sum(seq * seq) + tf.reduce_sum(h)
g_ta = tf.gradients(l2, [w, inp])


def outer(i, acc):
    _, inner = tf.while_loop(lambda j, a: j < 3, lambda j, a: (j + 1, a * x), [0, acc])
    return i + 1, inner + 1.0


_, n = tf.while_loop(lambda i, a: i < 2, outer, [0, tf.constant(1.0)])
g_n = tf.gradients(n, x)
m = tf.while_loop(lambda a: a < 1000.0, lambda a: a * x, [tf.constant(1.0)],
                  maximum_iterations=4)
g_m = tf.gradients(m, x)
q = tf.while_loop(lambda a: a < 10.0, lambda a: a * x, [tf.constant(1.0)], back_prop=False)
print("back_prop=False:", tf.gradients(q, x))
par = tf.while_loop(lambda i, a: i < 20, lambda i, a: (i + 1, tf.tanh(a * x + 1.0) * 2.0),
                    [0, tf.constant(0.3)], parallel_iterations=1)
g_par = tf.gradients(par[1], x)

with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    print("power and its gradient:", r(s.run([p] + g_p)))
    lv, gw, gv0 = s.run([loss] + g_v)
    print("tanh loop:", r(lv), r(gw), r(gv0))
    print("cond in loop:", r(s.run([c] + g_c)))
    l2v, gw2, ginp = s.run([l2] + g_ta)
    print("TensorArray loop:", r(l2v), r(gw2), r(ginp))
    print("nested:", r(s.run([n] + g_n)))
    print("maximum_iterations:", r(s.run([m] + g_m)))
    print("parallel_iterations=1:", r(s.run([par[1]] + g_par)))
