# TF's seed rules (tensorflow/python/framework/random_seed.py) and its errors:
# what (seed, seed2) each random op gets, and the numbers that follow.
import numpy as np

from engine import tf


def seeds(t):
    op = t.op if t.op.type.startswith("Random") else t.op.inputs[0].op.inputs[0].op
    return op.get_attr("seed"), op.get_attr("seed2")


def attempt(label, make):
    with tf.Graph().as_default():
        try:
            print(label, make())
        except Exception as e:  # noqa: BLE001 - the error class and message are the point
            print(label, type(e).__name__, str(e).splitlines()[0])


# The zero seeds: (0, 0) would mean "no seed" to a kernel, so TF uses (0, 2**31 - 1).
with tf.Graph().as_default():
    tf.set_random_seed(0)
    zero = tf.random_uniform([4], seed=0)
    graph_zero = tf.random_uniform([4])
    print("graph seed 0, op seed 0:", seeds(zero), " graph seed 0 only:", seeds(graph_zero))
    with tf.Session() as sess:
        print("their numbers:", sess.run(zero).tolist(), sess.run(graph_zero).tolist())

# Op seed only: TF's default graph seed.
with tf.Graph().as_default():
    print("op seed only:", seeds(tf.random_uniform([1], seed=5)))

# Graph seed only: the op seed counts get_seed calls; ops made before the graph
# seed, or with their own seed, do not count; changing the graph seed does not
# reset the count; a new graph starts from 0.
with tf.Graph().as_default():
    before = tf.random_uniform([1])
    tf.set_random_seed(3)
    a = tf.random_uniform([1])
    b = tf.random_uniform([1], seed=9)
    tf.constant(1.0)
    c = tf.random_normal([1])
    tf.set_random_seed(4)
    d = tf.random_uniform([1])
    print("counter:", [seeds(t) for t in (before, a, b, c, d)])
    print("tf.get_seed(None), tf.get_seed(2):", tf.get_seed(None), tf.get_seed(2))
    print("tf.random.get_seed(None):", tf.random.get_seed(None))
with tf.Graph().as_default():
    tf.set_random_seed(3)
    print("new graph starts over:", seeds(tf.random_uniform([1])))

# Big and negative seeds wrap modulo 2**31 - 1 (Python's %, so never negative).
with tf.Graph().as_default():
    tf.set_random_seed(-3)
    print("negative:", seeds(tf.random_uniform([1], seed=-1)))
    tf.set_random_seed(2**40)
    print("big:", seeds(tf.random_uniform([1], seed=2**35)))
    tf.set_random_seed(2**31 - 1)
    print("2**31 - 1 wraps to 0:", seeds(tf.random_uniform([1], seed=2**31 - 1)))

# Seeds that are not integers.
attempt("float op seed:", lambda: seeds(tf.random_uniform([2], seed=1.5)))
attempt("float graph seed:", lambda: (tf.set_random_seed(2.5), seeds(tf.random_uniform([2])))[1])
attempt("numpy int seed:", lambda: seeds(tf.random_uniform([2], seed=np.int64(5))))
attempt("bool seed:", lambda: seeds(tf.random_uniform([2], seed=True)))
attempt("string op seed:", lambda: tf.random_uniform([2], seed="3"))
attempt("string graph seed:", lambda: (tf.set_random_seed("x"), tf.random_uniform([2]))[1])
attempt("list seed:", lambda: tf.random_uniform([2], seed=[1]))
attempt("tensor seed:", lambda: tf.random_uniform([2], seed=tf.constant(3)))

# Other arguments TF refuses.
attempt("random_normal of int32:", lambda: tf.random_normal([2], 0, 1, dtype=tf.int32))
attempt("truncated_normal of int64:", lambda: tf.truncated_normal([2], dtype=tf.int64))
attempt("random_uniform of string:", lambda: tf.random_uniform([2], dtype=tf.string))
attempt("int random_uniform, no maxval:", lambda: tf.random_uniform([2], dtype=tf.int32))
attempt("multinomial of a vector:", lambda: tf.multinomial([1.0, 2.0], 2))
attempt("multinomial of int16:", lambda: tf.multinomial([[1.0, 2.0]], 2, output_dtype=tf.int16))
attempt("multinomial, -1 samples:", lambda: tf.multinomial([[1.0, 2.0]], -1))
attempt("dropout rate 1:", lambda: tf.nn.dropout(tf.ones([2]), rate=1.0))
attempt("dropout rate and keep_prob:", lambda: tf.nn.dropout(tf.ones([2]), 0.5, rate=0.5))
attempt("dropout of ints:", lambda: tf.nn.dropout(tf.ones([2], tf.int32), rate=0.5))


def run_error(label, make):
    with tf.Graph().as_default():
        t = make()
        with tf.Session() as sess:
            try:
                sess.run(t)
            except tf.errors.OpError as e:
                print(label, type(e).__name__)


run_error("negative size at run time:", lambda: tf.random_uniform([-1, 2]))
run_error("minval >= maxval at run time:", lambda: tf.random_uniform([2], 5, 3, dtype=tf.int32))
