# Summary ops: the ops they add, their collection, and the exact bytes of the
# serialized Summary each returns (scalar, histogram, text, merge), then the
# errors they raise at run time.
import numpy as np

from engine import tf

x = tf.constant([1.0, 2.0, -3.0, 0.0, 1e-13, 5.5], name="x")
loss = tf.reduce_mean(tf.square(x), name="loss")
s = tf.summary.scalar("loss", loss)
s2 = tf.summary.scalar("loss", loss * 2)            # the same name: tag loss_1
f = tf.summary.scalar("rate", tf.constant(3, tf.int64), family="train")
odd = tf.summary.scalar("bad name!", 1.5)           # cleaned to bad_name_
h = tf.summary.histogram("weights", x)
big = tf.summary.histogram("normal", tf.constant(np.random.RandomState(0).randn(500)))
t = tf.summary.text("note", tf.constant("hello *world*"))
m = tf.summary.merge([s, h])
everything = tf.summary.merge_all()

for op in tf.get_default_graph().get_operations():
    if op.type.endswith("Summary") or op.type == "TensorSummaryV2":
        print(op.name, op.type, [i.name for i in op.inputs])
print("summaries:", [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)])
print("merge_all of nothing:", tf.summary.merge_all(key="nothing"))


def error_line(e):
    """The kernel's own words: the line before TF's "[[{{node ...}}]]"."""
    return e.message.split("\n\t [[")[0].splitlines()[-1].strip()


with tf.Session() as sess:
    for tensor in (s, s2, f, odd, h, t, m):
        blob = sess.run(tensor)
        print(tensor.name, type(blob).__name__, blob.hex())
        print(tf.Summary.FromString(blob))
    blob = sess.run(big)
    print(big.name, len(blob), blob.hex()[:120], blob.hex()[-120:])
    histo = tf.Summary.FromString(blob).value[0].histo
    print("normal:", histo.num, repr(histo.sum), repr(histo.sum_squares), len(histo.bucket))
    print("merge_all:", [v.tag for v in tf.Summary.FromString(sess.run(everything)).value])
    for label, op in [("duplicate tag", lambda: tf.summary.merge([s, s])),
                      ("shape", lambda: tf.summary.scalar("vec", tf.constant([1.0, 2.0]))),
                      ("nan", lambda: tf.summary.histogram("nan", tf.constant([1.0, np.nan]))),
                      ("inf", lambda: tf.summary.histogram("inf", tf.constant([np.inf])))]:
        try:
            sess.run(op())
            print(label, "ran")
        except tf.errors.OpError as e:
            print(label, type(e).__name__, error_line(e))
try:
    tf.summary.text("number", tf.constant(1.0))
except ValueError as e:
    print("text of a number: ValueError", e)
