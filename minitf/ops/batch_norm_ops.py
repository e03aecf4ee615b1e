"""Batch normalization: ``tf.nn.fused_batch_norm``, ``tf.nn.batch_normalization``.

Batch normalization rescales each channel of a batch of activations to mean 0
and variance 1, then applies a learned scale (``gamma``) and offset (``beta``)::

    y = (x - mean) / sqrt(variance + epsilon) * scale + offset

*Training* uses the mean and variance of the batch itself (over every axis
but the channels); *inference* uses running averages kept in variables
(``tf.layers.batch_normalization`` updates them with ops it puts in
``tf.GraphKeys.UPDATE_OPS``).

TF computes the 4-D case in one op, ``FusedBatchNormV3`` (six outputs: ``y``,
the batch mean and variance to update the running averages with, and three
"reserve spaces" its gradient reads), and its gradient in another,
``FusedBatchNormGradV3``; both are rows here, with kernels in every backend
(``minitf/kernels/cpu/conv.py``: two passes over the rows per channel).
Two details of TF worth knowing: in training the *variance output* is the
unbiased one, ``n / (n - 1)`` times the variance used to normalize; and its
``exponential_avg_factor`` attr (1 by default) blends the batch's statistics
into the running ones inside the op.

:func:`batch_normalization` is the unfused formula, built from elementwise
ops, as TF builds it.
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops
from minitf.ops.core import check_dtype, constant, convert_to_tensor, make_op, name_scope

__all__ = ["fused_batch_norm", "fused_batch_norm_grad", "batch_normalization"]

_T_NAMES = ("float16", "bfloat16", "float32")
_T_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)
_MIN_EPSILON = 1.001e-5     # TF's floor (cuDNN refuses smaller ones)


def _channels(shape, fmt):
    return int(shape[1] if fmt == "NCHW" else shape[-1])


def _check_vector(value, name, channels):
    if value.ndim != 1:
        raise errors.InvalidArgumentError(None, None, "%s must be 1-dimensional%s"
                                          % (name, list(value.shape)))
    if value.shape[0] != channels:
        raise errors.InvalidArgumentError(
            None, None, "%s must have the same number of elements as the channels of x, got "
            "%d and %d" % (name, value.shape[0], channels))


def _reserve(backend, shape):
    """A float32 output nobody reads (TF leaves its reserve spaces uninitialized)."""
    return backend.cast(np.zeros(shape, np.float32), np.float32)


# ============================================================== FusedBatchNormV3 ===
def _fused_kernel(op, backend):
    norm = backend.fused_batch_norm
    fmt = op.get_attr("data_format")
    epsilon = float(np.float32(op.get_attr("epsilon")))
    factor = float(np.float32(op.get_attr("exponential_avg_factor")))
    training = op.get_attr("is_training")

    def compute(ctx, inputs):
        x, scale, offset, mean, variance = inputs
        if x.ndim != 4:
            raise errors.InvalidArgumentError(None, None, "input must be 4-dimensional%s"
                                              % list(x.shape))
        c = _channels(x.shape, fmt)
        _check_vector(scale, "scale", c)
        _check_vector(offset, "offset", c)
        if not training or factor != 1.0:
            _check_vector(mean, "mean", c)
            _check_vector(variance, "variance", c)
        y, batch_mean, batch_var, saved_mean, saved_var = norm(
            x, scale, offset, mean, variance, epsilon, factor, training, fmt)
        return [y, batch_mean, batch_var, saved_mean, saved_var, _reserve(backend, ())]
    return compute


def _fused_grad(op, dy, *_unused):
    """The gradient of y (the only output with one). In training the reserve spaces
    hold the batch's mean and variance; in inference the op's own inputs did."""
    x, scale = op.inputs[0], op.inputs[1]
    if dy is None:
        dy = array_ops.zeros_like(op.outputs[0])
    training = op.get_attr("is_training")
    saved = (op.outputs[3], op.outputs[4]) if training else (op.inputs[3], op.inputs[4])
    dx, dscale, doffset = fused_batch_norm_grad(
        dy, x, scale, saved[0], saved[1], op.outputs[5], epsilon=op.get_attr("epsilon"),
        data_format=op.get_attr("data_format"), is_training=training)[:3]
    return [dx, dscale, doffset, None, None]


def _bn_values(n, h, w, c, dtype, k=0, fmt="NHWC"):
    v = ((np.arange(n * h * w * c) * 7 + k) % 13 - 4).reshape(n, h, w, c) / 3.0
    if fmt == "NCHW":
        v = np.ascontiguousarray(v.transpose(0, 3, 1, 2))
    return v.astype(np.float32).astype(dtype)


def _vec(c, start, step):
    return (start + step * np.arange(c)).astype(np.float32)


#: (x dims NHWC, data_format, is_training, exponential_avg_factor)
_BN_CASES = [((2, 3, 3, 2), "NHWC", True, 1.0), ((2, 3, 3, 2), "NHWC", False, 1.0),
             ((3, 2, 4, 3), "NCHW", True, 0.3), ((1, 4, 2, 3), "NCHW", False, 1.0),
             ((16, 28, 28, 8), "NHWC", True, 1.0)]


def _fused_examples(dtype):
    out = []
    for dims, fmt, training, factor in _BN_CASES:
        c = dims[3]
        arrays = [_bn_values(*dims, dtype, fmt=fmt), _vec(c, 1.5, -0.25), _vec(c, 0.1, 0.2),
                  _vec(c, 0.3, -0.1), _vec(c, 2.0, -0.5)]
        out.append((arrays, lambda x, s, o, m, v, f=fmt, t=training, e=factor:
                    _fused_op(x, s, o, m, v, 0.001, f, t, e, "FusedBatchNormV3").outputs[0]))
    return out


FUSED_BATCH_NORM_V3 = declare(OpDef(
    "FusedBatchNormV3", inputs=("x", "scale", "offset", "mean", "variance"),
    attrs=("T", "U", "epsilon", "exponential_avg_factor", "data_format", "is_training"),
    gradient=_fused_grad, devices={"CPU": _T_NAMES, "GPU": _T_NAMES}, kernel=_fused_kernel,
    kernel_reads=BACKEND, examples=_fused_examples))


# ========================================================== FusedBatchNormGradV3 ===
def _fused_grad_kernel(op, backend):
    grad = backend.fused_batch_norm_grad
    fmt = op.get_attr("data_format")
    epsilon = float(np.float32(op.get_attr("epsilon")))
    training = op.get_attr("is_training")

    def compute(ctx, inputs):
        dy, x, scale, saved_mean, saved_var, _ = inputs
        if x.ndim != 4 or dy.ndim != 4:
            raise errors.InvalidArgumentError(None, None, "input must be 4-dimensional%s"
                                              % list(x.shape))
        if tuple(dy.shape) != tuple(x.shape):
            raise errors.InvalidArgumentError(
                None, None, "x and y_backprop must have same shape, but x has shape %s and "
                "y_backprop has shape %s" % (list(x.shape), list(dy.shape)))
        c = _channels(x.shape, fmt)
        for value, name in ((scale, "scale"), (saved_mean, "reserve_space_1"),
                            (saved_var, "reserve_space_2")):
            _check_vector(value, name, c)
        dx, dscale, doffset = grad(dy, x, scale, saved_mean, saved_var, epsilon, training, fmt)
        return [dx, dscale, doffset, _reserve(backend, (0,)), _reserve(backend, (0,))]
    return compute


def _fused_grad_examples(dtype):
    out = []
    for dims, fmt, training, _ in _BN_CASES:
        c = dims[3]
        x = _bn_values(*dims, dtype, fmt=fmt)
        dy = _bn_values(*dims, dtype, k=5, fmt=fmt)
        rows = np.moveaxis(x.astype(np.float64), 1 if fmt == "NCHW" else 3, -1).reshape(-1, c)
        mean, var = (rows.mean(0), rows.var(0)) if training else (_vec(c, 0.3, -0.1),
                                                                  _vec(c, 2.0, -0.5))
        arrays = [dy, x, _vec(c, 1.5, -0.25), np.asarray(mean, np.float32),
                  np.asarray(var, np.float32), np.zeros((), np.float32)]
        out.append((arrays, lambda dy, x, s, m, v, r, f=fmt, t=training:
                    fused_batch_norm_grad(dy, x, s, m, v, r, 0.001, f, t)[0]))
    return out


FUSED_BATCH_NORM_GRAD_V3 = declare(OpDef(
    "FusedBatchNormGradV3",
    inputs=("y_backprop", "x", "scale", "reserve_space_1", "reserve_space_2",
            "reserve_space_3"),
    attrs=("T", "U", "epsilon", "data_format", "is_training"),
    devices={"CPU": _T_NAMES, "GPU": _T_NAMES}, kernel=_fused_grad_kernel,
    kernel_reads=BACKEND, examples=_fused_grad_examples))


# ============================================================= the tf.nn functions ===
def _fused_op(x, scale, offset, mean, variance, epsilon, fmt, is_training, factor, name):
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError("minitf's fused_batch_norm takes data_format 'NHWC' or 'NCHW', "
                         "not %r." % (fmt,))
    x = convert_to_tensor(x, name="x")
    check_dtype(x, _T_TYPES, arg="x")
    params = [convert_to_tensor(v, dtype=dtypes.float32, name=n) for v, n in
              ((scale, "scale"), (offset, "offset"), (mean, "mean"), (variance, "variance"))]
    if x.shape.ndims is not None and x.shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d for '{{node %s}}'"
                         % (x.shape.ndims, name))
    channels = None
    if x.shape.ndims == 4:
        channels = x.shape[1 if fmt == "NCHW" else 3].value
    vec = TensorShape([channels])
    dt = x.dtype.base_dtype
    return make_op(FUSED_BATCH_NORM_V3, [x] + params, [dt] + [dtypes.float32] * 5,
                   [x.shape, vec, vec, vec, vec, TensorShape([])], name=name,
                   attrs={"T": dt, "U": dtypes.float32, "epsilon": float(epsilon),
                          "exponential_avg_factor": float(factor), "data_format": fmt,
                          "is_training": bool(is_training)})


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Batch normalization of a 4-D ``x`` in one ``FusedBatchNormV3`` op.

    Returns ``(y, batch_mean, batch_variance)``. In training ``mean`` and
    ``variance`` may be omitted (they are only read when
    ``exponential_avg_factor`` != 1); the returned variance is unbiased.
    In inference they are required and returned as given.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or
                                                                variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` "
                         "is False or `exponential_avg_factor` != 1.0. Received: `mean` %r "
                         "and `variance` %r" % (mean, variance))
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    with name_scope(name, "FusedBatchNormV3", [x, scale, offset]) as scope:
        if mean is None:
            mean = constant([], dtype=dtypes.float32)
        if variance is None:
            variance = constant([], dtype=dtypes.float32)
        epsilon = epsilon if epsilon > _MIN_EPSILON else _MIN_EPSILON
        op = _fused_op(x, scale, offset, mean, variance, epsilon, data_format, is_training,
                       exponential_avg_factor, scope)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def fused_batch_norm_grad(y_backprop, x, scale, reserve_space_1, reserve_space_2,
                          reserve_space_3, epsilon=0.0001, data_format="NHWC",
                          is_training=True, name=None):
    """``FusedBatchNormGradV3``: ``(dx, dscale, doffset, reserve_space_4, reserve_space_5)``."""
    with name_scope(name, "FusedBatchNormGradV3", [y_backprop, x, scale]) as scope:
        x = convert_to_tensor(x, name="x")
        dy = convert_to_tensor(y_backprop, dtype=x.dtype.base_dtype, name="y_backprop")
        rest = [convert_to_tensor(v, dtype=dtypes.float32, name=n) for v, n in (
            (scale, "scale"), (reserve_space_1, "reserve_space_1"),
            (reserve_space_2, "reserve_space_2"), (reserve_space_3, "reserve_space_3"))]
        dt = x.dtype.base_dtype
        vec = TensorShape([rest[0].shape[0].value if rest[0].shape.ndims == 1 else None])
        op = make_op(FUSED_BATCH_NORM_GRAD_V3, [dy, x] + rest, [dt] + [dtypes.float32] * 4,
                     [x.shape, vec, vec, TensorShape([0]), TensorShape([0])], name=scope,
                     attrs={"T": dt, "U": dtypes.float32, "epsilon": float(epsilon),
                            "data_format": data_format, "is_training": bool(is_training)})
    return op.outputs


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``x * inv + (offset - mean * inv)`` with ``inv = scale / sqrt(variance + eps)``:
    the unfused formula, from elementwise ops, as TF writes it (``offset`` and
    ``scale`` may be None)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * math_ops.cast(inv, x.dtype.base_dtype) + \
            math_ops.cast(shift, x.dtype.base_dtype)
