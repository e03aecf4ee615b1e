# A step goes around the Identity and NoOp ops that only pass a value or a wait
# on, as TF's Grappler (its dependency optimizer) does: the gradient groups of
# optimizer.minimize (tf.tuple's Identity and NoOp ops), an identity that waits
# for an update, the Identities after a while loop's Switch ops. What they
# waited for is still waited for. A fetched Identity, a variable's read and a
# loop's pivot stay. The trace lists which Identity and NoOp ops ran.
import collections

from engine import tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.Variable([[1.0], [2.0], [3.0]], name="w")
b = tf.Variable([0.5], name="b")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - 1.0), name="loss")
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

counter = tf.Variable(0, name="counter")
bump = tf.assign_add(counter, 1, name="bump")
with tf.control_dependencies([bump]):
    after = tf.identity(x, name="after")
doubled = tf.multiply(after, 2.0, name="doubled")
kept = tf.identity(doubled, name="kept")

i, total = tf.while_loop(lambda i, s: i < 3,
                         lambda i, s: (i + 1, s + tf.identity(tf.cast(i, tf.float32),
                                                              name="copy")),
                         [tf.constant(0), tf.constant(1.0)], name="loop")

names = {op.name for op in tf.get_default_graph().get_operations()}
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def ran(sess, fetch, feed=None):
    """The fetched value and how often each Identity and NoOp op of the graph ran."""
    md = tf.RunMetadata()
    value = sess.run(fetch, feed, options=FULL, run_metadata=md)
    count = collections.Counter()
    for d in md.step_stats.dev_stats:
        for n in d.node_stats:
            kind = n.timeline_label.split(" = ")[-1].split("(")[0]
            if n.node_name in names and kind in ("Identity", "NoOp"):
                count[(n.node_name, kind)] += 1
    return value, sorted(count.items())


feed = {x: [[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]]}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(ran(sess, train, feed)[1])
    print(sess.run(w).ravel().tolist(), sess.run(b).tolist())
    value, what = ran(sess, [doubled, kept], feed)
    print(value[1].tolist(), what, sess.run(counter))
    value, what = ran(sess, total)
    print(value, what)
