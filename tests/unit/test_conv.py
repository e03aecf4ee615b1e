"""Convolutions, pooling and batch normalization beyond what the parity tests and the
conformance programs check: layouts on GPUs, gradients that TF's CPU kernels do not
compute (dilations), dtypes, the run-time errors and the layers' refusals."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import errors
from minitf.kernels import cpu, reference as ref

GPU = tf.ConfigProto(device_count={"GPU": 1})


def images(shape, k=0):
    return ((np.arange(np.prod(shape)) * 7 + k) % 11 - 5).reshape(shape).astype(np.float32) / 4


def run(fetches, config=None, feed=None):
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def test_nchw_on_a_gpu_equals_nhwc_on_the_cpu_forward_and_backward():
    x_val, w_val = images((2, 6, 5, 3)), images((3, 3, 3, 4), 1)
    with tf.Graph().as_default():
        w = tf.Variable(w_val)
        x = tf.constant(x_val)
        y = tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME")
        pooled = tf.nn.max_pool(tf.nn.relu(y), 2, 2, "SAME")
        loss = tf.reduce_sum(tf.nn.avg_pool(pooled, 1, 1, "VALID") * 3.0)
        want = run([y, pooled] + tf.gradients(loss, [x, w]))
    with tf.Graph().as_default():
        w = tf.Variable(w_val)
        with tf.device("/gpu:0"):
            x = tf.constant(nchw(x_val))
            y = tf.nn.conv2d(x, w, [1, 1, 2, 1], "SAME", data_format="NCHW")
            pooled = tf.nn.max_pool(tf.nn.relu(y), [1, 1, 2, 2], [1, 1, 2, 2], "SAME",
                                    data_format="NCHW")
            loss = tf.reduce_sum(tf.nn.avg_pool(pooled, 1, 1, "VALID", data_format="NCHW")
                                 * 3.0)
            grads = tf.gradients(loss, [x, w])
        got = run([y, pooled] + grads, GPU)
    for g, w_, is_image in zip(got, want, (True, True, True, False)):
        np.testing.assert_allclose(g, nchw(w_) if is_image else w_, rtol=1e-5, atol=1e-5)


def test_nchw_runs_on_a_virtual_gpu_but_not_on_the_cpu():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            on_cpu = tf.nn.conv2d(tf.zeros([1, 2, 4, 4]), tf.zeros([3, 3, 2, 1]), 1, "SAME",
                                  data_format="NCHW")
        with tf.device("/gpu:0"):
            on_gpu = tf.nn.conv2d(tf.ones([1, 2, 4, 4]), tf.ones([3, 3, 2, 1]), 1, "SAME",
                                  data_format="NCHW")
        with tf.Session(config=GPU) as sess:
            assert sess.run(on_gpu).shape == (1, 1, 4, 4)
            assert sess.run(on_gpu)[0, 0, 1, 1] == 18.0
            with pytest.raises(errors.UnimplementedError, match="only supports the NHWC"):
                sess.run(on_cpu)


def numeric_gradient(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        g.flat[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("padding,strides,dilations", [("SAME", 1, 2), ("VALID", 1, [2, 1]),
                                                       ("SAME", 2, 1)])
def test_conv_gradients_equal_finite_differences(padding, strides, dilations):
    """Including dilated filters, whose gradients TF's CPU kernels refuse."""
    x_val = images((1, 6, 5, 2)).astype(np.float64)
    w_val = images((2, 3, 2, 2), 3).astype(np.float64)
    weights = np.linspace(-1, 1, 200)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x_val.shape)
        w = tf.placeholder(tf.float64, w_val.shape)
        y = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
        size = y.shape.num_elements()
        loss = tf.reduce_sum(y * weights[:size].reshape(y.shape.as_list()))
        dx, dw = tf.gradients(loss, [x, w])
        with tf.Session() as sess:
            got_dx, got_dw = sess.run([dx, dw], {x: x_val, w: w_val})
            f_x = lambda v: sess.run(loss, {x: v, w: w_val})  # noqa: E731
            f_w = lambda v: sess.run(loss, {x: x_val, w: v})  # noqa: E731
            np.testing.assert_allclose(got_dx, numeric_gradient(f_x, x_val), atol=1e-6)
            np.testing.assert_allclose(got_dw, numeric_gradient(f_w, w_val), atol=1e-6)


def test_second_order_gradients_through_conv_and_avg_pool():
    """The backprop ops have gradients of their own, as in TF (conv2d_transpose too)."""
    x_val = images((1, 4, 4, 1)).astype(np.float64)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x_val.shape)
        w = tf.constant(images((2, 2, 1, 1), 2).astype(np.float64))
        y = tf.nn.avg_pool(tf.nn.conv2d(x, w, 1, "SAME") ** 2, 2, 1, "VALID")
        g = tf.gradients(tf.reduce_sum(y), x)[0]
        gg = tf.gradients(tf.reduce_sum(g * g), x)[0]
        with tf.Session() as sess:
            got = sess.run(gg, {x: x_val})
            f = lambda v: np.sum(sess.run(g, {x: v}) ** 2)  # noqa: E731
            np.testing.assert_allclose(got, numeric_gradient(f, x_val), atol=1e-5)


def test_int32_conv_and_small_int_max_pool_on_the_cpu():
    x = (np.arange(2 * 4 * 4 * 2) % 9 - 4).reshape(2, 4, 4, 2).astype(np.int32)
    w = (np.arange(2 * 2 * 2 * 3) % 5 - 2).reshape(2, 2, 2, 3).astype(np.int32)
    with tf.Graph().as_default():
        y = tf.nn.conv2d(x, w, 1, "SAME")
        pooled = tf.nn.max_pool(tf.constant(x.astype(np.int8)), 2, 1, "SAME")
        got_y, got_pool = run([y, pooled])
    assert got_y.dtype == np.int32 and got_pool.dtype == np.int8
    np.testing.assert_array_equal(got_y, ref.conv2d(x, w, (1, 1), (1, 1), (0, 1, 0, 1)))
    np.testing.assert_array_equal(got_pool, ref.max_pool(x.astype(np.int8), (2, 2), (1, 1),
                                                         (0, 1, 0, 1)))


def test_half_precision_batch_norm_keeps_float32_statistics():
    x = images((2, 3, 3, 2)).astype(np.float16)
    with tf.Graph().as_default():
        y, mean, var = tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0])
        out = run([y, mean, var])
    assert out[0].dtype == np.float16 and out[1].dtype == out[2].dtype == np.float32
    rows = x.astype(np.float64).reshape(-1, 2)
    np.testing.assert_allclose(out[1], rows.mean(0), rtol=1e-6)
    np.testing.assert_allclose(out[2], rows.var(0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(out[0].astype(np.float64).reshape(-1, 2),
                               (rows - rows.mean(0)) / np.sqrt(rows.var(0) + 0.001),
                               atol=2e-3)


def test_exponential_avg_factor_blends_running_statistics():
    x = images((4, 2, 2, 3))
    with tf.Graph().as_default():
        _, mean, var = tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]),
                                              mean=[1.0, 2.0, 3.0], variance=[1.0, 1.0, 1.0],
                                              exponential_avg_factor=0.25)
        got_mean, got_var = run([mean, var])
    rows = x.astype(np.float64).reshape(-1, 3)
    np.testing.assert_allclose(got_mean, 0.75 * np.array([1, 2, 3]) + 0.25 * rows.mean(0),
                               rtol=1e-6)
    np.testing.assert_allclose(got_var, 0.75 + 0.25 * rows.var(0, ddof=1), rtol=1e-6)


def test_run_time_shape_errors_say_what_is_wrong():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None, None])
        w = tf.placeholder(tf.float32, [None, None, None, None])
        y = tf.nn.conv2d(x, w, 1, "VALID")
        t = tf.nn.conv2d_transpose(x, tf.zeros([3, 3, 4, 3]), [2, 11, 11, 4], 2)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match="input depth must be evenly divisible by filter depth: "
                                     "3 vs 2"):
                sess.run(y, {x: np.zeros((1, 5, 5, 3)), w: np.zeros((3, 3, 2, 1))})
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"Computed output size would be negative: -1 \[input_size:"
                                     r" 5, effective_filter_size: 7, stride: 1\]"):
                sess.run(y, {x: np.zeros((1, 5, 5, 2)), w: np.zeros((7, 7, 2, 1))})
            with pytest.raises(errors.InvalidArgumentError,
                               match="Conv2DCustomBackpropInput: Size of out_backprop doesn't "
                                     "match computed: actual = 5, computed = 6 spatial_dim: 1 "
                                     "input: 11 filter: 3 output: 5 stride: 2 dilation: 1"):
                sess.run(t, {x: np.zeros((2, 5, 5, 3))})


def test_bias_add_honours_data_format():
    value = images((2, 3, 2, 2))
    with tf.Graph().as_default():
        y = tf.nn.bias_add(value, [1.0, 10.0, 100.0], data_format="NCHW")
        got = run(y)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
            tf.nn.bias_add(value, [1.0, 2.0], data_format="NCHW")
        with pytest.raises(ValueError, match="data_format 'NHWC' or 'NCHW'"):
            tf.nn.bias_add(value, [1.0, 2.0], data_format="NWHC")
    np.testing.assert_allclose(got, value + np.array([1, 10, 100]).reshape(3, 1, 1))


def test_layers_refuse_what_they_do_not_honour():
    with tf.Graph().as_default():
        x = tf.zeros([1, 6, 6, 1])
        with pytest.raises(errors.UnimplementedError, match="kernel_regularizer="):
            tf.layers.conv2d(x, 2, 3, kernel_regularizer=lambda w: tf.reduce_sum(w))
        with pytest.raises(errors.UnimplementedError, match="renorm="):
            tf.layers.batch_normalization(x, renorm=True)
        with pytest.raises(errors.UnimplementedError, match="one channel axis"):
            tf.layers.batch_normalization(x, axis=[1, 2])
        with pytest.raises(ValueError, match="in conjunction with `dilation_rate > 1`"):
            tf.layers.conv2d(x, 2, 3, strides=2, dilation_rate=2)
        with pytest.raises(errors.UnimplementedError, match="grouped convolutions"):
            tf.nn.conv2d(tf.zeros([1, 4, 4, 4]), tf.zeros([3, 3, 2, 1]), 1, "SAME")
        with pytest.raises(errors.UnimplementedError, match="explicit paddings"):
            tf.nn.max_pool(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
        with pytest.raises(ValueError, match="NCHW_VECT_C"):
            tf.nn.conv2d(x, tf.zeros([1, 1, 1, 1]), 1, "SAME", data_format="NCHW_VECT_C")
        depthwise = tf.nn.max_pool(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
        with tf.Session() as sess, pytest.raises(errors.UnimplementedError,
                                                  match="depthwise pooling"):
            sess.run(depthwise)


def test_batch_norm_training_placeholder_updates_only_while_training():
    x_val = images((4, 2, 2, 3))
    with tf.Graph().as_default():
        x = tf.constant(x_val)
        training = tf.placeholder(tf.bool, [])
        tf.layers.batch_normalization(x, training=training, momentum=0.5)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(updates, {training: False})
            np.testing.assert_array_equal(sess.run(moving_mean), np.zeros(3))
            sess.run(updates, {training: True})
            np.testing.assert_allclose(sess.run(moving_mean),
                                       0.5 * x_val.reshape(-1, 3).mean(0), rtol=1e-6)


@pytest.mark.parametrize("direct", [False, True])
def test_direct_and_im2col_convolutions_agree(direct, monkeypatch):
    x = images((3, 9, 8, 3))
    w = images((3, 2, 3, 5), 4)
    monkeypatch.setattr(cpu, "DIRECT_MAX_K", 10_000 if direct else 0)
    monkeypatch.setattr(cpu, "DIRECT_MAX_O", 10_000 if direct else 0)
    for strides, dilations, pads in (((1, 1), (1, 1), (1, 1, 0, 1)),
                                     ((2, 3), (1, 2), (0, 2, 1, 1))):
        np.testing.assert_allclose(cpu.conv2d(x, w, strides, dilations, pads),
                                   ref.conv2d(x, w, strides, dilations, pads), atol=1e-5)


def test_small_im2col_chunks_give_the_same_answers(monkeypatch):
    """Batches larger than one chunk of columns go through several chunks."""
    x, w = images((5, 7, 7, 2)), images((3, 3, 2, 4), 2)
    dy = images((5, 4, 4, 4), 5)
    geometry = ((2, 2), (1, 1), (1, 1, 1, 1))
    want = [cpu.conv2d(x, w, *geometry), cpu.conv2d_backprop_input(x.shape, w, dy, *geometry),
            cpu.conv2d_backprop_filter(x, w.shape, dy, *geometry)]
    monkeypatch.setattr(cpu, "COLS_PER_CHUNK", 40)
    got = [cpu.conv2d(x, w, *geometry), cpu.conv2d_backprop_input(x.shape, w, dy, *geometry),
           cpu.conv2d_backprop_filter(x, w.shape, dy, *geometry)]
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g, w_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(want[0], ref.conv2d(x, w, *geometry), atol=1e-5)


def test_convolution_chunks_obey_the_kernel_thread_budget(monkeypatch):
    """intra_op_parallelism_threads=1: the chunks run on the calling thread only."""
    import threading

    from minitf.kernels import threads
    seen = set()
    original = cpu._gemm

    def spy(*args, **kwargs):
        seen.add(threading.get_ident())
        return original(*args, **kwargs)
    monkeypatch.setattr(cpu, "_gemm", spy)
    monkeypatch.setattr(cpu, "COLS_PER_CHUNK", 2000)
    x, w = images((8, 12, 12, 3)), images((3, 3, 3, 8), 1)
    geometry = ((1, 1), (1, 1), (1, 1, 1, 1))
    try:
        threads.set_kernel_threads(1)
        got = cpu.conv2d(x, w, *geometry)
    finally:
        threads.set_kernel_threads(0)
    assert seen == {threading.get_ident()}
    np.testing.assert_allclose(got, ref.conv2d(x, w, *geometry), atol=1e-5)
