# Mistakes a learner makes, and the errors TF raises for them.
import numpy as np

from engine import tf

x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
total = tf.reduce_sum(x, name="total")
c = tf.constant(1.0, name="c")
twice = c * 2
tf.get_default_graph().prevent_feeding(c)   # c may no longer be fed


def attempt(label, action, full_message=True):
    try:
        print(f"{label}: ok {action()!r}")
    except Exception as e:
        text = str(e) if full_message else ""
        print(f"{label}: {type(e).__name__} {text}".rstrip())


sess = tf.Session()
attempt("good feed", lambda: sess.run(total, {x: np.ones((2, 3))}))
attempt("int feed to float", lambda: sess.run(total, {x: [[1, 2, 3]]}))
attempt("wrong shape", lambda: sess.run(total, {x: np.ones((2, 2))}))
attempt("wrong rank", lambda: sess.run(total, {x: np.ones(3)}))
try:
    sess.run(total, {x: [["a", "b", "c"]]})
except ValueError as e:
    print("string feed: ValueError", "could not convert string to float" in str(e))
attempt("missing tensor", lambda: sess.run("nope:0"))
attempt("missing op", lambda: sess.run("nope"))
attempt("missing output", lambda: sess.run("total:1"))
attempt("feed non-feedable", lambda: sess.run(twice, {c: 5.0}))
sess.close()
attempt("closed session", lambda: sess.run(total, {x: np.ones((1, 3))}))


def bad_device():
    with tf.device("/gpu:x"):
        return tf.constant(1)


attempt("malformed device", bad_device, full_message=False)

try:
    tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
except ValueError as e:
    print("matmul shapes: ValueError",
          "Dimensions must be equal, but are 3 and 2" in str(e))
attempt("int32 + float32", lambda: tf.constant(1) + tf.constant(1.0))
