"""Reference kernels: plain numpy, one obvious expression per op.

This module is the oracle the fast kernels (:mod:`minitf.kernels.cpu`) are
tested against, so it favours being clearly right over being fast. It has the
same interface as every other backend and follows the same TensorFlow rules:

* float16 and bfloat16 compute in float32 and round once at the end;
* float sums and products accumulate in float64;
* elementwise ops compute with each row's ``Elementwise.reference``
  (argument checks, such as integer division by zero, are the row kernel's);
* 0-d inputs give 0-d arrays;
* random ops keep TF's streams (:mod:`minitf.kernels.random_streams`) and
  sample them with :mod:`minitf.kernels.reference_random`.
"""

import numpy as np
import ml_dtypes

from minitf.framework.errors import InvalidArgumentError
from minitf.kernels import random_streams as _random_streams
from minitf.kernels import reference_random as _random_ref

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


# -- random ops: TF's streams, sampled by reference_random's numpy --------------------------------
class _ReferenceFill:
    """:mod:`minitf.kernels.cpu.random_fill`'s interface, computed by
    :mod:`minitf.kernels.reference_random` (whole arrays, the obvious way)."""

    @staticmethod
    def _key_counter(philox):
        key, counter = int(philox.key), int(philox.counter)
        return (key & 0xFFFFFFFF, key >> 32), _random_ref.int_to_counter(counter)

    def uniform(self, philox, size, dtype):
        return _random_ref.uniform(*self._key_counter(philox), size, dtype)

    def normal(self, philox, size, dtype):
        return _random_ref.normal(*self._key_counter(philox), size, dtype)

    def truncated_normal(self, philox, size, dtype):
        return _random_ref.truncated_normal(*self._key_counter(philox), size, dtype)

    def uniform_int(self, philox, size, lo, hi, dtype):
        return _random_ref.uniform_int(*self._key_counter(philox), size, lo, hi, dtype)

    def shuffle_permutation(self, philox, n):
        return _random_ref.shuffle_permutation(*self._key_counter(philox), n)

    @staticmethod
    def shuffle_queue_pick(philox, block, used, order, size, k):
        out = np.empty(k, np.int64)
        made = 0
        for j in range(k):
            if used == 4:
                block[:] = _random_streams.philox_block(*philox.skip(made))
                made += 1
                used = 0
            i = int(block[used]) % (size - j)
            used += 1
            out[j] = order[i]
            order[i] = order[size - 1 - j]
        return out, made, used

    def multinomial(self, philox, logits, num_samples, shard_starts, output_dtype):
        return _random_ref.multinomial(*self._key_counter(philox), logits, num_samples,
                                       shard_starts, output_dtype)


_FILL = _ReferenceFill()


def random_stream(seed, seed2):
    return _random_streams.GuardedPhiloxRandom(seed, seed2)


def shuffle_queue_picker(seed, seed2):
    if int(seed) == 0 and int(seed2) == 0:
        seed, seed2 = _random_streams.nondeterministic_seeds()
    return _random_streams.ShuffleQueuePicker(seed, seed2, fill=_FILL)


def random_uniform(stream, shape, dtype):
    return _random_streams.random_uniform(stream, shape, dtype, fill=_FILL)


def random_standard_normal(stream, shape, dtype):
    return _random_streams.random_standard_normal(stream, shape, dtype, fill=_FILL)


def truncated_normal(stream, shape, dtype):
    return _random_streams.truncated_normal(stream, shape, dtype, fill=_FILL)


def random_uniform_int(stream, shape, minval, maxval):
    return _random_streams.random_uniform_int(stream, shape, minval, maxval, fill=_FILL)


def random_shuffle(stream, value):
    return _random_streams.random_shuffle(stream, value, fill=_FILL)


def multinomial(stream, logits, num_samples, output_dtype):
    return _random_streams.multinomial(stream, logits, num_samples, output_dtype, fill=_FILL)
# -- convolutions and pooling: windows over the spatial axes -----------------------------------
# Every function takes the geometry the op's row worked out from its attrs:
# ``strides``/``dilations``/``ksize`` as (height, width) pairs and ``pads`` as
# (top, bottom, left, right); ``data_format`` is "NHWC" or "NCHW". The numpy
# code works on NHWC and transposes NCHW in and out.

def _to_nhwc(x, data_format):
    x = np.asarray(x)
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def _from_nhwc(y, data_format):
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2) if data_format == "NCHW" else y)


def _nhwc_shape(shape, data_format):
    n, a, b, c = (int(d) for d in shape)
    return (n, b, c, a) if data_format == "NCHW" else (n, a, b, c)


def _accumulator(dtype):
    """float64 for floats, int64 for ints (int32 wraps the same when cast back)."""
    return np.float64 if np.dtype(dtype).kind == "f" or dtype in _HALF_TYPES else np.int64


def _window(xp, i, j, out_h, out_w, strides, dilations):
    """The [N, out_h, out_w, C] view of padded ``xp`` that kernel tap (i, j) reads."""
    sh, sw = strides
    top, left = i * dilations[0], j * dilations[1]
    return xp[:, top:top + (out_h - 1) * sh + 1:sh, left:left + (out_w - 1) * sw + 1:sw, :]


def _out_size(size, k, stride, dilation, before, after):
    return (size + before + after - (k - 1) * dilation - 1) // stride + 1


def conv2d(x, w, strides, dilations, pads, data_format="NHWC"):
    """``y[n, p, q, o] = sum_{i, j, c} xpad[n, p*sh + i*dh, q*sw + j*dw, c] * w[i, j, c, o]``,
    one ``tensordot`` per kernel tap (i, j)."""
    xn = _to_nhwc(x, data_format)
    dtype = xn.dtype
    w = np.asarray(w)
    acc = _accumulator(dtype)
    kh, kw = w.shape[:2]
    pt, pb, pl, pr = pads
    xp = np.pad(_compute(xn).astype(acc), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = _out_size(xn.shape[1], kh, strides[0], dilations[0], pt, pb)
    ow = _out_size(xn.shape[2], kw, strides[1], dilations[1], pl, pr)
    y = np.zeros((xn.shape[0], oh, ow, w.shape[3]), acc)
    wc = _compute(w).astype(acc)
    for i in range(kh):
        for j in range(kw):
            y += np.tensordot(_window(xp, i, j, oh, ow, strides, dilations), wc[i, j], axes=1)
    return _from_nhwc(y.astype(dtype), data_format)


def conv2d_backprop_input(input_shape, w, dy, strides, dilations, pads, data_format="NHWC"):
    """The gradient of :func:`conv2d` with respect to ``x``: every output gradient
    flows back through each tap to the input element that tap read."""
    dyn = _to_nhwc(dy, data_format)
    dtype = dyn.dtype
    acc = _accumulator(dtype)
    n, h, wd, c = _nhwc_shape(input_shape, data_format)
    w = _compute(np.asarray(w)).astype(acc)
    kh, kw = w.shape[:2]
    pt, pb, pl, pr = pads
    oh, ow = dyn.shape[1:3]
    dxp = np.zeros((n, h + pt + pb, wd + pl + pr, c), acc)
    g = _compute(dyn).astype(acc)
    for i in range(kh):
        for j in range(kw):
            _window(dxp, i, j, oh, ow, strides, dilations)[...] += np.tensordot(
                g, w[i, j], axes=([3], [1]))
    return _from_nhwc(dxp[:, pt:pt + h, pl:pl + wd, :].astype(dtype), data_format)


def conv2d_backprop_filter(x, filter_shape, dy, strides, dilations, pads, data_format="NHWC"):
    """The gradient of :func:`conv2d` with respect to ``w``: for each tap, the sum over
    every output position of (input element read) x (output gradient)."""
    xn = _to_nhwc(x, data_format)
    dyn = _to_nhwc(dy, data_format)
    dtype = dyn.dtype
    acc = _accumulator(dtype)
    kh, kw, c, o = (int(d) for d in filter_shape)
    pt, pb, pl, pr = pads
    xp = np.pad(_compute(xn).astype(acc), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh, ow = dyn.shape[1:3]
    g = _compute(dyn).astype(acc)
    dw = np.zeros((kh, kw, c, o), acc)
    for i in range(kh):
        for j in range(kw):
            dw[i, j] = np.tensordot(_window(xp, i, j, oh, ow, strides, dilations), g,
                                    axes=([0, 1, 2], [0, 1, 2]))
    return dw.astype(dtype)


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool(x, ksize, strides, pads, data_format="NHWC"):
    """The largest value of each window, TF's way: start from the dtype's lowest
    value and take a value only if it is greater (so NaN never wins, and padding
    never counts)."""
    xn = _to_nhwc(x, data_format)
    dtype = xn.dtype
    xc = _compute(xn)
    low = _lowest(xc.dtype)
    pt, pb, pl, pr = pads
    xp = np.pad(xc, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=low)
    oh = _out_size(xn.shape[1], ksize[0], strides[0], 1, pt, pb)
    ow = _out_size(xn.shape[2], ksize[1], strides[1], 1, pl, pr)
    y = np.full((xn.shape[0], oh, ow, xn.shape[3]), low, xc.dtype)
    with np.errstate(invalid="ignore"):
        for i in range(ksize[0]):
            for j in range(ksize[1]):
                v = _window(xp, i, j, oh, ow, strides, (1, 1))
                y = np.where(v > y, v, y)
    return _from_nhwc(y.astype(dtype), data_format)


def max_pool_grad(x, y, dy, ksize, strides, pads, data_format="NHWC"):
    """Each window's gradient goes to the input element that won it: the first
    valid element of the window, replaced by any later one that is greater (TF's
    MaxPoolGrad; a NaN in first place keeps it). Overlapping windows add up."""
    xn = _to_nhwc(x, data_format)
    g = _to_nhwc(dy, data_format)
    dtype = g.dtype
    xc = _compute(xn)
    n, h, w, c = xn.shape
    oh, ow = g.shape[1:3]
    pt, _, pl, _ = pads
    dx = np.zeros(xn.shape, np.float64)
    gc = _compute(g).astype(np.float64)
    for p in range(oh):
        rows = range(max(p * strides[0] - pt, 0), min(p * strides[0] - pt + ksize[0], h))
        for q in range(ow):
            cols = range(max(q * strides[1] - pl, 0), min(q * strides[1] - pl + ksize[1], w))
            cells = [(r, s) for r in rows for s in cols]
            window = np.stack([xc[:, r, s, :] for r, s in cells])       # [cells, N, C]
            best = np.zeros((n, c), np.int64)
            with np.errstate(invalid="ignore"):
                for k in range(1, len(cells)):
                    best = np.where(window[best, np.arange(n)[:, None], np.arange(c)]
                                    < window[k], k, best)
            for k, (r, s) in enumerate(cells):
                dx[:, r, s, :] += np.where(best == k, gc[:, p, q, :], 0.0)
    return _from_nhwc(dx.astype(dtype), data_format)


def _window_counts(h, w, oh, ow, ksize, strides, pads):
    """How many real (unpadded) input elements each output window covers."""
    pt, _, pl, _ = pads
    rows = [min(p * strides[0] - pt + ksize[0], h) - max(p * strides[0] - pt, 0)
            for p in range(oh)]
    cols = [min(q * strides[1] - pl + ksize[1], w) - max(q * strides[1] - pl, 0)
            for q in range(ow)]
    return np.outer(rows, cols).astype(np.float64)


def avg_pool(x, ksize, strides, pads, data_format="NHWC"):
    """The mean of each window over its real elements (padding is not counted)."""
    xn = _to_nhwc(x, data_format)
    dtype = xn.dtype
    pt, pb, pl, pr = pads
    xp = np.pad(_compute(xn).astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    n, h, w, c = xn.shape
    oh = _out_size(h, ksize[0], strides[0], 1, pt, pb)
    ow = _out_size(w, ksize[1], strides[1], 1, pl, pr)
    total = np.zeros((n, oh, ow, c))
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            total += _window(xp, i, j, oh, ow, strides, (1, 1))
    y = total / _window_counts(h, w, oh, ow, ksize, strides, pads)[None, :, :, None]
    return _from_nhwc(y.astype(dtype), data_format)


def avg_pool_grad(input_shape, dy, ksize, strides, pads, data_format="NHWC"):
    """Each window's gradient, divided by the window's count, to every real element in it."""
    g = _to_nhwc(dy, data_format)
    dtype = g.dtype
    n, h, w, c = _nhwc_shape(input_shape, data_format)
    pt, pb, pl, pr = pads
    oh, ow = g.shape[1:3]
    share = _compute(g).astype(np.float64) / _window_counts(
        h, w, oh, ow, ksize, strides, pads)[None, :, :, None]
    dxp = np.zeros((n, h + pt + pb, w + pl + pr, c))
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            _window(dxp, i, j, oh, ow, strides, (1, 1))[...] += share
    return _from_nhwc(dxp[:, pt:pt + h, pl:pl + w, :].astype(dtype), data_format)


# -- batch normalization: per channel over every other axis -------------------------------------
def _channels_last(x, data_format):
    """``x`` as float64 rows ``[N*H*W, C]``."""
    xn = _to_nhwc(x, data_format)
    return _compute(xn).astype(np.float64).reshape(-1, xn.shape[-1]), xn.shape


def fused_batch_norm(x, scale, offset, mean, variance, epsilon, exponential_avg_factor,
                     is_training, data_format="NHWC"):
    """TF's FusedBatchNormV3: ``(y, batch_mean, batch_variance, saved_mean, saved_variance)``.

    Training: normalize with the batch's mean and (biased) variance; report the
    batch mean and the *unbiased* variance (``n / (n - 1)``), blended with the
    given running values by ``exponential_avg_factor`` (1: the batch's alone).
    Inference: normalize with the given mean and variance, which are reported.
    """
    rows, shape = _channels_last(x, data_format)
    dtype = np.asarray(x).dtype
    scale = np.asarray(scale, np.float64)
    offset = np.asarray(offset, np.float64)
    if is_training:
        n = rows.shape[0]
        m = rows.mean(axis=0)
        v = ((rows - m) ** 2).mean(axis=0)
        unbiased = v * n / max(n - 1, 1)
        f = float(exponential_avg_factor)
        out_mean, out_var = m, unbiased
        if f != 1.0:
            out_mean = (1 - f) * np.asarray(mean, np.float64) + f * m
            out_var = (1 - f) * np.asarray(variance, np.float64) + f * unbiased
        saved = (m, v)
    else:
        m = np.asarray(mean, np.float64)
        v = np.asarray(variance, np.float64)
        out_mean, out_var = m, v
        saved = (np.zeros_like(m), np.zeros_like(v))
    y = (rows - m) / np.sqrt(v + epsilon) * scale + offset
    f32 = np.float32
    return (_from_nhwc(y.reshape(shape).astype(dtype), data_format), out_mean.astype(f32),
            out_var.astype(f32), saved[0].astype(f32), saved[1].astype(f32))


def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, epsilon, is_training,
                          data_format="NHWC"):
    """TF's FusedBatchNormGradV3: ``(dx, dscale, doffset)``.

    With ``xhat = (x - mean) / sqrt(var + eps)``: ``doffset = sum(dy)``,
    ``dscale = sum(dy * xhat)`` and, in training (mean and var are the batch's
    own, so they depend on x), ``dx = scale / sqrt(var + eps) * (dy - mean(dy) -
    xhat * mean(dy * xhat))``; in inference just ``dx = scale / sqrt(var + eps) * dy``.
    """
    g, shape = _channels_last(dy, data_format)
    rows, _ = _channels_last(x, data_format)
    dtype = np.asarray(dy).dtype
    scale = np.asarray(scale, np.float64)
    inv = 1.0 / np.sqrt(np.asarray(saved_variance, np.float64) + epsilon)
    xhat = (rows - np.asarray(saved_mean, np.float64)) * inv
    doffset = g.sum(axis=0)
    dscale = (g * xhat).sum(axis=0)
    if is_training:
        n = rows.shape[0]
        dx = scale * inv * (g - doffset / n - xhat * dscale / n)
    else:
        dx = scale * inv * g
    f32 = np.float32
    return (_from_nhwc(dx.reshape(shape).astype(dtype), data_format), dscale.astype(f32),
            doffset.astype(f32))


def bias_add(value, bias, data_format="NHWC"):
    """``value + bias`` along the channel axis (the last, or axis 1 for NCHW)."""
    value = np.asarray(value)
    b = _compute(np.asarray(bias))
    if data_format == "NCHW":
        b = b.reshape((-1,) + (1,) * (value.ndim - 2))
    return np.asarray(_compute(value) + b).astype(value.dtype)
