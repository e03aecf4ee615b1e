"""Softmax, log-softmax and the two softmax cross-entropy losses, row by row.

The caller views the logits as a 2-D C-contiguous array ``[rows, classes]``.
Each row is independent, so rows are the parallel items::

    for r in prange(rows):
        m = max(x[r, :])                      # subtract the max: exp never overflows
        s = sum(exp(x[r, :] - m))             # accumulated in float64
        softmax[r, :]     = exp(x[r, :] - m) / s
        log_softmax[r, :] = x[r, :] - m - log(s)

The losses reuse the same three passes over a row:
``loss[r] = -sum(labels[r, :] * log_softmax[r, :])`` and
``backprop[r, :] = softmax[r, :] - labels[r, :]`` (for sparse labels, the
one-hot row of ``labels[r]``).
"""

import math

import numba
from numba import prange

from minitf.kernels.cpu.reductions import readonly


@numba.njit(inline="always")
def _row_max_and_log_sum(x, r):
    C = x.shape[1]
    m = x[r, 0] if C > 0 else 0.0
    for j in range(1, C):
        if x[r, j] > m:
            m = x[r, j]
    s = 0.0
    for j in range(C):
        s += math.exp(x[r, j] - m)
    return m, math.log(s)


@numba.njit(inline="always")
def _softmax_row(x, out, want_log, r):
    m, log_s = _row_max_and_log_sum(x, r)
    for j in range(x.shape[1]):
        z = x[r, j] - m - log_s
        out[r, j] = z if want_log else math.exp(z)


def softmax_kernel(x, out, want_log, parallel):
    """``out[r, :]`` = softmax (or log-softmax when ``want_log``) of ``x[r, :]``.

    Loop nest::

        for r in prange(rows):          # range(rows) when parallel is False
            m, log_s = max(x[r]), log(sum(exp(x[r] - m)))
            for j in range(classes):
                out[r, j] = x[r, j] - m - log_s        (or its exp)
    """
    if parallel:
        for r in prange(x.shape[0]):
            _softmax_row(x, out, want_log, r)
    else:
        for r in range(x.shape[0]):
            _softmax_row(x, out, want_log, r)


@numba.njit(inline="always")
def _xent_row(logits, labels, loss, backprop, r):
    m, log_s = _row_max_and_log_sum(logits, r)
    total = 0.0
    for j in range(logits.shape[1]):
        z = logits[r, j] - m - log_s
        total -= labels[r, j] * z
        backprop[r, j] = math.exp(z) - labels[r, j]
    loss[r] = total


def softmax_xent_kernel(logits, labels, loss, backprop, parallel):
    """TF's SoftmaxCrossEntropyWithLogits for dense label rows.

    Loop nest::

        for r in prange(rows):
            m, log_s = max(logits[r]), log(sum(exp(logits[r] - m)))
            for j in range(classes):
                z = logits[r, j] - m - log_s            # log-softmax
                loss[r] -= labels[r, j] * z
                backprop[r, j] = exp(z) - labels[r, j]
    """
    if parallel:
        for r in prange(logits.shape[0]):
            _xent_row(logits, labels, loss, backprop, r)
    else:
        for r in range(logits.shape[0]):
            _xent_row(logits, labels, loss, backprop, r)


@numba.njit(inline="always")
def _sparse_xent_row(logits, labels, loss, backprop, r):
    m, log_s = _row_max_and_log_sum(logits, r)
    label = labels[r]
    for j in range(logits.shape[1]):
        z = logits[r, j] - m - log_s
        if j == label:
            loss[r] = -z
            backprop[r, j] = math.exp(z) - 1.0
        else:
            backprop[r, j] = math.exp(z)


def sparse_softmax_xent_kernel(logits, labels, loss, backprop, parallel):
    """TF's SparseSoftmaxCrossEntropyWithLogits; labels already range-checked.

    Loop nest::

        for r in prange(rows):
            m, log_s = max(logits[r]), log(sum(exp(logits[r] - m)))
            for j in range(classes):
                z = logits[r, j] - m - log_s
                backprop[r, j] = exp(z) - (1 if j == labels[r] else 0)
            loss[r] = -(logits[r, labels[r]] - m - log_s)
    """
    if parallel:
        for r in prange(logits.shape[0]):
            _sparse_xent_row(logits, labels, loss, backprop, r)
    else:
        for r in range(logits.shape[0]):
            _sparse_xent_row(logits, labels, loss, backprop, r)


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
