"""Softmax, log-softmax and the two softmax cross-entropy losses, row by row.

The caller views the logits as a 2-D C-contiguous array ``[rows, classes]``.
Each row is independent, so rows are the parallel items, and each row takes
three passes, computing ``exp`` once per element::

    for r in prange(rows):
        m = max(x[r, :])                      # subtract the max: exp never overflows
        e[:] = exp(x[r, :] - m);  s = sum(e)  # s accumulated in float64
        softmax[r, :]     = e / s
        log_softmax[r, :] = x[r, :] - m - log(s)

The losses reuse the same passes, with ``e`` kept in the backprop row:
``loss[r] = -sum(labels[r, :] * log_softmax[r, :])`` and
``backprop[r, :] = softmax[r, :] - labels[r, :]`` (for sparse labels, the
one-hot row of ``labels[r]``).

Each pass is a flat loop over a 1-D row (``xr = x[r]``, indexed from 0), and
``exp``/``log`` are :mod:`.vector_math`'s, so LLVM vectorizes the passes that
compute them; the float64 sum vectorizes because these kernels are compiled
with ``fastmath={"reassoc"}`` (the additions may be reordered).
"""

import numba
from numba import prange

from minitf.kernels.cpu import vector_math as vm
from minitf.kernels.cpu.reductions import readonly


@numba.njit(inline="always")
def _exp_row(xr, er):
    """``er = exp(xr - max(xr))``; returns ``(max, sum(er))``. Rows have >= 1 class."""
    m = xr[0]
    for j in range(1, xr.size):
        if xr[j] > m:
            m = xr[j]
    s = 0.0
    for j in range(xr.size):
        e = vm.exp(xr[j] - m)
        er[j] = e
        s += e
    return m, s


@numba.njit(inline="always")
def _softmax_row(xr, outr, want_log):
    m, s = _exp_row(xr, outr)
    if want_log:
        shift = m + vm.log(s)
        for j in range(xr.size):
            outr[j] = xr[j] - shift
    else:
        scale = 1.0 / s
        for j in range(xr.size):
            outr[j] = outr[j] * scale


def softmax_kernel(x, out, want_log, parallel):
    """``out[r, :]`` = softmax (or log-softmax when ``want_log``) of ``x[r, :]``.

    Loop nest::

        for r in prange(rows):          # range(rows) when parallel is False
            m = max(x[r]);  out[r] = exp(x[r] - m);  s = sum(out[r])
            out[r] /= s                 (or out[r] = x[r] - m - log(s))
    """
    if parallel:
        for r in prange(x.shape[0]):
            _softmax_row(x[r], out[r], want_log)
    else:
        for r in range(x.shape[0]):
            _softmax_row(x[r], out[r], want_log)


@numba.njit(inline="always")
def _xent_row(xr, labr, backr):
    m, s = _exp_row(xr, backr)              # backr holds exp(x - m) for now
    shift = m + vm.log(s)
    scale = 1.0 / s
    total = 0.0
    for j in range(xr.size):
        total -= labr[j] * (xr[j] - shift)
        backr[j] = backr[j] * scale - labr[j]
    return total


def softmax_xent_kernel(logits, labels, loss, backprop, parallel):
    """TF's SoftmaxCrossEntropyWithLogits for dense label rows.

    Loop nest::

        for r in prange(rows):
            m = max(logits[r]);  e = exp(logits[r] - m);  s = sum(e)
            for j in range(classes):
                loss[r] -= labels[r, j] * (logits[r, j] - m - log(s))
                backprop[r, j] = e[j] / s - labels[r, j]
    """
    if parallel:
        for r in prange(logits.shape[0]):
            loss[r] = _xent_row(logits[r], labels[r], backprop[r])
    else:
        for r in range(logits.shape[0]):
            loss[r] = _xent_row(logits[r], labels[r], backprop[r])


@numba.njit(inline="always")
def _sparse_xent_row(xr, label, backr):
    m, s = _exp_row(xr, backr)
    scale = 1.0 / s
    for j in range(xr.size):
        backr[j] = backr[j] * scale
    backr[label] -= 1.0
    return -(xr[label] - m - vm.log(s))


def sparse_softmax_xent_kernel(logits, labels, loss, backprop, parallel):
    """TF's SparseSoftmaxCrossEntropyWithLogits; labels already range-checked.

    Loop nest::

        for r in prange(rows):
            m = max(logits[r]);  e = exp(logits[r] - m);  s = sum(e)
            backprop[r] = e / s;  backprop[r, labels[r]] -= 1
            loss[r] = -(logits[r, labels[r]] - m - log(s))
    """
    if parallel:
        for r in prange(logits.shape[0]):
            loss[r] = _sparse_xent_row(logits[r], labels[r], backprop[r])
    else:
        for r in range(logits.shape[0]):
            loss[r] = _sparse_xent_row(logits[r], labels[r], backprop[r])


def softmax_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), t[:, ::1], numba.boolean, numba.boolean)


def xent_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), readonly(np_dtype, 2), t[::1], t[:, ::1],
                      numba.boolean)


def sparse_xent_signature(np_dtype, label_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), readonly(label_dtype, 1), t[::1], t[:, ::1],
                      numba.boolean)
