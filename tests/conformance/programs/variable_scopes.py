# tf.variable_scope and tf.get_variable: names, sharing, the errors, initializers.
import numpy as np

from engine import tf


def attempt(label, action):
    try:
        result = action()
        print(label, "ok", getattr(result, "name", result))
    except ValueError as e:
        print(label, "ValueError", str(e).splitlines()[0])


with tf.variable_scope("model"):
    w = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(0.5))
    with tf.name_scope("ops"):              # name scopes do not rename variables
        b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        y = tf.matmul(tf.ones([1, 2]), w) + b
    with tf.variable_scope("inner"):
        k = tf.get_variable("k", [2], dtype=tf.int32)        # ints default to zeros
print(w.name, b.name, k.name, y.name, w.shape, k.dtype.name)

with tf.variable_scope("model", reuse=True) as scope:
    again = tf.get_variable("w")
    z = tf.identity(again, name="z")        # the ops get a new name scope
print(scope.name, scope.original_name_scope, again is w, z.name)

attempt("exists", lambda: tf.get_variable("model/w", [2, 3]))
with tf.variable_scope("model"):
    attempt("no reuse", lambda: tf.get_variable("w", [2, 3]))
with tf.variable_scope("model", reuse=True):
    attempt("missing", lambda: tf.get_variable("v", [1]))
    attempt("shape", lambda: tf.get_variable("w", [3, 2]))
    with tf.variable_scope("inner"):        # reuse is inherited
        attempt("inherited", lambda: tf.get_variable("k", [2], dtype=tf.int32))
with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
    a1 = tf.get_variable("a", [], initializer=tf.ones_initializer())
with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
    a2 = tf.get_variable("a", [])
print("auto", a1 is a2, a1.name)

with tf.variable_scope(None, default_name="layer"):
    l1 = tf.get_variable("w", [1])
with tf.variable_scope(None, default_name="layer"):
    l2 = tf.get_variable("w", [1])
with tf.variable_scope(tf.get_variable_scope(), reuse=True):
    root = tf.get_variable("model/w")
print(l1.name, l2.name, root is w)

with tf.variable_scope("init", initializer=tf.constant_initializer(2.0)):
    s = tf.get_variable("s", [2])           # the scope's initializer
    g = tf.get_variable("g", [200, 300], initializer=tf.glorot_uniform_initializer(seed=1))
    n = tf.get_variable("n", [1000], initializer=tf.truncated_normal_initializer(stddev=0.5))
    v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0, 3.0]))
print(s.name, g.name, n.name, v.name, v.shape)

print(sorted(x.name for x in tf.trainable_variables()))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(y).tolist(), sess.run(k).tolist(), sess.run([a1, s, v]))
    gv, nv = sess.run([g, n])
    limit = np.sqrt(6.0 / 500)
    print("glorot within limit", bool(np.abs(gv).max() <= limit), round(float(gv.std()), 2))
    # An unseeded draw: its spread is 0.5 * 0.88 (truncation), give or take 0.01.
    print("truncated within 2 stddev", bool(np.abs(nv).max() <= 1.0),
          "spread about 0.44:", bool(0.40 < nv.std() < 0.48))
