"""The remapper: Conv2D -> BiasAdd (-> Relu) runs as one fused convolution, with the
unfused ops' values to the bit, their errors, and a trace that lists each member."""

import numpy as np
import pytest

import minitf.compat.v1 as tf

OFF = tf.ConfigProto(graph_options=tf.GraphOptions(fuse_elementwise=False))


def conv_layer(dtype=tf.float32, relu=True, bias_shape=(4,)):
    x = tf.placeholder(dtype, [None, 6, 7, 3], name="x")
    b = tf.placeholder(dtype, bias_shape, name="b")
    w = tf.constant(np.linspace(-1, 1, 3 * 3 * 3 * 4).reshape(3, 3, 3, 4), dtype, name="w")
    y = tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv"), b, name="bias")
    return (tf.nn.relu(y, name="relu") if relu else y), x, b


def run(fetches, feeds, config=None):
    md = tf.RunMetadata()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(config=config) as sess:
        out = sess.run(fetches, feeds, options=opts, run_metadata=md)
    labels = {n.node_name: n.timeline_label for d in md.step_stats.dev_stats
              for n in d.node_stats}
    return out, labels


def inputs(dtype, n=2):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((n, 6, 7, 3)).astype(dtype),
            rng.standard_normal(4).astype(dtype))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("relu", [True, False])
def test_fused_convolution_equals_the_three_ops_to_the_bit(dtype, relu):
    xs, bs = inputs(dtype.as_numpy_dtype)
    with tf.Graph().as_default():
        y, x, b = conv_layer(dtype, relu)
        fused, labels = run(y, {x: xs, b: bs})
        plain, plain_labels = run(y, {x: xs, b: bs}, OFF)
    np.testing.assert_array_equal(fused, plain)
    assert fused.dtype == dtype.as_numpy_dtype
    members = "Conv2D+BiasAdd+Relu" if relu else "Conv2D+BiasAdd"
    assert labels["conv"] == "conv = Conv2D() [fused: %s]" % members
    assert labels["bias"] == "bias = BiasAdd() [fused: %s]" % members
    assert plain_labels["conv"] == "conv = Conv2D()"
    # the fused node computes the last op's output under its name
    assert (labels["relu"] if relu else labels["bias"]).endswith("[fused: %s]" % members)


def test_large_batch_runs_the_chunked_kernel_and_keeps_nan():
    xs, bs = inputs(np.float32, n=300)
    xs[0, 2, 3, :] = np.nan                  # NaN reaches the windows around (2, 3)
    with tf.Graph().as_default():
        y, x, b = conv_layer()
        fused, _ = run(y, {x: xs, b: bs})
        plain, _ = run(y, {x: xs, b: bs}, OFF)
    np.testing.assert_array_equal(fused, plain)     # (NaN == NaN for this check)
    assert np.isnan(fused[0, 2, 3]).all() and not np.isnan(fused[1]).any()
    assert (fused[~np.isnan(fused)] >= 0).all()


def test_a_fetched_intermediate_stays_its_own_op():
    xs, bs = inputs(np.float32)
    with tf.Graph().as_default():
        y, x, b = conv_layer()
        pre = y.op.inputs[0]                          # the BiasAdd, fetched too
        (fused_y, fused_pre), labels = run([y, pre], {x: xs, b: bs})
        (plain_y, plain_pre), _ = run([y, pre], {x: xs, b: bs}, OFF)
    np.testing.assert_array_equal(fused_y, plain_y)
    np.testing.assert_array_equal(fused_pre, plain_pre)
    assert labels["bias"] == "bias = BiasAdd() [fused: Conv2D+BiasAdd]"
    assert labels["relu"] == "relu = Relu()"


def test_conv_read_twice_is_not_fused():
    xs, bs = inputs(np.float32)
    with tf.Graph().as_default():
        y, x, b = conv_layer()
        conv = tf.get_default_graph().get_tensor_by_name("conv:0")
        z = y + tf.reduce_sum(conv)
        _, labels = run(z, {x: xs, b: bs})
    assert labels["conv"] == "conv = Conv2D()"


def test_a_wrong_bias_at_run_time_gets_bias_adds_own_error():
    xs, _ = inputs(np.float32)
    with tf.Graph().as_default():
        y, x, b = conv_layer(bias_shape=None)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Must provide as many biases as the channel dimension"):
                sess.run(y, {x: xs, b: np.ones(5, np.float32)})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Biases must be 1D"):
                sess.run(y, {x: xs, b: np.ones((4, 1), np.float32)})


def test_training_through_fused_layers_matches_unfused():
    rng = np.random.default_rng(5)
    images = rng.standard_normal((8, 10, 10, 1)).astype(np.float32)

    def losses(config):
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            x = tf.placeholder(tf.float32, [None, 10, 10, 1])
            h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
            h = tf.layers.conv2d(h, 2, 3, padding="valid", activation=tf.nn.relu)
            loss = tf.reduce_mean(tf.square(h - 0.5))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                return [sess.run([loss, train], {x: images})[0] for _ in range(3)]
    fused, plain = losses(None), losses(OFF)
    assert fused == plain and fused[2] < fused[0]


def dense_layer(relu=True, bias_first=False, transpose_b=False, dtype=tf.float32):
    x = tf.placeholder(dtype, [None, 5], name="x")
    b = tf.placeholder(dtype, [3], name="b")
    w = np.linspace(-1, 1, 15).reshape((3, 5) if transpose_b else (5, 3))
    product = tf.matmul(x, tf.constant(w, dtype), transpose_b=transpose_b, name="product")
    y = tf.add(b, product, name="plus") if bias_first else tf.add(product, b, name="plus")
    return (tf.nn.relu(y, name="relu") if relu else y), x, b


@pytest.mark.parametrize("relu,bias_first,transpose_b,dtype", [
    (True, False, False, tf.float32), (False, True, False, tf.float32),
    (True, True, True, tf.float64)])
def test_matmul_plus_bias_and_relu_fuse_like_tf_dense(relu, bias_first, transpose_b, dtype):
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((6, 5)).astype(dtype.as_numpy_dtype)
    bs = rng.standard_normal(3).astype(dtype.as_numpy_dtype)
    with tf.Graph().as_default():
        y, x, b = dense_layer(relu, bias_first, transpose_b, dtype)
        fused, labels = run(y, {x: xs, b: bs})
        plain, _ = run(y, {x: xs, b: bs}, OFF)
    np.testing.assert_array_equal(fused, plain)
    members = "MatMul+AddV2+Relu" if relu else "MatMul+AddV2"
    assert labels["product"] == "product = MatMul() [fused: %s]" % members


def test_a_matrix_added_to_a_product_is_not_a_bias():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        m = tf.placeholder(tf.float32, [None, 3], name="m")
        y = tf.nn.relu(tf.matmul(x, tf.eye(3), name="product") + m, name="relu")
        value, labels = run(y, {x: np.ones((2, 3), np.float32),
                                m: -np.ones((2, 3), np.float32) * 2})
    assert labels["product"] == "product = MatMul()" and (value == 0).all()
