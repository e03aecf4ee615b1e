"""Reference kernels: plain numpy, one obvious expression per op.

This module is the oracle the fast kernels (:mod:`minitf.kernels.cpu`) are
tested against, so it favours being clearly right over being fast. It has the
same interface as every other backend and follows the same TensorFlow rules:

* float16 and bfloat16 compute in float32 and round once at the end;
* float sums and products accumulate in float64;
* integer division by zero and integer negative powers raise
  ``InvalidArgumentError`` with TensorFlow's message;
* 0-d inputs give 0-d arrays.
"""

import numpy as np
import ml_dtypes

from minitf.framework.errors import InvalidArgumentError

_HALF_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _compute(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype in _HALF_TYPES else x


def _trunc_div(x, y):
    """Integer division rounding toward zero (C, TF), from numpy's floor division."""
    q = np.floor_divide(x, y)
    return q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)


def _tf_floor_mod(x, y):
    r = np.fmod(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


_UNARY = {
    "Neg": np.negative,
    "Abs": np.abs,
    "Square": np.square,
    "Sqrt": np.sqrt,
    "Rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "Exp": np.exp,
    "Log": np.log,
    "Relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "Sigmoid": lambda x: np.reciprocal(1 + np.exp(-x)),
    "Tanh": np.tanh,
    "Sign": np.sign,
    "Reciprocal": np.reciprocal,
    "Floor": np.floor,
    "Ceil": np.ceil,
    "Round": np.rint,
    "LogicalNot": np.logical_not,
}

_FLOAT_ONLY = {"Sqrt", "Rsqrt", "Exp", "Log", "Sigmoid", "Tanh", "Reciprocal", "Floor",
               "Ceil", "Round"}


def unary(op, x):
    """``op`` applied to each element of ``x``."""
    x = np.asarray(x)
    xc = _compute(x)
    if op in _FLOAT_ONLY and xc.dtype.kind != "f":
        raise TypeError("%s needs a float dtype, got %s" % (op, x.dtype))
    with np.errstate(all="ignore"):
        r = _UNARY[op](xc)
    return np.asarray(r).astype(x.dtype)


_BINARY = {
    "AddV2": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": lambda x, y: np.true_divide(x, y) if x.dtype.kind == "f" else _trunc_div(x, y),
    "FloorDiv": lambda x, y: np.floor(x / y) if x.dtype.kind == "f" else np.floor_divide(x, y),
    "FloorMod": lambda x, y: _tf_floor_mod(x, y) if x.dtype.kind == "f" else np.remainder(x, y),
    "Pow": np.power,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "SquaredDifference": lambda x, y: np.square(x - y),
    "Equal": np.equal,
    "NotEqual": np.not_equal,
    "Less": np.less,
    "LessEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
}

_BOOL_OUTPUT = {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                "LogicalAnd", "LogicalOr"}


def binary(op, x, y):
    """``op(x, y)`` elementwise with numpy broadcasting; bool out for comparisons."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "iu":
        if op in ("RealDiv", "FloorDiv", "FloorMod") and np.any(y == 0):
            raise InvalidArgumentError(None, None, "Integer division by zero")
        if op == "Pow" and np.any(y < 0):
            raise InvalidArgumentError(
                None, None, "Integers to negative integer powers are not allowed")
    with np.errstate(all="ignore"):
        r = _BINARY[op](_compute(x), _compute(y))
    return np.asarray(r).astype(np.bool_ if op in _BOOL_OUTPUT else x.dtype)


def reduce(op, x, axes, keepdims):
    """Sum/Mean/Max/Min/Prod/All/Any over ``axes``; output dtype = input dtype."""
    x = np.asarray(x)
    axes = tuple(sorted(set(axes)))
    if not axes:
        return x.copy()
    xc = _compute(x)
    kw = dict(axis=axes, keepdims=keepdims)
    floaty = xc.dtype.kind == "f"
    acc = np.float64 if floaty else xc.dtype
    count = int(np.prod([x.shape[a] for a in axes]))
    with np.errstate(all="ignore"):
        if op == "Sum":
            r = np.sum(xc, dtype=acc, **kw)
        elif op == "Prod":
            r = np.prod(xc, dtype=acc, **kw)
        elif op == "Max":
            r = np.max(xc, initial=-np.inf if floaty else np.iinfo(x.dtype).min, **kw)
        elif op == "Min":
            r = np.min(xc, initial=np.inf if floaty else np.iinfo(x.dtype).max, **kw)
        elif op == "All":
            r = np.all(xc, **kw)
        elif op == "Any":
            r = np.any(xc, **kw)
        elif op == "Mean" and floaty:
            r = np.sum(xc, dtype=np.float64, **kw) / count
        elif op == "Mean":
            s = np.sum(xc, dtype=acc, **kw)            # wraps, like TF's int sum
            r = _trunc_div(s, np.asarray(count, acc)) if count else np.zeros_like(s)
        else:
            raise ValueError("unknown reduction %r" % op)
    return np.asarray(r).astype(x.dtype)


def matmul(a, b, transpose_a=False, transpose_b=False):
    """``a @ b`` (2-D, or batched with broadcast leading dims)."""
    a, b = np.asarray(a), np.asarray(b)
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    return np.asarray(np.matmul(_compute(a), _compute(b))).astype(a.dtype)


def add_n(xs):
    """Elementwise sum of same-shape arrays."""
    dtype = np.asarray(xs[0]).dtype
    total = _compute(xs[0]).copy()
    for x in xs[1:]:
        total = total + _compute(x)
    return np.asarray(total).astype(dtype)


def cast(x, np_dtype):
    """TF cast: float -> int truncates, to bool is ``x != 0``, bool -> 0/1."""
    x = np.asarray(x)
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.bool_:
        return np.asarray(x != 0)
    if np_dtype.kind in "iu" and x.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.trunc(x.astype(np.float64)).astype(np_dtype)
    return x.astype(np_dtype)


def select(cond, x, y):
    """``x`` where ``cond`` else ``y`` (np.where)."""
    x = np.asarray(x)
    return np.asarray(np.where(cond, x, y)).astype(x.dtype)


def _arg(fn, x, axis, out_np_dtype):
    x = np.asarray(x)
    if x.shape[axis] == 0:
        raise InvalidArgumentError(
            None, None, "Reduction axis %d is empty in shape %s"
            % (axis % x.ndim, "[" + ",".join(str(d) for d in x.shape) + "]"))
    return np.asarray(fn(_compute(x), axis=axis)).astype(out_np_dtype)


def argmax(x, axis, out_np_dtype):
    """Index of the first largest value along ``axis``."""
    return _arg(np.argmax, x, axis, out_np_dtype)


def argmin(x, axis, out_np_dtype):
    """Index of the first smallest value along ``axis``."""
    return _arg(np.argmin, x, axis, out_np_dtype)


def log_softmax(logits):
    """``logits - max - log(sum(exp(logits - max)))`` over the last axis."""
    x = np.asarray(logits)
    z = _compute(x).astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return (z - np.log(np.exp(z).sum(axis=-1, keepdims=True))).astype(x.dtype)


def softmax(logits):
    """``exp(x - max) / sum(exp(x - max))`` over the last axis."""
    x = np.asarray(logits)
    z = _compute(x).astype(np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def softmax_xent(logits, labels):
    """(loss, backprop) of TF's SoftmaxCrossEntropyWithLogits."""
    x = np.asarray(logits)
    lab = np.broadcast_to(_compute(np.asarray(labels)).astype(np.float64), x.shape)
    logp = log_softmax(_compute(x).astype(np.float64))
    loss = -(lab * logp).sum(axis=-1)
    return loss.astype(x.dtype), (np.exp(logp) - lab).astype(x.dtype)


def sparse_softmax_xent(logits, labels):
    """(loss, backprop) of TF's SparseSoftmaxCrossEntropyWithLogits."""
    x = np.asarray(logits)
    labels = np.asarray(labels)
    classes = x.shape[-1]
    for v in labels.ravel():
        if not 0 <= v < classes:
            raise InvalidArgumentError(
                None, None,
                "Received a label value of %d which is outside the valid range of "
                "[0, %d).  Label values: %s"
                % (v, classes, " ".join(str(int(u)) for u in labels.ravel())))
    onehot = np.zeros(x.shape, np.float64)
    onehot[np.arange(labels.size), labels.ravel()] = 1.0
    return softmax_xent(x, onehot)
