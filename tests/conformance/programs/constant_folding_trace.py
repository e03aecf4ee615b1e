# A session folds constants by default (TF's opt_level L1): an op whose inputs
# are all constants is computed once, when the step's plan is built. Where its
# value is still read, it stays in the step as a Const of its own name; the
# ops and Consts before it are gone from the trace. (TF's Grappler folds even at
# OptimizerOptions.L0; minitf's L0 runs every op, see tests/unit/test_config_options.py.)
from engine import tf

x = tf.placeholder(tf.float32, name="x")
k = tf.add(tf.constant(2.0, name="two") * 3.0, 1.0, name="k")
y = tf.multiply(x, k, name="y")
y2 = tf.add(tf.constant(1.0, name="c1"), tf.constant(2.0, name="c2"), name="y2")
v = tf.Variable([1.0, 2.0], name="v")
scaled = tf.multiply(v, tf.constant(3.0, name="three"), name="scaled")
names = {op.name for op in tf.get_default_graph().get_operations()}
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def ran(sess, fetch, feed=None):
    md = tf.RunMetadata()
    value = sess.run(fetch, feed, options=FULL, run_metadata=md)
    return value, sorted((n.node_name, n.timeline_label.split("(")[0])
                         for d in md.step_stats.dev_stats for n in d.node_stats
                         if n.node_name in names)


with tf.Session() as sess:
    sess.run(v.initializer)
    print(ran(sess, y, {x: 2.0}))
    print(ran(sess, y2))
    print(ran(sess, k))
    value, what = ran(sess, scaled)
    print(value.tolist(), what)
    folded = sess.run(y2)
    print(type(folded).__name__, float(folded))

# Ops between the constants and the value that is read fold whatever their
# size; a folded value that a step still reads is kept only if it is small: at
# most 10 MiB, where a tensor whose elements are all equal counts as one.
ramp = tf.range(3 * 2 ** 20, name="ramp")              # 12 MiB of int32
filled = tf.fill([1024, 1024, 3], 1.0, name="filled")  # 12 MiB, all equal
totals = [tf.reduce_sum(ramp, name="ramp_sum"), tf.reduce_sum(filled, name="filled_sum")]
ramp1 = tf.add(ramp, 1, name="ramp1")
names = {op.name for op in tf.get_default_graph().get_operations()}
with tf.Session() as sess:
    value, what = ran(sess, totals)   # (TF may rename a sum it folds: only the rest is shown)
    print(value, [name for name, _ in what if not name.endswith("_sum")])
    value, what = ran(sess, [filled, ramp1])
    # (TF may also rename the Consts it keeps: the ops that ran, and filled.)
    print(value[0].shape, value[1][-3:].tolist(),
          [(name, label.split("] ")[-1]) for name, label in what
           if name == "filled" or not label.endswith("Const")])
