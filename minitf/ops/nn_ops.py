"""``tf.nn``: activations, softmax and the cross-entropy losses, ``bias_add``.

``Relu`` is an elementwise row (see ``elementwise.py``); the softmax family
works on rows of the last axis, and its kernels call the backend's
``softmax``/``log_softmax``/``softmax_xent``/``sparse_softmax_xent``.
"""

import numbers

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, OpDef, declare
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import array_ops, math_ops, random_ops, reduction_ops
from minitf.ops.core import (FLOAT_TYPES, NUMBER_TYPES, check_dtype, constant,
                             convert_to_tensor, make_op, name_scope)
from minitf.ops.elementwise import BIG, FLOAT_NAMES, NUMBER_NAMES, unary_op

sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


# -- Relu ----------------------------------------------------------------------------------------
def _relu(x):
    # ``x != x`` is the NaN test: relu(NaN) stays NaN, as np.maximum(x, 0) does.
    if x > 0 or x != x:
        return x
    return 0


def _relu_cuda(x):
    return x if (x > 0 or x != x) else 0.0


def _relu_grad(op, grad):
    x = op.inputs[0]
    return [array_ops.where(x > 0, grad, array_ops.zeros_like(grad))]


RELU = unary_op("Relu", _relu, lambda x: np.maximum(x, np.zeros((), x.dtype)), cuda=_relu_cuda,
                fusion="{x} if ({x} > zero or {x} != {x}) else zero", gradient=_relu_grad,
                inputs=("features",))


def relu(features, name=None):
    return math_ops._unary(RELU, features, name or "Relu", NUMBER_TYPES)


# -- the softmax family: rows of the last axis ---------------------------------------------
def _softmax_kernel(op, backend):
    fn = backend.softmax if op.op_def is SOFTMAX else backend.log_softmax
    return lambda ctx, inputs: [fn(inputs[0])]


def _softmax_grad(op, grad):
    y = op.outputs[0]
    return [(grad - reduction_ops.reduce_sum(grad * y, -1, keepdims=True)) * y]


def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return [grad - reduction_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(y)]


def _logits(rows, classes, dtype, k=0):
    x = ((np.arange(rows * classes) * 5 + k) % 13 - 6).reshape(rows, classes) * 0.75
    return x.astype(np.float32).astype(dtype) if dtype != "float64" else x


def _softmax_examples(api):
    def examples(dtype):
        return [([_logits(3, 5, dtype)], api), ([_logits(BIG // 64, 64, dtype)], api),
                ([_logits(2, 0, dtype)], api)]
    return examples


_SOFTMAX_DEVICES = {"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES}
SOFTMAX = declare(OpDef(
    "Softmax", inputs=("logits",), attrs=("T",), gradient=_softmax_grad,
    devices=_SOFTMAX_DEVICES, kernel=_softmax_kernel, kernel_reads=BACKEND,
    examples=_softmax_examples(lambda x: softmax(x))))
LOG_SOFTMAX = declare(OpDef(
    "LogSoftmax", inputs=("logits",), attrs=("T",), gradient=_log_softmax_grad,
    devices=_SOFTMAX_DEVICES, kernel=_softmax_kernel, kernel_reads=BACKEND,
    examples=_softmax_examples(lambda x: log_softmax(x))))


def _xent_kernel(op, backend):
    fn = backend.softmax_xent

    def compute(ctx, inputs):
        logits, labels = inputs
        if logits.shape != labels.shape:
            raise errors.InvalidArgumentError(
                None, None, "logits and labels must be broadcastable: logits_size=%s "
                "labels_size=%s" % (list(logits.shape), list(labels.shape)))
        return list(fn(logits, labels))
    return compute


def _xent_grad(op, grad_loss, grad_backprop):
    logits, _labels = op.inputs
    backprop = op.outputs[1]
    g = array_ops.expand_dims(grad_loss, -1)
    return g * backprop, g * -log_softmax(logits)


def _xent_examples(dtype):
    labels = np.abs(_logits(3, 5, dtype, 1)).astype(np.float64)
    labels = (labels / labels.sum(axis=1, keepdims=True)).astype(np.float32).astype(dtype)
    big = np.zeros((BIG // 64, 64), np.float32)
    big[np.arange(big.shape[0]), np.arange(big.shape[0]) % 64] = 1
    api = lambda x, y: softmax_cross_entropy_with_logits_v2(labels=y, logits=x)  # noqa: E731
    return [([_logits(3, 5, dtype), labels], api),
            ([_logits(BIG // 64, 64, dtype), big.astype(dtype)], api)]


SOFTMAX_CROSS_ENTROPY_WITH_LOGITS = declare(OpDef(
    "SoftmaxCrossEntropyWithLogits", inputs=("features", "labels"), attrs=("T",),
    gradient=_xent_grad, devices=_SOFTMAX_DEVICES, kernel=_xent_kernel, kernel_reads=BACKEND,
    examples=_xent_examples))


def _sparse_xent_kernel(op, backend):
    fn = backend.sparse_softmax_xent
    return lambda ctx, inputs: list(fn(inputs[0], inputs[1]))


def _sparse_xent_grad(op, grad_loss, grad_backprop):
    backprop = op.outputs[1]
    return array_ops.expand_dims(grad_loss, -1) * backprop, None


def _sparse_xent_examples(dtype):
    api = lambda x, y: sparse_softmax_cross_entropy_with_logits(labels=y, logits=x)  # noqa
    rows = BIG // 64
    return [([_logits(3, 5, dtype), np.array([0, 4, 2], np.int64)], api),
            ([_logits(3, 5, dtype), np.array([1, 1, 3], np.int32)], api),
            ([_logits(rows, 64, dtype), (np.arange(rows) % 64).astype(np.int64)], api)]


SPARSE_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS = declare(OpDef(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
    attrs=("T", "Tlabels"), gradient=_sparse_xent_grad, devices=_SOFTMAX_DEVICES,
    kernel=_sparse_xent_kernel, kernel_reads=BACKEND, examples=_sparse_xent_examples))


# -- the tf.nn functions ---------------------------------------------------------------------
def _softmax(row, logits, axis, name):
    with name_scope(name, row.name, [logits]) as scope:
        x = convert_to_tensor(logits, name="logits")
        check_dtype(x, FLOAT_TYPES, arg="logits")
        if axis not in (None, -1) and x.shape.ndims is not None and axis != x.shape.ndims - 1:
            raise ValueError("minitf's %s works over the last axis; transpose first "
                             "(axis=%s was asked)." % (row.name, axis))
        if x.shape.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0 for '{{node %s}}'"
                             % scope[:-1])
        op = make_op(row, [x], [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def softmax(logits, axis=None, name=None, dim=None):
    return _softmax(SOFTMAX, logits, axis if axis is not None else dim, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return _softmax(LOG_SOFTMAX, logits, axis if axis is not None else dim, name)


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=-1, name=None, dim=None):
    """Per-example ``-sum(labels * log_softmax(logits))`` over the last axis."""
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        x = convert_to_tensor(logits, name="logits")
        y = convert_to_tensor(labels, dtype=x.dtype.base_dtype, name="labels")
        check_dtype(x, FLOAT_TYPES, arg="features")
        if x.shape.ndims is not None and x.shape.ndims != 2:
            raise ValueError("minitf's softmax cross-entropy takes [batch, classes] logits; "
                             "got shape %s." % x.shape)
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (x.shape, y.shape))
        batch = x.shape[0].value if x.shape.ndims is not None else None
        op = make_op(SOFTMAX_CROSS_ENTROPY_WITH_LOGITS, [x, y],
                     [x.dtype.base_dtype, x.dtype.base_dtype],
                     [TensorShape([batch]), x.shape.merge_with(y.shape)], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    labels = array_ops.stop_gradient(convert_to_tensor(labels), name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name=name)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Like the dense loss, with labels given as class indices [batch]."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        x = convert_to_tensor(logits, name="logits")
        y = convert_to_tensor(labels, name="labels")
        check_dtype(x, FLOAT_TYPES, arg="features")
        if y.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'labels' has DataType %s not in list "
                            "of allowed values: int32, int64" % y.dtype.name)
        if x.shape.ndims is not None and y.shape.ndims is not None and \
                y.shape.ndims != x.shape.ndims - 1:
            raise ValueError("Rank mismatch: Rank of labels (received %d) should equal rank "
                             "of logits minus 1 (received %d)."
                             % (y.shape.ndims, x.shape.ndims))
        batch = x.shape[0].value if x.shape.ndims is not None else None
        op = make_op(SPARSE_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS, [x, y],
                     [x.dtype.base_dtype, x.dtype.base_dtype],
                     [TensorShape([batch]), x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "Tlabels": y.dtype.base_dtype})
    return op.outputs[0]


# -- built from other ops, as TensorFlow builds them ------------------------------------------
def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``: half the squared L2 norm (weight decay's penalty)."""
    with name_scope(name, "L2Loss", [t]) as scope:
        t = convert_to_tensor(t, name="t")
        check_dtype(t, FLOAT_TYPES, arg="t")
        return math_ops.multiply(reduction_ops.reduce_sum(math_ops.square(t)), 0.5, name=scope)


def leaky_relu(features, alpha=0.2, name=None):
    """``max(alpha * x, x)``: a ReLU that lets a little of the negative side through."""
    with name_scope(name, "LeakyRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return math_ops.maximum(math_ops.multiply(x, alpha), x, name=scope)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per element, ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``, computed as
    ``max(x, 0) - x * z + log(1 + exp(-|x|))`` so that it never overflows."""
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype, name="labels")
        if not x.shape.is_compatible_with(z.shape):
            raise ValueError("logits and labels must have the same shape (%s vs %s)"
                             % (x.shape, z.shape))
        relu_logits = math_ops.maximum(x, 0.0)
        log_term = math_ops.log(1.0 + math_ops.exp(math_ops.negative(math_ops.abs(x))))
        return math_ops.add(relu_logits - x * z, log_term, name=scope)


def _noise_shape(x, noise_shape):
    """TF's best effort at a static noise shape: ``None`` sizes taken from ``x``."""
    try:
        dims = as_shape(noise_shape).as_list()
    except (TypeError, ValueError):
        return noise_shape
    if dims is None or x.shape.ndims is None or len(dims) != x.shape.ndims:
        return noise_shape
    known = x.shape.as_list()
    return TensorShape([k if d is None and k is not None else d
                        for d, k in zip(dims, known)])


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zero each element with probability ``rate`` (or ``1 - keep_prob``) and scale
    the kept ones by ``1 / (1 - rate)``, so the expected sum is unchanged.

    The ops are TF's::

        dropout/Mul            x * (1 / (1 - rate))     (RealDiv when rate is a tensor)
        dropout/random_uniform/RandomUniform            u in [0, 1) of x's shape
        dropout/GreaterEqual   keep = u >= rate
        dropout/SelectV2       where(keep, x scaled, 0)

    so a seeded program keeps TF's elements. ``keep_prob`` may be a placeholder:
    feed 0.5 while training, 1.0 to evaluate. A fresh mask is drawn every step.
    """
    if keep_prob is not None:
        if rate is not None:
            raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
        try:
            rate = 1. - keep_prob
        except TypeError:
            raise ValueError("`keep_prob` must be a floating point number or Tensor. "
                             "Received: keep_prob=%s" % (keep_prob,)) from None
    if rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    with name_scope(name, "dropout", [x]):
        is_number = isinstance(rate, numbers.Real)
        if is_number and (rate < 0 or rate >= 1):
            raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). "
                             "Received: rate=%s" % rate)
        x = convert_to_tensor(x, name="x")
        x_dtype = x.dtype.base_dtype
        if not x_dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be "
                             "scaled. Received: x_dtype=%s" % x_dtype)
        if is_number and rate == 0:
            random_ops.get_seed(seed)   # as TF: the op seed counter moves on all the same
            return x
        if is_number:
            ret = math_ops.multiply(x, convert_to_tensor(1 / (1 - rate), dtype=x_dtype))
        else:
            rate = convert_to_tensor(rate)
            if rate.shape.ndims not in (None, 0):
                raise ValueError("Shape %s must have rank 0" % rate.shape)
            if rate.dtype.base_dtype != x_dtype:
                rate = math_ops.cast(rate, x_dtype, name="rate")
            one = constant(np.array(1, x_dtype.np_dtype))
            ret = math_ops.realdiv(x, math_ops.subtract(one, rate))
        if noise_shape is None:
            # tf.shape of a known shape is a constant in TF's graphs.
            noise_shape = constant(np.array(x.shape.as_list(), np.int32), name="Shape") \
                if x.shape.is_fully_defined() else array_ops.shape(x)
        else:
            noise_shape = _noise_shape(x, noise_shape)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x_dtype)
        keep = uniform >= rate
        ret = array_ops.where_v2(keep, ret, constant(np.array(0, x_dtype.np_dtype)))
        ret.set_shape(x.shape)
        return ret


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """``(mean, variance)`` of ``x`` over ``axes`` (what batch normalization uses).

    The variance is ``mean((x - mean)**2)``, with the mean held constant for
    the gradient, as TF computes it."""
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    with name_scope(name, "moments", [x]):
        y = convert_to_tensor(x, name="x")
        half = y.dtype.base_dtype == dtypes.float16
        if half:
            y = math_ops.cast(y, dtypes.float32)
        mean = reduction_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduction_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if half:
            mean = math_ops.cast(mean, dtypes.float16)
            variance = math_ops.cast(variance, dtypes.float16)
        return mean, variance


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x**2, axis), epsilon))``: unit length along ``axis``."""
    axis = axis if axis is not None else dim
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduction_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inv_norm, name=scope)


# -- BiasAdd: a vector added along the channel axis -----------------------------------------
def _channel_axis(fmt, ndim):
    return 1 if fmt == "NCHW" else ndim - 1


def _bias_add_kernel(op, backend):
    add = backend.bias_add
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        value, bias = inputs
        if value.ndim < 2 or (fmt == "NCHW" and value.ndim < 3):
            raise errors.InvalidArgumentError(
                None, None, "Input tensor must be at least rank %d: %s"
                % (3 if fmt == "NCHW" else 2, list(value.shape)))
        if bias.ndim != 1:
            raise errors.InvalidArgumentError(None, None, "Biases must be 1D: %s"
                                              % list(bias.shape))
        axis = _channel_axis(fmt, value.ndim)
        if value.shape[axis] != bias.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, "Must provide as many biases as the channel dimension of the "
                "input tensor: %s vs. %s" % (list(bias.shape), list(value.shape)))
        return [add(value, bias, fmt)]
    return compute


def _bias_add_grad(op, grad):
    return [grad, bias_add_grad(grad, data_format=op.get_attr("data_format"))]


def _bias_add_grad_kernel(op, backend):
    reduce_ = backend.reduce
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        g, = inputs
        axis = _channel_axis(fmt, g.ndim)
        return [reduce_("sum", g, tuple(a for a in range(g.ndim) if a != axis), False)]
    return compute


def _bias_add_grad_grad(op, grad):
    """The gradient of BiasAddGrad: ``grad`` spread back over every position."""
    g = op.inputs[0]
    fmt = op.get_attr("data_format")
    if fmt == "NCHW":
        if g.shape.ndims is None:
            raise ValueError("the second derivative of bias_add needs inputs of known rank")
        grad = array_ops.reshape(grad, [-1] + [1] * (g.shape.ndims - 2))
    return [array_ops.zeros_like(g) + grad]


def _bias_examples(dtype):
    def values(shape, k=0):
        v = ((np.arange(int(np.prod(shape))) * 3 + k) % 7 - 3).reshape(shape)
        return v.astype(np.float32).astype(dtype) if dtype != "float64" else v.astype(dtype)
    return [([values((2, 3)), values((3,), 1)], lambda v, b: bias_add(v, b)),
            ([values((2, 4, 3, 5)), values((5,), 2)], lambda v, b: bias_add(v, b)),
            ([values((2, 3, 4, 2)), values((3,), 2)],
             lambda v, b: bias_add(v, b, data_format="NCHW")),
            ([values((BIG // 32, 32)), values((32,), 1)], lambda v, b: bias_add(v, b))]


def _bias_grad_examples(dtype):
    def values(shape):
        v = ((np.arange(int(np.prod(shape))) * 5) % 9 - 4).reshape(shape)
        return v.astype(np.float32).astype(dtype) if dtype != "float64" else v.astype(dtype)
    return [([values((4, 3))], lambda g: bias_add_grad(g)),
            ([values((2, 3, 4, 2))], lambda g: bias_add_grad(g, data_format="NCHW")),
            ([values((BIG // 16, 16))], lambda g: bias_add_grad(g))]


BIAS_ADD = declare(OpDef(
    "BiasAdd", inputs=("value", "bias"), attrs=("T", "data_format"), gradient=_bias_add_grad,
    devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES}, kernel=_bias_add_kernel,
    kernel_reads=BACKEND, examples=_bias_examples))
BIAS_ADD_GRAD = declare(OpDef(
    "BiasAddGrad", inputs=("out_backprop",), attrs=("T", "data_format"),
    gradient=_bias_add_grad_grad, devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES},
    kernel=_bias_add_grad_kernel, kernel_reads=BACKEND, examples=_bias_grad_examples))


def _bias_format(data_format):
    fmt = data_format.decode() if isinstance(data_format, bytes) else (data_format or "NHWC")
    if fmt not in ("NHWC", "NCHW", "N..C", "NC.."):
        raise ValueError("minitf's bias_add takes data_format 'NHWC' or 'NCHW', not %r"
                         % (data_format,))
    return "NCHW" if fmt.startswith("NC") else "NHWC"


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` with ``bias`` a vector along the channel axis of ``value``: the
    last one (``data_format`` None or ``"NHWC"``), or axis 1 for ``"NCHW"``; one
    ``BiasAdd`` op, as TF makes it. Its gradient for ``bias`` (``BiasAddGrad``)
    sums the incoming gradient over every axis but the channels."""
    fmt = _bias_format(data_format)
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        check_dtype(value, NUMBER_TYPES, arg="value")
        if bias.shape.ndims is not None and bias.shape.ndims != 1:
            raise ValueError("Shape must be rank 1 but is rank %d for '{{node %s}}'"
                             % (bias.shape.ndims, scope[:-1]))
        rank = value.shape.ndims
        if rank is not None and rank < (3 if fmt == "NCHW" else 2):
            raise ValueError("Shape must be at least rank %d but is rank %d for '{{node %s}}'"
                             % (3 if fmt == "NCHW" else 2, rank, scope[:-1]))
        if rank is not None and bias.shape.ndims == 1:
            c, n = value.shape[_channel_axis(fmt, rank)].value, bias.shape[0].value
            if c is not None and n is not None and c != n:
                raise ValueError("Dimensions must be equal, but are %d and %d for '{{node "
                                 "%s}}'" % (c, n, scope[:-1]))
        dt = value.dtype.base_dtype
        op = make_op(BIAS_ADD, [value, bias], [dt], [value.shape], name=scope,
                     attrs={"T": dt, "data_format": fmt})
    return op.outputs[0]


def bias_add_grad(out_backprop, data_format="NHWC", name=None):
    """``BiasAddGrad``: ``out_backprop`` summed over every axis but the channels."""
    fmt = _bias_format(data_format)
    g = convert_to_tensor(out_backprop, name="out_backprop")
    rank = g.shape.ndims
    channels = None if rank is None else g.shape[_channel_axis(fmt, rank)].value
    op = make_op(BIAS_ADD_GRAD, [g], [g.dtype.base_dtype], [TensorShape([channels])],
                 name=name or "BiasAddGrad",
                 attrs={"T": g.dtype.base_dtype, "data_format": fmt})
    return op.outputs[0]
