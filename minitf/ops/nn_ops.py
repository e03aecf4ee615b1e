"""``tf.nn``: activations, softmax and the cross-entropy losses, ``bias_add``.

``Relu`` is an elementwise row (see ``elementwise.py``); the softmax family
works on rows of the last axis, and its kernels call the backend's
``softmax``/``log_softmax``/``softmax_xent``/``sparse_softmax_xent``.
"""

import math
import numbers

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, OpDef, declare
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import array_ops, math_ops, random_ops, reduction_ops, special_math_ops
from minitf.ops.core import (FLOAT_TYPES, NUMBER_TYPES, check_dtype, constant,
                             convert_to_tensor, make_op, name_scope)
from minitf.ops.elementwise import BIG, FLOAT_NAMES, NUMBER_NAMES, binary_op, unary_op

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


def _relu_grad_scalar(g, x):
    """ReluGrad(gradients, features): TF's ``gradients * (features > 0)``, so an
    infinite or NaN gradient where ``features <= 0`` gives NaN, as there."""
    return g if x > 0 else g * 0


def _relu_grad(op, grad):
    """TF masks with the Relu's output (positive exactly where its input is)."""
    return [math_ops._binary(RELU_GRAD, grad, op.outputs[0], "ReluGrad")]


def _relu_grad_grad(op, grad):
    """TF's gradient of ReluGrad: the same mask on the incoming gradient, and
    nothing for the features (the mask is flat)."""
    x = op.inputs[1]
    return [math_ops._binary(RELU_GRAD, grad, x, "ReluGrad"), array_ops.zeros_like(x)]


RELU_GRAD = binary_op("ReluGrad", _relu_grad_scalar,
                      lambda g, x: g * (x > 0).astype(g.dtype),
                      inputs=("gradients", "features"), gradient=_relu_grad_grad,
                      domain=[(-10, 10), (-5, 5)])
RELU = unary_op("Relu", _relu, lambda x: np.maximum(x, np.zeros((), x.dtype)), cuda=_relu_cuda,
                fusion="{x} if ({x} > zero or {x} != {x}) else zero", gradient=_relu_grad,
                inputs=("features",))


def relu(features, name=None):
    return math_ops._unary(RELU, features, name or "Relu", NUMBER_TYPES)


# -- more activations, each with TF's *Grad op ---------------------------------------------------
# TF computes these gradients with ops of their own (``EluGrad(gradients,
# outputs)``...); here they are elementwise rows too, so the backward pass runs
# the same kernels on every device as the forward one.

def _relu6(x):
    if x != x:
        return x
    if x < 0:
        return 0
    return 6 if x > 6 else x


def _relu6_cuda(x):
    if x != x:
        return x
    if x < 0:
        return 0.0
    return 6.0 if x > 6 else x


def _relu6_grad_scalar(g, x):
    return g if (x > 0 and x < 6) else g * 0


def _relu6_grad(op, grad):
    return [math_ops._binary(RELU6_GRAD, grad, op.inputs[0], "Relu6Grad")]


RELU6_GRAD = binary_op("Relu6Grad", _relu6_grad_scalar,
                       lambda g, x: np.where((x > 0) & (x < 6), g, np.zeros((), g.dtype)),
                       inputs=("gradients", "features"), domain=[(-10, 10), (-2, 8)])
RELU6 = unary_op("Relu6", _relu6, lambda x: np.clip(x, 0, 6), cuda=_relu6_cuda,
                 gradient=_relu6_grad, inputs=("features",), domain=[(-2, 8)])


def _elu(x):
    return x if x > 0 else math.expm1(x)


def _elu_grad_scalar(g, y):
    """EluGrad(gradients, outputs): ``g * (y + 1)`` where ``y < 0`` (``d expm1(x) =
    exp(x) = y + 1``), else ``g``."""
    return g * (y + 1.0) if y < 0 else g


def _elu_grad(op, grad):
    return [math_ops._binary(ELU_GRAD, grad, op.outputs[0], "EluGrad", FLOAT_TYPES)]


ELU_GRAD = binary_op("EluGrad", _elu_grad_scalar,
                     lambda g, y: np.where(y < 0, g * (y + 1), g), cpu=FLOAT_NAMES,
                     inputs=("gradients", "outputs"), domain=[(-10, 10), (-1, 5)])
ELU = unary_op("Elu", _elu, lambda x: np.where(x > 0, x, np.expm1(x)), cpu=FLOAT_NAMES,
               gradient=_elu_grad, inputs=("features",))

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _selu(x):
    return 1.0507009873554804934193349852946 * (
        x if x > 0 else 1.6732632423543772848170429916717 * math.expm1(x))


def _selu_grad_scalar(g, y):
    if y < 0:
        return g * (y + 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717)
    return g * 1.0507009873554804934193349852946


def _selu_grad(op, grad):
    return [math_ops._binary(SELU_GRAD, grad, op.outputs[0], "SeluGrad", FLOAT_TYPES)]


SELU_GRAD = binary_op("SeluGrad", _selu_grad_scalar,
                      lambda g, y: np.where(y < 0, g * (y + _SELU_SCALE * _SELU_ALPHA),
                                            g * _SELU_SCALE),
                      cpu=FLOAT_NAMES, inputs=("gradients", "outputs"),
                      domain=[(-10, 10), (-1.5, 5)])
SELU = unary_op("Selu", _selu, lambda x: _SELU_SCALE * np.where(x > 0, x,
                                                                _SELU_ALPHA * np.expm1(x)),
                cpu=FLOAT_NAMES, gradient=_selu_grad, inputs=("features",))


def _softplus(x):
    """``log(1 + exp(x))``, written so that neither branch overflows."""
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def _softplus_grad_scalar(g, x):
    return g / (1.0 + math.exp(-x)) if x > -700.0 else g * 0.0


def _softplus_grad(op, grad):
    return [math_ops._binary(SOFTPLUS_GRAD, grad, op.inputs[0], "SoftplusGrad", FLOAT_TYPES)]


SOFTPLUS_GRAD = binary_op("SoftplusGrad", _softplus_grad_scalar,
                          lambda g, x: g / (1 + np.exp(-x)), cpu=FLOAT_NAMES,
                          inputs=("gradients", "features"))
SOFTPLUS = unary_op("Softplus", _softplus, lambda x: np.logaddexp(0, x), cpu=FLOAT_NAMES,
                    gpu=("float16", "float32", "float64"), gradient=_softplus_grad,
                    inputs=("features",))


def _softsign(x):
    return x / (1.0 + abs(x))


def _softsign_grad_scalar(g, x):
    d = 1.0 + abs(x)
    return g / (d * d)


def _softsign_grad(op, grad):
    return [math_ops._binary(SOFTSIGN_GRAD, grad, op.inputs[0], "SoftsignGrad", FLOAT_TYPES)]


SOFTSIGN_GRAD = binary_op("SoftsignGrad", _softsign_grad_scalar,
                          lambda g, x: g / np.square(1 + np.abs(x)), cpu=FLOAT_NAMES,
                          inputs=("gradients", "features"))
SOFTSIGN = unary_op("Softsign", _softsign, lambda x: x / (1 + np.abs(x)), cpu=FLOAT_NAMES,
                    gpu=("float16", "float32", "float64"), gradient=_softsign_grad,
                    inputs=("features",))


def relu6(features, name=None):
    """``min(max(features, 0), 6)``."""
    return math_ops._unary(RELU6, features, name or "Relu6", NUMBER_TYPES)


def elu(features, name=None):
    """``features`` where positive, else ``exp(features) - 1``."""
    return math_ops._unary(ELU, features, name or "Elu", FLOAT_TYPES)


def selu(features, name=None):
    """The self-normalising ELU: ``scale * elu`` with TF's ``alpha`` and ``scale``."""
    return math_ops._unary(SELU, features, name or "Selu", FLOAT_TYPES)


def softplus(features, name=None):
    """``log(exp(features) + 1)``, a smooth ReLU."""
    return math_ops._unary(SOFTPLUS, features, name or "Softplus", FLOAT_TYPES)


def softsign(features, name=None):
    """``features / (abs(features) + 1)``."""
    return math_ops._unary(SOFTSIGN, features, name or "Softsign", FLOAT_TYPES)


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
    TF does, ``max(x, 0) - x * z + log1p(exp(-|x|))``, so that it never overflows."""
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype, name="labels")
        if not x.shape.is_compatible_with(z.shape):
            raise ValueError("logits and labels must have the same shape (%s vs %s)"
                             % (x.shape, z.shape))
        zeros = array_ops.zeros_like(x, dtype=x.dtype)
        positive = math_ops.greater_equal(x, zeros)
        relu_logits = array_ops.where(positive, x, zeros)
        neg_abs_logits = array_ops.where(positive, -x, x)
        return math_ops.add(relu_logits - x * z,
                            special_math_ops.log1p(math_ops.exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """The sigmoid cross-entropy with the positive term weighted by ``pos_weight``
    (> 1 counts misses of positives more): ``(1 - z) x + (1 + (q - 1) z) *
    (log1p(exp(-|x|)) + max(-x, 0))``, TF's stable form. ``targets`` is TF1's
    older name for ``labels``."""
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("weighted_cross_entropy_with_logits needs labels (or targets), "
                         "logits and pos_weight.")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype, name="labels")
        if not x.shape.is_compatible_with(z.shape):
            raise ValueError("logits and labels must have the same shape (%s vs %s)"
                             % (x.shape, z.shape))
        log_weight = 1 + (pos_weight - 1) * z
        return math_ops.add(
            (1 - z) * x,
            log_weight * (special_math_ops.log1p(math_ops.exp(-math_ops.abs(x))) +
                          relu(-x)), name=scope)


def xw_plus_b(x, weights, biases, name=None):
    """``matmul(x, weights) + biases``: one dense layer without its activation."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return bias_add(math_ops.matmul(x, weights), biases, name=scope)


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
