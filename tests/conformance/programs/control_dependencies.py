# tf.control_dependencies: only ops *created inside* the block get the extra
# inputs; nested blocks accumulate; control_dependencies(None) clears them.
from engine import tf


def deps(t):
    op = t if isinstance(t, tf.Operation) else t.op
    return [i.name for i in op.control_inputs]


a = tf.constant(1, name="a")
b = tf.constant(2, name="b")
c = tf.constant(3, name="c")

with tf.control_dependencies([a]):
    d = tf.add(b, c, name="d")             # created inside: depends on a
    e = tf.identity(b, name="e")
    with tf.control_dependencies([b]):
        f = tf.add(c, c, name="f")         # nested: depends on a and b
        x = tf.add(a, c, name="x")         # a is already a data input: only b
        with tf.control_dependencies(None):
            g = tf.add(a, b, name="g")     # cleared: no control inputs
            with tf.control_dependencies([c]):
                h = tf.add(a, b, name="h")  # only c
    i = tf.multiply(b, c, name="i")        # back to the outer block: a
j = tf.add(b, c, name="j")                 # outside: none
k = d + 1                                  # uses d, but created outside: none

for t in [a, d, e, f, x, g, h, i, j, k]:
    print(t.op.name, deps(t))

# An op (not a tensor) works as a dependency too.
v = tf.Variable(0, name="v")
assign = tf.assign(v, 42, name="set_v")
with tf.control_dependencies([assign]):
    read = tf.identity(v, name="read_after_set")
print(read.op.name, deps(read))

with tf.Session() as sess:
    sess.run(v.initializer)
    print("v before:", sess.run(v))
    print("read forces the assign first:", sess.run(read))
    print("v after:", sess.run(v))
