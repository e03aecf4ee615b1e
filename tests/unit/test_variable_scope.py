"""tf.variable_scope, tf.get_variable, the initializers, and layers.dense sharing.

The naming rules and error messages are compared with real TF by the
conformance program tests/conformance/programs/variable_scopes.py; these tests
pin values, placement and the parts TF cannot be asked about in one program.
"""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.ops.init_ops import compute_fans


def run_init(*variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(variables))


def test_initializers_make_the_values_they_promise():
    with tf.Graph().as_default():
        z = tf.get_variable("z", [2, 2], initializer=tf.zeros_initializer())
        o = tf.get_variable("o", [3], dtype=tf.int32, initializer=tf.ones_initializer())
        c = tf.get_variable("c", [2, 2], initializer=tf.constant_initializer([1, 2, 3, 4]))
        u = tf.get_variable("u", [4000], initializer=tf.random_uniform_initializer(-2, 2))
        n = tf.get_variable("n", [4000], initializer=tf.random_normal_initializer(3.0, 0.5))
        vs = tf.get_variable("vs", [100, 400], initializer=tf.variance_scaling_initializer(
            scale=2.0, mode="fan_in", distribution="uniform"))
        zv, ov, cv, uv, nv, vsv = run_init(z, o, c, u, n, vs)
    assert zv.tolist() == [[0, 0], [0, 0]] and ov.tolist() == [1, 1, 1]
    assert ov.dtype == np.int32 and cv.tolist() == [[1, 2], [3, 4]]
    assert -2 <= uv.min() and uv.max() < 2 and abs(uv.mean()) < 0.15
    assert abs(nv.mean() - 3.0) < 0.05 and abs(nv.std() - 0.5) < 0.05
    limit = np.sqrt(3 * 2.0 / 100)                     # variance = scale / fan_in
    assert np.abs(vsv).max() <= limit and vsv.std() > 0.9 * limit / np.sqrt(3)


def test_an_initializer_class_not_yet_called_is_accepted_as_in_tf():
    with tf.Graph().as_default():
        w = tf.get_variable("w", [2], dtype=tf.int32, initializer=tf.ones_initializer)
        assert run_init(w)[0].tolist() == [1, 1]


def test_constant_initializer_of_the_wrong_size_is_refused():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="has 3 elements, but got `shape` \\(2, 2\\)"):
            tf.get_variable("c", [2, 2], initializer=tf.constant_initializer([1, 2, 3]))
        with pytest.raises(ValueError,
                           match="Argument `scale` must be a positive float. Received: 0.0"):
            tf.variance_scaling_initializer(scale=0.0)


def test_fans_of_matrices_and_conv_kernels():
    assert compute_fans([]) == (1, 1)
    assert compute_fans([7]) == (7, 7)
    assert compute_fans([784, 256]) == (784, 256)
    assert compute_fans([3, 3, 16, 32]) == (9 * 16, 9 * 32)    # height x width x in/out


def test_a_new_variable_needs_a_full_shape_and_a_constant_needs_none():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape of a new variable \\(w\\) must be fully "
                                             "defined, but instead was \\(\\?, 3\\)"):
            tf.get_variable("w", [None, 3])
        with pytest.raises(ValueError, match="do not specify shape"):
            tf.get_variable("k", [2], initializer=tf.constant([1.0, 2.0]))


def test_unsupported_options_say_so():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError, match="partitioner="):
            tf.get_variable("w", [4], partitioner=lambda *a: [2])


def test_error_names_where_the_variable_was_first_made():
    with tf.Graph().as_default():
        tf.get_variable("w", [1])                                  # this line is named
        with pytest.raises(ValueError) as info:
            tf.get_variable("w", [1])
    message = str(info.value)
    assert "Originally defined at:" in message
    assert 'test_variable_scope.py", line' in message and 'tf.get_variable("w", [1])' in message


def test_dense_layers_share_weights_with_reuse():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0]])
        a = tf.layers.dense(x, 3, name="shared")
        b = tf.layers.dense(x * 2.0, 3, name="shared", reuse=True)
        other = tf.layers.dense(x, 3)                               # a new "dense"
        names = [v.name for v in tf.trainable_variables()]
        assert names == ["shared/kernel:0", "shared/bias:0", "dense/kernel:0", "dense/bias:0"]
        with pytest.raises(ValueError, match="Variable shared/kernel already exists"):
            tf.layers.dense(x, 3, name="shared")
        av, bv, ov = run_init(a, b, other)
    np.testing.assert_allclose(bv, 2 * av, rtol=1e-6)             # same kernel, zero bias
    assert not np.allclose(ov, av)


def test_initializer_ops_live_with_their_variable_on_the_ps():
    """With replica_device_setter the variable goes to the ps; its random
    initializer has no device of its own but is colocated with it, so the
    draw runs on the ps and the initial value never crosses the network."""
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
            w = tf.get_variable("w", [2, 3])
        init = w.initial_value.op
    assert w.device == "/job:ps/task:0"
    assert init.name == "w/Initializer/random_uniform" and init.device == ""
    assert init.colocation_groups() == [b"loc:@w"]


def test_scopes_are_per_graph_and_reentering_by_object_keeps_the_name_scope():
    with tf.Graph().as_default():
        with tf.variable_scope("s") as s:
            tf.get_variable("w", [1])
        with tf.variable_scope(s, reuse=True):
            op = tf.identity(1.0, name="i")
            assert tf.get_variable("w").name == "s/w:0"
        assert op.name == "s/i:0"                                   # not s_1/
    with tf.Graph().as_default():
        assert tf.get_variable_scope().name == ""
        assert tf.get_variable("s/w", [1]).name == "s/w:0"          # a fresh store
