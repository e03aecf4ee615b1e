"""Every random op and initializer, built and printed the same way for each seed
regime: the body of the programs/random_*.py conformance programs.

``build(op_seed)`` makes the ops in a fresh graph (``op_seed``: None, or a base
that each op adds its own number to); ``show(...)`` runs them in a session
twice (the first and second draw), initializes the variables twice, and opens
a second session to show that it starts the streams over.

Printing follows the issue's rule: integers and uniform floats are printed in
full (they must be TF's bit for bit); floats made from normals are printed to
6 significant digits (TF's and minitf's log/sin/cos may differ in the last bit).
"""
import numpy as np

from engine import tf

EXACT, APPROX = "exact", "approx"


def _seed(op_seed, k):
    return None if op_seed is None else op_seed + k


def build(graph_seed, op_seed, device=None):
    """``(graph, [(label, tensor, how printed)], [(label, variable, how)])``."""
    g = tf.Graph()
    with g.as_default(), g.device(device):
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        s = lambda k: _seed(op_seed, k)  # noqa: E731
        draws = [
            ("uniform [2,3]", tf.random_uniform([2, 3], seed=s(1)), EXACT),
            ("uniform in [-2, 3)", tf.random_uniform([4], -2.0, 3.0, seed=s(2)), EXACT),
            ("uniform float64 in [0, 10)", tf.random_uniform([3], maxval=10.0,
                                                             dtype=tf.float64, seed=s(3)),
             EXACT),
            ("uniform float16", tf.random_uniform([4], dtype=tf.float16, seed=s(4)), EXACT),
            ("uniform int32 in [0, 100)", tf.random_uniform([6], 0, 100, dtype=tf.int32,
                                                            seed=s(5)), EXACT),
            ("uniform int64 in [-5, 2**40)", tf.random_uniform([4], -5, 2**40,
                                                               dtype=tf.int64, seed=s(6)),
             EXACT),
            ("normal mean 1 stddev 2", tf.random_normal([5], 1.0, 2.0, seed=s(7)), APPROX),
            ("normal float64", tf.random_normal([3], dtype=tf.float64, seed=s(8)), APPROX),
            ("truncated normal stddev 0.5", tf.truncated_normal([2, 4], stddev=0.5,
                                                                seed=s(9)), APPROX),
            ("random_shuffle range(12)", tf.random_shuffle(tf.range(12), seed=s(10)), EXACT),
            ("random_shuffle rows", tf.random_shuffle([[1, 2], [3, 4], [5, 6]], seed=s(11)),
             EXACT),
            ("multinomial", tf.multinomial(tf.log([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]), 10,
                                           seed=s(12)), EXACT),
            ("random.categorical", tf.random.categorical([[1.0, 1.0, 1.0, 1.0]], 8,
                                                         seed=s(13)), EXACT),
            ("dropout rate 0.5", tf.nn.dropout(tf.ones([3, 4]), rate=0.5, seed=s(14)), EXACT),
            ("dropout keep_prob 0.75", tf.nn.dropout(tf.fill([2, 5], 2.0), keep_prob=0.75,
                                                     seed=s(15)), EXACT),
        ]
        init = lambda cls, *a, **kw: cls(*a, seed=s(kw.pop("k")), **kw)  # noqa: E731
        variables = [
            ("get_variable, glorot uniform (%s)" % (
                "the default" if op_seed is None else "seeded"),
             tf.get_variable("w_default", [3, 2]) if op_seed is None else
             tf.get_variable("w_default", [3, 2],
                             initializer=tf.glorot_uniform_initializer(seed=s(20))), EXACT),
            ("glorot_normal_initializer", tf.get_variable(
                "w_glorot_normal", [2, 3], initializer=init(tf.glorot_normal_initializer, k=21)),
             APPROX),
            ("variance_scaling_initializer (truncated)", tf.get_variable(
                "w_vs", [4, 2], initializer=init(tf.variance_scaling_initializer, k=22)),
             APPROX),
            ("variance_scaling uniform fan_out", tf.get_variable(
                "w_vs_uniform", [2, 2, 3], initializer=init(
                    tf.variance_scaling_initializer, 2.0, "fan_out", "uniform", k=23)), EXACT),
            ("variance_scaling untruncated normal", tf.get_variable(
                "w_vs_normal", [5], initializer=init(
                    tf.variance_scaling_initializer, distribution="untruncated_normal", k=24)),
             APPROX),
            ("random_uniform_initializer(-1, 1)", tf.get_variable(
                "w_ru", [4], initializer=init(tf.random_uniform_initializer, -1.0, 1.0, k=25)),
             EXACT),
            ("random_normal_initializer(0.5, 0.1)", tf.get_variable(
                "w_rn", [4], initializer=init(tf.random_normal_initializer, 0.5, 0.1, k=26)),
             APPROX),
            ("truncated_normal_initializer(stddev=0.2)", tf.get_variable(
                "w_tn", [3, 3], initializer=init(tf.truncated_normal_initializer, stddev=0.2,
                                                 k=27)), APPROX),
            ("Variable(random_normal)", tf.Variable(tf.random_normal([3], seed=s(28)),
                                                    name="v_normal"), APPROX),
        ]
        # Without a graph seed, the default initializer would be unseeded: give one.
        dense_out = tf.layers.dense(
            tf.ones([1, 3]), 2, name="dense", kernel_initializer=None if op_seed is None else
            tf.glorot_uniform_initializer(seed=s(29)))
        kernel = [v for v in tf.global_variables() if v.op.name == "dense/kernel"][0]
        variables.append(("tf.layers.dense kernel (%s)" % (
            "its default initializer" if op_seed is None else "glorot_uniform, seeded"),
            kernel, EXACT))
    return g, draws, variables, dense_out


def fmt(value, how):
    value = np.asarray(value)
    if how == EXACT:
        return str(value.tolist())
    return "[" + " ".join("%.6g" % v for v in value.reshape(-1)) + "]"


def random_ops_of(graph):
    kinds = ("RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
             "RandomShuffle", "Multinomial")
    return [op for op in graph.get_operations() if op.type in kinds]


def show(graph_seed, op_seed, target="", device=None):
    g, draws, variables, dense_out = build(graph_seed, op_seed, device)
    print("random ops and their (seed, seed2):")
    for op in random_ops_of(g):
        print("  %s %s %s" % (op.name, op.type, (op.get_attr("seed"), op.get_attr("seed2"))))
    with g.as_default():
        init = tf.global_variables_initializer()
        with tf.Session(target) as sess:
            first = sess.run([t for _, t, _ in draws])
            second = sess.run([t for _, t, _ in draws])
            for (label, _, how), a, b in zip(draws, first, second):
                print("%s: %s then %s" % (label, fmt(a, how), fmt(b, how)))
            sess.run(init)
            values = sess.run([v for _, v, _ in variables])
            for (label, _, how), value in zip(variables, values):
                print("%s: %s" % (label, fmt(value, how)))
            print("dense output:", fmt(sess.run(dense_out), APPROX))
            sess.run(init)
            print("initialized again, first variable:",
                  fmt(sess.run(variables[0][1]), variables[0][2]))
        with tf.Session(target) as sess:
            again = sess.run([t for _, t, _ in draws])
            print("a new session starts over:",
                  all(np.array_equal(a, b) for a, b in zip(first, again)))
