"""Reference kernels: plain numpy, one obvious expression per op.

This module is the oracle the fast kernels (:mod:`minitf.kernels.cpu`) are
tested against, so it favours being clearly right over being fast. It has the
same interface as every other backend and follows the same TensorFlow rules:

* float16 and bfloat16 compute in float32 and round once at the end;
* float sums and products accumulate in float64;
* elementwise ops compute with each row's ``Elementwise.reference``
  (argument checks, such as integer division by zero, are the row kernel's);
* 0-d inputs give 0-d arrays.
"""

import numpy as np
import ml_dtypes

from minitf.framework.errors import InvalidArgumentError

_HALF_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _compute(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype in _HALF_TYPES else x


def unary(row, x):
    """The elementwise op ``row`` applied to each element of ``x``: its
    ``Elementwise.reference`` numpy function."""
    x = np.asarray(x)
    xc = _compute(x)
    ew = row.elementwise
    if xc.dtype.kind not in ew.scalar and not (xc.dtype.kind in "iu" and "i" in ew.scalar):
        raise TypeError("%s does not take dtype %s" % (row.name, x.dtype))
    with np.errstate(all="ignore"):
        r = ew.reference(xc)
    return np.asarray(r).astype(np.bool_ if ew.bool_output else x.dtype)


def binary(row, x, y):
    """The elementwise op ``row`` of ``x`` and ``y`` with numpy broadcasting;
    bool out for comparisons. (The row's kernel checks the arguments first.)"""
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(all="ignore"):
        r = row.elementwise.reference(_compute(x), _compute(y))
    return np.asarray(r).astype(np.bool_ if row.elementwise.bool_output else x.dtype)


def _trunc_div(x, y):
    """Integer division rounding toward zero (C, TF), from numpy's floor division."""
    q = np.floor_divide(x, y)
    return q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)


def reduce(kind, x, axes, keepdims):
    """The ``kind`` reduction ("sum", "mean", "max", "min", "prod", "all", "any")
    over ``axes``; output dtype = input dtype."""
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
        if kind == "sum":
            r = np.sum(xc, dtype=acc, **kw)
        elif kind == "prod":
            r = np.prod(xc, dtype=acc, **kw)
        elif kind == "max":
            r = np.max(xc, initial=-np.inf if floaty else np.iinfo(x.dtype).min, **kw)
        elif kind == "min":
            r = np.min(xc, initial=np.inf if floaty else np.iinfo(x.dtype).max, **kw)
        elif kind == "all":
            r = np.all(xc, **kw)
        elif kind == "any":
            r = np.any(xc, **kw)
        elif kind == "mean" and floaty:
            r = np.sum(xc, dtype=np.float64, **kw) / count
        elif kind == "mean":
            s = np.sum(xc, dtype=np.int64, **kw)       # TF's integer mean sums in int64
            r = _trunc_div(s, np.asarray(count, np.int64)) if count else np.zeros_like(s)
        else:
            raise ValueError("unknown reduction %r" % kind)
    return np.asarray(r).astype(x.dtype)


def cumulative(x, axis, product, exclusive, reverse):
    """np.cumsum / np.cumprod along ``axis``; ``reverse`` flips before and after,
    ``exclusive`` shifts the totals by one (the first becomes 0 or 1)."""
    x = np.asarray(x)
    xc = _compute(x)
    if reverse:
        xc = np.flip(xc, axis)
    with np.errstate(all="ignore"):
        r = np.cumprod(xc, axis=axis) if product else np.cumsum(xc, axis=axis)
    if exclusive:
        first = np.full_like(np.take(r, [0], axis=axis), 1 if product else 0)
        r = np.concatenate([first, np.delete(r, -1, axis=axis)], axis=axis)
    if reverse:
        r = np.flip(r, axis)
    return np.ascontiguousarray(r).astype(x.dtype)


def top_k(x, k):
    """The ``k`` largest per row: a lexicographic sort on (-value, index), NaN first."""
    x = np.asarray(x)
    xc = _compute(x)
    n = x.shape[-1]
    rows = xc.reshape(-1, n)
    key = -rows.astype(np.float64)
    if xc.dtype.kind == "f":
        key = np.where(np.isnan(rows), -np.inf, key)
    index = np.broadcast_to(np.arange(n), rows.shape)
    order = np.lexsort((index, key), axis=-1)[:, :k].astype(np.int32)
    values = np.take_along_axis(rows, order, axis=-1)
    shape = x.shape[:-1] + (k,)
    return values.reshape(shape).astype(x.dtype), order.reshape(shape)


def in_top_k(predictions, targets, k):
    """TF's InTopK: the target's prediction has fewer than ``k`` strictly larger
    ones in its row, and the whole row is finite."""
    p = np.asarray(predictions, np.float32)
    t = np.asarray(targets)
    out = np.zeros(t.shape[0], np.bool_)
    for r in range(t.shape[0]):
        if 0 <= t[r] < p.shape[1] and np.isfinite(p[r]).all():
            out[r] = np.sum(p[r] > p[r, t[r]]) < k
    return out


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


def matrix_inverse(x, adjoint=False):
    a = _compute(x).astype(np.float64)
    if adjoint:
        a = np.swapaxes(a, -1, -2)
    try:
        return np.linalg.inv(a).astype(np.asarray(x).dtype)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, None, "Input is not invertible.") from None


def matrix_determinant(x):
    return np.asarray(np.linalg.det(_compute(x).astype(np.float64))).astype(np.asarray(x).dtype)


def cholesky(x):
    """Each matrix on its own; NaN in the lower triangle where it is not
    positive definite (TF's answer)."""
    a = _compute(x).astype(np.float64)
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    out = np.empty_like(flat)
    for t in range(flat.shape[0]):
        try:
            out[t] = np.linalg.cholesky(flat[t])
        except np.linalg.LinAlgError:
            out[t] = np.where(np.tri(n, dtype=bool), np.nan, 0.0)
    return out.reshape(a.shape).astype(np.asarray(x).dtype)


def matrix_solve(a, b, adjoint=False):
    m = _compute(a).astype(np.float64)
    if adjoint:
        m = np.swapaxes(m, -1, -2)
    try:
        return np.linalg.solve(m, _compute(b).astype(np.float64)).astype(np.asarray(a).dtype)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, None, "Input matrix is not invertible.") from None


def triangular_solve(a, b, lower=True, adjoint=False):
    """np.linalg.solve on the triangle alone (the other one zeroed)."""
    m = _compute(a).astype(np.float64)
    m = np.tril(m) if lower else np.triu(m)
    if adjoint:
        m = np.swapaxes(m, -1, -2)
    return np.linalg.solve(m, _compute(b).astype(np.float64)).astype(np.asarray(a).dtype)


def permute(x, perm):
    return np.array(np.transpose(np.asarray(x), perm), order="C")   # (0-d stays 0-d)


def log_softmax(logits):
    """``logits - max - log(sum(exp(logits - max)))`` over the last axis."""
    x = np.asarray(logits)
    if x.size == 0:
        return x.copy()
    z = _compute(x).astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return (z - np.log(np.exp(z).sum(axis=-1, keepdims=True))).astype(x.dtype)


def softmax(logits):
    """``exp(x - max) / sum(exp(x - max))`` over the last axis."""
    x = np.asarray(logits)
    if x.size == 0:
        return x.copy()
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


# -- the optimizers' updates: the textbook formulas, written out of place --------------------
def apply_gradient_descent(var, alpha, delta):
    var[...] = var - np.asarray(alpha) * delta
    return var


def apply_momentum(var, accum, lr, grad, momentum, use_nesterov=False):
    accum[...] = accum * momentum + grad
    step = grad * lr + accum * momentum * lr if use_nesterov else accum * lr
    var[...] = var - step
    return var


def apply_adagrad(var, accum, lr, grad, update_slots=True):
    if update_slots:
        accum[...] = accum + grad * grad
    var[...] = var - lr * grad / np.sqrt(accum)
    return var


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    ms[...] = rho * ms + (1 - rho) * grad * grad
    mom[...] = momentum * mom + lr * grad / np.sqrt(ms + epsilon)
    var[...] = var - mom
    return var


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_nesterov=False):
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m[...] = beta1 * m + (1 - beta1) * grad
    v[...] = beta2 * v + (1 - beta2) * grad * grad
    step = beta1 * m + (1 - beta1) * grad if use_nesterov else m
    var[...] = var - lr_t * step / (np.sqrt(v) + epsilon)
    return var
