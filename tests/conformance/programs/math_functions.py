# The math functions of tf.*/tf.math: values (edge cases included), dtypes,
# op names and gradients, against TF's.
import numpy as np

from engine import tf


def show(label, value):
    value = np.asarray(value)
    if value.dtype.kind == "f":
        value = np.round(value.astype(np.float64), 4)
    print(label, value.dtype.name if value.dtype.kind != "f" else "", value.tolist())


x = tf.constant([-2.5, -0.5, 0.25, 1.0, 3.0], tf.float64, name="x")
unit = tf.constant([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0], tf.float64, name="unit")
pos = tf.constant([0.5, 1.0, 2.5, 7.0], name="pos")
ints = tf.constant([-7, -3, 3, 7], name="ints")
divisors = tf.constant([2, -2, 2, -2], name="divisors")
floats = tf.constant([-7.5, -3.0, 3.5, 7.0], name="floats")
fdiv = tf.constant([2.0, -2.0, 2.0, 0.0], name="fdiv")

unary = {name: getattr(tf, name) for name in (
    "sin", "cos", "tan", "atan", "sinh", "cosh", "asinh", "expm1", "erf", "erfc", "rint")}
edge = {name: getattr(tf, name) for name in ("asin", "acos", "atanh", "acosh", "log1p")}
outputs = {name: fn(x) for name, fn in unary.items()}
outputs.update({name + " edges": fn(unit) for name, fn in edge.items()})
outputs.update({
    "lgamma": tf.lgamma(x), "digamma": tf.digamma(x),
    "lgamma poles": tf.lgamma(tf.constant([0.0, -1.0, -2.0])),
    "polygamma": tf.polygamma(tf.constant([0.0, 1.0, 2.0, 3.0]), pos),
    "polygamma bad order": tf.polygamma(tf.constant([-1.0, 1.5]), tf.constant([1.0, 1.0])),
    "zeta": tf.zeta(tf.constant([2.0, 3.0, 4.5, 1.0]), pos),
    "atan2": tf.atan2(tf.constant([1.0, -1.0, 0.0, 1.0]), tf.constant([1.0, -1.0, -1.0, 0.0])),
    "rint halves": tf.rint(tf.constant([0.5, 1.5, 2.5, -0.5, -1.5])),
    "round halves": tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.5])),
    "div ints": tf.div(ints, divisors), "div floats": tf.div(floats, fdiv),
    "truncatediv": tf.truncatediv(ints, divisors),
    "truncatemod ints": tf.truncatemod(ints, divisors),
    "truncatemod floats": tf.truncatemod(floats, tf.constant([2.0, -2.0, 2.0, -2.0])),
    "floormod": tf.floormod(ints, divisors), "floordiv": tf.floordiv(ints, divisors),
    "realdiv": tf.realdiv(floats, fdiv), "div_no_nan": tf.div_no_nan(floats, fdiv),
    "math.divide_no_nan 0/0": tf.math.divide_no_nan(tf.constant([0.0, 1.0]),
                                                    tf.constant([0.0, 0.0])),
    "sign": tf.sign(floats), "reciprocal": tf.reciprocal(pos), "rsqrt": tf.rsqrt(pos),
    "cumsum": tf.cumsum(tf.constant([[1, 2, 3], [4, 5, 6]]), axis=1),
    "cumsum exclusive reverse": tf.cumsum(tf.constant([1.0, 2.0, 3.0]), exclusive=True,
                                          reverse=True),
    "cumprod": tf.cumprod(tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    "cumprod exclusive": tf.cumprod(tf.constant([2, 3, 4]), exclusive=True),
    "reduce_prod": tf.reduce_prod(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0),
    "reduce_any": tf.reduce_any(tf.constant([[True, False], [False, False]]), axis=1),
    "reduce_all": tf.reduce_all(tf.constant([[True, False], [True, True]]), axis=1),
})
for label in ("div ints", "div floats", "truncatediv", "cumsum", "cumprod", "atan2", "zeta",
              "div_no_nan"):
    print("op:", label, outputs[label].op.type, outputs[label].op.name, outputs[label].dtype)

wrt = tf.constant([0.3, 0.7, 1.5], tf.float64, name="wrt")
gradients = {}
for name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh",
             "expm1", "log1p", "erf", "erfc", "lgamma", "digamma"):
    fn = getattr(tf, name)
    arg = wrt * 0.5 if name in ("asin", "acos", "atanh") else wrt
    gradients[name] = tf.gradients(tf.reduce_sum(fn(arg)), wrt)[0]
gradients["acosh"] = tf.gradients(tf.reduce_sum(tf.acosh(wrt + 1.0)), wrt)[0]
gy, gx = tf.gradients(tf.reduce_sum(tf.atan2(wrt, wrt * 2.0 + 1.0)), [wrt, wrt])
gradients["atan2"] = gy
two = tf.constant([2.0, 3.0, 2.5], tf.float64)
gradients["zeta q"] = tf.gradients(tf.reduce_sum(tf.zeta(two, wrt + 1.0)), wrt)[0]
gradients["polygamma x"] = tf.gradients(tf.reduce_sum(tf.polygamma(
    tf.constant([1.0, 2.0, 0.0], tf.float64), wrt + 1.0)), wrt)[0]
gradients["floormod"] = tf.gradients(tf.reduce_sum(tf.floormod(wrt * 5.0, 2.0)), wrt)[0]
gradients["div_no_nan"] = tf.gradients(tf.reduce_sum(tf.div_no_nan(
    wrt, tf.constant([2.0, 0.0, 4.0], tf.float64))), wrt)[0]
c = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], tf.float64)
gradients["cumsum"] = tf.gradients(tf.reduce_sum(tf.cumsum(c, 1) * c), c)[0]
gradients["cumsum exclusive"] = tf.gradients(tf.reduce_sum(
    tf.cumsum(c, 0, exclusive=True) * c), c)[0]
gradients["cumprod"] = tf.gradients(tf.reduce_sum(tf.cumprod(c, 1, reverse=True)), c)[0]
gradients["reduce_prod"] = tf.gradients(tf.reduce_prod(c), c)[0]
print("rint/round/truncatediv have no gradient:",
      tf.gradients(tf.reduce_sum(tf.rint(wrt)), wrt), tf.gradients(tf.reduce_sum(
          tf.truncatediv(wrt, 2.0 * tf.ones_like(wrt))), wrt))
try:
    tf.gradients(tf.reduce_sum(tf.truncatemod(wrt, 2.0 * tf.ones_like(wrt))), wrt)
except LookupError as e:
    print("truncatemod:", type(e).__name__, "TruncateMod" in str(e))
zero = tf.placeholder(tf.int32)
for label, fn in (("truncatediv", tf.truncatediv), ("truncatemod", tf.truncatemod),
                  ("floordiv", tf.floordiv), ("floormod", tf.floormod)):
    try:
        tf.Session().run(fn(tf.constant([1]), zero), {zero: [0]})
    except tf.errors.OpError as e:
        print(label, "by zero:", type(e).__name__,
              [line for line in e.message.splitlines() if "division" in line or
               "binary operator" in line][:1])
try:
    tf.Session().run(tf.cumsum(c, axis=3))
except tf.errors.InvalidArgumentError as e:
    print("cumsum axis 3:", "Expected scan axis in the range [-2, 2), but got 3" in e.message)

with tf.Session() as sess:
    for name, value in sess.run(outputs).items():
        show(name, value)
    for name, value in sess.run(gradients).items():
        show("d " + name, value)
