"""Every differentiable op's gradient against central finite differences.

For a scalar loss L = sum(w * f(inputs)) with a fixed random weight w (so
every output element matters differently), the symbolic dL/dx from
tf.gradients must match (L(x + h e_i) - L(x - h e_i)) / 2h for each element.
Computed in float64 so the finite differences are accurate.
"""

import numpy as np
import pytest

import minitf.compat.v1 as tf

RNG = np.random.default_rng(7)


def _check(build, inputs, rtol=1e-5, atol=1e-6, h=1e-6):
    """``build(*placeholders) -> tensor``; inputs: list of float64 arrays."""
    g = tf.Graph()
    with g.as_default():
        ps = [tf.placeholder(tf.float64, a.shape) for a in inputs]
        out = build(*ps)
        w = tf.constant(RNG.standard_normal(out.shape.as_list()))
        loss = tf.reduce_sum(out * w)
        grads = tf.gradients(loss, ps)
        with tf.Session(graph=g) as sess:
            feed = dict(zip(ps, inputs))
            symbolic = sess.run([gr if gr is not None else loss for gr in grads], feed)
            for k, (a, gr) in enumerate(zip(inputs, grads)):
                if gr is None:
                    continue
                numeric = np.zeros_like(a)
                for idx in np.ndindex(a.shape):
                    plus, minus = a.copy(), a.copy()
                    plus[idx] += h
                    minus[idx] -= h
                    fp = sess.run(loss, {**feed, ps[k]: plus})
                    fm = sess.run(loss, {**feed, ps[k]: minus})
                    numeric[idx] = (fp - fm) / (2 * h)
                np.testing.assert_allclose(symbolic[k], numeric, rtol=rtol, atol=atol)
    return grads


def _r(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


def _pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


BINARY = [
    ("add", lambda x, y: x + y, [_r(2, 3), _r(3)]),
    ("sub", lambda x, y: x - y, [_r(2, 3), _r(2, 1)]),
    ("mul", lambda x, y: x * y, [_r(2, 3), _r(1, 3)]),
    ("div", lambda x, y: x / y, [_r(2, 3), _pos(3)]),
    ("pow", lambda x, y: tf.pow(x, y), [_pos(2, 3), _r(2, 3)]),
    ("maximum", tf.maximum, [_r(4), _r(4)]),
    ("minimum", tf.minimum, [_r(2, 2), _r(2, 2)]),
    ("squared_difference", tf.squared_difference, [_r(3), _r(2, 3)]),
    ("matmul", tf.matmul, [_r(2, 3), _r(3, 4)]),
    ("matmul_ta", lambda a, b: tf.matmul(a, b, transpose_a=True), [_r(3, 2), _r(3, 4)]),
    ("matmul_tb", lambda a, b: tf.matmul(a, b, transpose_b=True), [_r(2, 3), _r(4, 3)]),
    ("matmul_tatb", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
     [_r(3, 2), _r(4, 3)]),
    ("batch_matmul", tf.matmul, [_r(2, 2, 3), _r(2, 3, 2)]),
    ("add_n", lambda x, y: tf.add_n([x, y, x]), [_r(2, 2), _r(2, 2)]),
    ("concat", lambda x, y: tf.concat([x, y], 1), [_r(2, 2), _r(2, 3)]),
    ("stack", lambda x, y: tf.stack([x, y], axis=1), [_r(3), _r(3)]),
    ("where", lambda x, y: tf.where(x > 0, x, y), [_r(2, 3), _r(2, 3)]),
]

UNARY = [
    ("neg", lambda x: -x, _r(2, 3)),
    ("abs", tf.abs, _r(2, 3)),
    ("square", tf.square, _r(2, 3)),
    ("sqrt", tf.sqrt, _pos(2, 3)),
    ("rsqrt", tf.rsqrt, _pos(2, 3)),
    ("exp", tf.exp, _r(2, 3)),
    ("log", tf.log, _pos(2, 3)),
    ("reciprocal", tf.reciprocal, _pos(2, 3)),
    ("relu", tf.nn.relu, _r(2, 3)),
    ("sigmoid", tf.sigmoid, _r(2, 3)),
    ("tanh", tf.tanh, _r(2, 3)),
    ("identity", tf.identity, _r(3)),
    ("reshape", lambda x: tf.reshape(x, [3, 2]), _r(2, 3)),
    ("transpose", lambda x: tf.transpose(x, [1, 0, 2]), _r(2, 3, 2)),
    ("unstack", lambda x: tf.unstack(x)[1] * 2.0, _r(3, 2)),
    ("slice", lambda x: x[1:, ::2], _r(3, 4)),
    ("expand_squeeze", lambda x: tf.squeeze(tf.expand_dims(x, 0)), _r(2, 3)),
    ("reduce_sum", lambda x: tf.reduce_sum(x, 1), _r(2, 3)),
    ("reduce_sum_all", lambda x: tf.reduce_sum(x) * tf.ones([2], tf.float64), _r(2, 3)),
    ("reduce_sum_keep", lambda x: tf.reduce_sum(x, 0, keepdims=True), _r(2, 3)),
    ("reduce_mean", lambda x: tf.reduce_mean(x, [0, 2]), _r(2, 3, 2)),
    ("reduce_max", lambda x: tf.reduce_max(x, 1), _r(3, 4)),
    ("reduce_min", lambda x: tf.reduce_min(x, 0), _r(3, 4)),
    ("reduce_prod", lambda x: tf.reduce_prod(x, 1), _pos(2, 3)),
    ("softmax", tf.nn.softmax, _r(2, 4)),
    ("log_softmax", tf.nn.log_softmax, _r(2, 4)),
]


@pytest.mark.parametrize("name,fn,inputs", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradients_match_finite_differences(name, fn, inputs):
    _check(fn, inputs)


@pytest.mark.parametrize("name,fn,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradients_match_finite_differences(name, fn, x):
    _check(fn, [x])


def test_cast_gradient_goes_back_to_the_source_dtype():
    # float32 in the middle: finite differences need a larger step.
    grads = _check(lambda x: tf.cast(tf.cast(x, tf.float32) * 3.0, tf.float64), [_r(3)],
                   rtol=1e-3, atol=1e-3, h=1e-2)
    assert grads[0].dtype == tf.float64


def test_softmax_cross_entropy_gradient():
    labels = np.eye(4)[[0, 3]]
    _check(lambda z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=z),
           [_r(2, 4)])


def test_sparse_softmax_cross_entropy_gradient():
    _check(lambda z: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([1, 2]), logits=z), [_r(2, 4)])


def test_broadcast_against_unknown_batch_dimension():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [None, 3])
        b = tf.Variable(np.zeros(3), name="b")
        loss = tf.reduce_sum((x + b) * 2.0)
        (db,) = tf.gradients(loss, [b])
        with tf.Session(graph=g) as sess:
            sess.run(b.initializer)
            np.testing.assert_allclose(sess.run(db, {x: np.ones((5, 3))}), [10.0, 10.0, 10.0])


def test_gradient_to_a_variable_and_stop_gradient_and_unconnected():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(3.0, name="v")
        u = tf.Variable(1.0, name="u")
        y = v * v + tf.stop_gradient(v) * 10.0
        gv, gu = tf.gradients(y, [v, u])
        assert gu is None
        assert gv.op.name.startswith("gradients/")
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(gv) == 6.0


def test_grad_ys_and_several_ys():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0])
        y1 = x * 3.0
        y2 = x * x
        (gx,) = tf.gradients([y1, y2], [x], grad_ys=[tf.constant([1.0, 0.0]),
                                                   tf.constant([1.0, 1.0])])
        with tf.Session(graph=g) as sess:
            np.testing.assert_allclose(sess.run(gx), [3.0 + 2.0, 0.0 + 4.0])


def test_integer_outputs_have_no_gradient_as_in_tf():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1, 2])
        y = x * 2
        before = len(g.get_operations())
        assert tf.gradients(y, [x]) == [None]
        assert len(g.get_operations()) == before       # no gradient ops were built
        f = tf.constant(2.0)
        assert tf.gradients(tf.cast(f, tf.int32) * 3, f) == [None]


def test_grad_ys_may_be_one_tensor_and_lengths_must_match():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0)
        y = a * a
        (ga,) = tf.gradients(y, a, grad_ys=tf.constant(3.0))
        with tf.Session(graph=g) as sess:
            assert sess.run(ga) == 12.0
        with pytest.raises(ValueError, match=r"^Length mismatch\. Passed 1 grad_ys for 2 ys$"):
            tf.gradients([y, y], a, grad_ys=[tf.constant(1.0)])
        with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
            tf.gradients(y, a, grad_ys=[tf.constant(1.0), tf.constant(2.0)])


def _two_task_fanout(colocate):
    """``a`` (task 0) is read by two ops on task 0 and two on task 1."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:w/task:0"):
            x = tf.Variable(1.0, name="x")
            a = tf.multiply(x, 2.0, name="a")
            c1, c2 = tf.multiply(a, 4.0, name="c1"), tf.multiply(a, 5.0, name="c2")
        with tf.device("/job:w/task:1"):
            b1, b2 = tf.multiply(a, 3.0, name="b1"), tf.multiply(a, 6.0, name="b2")
        with tf.device("/job:w/task:2"):
            loss = tf.add_n([b1, b2, c1, c2], name="loss")
        [gx] = tf.gradients(loss, [x], colocate_gradients_with_ops=colocate)
    return g, gx


def test_gradients_of_one_tensor_are_added_per_device_then_where_the_tensor_was_made():
    g, _ = _two_task_fanout(colocate=True)
    adds = {op.name: op for op in g.get_operations() if op.type == "AddN"
            and op.name.startswith("gradients")}
    assert sorted(adds) == ["gradients/AddN", "gradients/AddN_1", "gradients/AddN_2"]
    # one partial sum per task, each with its first contribution ...
    assert adds["gradients/AddN"].colocation_groups() == [b"loc:@c1"]
    assert adds["gradients/AddN"].device == "/job:w/task:0"
    assert adds["gradients/AddN_1"].colocation_groups() == [b"loc:@b1"]
    assert adds["gradients/AddN_1"].device == "/job:w/task:1"
    # ... and the total where `a` was made: only task 1's partial sum crosses
    assert adds["gradients/AddN_2"].colocation_groups() == [b"loc:@a"]
    assert [t.op.name for t in adds["gradients/AddN_2"].inputs] == \
        ["gradients/AddN", "gradients/AddN_1"]


def test_without_colocation_the_gradients_of_a_tensor_are_added_in_one_unpinned_addn():
    g, _ = _two_task_fanout(colocate=False)
    adds = [op for op in g.get_operations() if op.type == "AddN"
            and op.name.startswith("gradients")]
    assert len(adds) == 1 and adds[0].device == "" and len(adds[0].inputs) == 4
    assert sorted(t.op.name for t in adds[0].inputs) == [
        "gradients/b1_grad/mul", "gradients/b2_grad/mul", "gradients/c1_grad/mul",
        "gradients/c2_grad/mul"]
