# tf.while_loop built from TF1's frame ops: counting, maximum_iterations, shape
# invariants, nested loops, tf.cond inside a loop and a loop inside tf.cond,
# TensorArrays filled and read in loops, and the errors TF raises.
import numpy as np

from engine import tf

i0 = tf.constant(0)
count = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i0])
print("count:", count.name, count.op.type, count.shape)
loop_ops = [(op.name, op.type) for op in tf.get_default_graph().get_operations()
            if op.name.startswith("while/")]
print("ops of the loop:", loop_ops)
power = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2.0),
                      [tf.constant(0), tf.constant(1.0)])
capped = tf.while_loop(lambda k: k < 100, lambda k: k + 3, [tf.constant(1)],
                       maximum_iterations=7)
v = tf.placeholder(tf.float32, [None])
grown = tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x * 10.0], 0), [v],
                      shape_invariants=[tf.TensorShape([None])])
print("grown shape:", grown.shape)
never = tf.while_loop(lambda k: k < 0, lambda k: k + 1, [tf.constant(5)])


def outer_body(i, acc):
    _, inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + tf.cast(j, tf.float32)),
                             [tf.constant(0), acc])
    return i + 1, inner


nested = tf.while_loop(lambda i, a: i < 5, outer_body, [tf.constant(0), tf.constant(0.0)])
with_cond = tf.while_loop(
    lambda i, a: i < 6,
    lambda i, a: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a + 1.0, lambda: a * 2.0)),
    [tf.constant(0), tf.constant(1.0)])
p = tf.placeholder(tf.bool, [])
in_cond = tf.cond(p, lambda: tf.while_loop(lambda k: k < 10, lambda k: k + 3, [tf.constant(1)]),
                  lambda: tf.constant(-1))
structured = tf.while_loop(lambda s: s["n"] < 3,
                           lambda s: [{"n": s["n"] + 1, "x": s["x"] * 3.0}],
                           [{"n": tf.constant(0), "x": tf.constant(1.0)}])
print("structure kept:", type(structured).__name__, sorted(structured[0].keys()))

# TensorArrays: unstack a matrix, accumulate, write one row per iteration
x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
ta_in = tf.TensorArray(tf.float32, size=4).unstack(x)
ta_out = tf.TensorArray(tf.float32, size=4)


def body(t, acc, out):
    acc = acc + ta_in.read(t)
    return t + 1, acc, out.write(t, acc * 2.0)


_, acc, out = tf.while_loop(lambda t, *_: t < 4, body, [tf.constant(0), tf.zeros([3]), ta_out])
stacked = out.stack()
print("stacked shape:", stacked.shape)
dyn = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
_, dyn = tf.while_loop(lambda i, ta: i < 5, lambda i, ta: (i + 1, ta.write(i, i * i)), [0, dyn])
scattered = tf.TensorArray(tf.float32, size=3).scatter([2, 0, 1], [[1., 2.], [3., 4.], [5., 6.]])
split = tf.TensorArray(tf.float32, size=2, infer_shape=False).split([1., 2., 3.], [1, 2])

with tf.Session() as s:
    print("count, power, capped, never:", s.run([count, power, capped, never]))
    print("grown:", s.run(grown, {v: [1.0, 2.0, 3.0]}).tolist())
    print("nested:", s.run(nested))
    print("cond inside:", s.run(with_cond))
    print("loop inside cond:", s.run(in_cond, {p: True}), s.run(in_cond, {p: False}))
    print("structured:", sorted(s.run(structured)[0].items()))
    a, st = s.run([acc, stacked])
    print("acc:", a.tolist(), "stacked:", st.tolist())
    print("dynamic:", s.run([dyn.stack(), dyn.size()]))
    print("scatter/gather:", s.run(scattered.gather([0, 2])).tolist(),
          "size:", s.run(scattered.size()))
    print("split/concat:", s.run(split.concat()).tolist(), s.run(split.read(1)).tolist())
    for name, fn in [
        ("read unwritten", lambda: s.run(tf.TensorArray(tf.float32, size=2).read(1))),
        ("write twice", lambda: s.run(tf.TensorArray(tf.float32, size=2).write(0, 1.0)
                                      .write(0, 2.0).read(0))),
        ("out of range", lambda: s.run(tf.TensorArray(tf.float32, size=2).write(5, 1.0).flow)),
    ]:
        try:
            fn()
        except tf.errors.OpError as e:
            print(name, "->", type(e).__name__)

for name, build in [
    ("shape changes", lambda: tf.while_loop(lambda x: x[0] < 8, lambda x: tf.concat([x, x], 0),
                                            [tf.constant([1.0])])),
    ("cond not callable", lambda: tf.while_loop(True, lambda x: x, [1])),
    ("wrong count", lambda: tf.while_loop(lambda a, b: a < 1, lambda a, b: a, [1, 2])),
]:
    try:
        build()
        print(name, "-> no error")
    except (ValueError, TypeError) as e:
        print(name, "->", type(e).__name__)
