"""Op constructors: static shapes and dtypes (as TensorFlow 2.21 infers them for
the same calls) and computed values (against numpy), plus random-seed rules."""

import numpy as np
import pytest

import minitf.compat.v1 as tf

P = tf.placeholder
f32 = tf.float32

# (label, expression, TF's static shape, TF's dtype). Shapes print as in TF.
SHAPES = [
    ("add bcast", "tf.add(P(f32,[2,1,3]), P(f32,[4,1]))", "(2, 4, 3)", "float32"),
    ("add unknown dim", "tf.add(P(f32,[None,3]), P(f32,[3]))", "(?, 3)", "float32"),
    ("add 1 vs unknown", "tf.add(P(f32,[None,1]), P(f32,[1,5]))", "(?, 5)", "float32"),
    ("add unknown rank", "tf.add(P(f32), P(f32,[3]))", "<unknown>", "float32"),
    ("add both unknown", "tf.add(P(f32,[None]), P(f32,[None]))", "(?,)", "float32"),
    ("mul scalar", "P(f32,[2,3]) * 2.0", "(2, 3)", "float32"),
    ("sub", "tf.subtract(P(tf.int32,[5]), 1)", "(5,)", "int32"),
    ("less", "tf.less(P(f32,[2,3]), P(f32,[3]))", "(2, 3)", "bool"),
    ("sum all", "tf.reduce_sum(P(f32,[2,3,4]))", "()", "float32"),
    ("sum axis 1", "tf.reduce_sum(P(f32,[2,3,4]), axis=1)", "(2, 4)", "float32"),
    ("sum -1 keepdims", "tf.reduce_sum(P(f32,[2,3,4]), axis=-1, keepdims=True)", "(2, 3, 1)",
     "float32"),
    ("sum [0,2]", "tf.reduce_sum(P(f32,[2,3,4]), axis=[0,2])", "(3,)", "float32"),
    ("mean keepdims all", "tf.reduce_mean(P(f32,[2,3]), keepdims=True)", "(1, 1)", "float32"),
    ("max unknown", "tf.reduce_max(P(f32,[None,3]), axis=0)", "(3,)", "float32"),
    ("sum unknown rank", "tf.reduce_sum(P(f32), axis=0)", "<unknown>", "float32"),
    ("min keep_dims", "tf.reduce_min(P(f32,[2,3]), 1, keep_dims=True)", "(2, 1)", "float32"),
    ("all", "tf.reduce_all(P(tf.bool,[2,3]), 0)", "(3,)", "bool"),
    ("matmul", "tf.matmul(P(f32,[2,3]), P(f32,[3,5]))", "(2, 5)", "float32"),
    ("matmul ta", "tf.matmul(P(f32,[3,2]), P(f32,[3,5]), transpose_a=True)", "(2, 5)",
     "float32"),
    ("matmul tb", "tf.matmul(P(f32,[2,3]), P(f32,[5,3]), transpose_b=True)", "(2, 5)",
     "float32"),
    ("matmul ta tb", "tf.matmul(P(f32,[3,2]), P(f32,[5,3]), transpose_a=True, "
     "transpose_b=True)", "(2, 5)", "float32"),
    ("matmul unknown", "tf.matmul(P(f32,[None,3]), P(f32,[3,None]))", "(?, ?)", "float32"),
    ("batch matmul", "tf.matmul(P(f32,[7,2,3]), P(f32,[7,3,4]))", "(7, 2, 4)", "float32"),
    ("batch bcast", "tf.matmul(P(f32,[7,1,2,3]), P(f32,[5,3,4]))", "(7, 5, 2, 4)", "float32"),
    ("batch by 2d", "tf.matmul(P(f32,[7,2,3]), P(f32,[3,4]))", "(7, 2, 4)", "float32"),
    ("reshape -1", "tf.reshape(P(f32,[2,3,4]), [6,-1])", "(6, 4)", "float32"),
    ("reshape unknown", "tf.reshape(P(f32,[None,3]), [-1])", "(?,)", "float32"),
    ("reshape unknown 2", "tf.reshape(P(f32,[None,3]), [-1, 6])", "(?, 6)", "float32"),
    ("reshape scalar", "tf.reshape(P(f32,[1,1]), [])", "()", "float32"),
    ("stack", "tf.stack([P(f32,[2,3]), P(f32,[2,3])])", "(2, 2, 3)", "float32"),
    ("stack axis 1", "tf.stack([P(f32,[2,3])]*4, axis=1)", "(2, 4, 3)", "float32"),
    ("stack axis -1", "tf.stack([P(f32,[2,3])]*4, axis=-1)", "(2, 3, 4)", "float32"),
    ("stack merges", "tf.stack([P(f32,[None,3]), P(f32,[2,None])])", "(2, 2, 3)", "float32"),
    ("concat 1", "tf.concat([P(f32,[2,3]), P(f32,[2,5])], 1)", "(2, 8)", "float32"),
    ("concat 0", "tf.concat([P(f32,[2,3]), P(f32,[4,3])], 0)", "(6, 3)", "float32"),
    ("concat -1", "tf.concat([P(f32,[2,3]), P(f32,[2,5])], -1)", "(2, 8)", "float32"),
    ("concat unknown", "tf.concat([P(f32,[None,3]), P(f32,[2,None])], 0)", "(?, 3)",
     "float32"),
    ("transpose", "tf.transpose(P(f32,[2,3,4]))", "(4, 3, 2)", "float32"),
    ("transpose perm", "tf.transpose(P(f32,[2,3,4]), [1,0,2])", "(3, 2, 4)", "float32"),
    ("argmax", "tf.argmax(P(f32,[2,3,4]), axis=1)", "(2, 4)", "int64"),
    ("argmax default", "tf.argmax(P(f32,[2,3]))", "(3,)", "int64"),
    ("argmin -1", "tf.argmin(P(f32,[2,3]), axis=-1)", "(2,)", "int64"),
    ("argmax int32", "tf.argmax(P(f32,[2,3]), 1, output_type=tf.int32)", "(2,)", "int32"),
    ("where 3 args", "tf.where(P(tf.bool,[2,3]), P(f32,[2,3]), P(f32,[2,3]))", "(2, 3)",
     "float32"),
    ("where 1 arg", "tf.where(P(tf.bool,[2,3]))", "(?, 2)", "int64"),
    ("softmax", "tf.nn.softmax(P(f32,[None,10]))", "(?, 10)", "float32"),
    ("log_softmax", "tf.nn.log_softmax(P(f32,[4,10]))", "(4, 10)", "float32"),
    ("xent", "tf.nn.softmax_cross_entropy_with_logits_v2(labels=P(f32,[4,10]), "
     "logits=P(f32,[4,10]))", "(4,)", "float32"),
    ("xent unknown", "tf.nn.softmax_cross_entropy_with_logits_v2(labels=P(f32,[None,10]), "
     "logits=P(f32,[None,10]))", "(?,)", "float32"),
    ("sparse xent", "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=P(tf.int32,[4]), "
     "logits=P(f32,[4,10]))", "(4,)", "float32"),
    ("relu", "tf.nn.relu(P(f32,[None,2]))", "(?, 2)", "float32"),
    ("cast", "tf.cast(P(tf.int32,[3]), f32)", "(3,)", "float32"),
    ("fill", "tf.fill([2,3], 1.5)", "(2, 3)", "float32"),
    ("zeros", "tf.zeros([2,3], tf.int32)", "(2, 3)", "int32"),
    ("ones_like", "tf.ones_like(P(f32,[None,3]))", "(?, 3)", "float32"),
    ("shape", "tf.shape(P(f32,[None,3]))", "(2,)", "int32"),
    ("size", "tf.size(P(f32,[None,3]))", "()", "int32"),
    ("rank", "tf.rank(P(f32,[None,3]))", "()", "int32"),
    ("expand_dims", "tf.expand_dims(P(f32,[2,3]), 1)", "(2, 1, 3)", "float32"),
    ("expand_dims -1", "tf.expand_dims(P(f32,[2,3]), -1)", "(2, 3, 1)", "float32"),
    ("squeeze", "tf.squeeze(P(f32,[1,2,1,3]))", "(2, 3)", "float32"),
    ("squeeze axis", "tf.squeeze(P(f32,[1,2,1,3]), [2])", "(1, 2, 3)", "float32"),
    ("index", "P(f32,[4,5,6])[1]", "(5, 6)", "float32"),
    ("slice", "P(f32,[4,5,6])[:, 1:3]", "(4, 2, 6)", "float32"),
    ("ellipsis", "P(f32,[4,5,6])[..., ::2, None]", "(4, 5, 3, 1)", "float32"),
    ("add_n", "tf.add_n([P(f32,[2,None]), P(f32,[None,3])])", "(2, 3)", "float32"),
    ("random_uniform", "tf.random_uniform([3,4])", "(3, 4)", "float32"),
    ("random_normal", "tf.random_normal([2])", "(2,)", "float32"),
    ("truncated_normal", "tf.truncated_normal([2,2], dtype=tf.float64)", "(2, 2)", "float64"),
    ("random int", "tf.random_uniform([5], maxval=10, dtype=tf.int32)", "(5,)", "int32"),
    ("identity", "tf.identity(P(f32,[None]))", "(?,)", "float32"),
    ("with default", "tf.placeholder_with_default([1.0,2.0], [None])", "(?,)", "float32"),
    ("logical_and", "tf.logical_and(P(tf.bool,[2,1]), P(tf.bool,[3]))", "(2, 3)", "bool"),
    ("squared_difference", "tf.squared_difference(P(f32,[3]), P(f32,[2,1]))", "(2, 3)",
     "float32"),
    ("maximum", "tf.maximum(P(tf.int64,[3]), 2)", "(3,)", "int64"),
    ("sqrt", "tf.sqrt(P(f32,[3]))", "(3,)", "float32"),
    ("is initialized", "tf.is_variable_initialized(tf.Variable(1.0))", "()", "bool"),
    ("int64 / int64", "P(tf.int64,[3]) / P(tf.int64,[3])", "(3,)", "float64"),
    ("int16 / int16", "P(tf.int16,[3]) / P(tf.int16,[3])", "(3,)", "float32"),
    ("pow", "tf.pow(P(f32,[3]), 2.0)", "(3,)", "float32"),
]


@pytest.mark.parametrize("label, expr, shape, dtype", SHAPES, ids=[s[0] for s in SHAPES])
def test_static_shape_and_dtype(label, expr, shape, dtype):
    with tf.Graph().as_default():
        out = eval(expr)
    assert str(out.shape) == shape
    assert out.dtype.name == dtype


def test_unstack_shapes_and_count():
    with tf.Graph().as_default():
        parts = tf.unstack(P(f32, [2, 3, 4]), axis=1)
    assert [str(p.shape) for p in parts] == ["(2, 4)"] * 3
    assert [p.name for p in parts] == ["unstack:0", "unstack:1", "unstack:2"]


# -- values ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run():
    """Evaluate a list of tensors built by ``build()`` in one fresh graph/session."""
    def evaluate(build, feed=None):
        with tf.Graph().as_default():
            fetches = build()
            with tf.Session() as sess:
                return sess.run(fetches, feed)
    return evaluate


def test_int_arithmetic_on_negative_numbers(run):
    x = np.array([-7, 7, -7, 7], np.int32)
    y = np.array([2, 2, -2, -2], np.int32)
    mod, div, rdiv = run(lambda: [tf.constant(x) % tf.constant(y),
                                  tf.constant(x) // tf.constant(y),
                                  7 // tf.constant(-2)])
    np.testing.assert_array_equal(mod, [1, 1, -1, -1])      # numpy's (floor) rules
    np.testing.assert_array_equal(div, [-4, 3, 3, -4])
    assert mod.dtype == np.int32 and div.dtype == np.int32
    assert rdiv == -4
    fmod, fdiv = run(lambda: [tf.constant(7.5) % 2.0, tf.constant(-7.5) // 2.0])
    assert fmod == np.float32(1.5) and fdiv == np.float32(-4.0)


def test_reductions(run):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = run(lambda: [tf.reduce_sum(a, 1), tf.reduce_mean(a, [0, 2], keepdims=True),
                       tf.reduce_max(a), tf.reduce_min(a, -1), tf.reduce_prod([[1, 2], [3, 4]], 0),
                       tf.reduce_mean(tf.constant([1, 2, 4])),
                       tf.reduce_mean(tf.constant([[1., 2.], [3., 5.]]), axis=0),
                       tf.reduce_all([[True, False], [True, True]], 1),
                       tf.reduce_any([[True, False], [False, False]], 1)])
    np.testing.assert_allclose(out[0], a.sum(1))
    np.testing.assert_allclose(out[1], a.mean((0, 2), keepdims=True))
    assert out[1].shape == (1, 3, 1)
    assert out[2] == 23.0
    np.testing.assert_array_equal(out[3], a.min(-1))
    np.testing.assert_array_equal(out[4], [3, 8])
    assert out[5] == 2 and out[5].dtype == np.int32        # integer mean truncates
    np.testing.assert_array_equal(out[6], [2.0, 3.5])
    np.testing.assert_array_equal(out[7], [False, True])
    np.testing.assert_array_equal(out[8], [True, False])


def test_elementwise_against_numpy(run):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32) + 3.0
    out = run(lambda: [tf.constant(a) + b, tf.constant(a) - b, tf.constant(a) * b,
                       tf.constant(a) / b, tf.maximum(a, b), tf.minimum(a, b), -tf.constant(a),
                       tf.abs(a), tf.square(a), tf.exp(a), tf.sqrt(b), tf.tanh(a),
                       tf.sigmoid(a), tf.nn.relu(a), tf.squared_difference(a, b),
                       tf.pow(tf.constant(b), 2.0), tf.less(a, b), tf.equal(a, a),
                       tf.cast(tf.constant([1.7, -1.7]), tf.int32), tf.round([0.5, 1.5, 2.5]),
                       tf.add_n([a, a, a])])
    want = [a + b, a - b, a * b, a / b, np.maximum(a, b), np.minimum(a, b), -a, np.abs(a),
            a * a, np.exp(a), np.sqrt(b), np.tanh(a), 1 / (1 + np.exp(-a)), np.maximum(a, 0),
            (a - b) ** 2, b ** 2, a < b, a == a, [1, -1], [0.0, 2.0, 2.0], 3 * a]
    for got, exp in zip(out, want):
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)
    assert out[0].dtype == np.float32 and out[16].dtype == np.bool_
    assert out[18].dtype == np.int32


def test_int32_division_values(run):
    r = run(lambda: tf.constant([7, -7]) / tf.constant([2, 2]))
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, [3.5, -3.5])


def test_matmul_values(run):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)
    c = rng.standard_normal((4, 2, 3)).astype(np.float32)
    d = rng.standard_normal((3, 2)).astype(np.float32)
    out = run(lambda: [tf.matmul(a, b, transpose_a=True, transpose_b=True),
                       tf.matmul(b, a), tf.matmul(c, d),
                       tf.matmul([[1, 2], [3, 4]], [[5], [6]])])
    np.testing.assert_allclose(out[0], a.T @ b.T, rtol=1e-5)
    np.testing.assert_allclose(out[1], b @ a, rtol=1e-5)
    np.testing.assert_allclose(out[2], c @ d, rtol=1e-5)
    np.testing.assert_array_equal(out[3], [[17], [39]])
    assert out[3].dtype == np.int32


def test_array_op_values(run):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run(lambda: [tf.reshape(a, [3, -1]), tf.transpose(a), tf.stack([a, a], 1),
                       tf.concat([a, a], 0), tf.unstack(a)[1], tf.argmax(a, 1),
                       tf.argmin([[1, 5, 2], [7, 0, 1]], 1),
                       tf.where([True, False, True], [1, 2, 3], [10, 20, 30]),
                       tf.where([[True, False], [False, True]]), tf.fill([2], 7),
                       tf.shape(a), tf.size(a), tf.rank(a), tf.zeros_like(a),
                       tf.expand_dims(a, 0), tf.squeeze([[1], [2]]),
                       tf.constant(a)[1, 1:], tf.constant(a)[:, ::-1]])
    np.testing.assert_array_equal(out[0], a.reshape(3, 2))
    np.testing.assert_array_equal(out[1], a.T)
    np.testing.assert_array_equal(out[2], np.stack([a, a], 1))
    np.testing.assert_array_equal(out[3], np.concatenate([a, a], 0))
    np.testing.assert_array_equal(out[4], a[1])
    np.testing.assert_array_equal(out[5], [2, 2])
    assert out[5].dtype == np.int64
    np.testing.assert_array_equal(out[6], [0, 1])
    np.testing.assert_array_equal(out[7], [1, 20, 3])
    np.testing.assert_array_equal(out[8], [[0, 0], [1, 1]])
    assert out[8].dtype == np.int64
    np.testing.assert_array_equal(out[9], [7, 7])
    np.testing.assert_array_equal(out[10], [2, 3])
    assert out[11] == 6 and out[12] == 2
    np.testing.assert_array_equal(out[13], np.zeros((2, 3)))
    assert out[14].shape == (1, 2, 3)
    np.testing.assert_array_equal(out[15], [1, 2])
    np.testing.assert_array_equal(out[16], [4.0, 5.0])
    np.testing.assert_array_equal(out[17], a[:, ::-1])


def test_softmax_and_cross_entropy_values(run):
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], np.float32)
    labels = np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]], np.float32)
    e = np.exp(logits - logits.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    out = run(lambda: [tf.nn.softmax(logits), tf.nn.log_softmax(logits),
                       tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
                       tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0],
                                                                      logits=logits)])
    np.testing.assert_allclose(out[0], sm, rtol=1e-5)
    np.testing.assert_allclose(out[1], np.log(sm), rtol=1e-5)
    np.testing.assert_allclose(out[2], -(labels * np.log(sm)).sum(1), rtol=1e-5)
    np.testing.assert_allclose(out[3], -np.log(sm[[0, 1], [2, 0]]), rtol=1e-5)


# -- random ops and seeds -------------------------------------------------------------------------
def _first_values(graph_seed, op_seed, extra_ops=0):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        for _ in range(extra_ops):
            tf.constant(0)
        r = tf.random_uniform([5], seed=op_seed)
        n = tf.random_normal([3], seed=op_seed)
        with tf.Session() as sess:
            first = sess.run([r, n])
            second = sess.run([r, n])
        with tf.Session() as sess:
            again = sess.run([r, n])
    return first, second, again


def test_random_seed_rules():
    first, second, again = _first_values(3, None)
    # Two runs in one session continue the stream; a new session starts it over.
    assert not np.array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    # Rebuilding the same program with the same graph seed gives the same numbers.
    rebuilt = _first_values(3, None)[0]
    np.testing.assert_array_equal(first[0], rebuilt[0])
    # A different graph seed gives different numbers.
    assert not np.array_equal(first[0], _first_values(4, None)[0][0])
    # Op seed alone is reproducible too.
    a = _first_values(None, 7)[0]
    np.testing.assert_array_equal(a[0], _first_values(None, 7)[0][0])
    # No seeds: different numbers each time a new session runs it.
    none = _first_values(None, None)
    assert not np.array_equal(none[0][0], none[2][0])


def test_random_values_are_in_range():
    with tf.Graph().as_default():
        u = tf.random_uniform([1000], minval=2.0, maxval=3.0, seed=1)
        i = tf.random_uniform([1000], minval=-3, maxval=4, dtype=tf.int32, seed=1)
        t = tf.truncated_normal([1000], mean=1.0, stddev=0.5, seed=1)
        n = tf.random_normal([2000], mean=5.0, stddev=2.0, seed=1)
        with tf.Session() as sess:
            u, i, t, n = sess.run([u, i, t, n])
    assert u.dtype == np.float32 and 2.0 <= u.min() and u.max() < 3.0
    assert i.dtype == np.int32 and i.min() == -3 and i.max() == 3
    assert t.min() >= 0.0 and t.max() <= 2.0
    assert abs(n.mean() - 5.0) < 0.3 and abs(n.std() - 2.0) < 0.3


def test_seed_attrs_follow_tf():
    # Recorded from TF 2.21: with a graph seed, seedless random ops count 0, 1, 2...
    with tf.Graph().as_default() as g:
        tf.set_random_seed(5)
        tf.constant(1.0)
        r = tf.random_uniform([2])
        r2 = tf.random_uniform([2], seed=3)
        tf.constant(2.0)
        r3 = tf.random_normal([2])
        assert g.seed == 5
    # The random ops themselves (random_uniform/RandomUniform, ...): the API
    # functions scale them with ordinary ops, as TF does.
    ops = [g.get_operation_by_name(n) for n in (
        "random_uniform/RandomUniform", "random_uniform_1/RandomUniform",
        "random_normal/RandomStandardNormal")]
    assert [op.inputs[0].op.type for op in ops] == ["Const"] * 3
    seeds = [(op.get_attr("seed"), op.get_attr("seed2")) for op in ops]
    assert seeds == [(5, 0), (5, 3), (5, 1)]
    assert [t.op.type for t in (r, r2, r3)] == ["RandomUniform", "RandomUniform", "AddV2"]
    with tf.Graph().as_default():
        r = tf.random_uniform([2], seed=3)
        r2 = tf.random_uniform([2])
    assert (r.op.get_attr("seed"), r.op.get_attr("seed2")) == (87654321, 3)
    assert (r2.op.get_attr("seed"), r2.op.get_attr("seed2")) == (0, 0)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        r = tf.random_uniform([2])   # (0, 0) would mean "unseeded": TF uses (0, 2**31-1)
    assert (r.op.get_attr("seed"), r.op.get_attr("seed2")) == (0, 2**31 - 1)
