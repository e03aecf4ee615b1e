"""Clipping, tf.nn helpers and learning-rate schedules: the parts the
conformance program (programs/clipping_and_nn_helpers.py) does not pin."""

import numpy as np
import pytest

import minitf.compat.v1 as tf


def test_bad_arguments_are_refused_with_tf_messages():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.nn.bias_add(x, tf.ones([1, 3]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
            tf.nn.bias_add(x, tf.ones([2]))
        with pytest.raises(ValueError, match="`rate` must be a scalar tensor or a float in "
                                             "the range \\[0, 1\\). Received: rate=1.0"):
            tf.nn.dropout(x, rate=1.0)
        with pytest.raises(TypeError, match="t_list should be a sequence"):
            tf.clip_by_global_norm(x, 1.0)
        with pytest.raises(ValueError, match="boundaries should be 1 less"):
            tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.sigmoid_cross_entropy_with_logits(x, x)


def test_dropout_draws_a_new_mask_each_step_and_keeps_gradients_masked():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        w = tf.Variable(tf.ones([1, 400]))
        y = tf.nn.dropout(w, keep_prob=0.5)
        grad = tf.gradients(tf.reduce_sum(y), w)[0]
        assert tf.nn.dropout(w, rate=0.0).op.type == "Identity"     # nothing to drop
        with tf.Session() as sess:
            sess.run(w.initializer)
            first, g = sess.run([y, grad])
            second = sess.run(y)
    assert set(np.unique(first)) <= {0.0, 2.0} and not np.array_equal(first, second)
    np.testing.assert_array_equal(g, first)          # d(x * 2 * mask)/dx = 2 * mask


def test_clipping_keeps_the_direction_and_lets_small_gradients_through():
    with tf.Graph().as_default():
        a, b = tf.constant([30.0, 40.0]), tf.constant([0.0])
        (ca, cb), norm = tf.clip_by_global_norm([a, b], 5.0)
        (sa, sb), _ = tf.clip_by_global_norm([a * 0.01, b], 5.0)
        with tf.Session() as sess:
            ca, cb, norm, sa = sess.run([ca, cb, norm, sa])
    np.testing.assert_allclose(ca, [3.0, 4.0], rtol=1e-6)
    assert cb.tolist() == [0.0] and norm == 50.0
    np.testing.assert_allclose(sa, [0.3, 0.4], rtol=1e-6)         # norm 0.5 < 5: unchanged


def test_exponential_decay_follows_the_global_step_during_training():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(1.0, step, decay_steps=2, decay_rate=0.5,
                                        staircase=True)
        w = tf.Variable(0.0)
        train = tf.train.GradientDescentOptimizer(lr).minimize(-w, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            rates = []
            for _ in range(5):
                rates.append(float(sess.run(lr)))
                sess.run(train)
            assert float(sess.run(w)) == pytest.approx(sum(rates))
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25]


def test_split_of_a_size_known_only_at_run_time_checks_it_then():
    with tf.Graph().as_default():
        v = tf.placeholder(tf.float32, [None])
        parts = tf.split(v, 3)
        assert [p.shape.as_list() for p in parts] == [[None]] * 3
        with tf.Session() as sess:
            assert [p.tolist() for p in sess.run(parts, {v: np.arange(6.0)})] == \
                [[0, 1], [2, 3], [4, 5]]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Number of ways to split should evenly divide the split "
                                     "dimension, but got split_dim 0 \\(size = 7\\)"):
                sess.run(parts, {v: np.arange(7.0)})


def test_new_ops_run_on_a_server_with_their_attributes_shipped():
    from minitf.distributed.launcher import LocalCluster
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [None])
        hot = tf.one_hot(labels, 3, axis=0)
        first, rest = tf.split(tf.tile(tf.constant([[1, 2]]), [2, 2]), [1, -1], axis=1)
        noisy = tf.nn.dropout(tf.ones([4, 100]), rate=0.5)
        with LocalCluster({"local": 1}, echo=False) as cluster:
            with tf.Session(cluster.target("local", 0)) as sess:
                h, f, r, n = sess.run([hot, first, rest, noisy], {labels: [2, 0]})
    assert h.tolist() == [[0, 1], [0, 0], [1, 0]]
    assert f.tolist() == [[1], [1]] and r.tolist() == [[2, 1, 2], [2, 1, 2]]
    assert set(np.unique(n)) <= {0.0, 2.0} and 0.3 < (n > 0).mean() < 0.7
