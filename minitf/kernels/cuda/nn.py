"""Softmax and the cross-entropy losses: one thread per row.

Rows (examples) are independent and a row has only as many elements as there
are classes, so the simplest layout is the right one to read first::

    grid, block = enough 1-D blocks of 128 threads to cover the R rows
    thread r:
        m = max(x[r, :])                         # subtract the max: exp never overflows
        s = sum(exp(x[r, j] - m) for j)
        out[r, j] = exp(x[r, j] - m) / s         # or x - m - log(s) for log-softmax

Everything is computed in float64 and stored in the output's dtype.
"""

import math

from numba import cuda


@cuda.jit(device=True)
def _row_max_sum(x, r, C):
    m = -math.inf
    for j in range(C):
        v = x[r * C + j]
        if v > m or v != v:
            m = v
    s = 0.0
    for j in range(C):
        s += math.exp(x[r * C + j] - m)
    return m, s


@cuda.jit(cache=True)
def softmax_kernel(x, out, R, C, want_log):
    r = cuda.grid(1)
    if r < R:
        m, s = _row_max_sum(x, r, C)
        ls = math.log(s)
        for j in range(C):
            z = x[r * C + j] - m
            out[r * C + j] = z - ls if want_log else math.exp(z) / s


@cuda.jit(cache=True)
def xent_kernel(x, labels, loss, backprop, R, C):
    """loss[r] = -sum(labels * log_softmax(x)), backprop = softmax(x) - labels."""
    r = cuda.grid(1)
    if r < R:
        m, s = _row_max_sum(x, r, C)
        ls = math.log(s)
        total = 0.0
        for j in range(C):
            z = x[r * C + j] - m - ls
            lab = labels[r * C + j]
            if lab != 0:
                total -= lab * z
            backprop[r * C + j] = math.exp(z) - lab
        loss[r] = total


@cuda.jit(cache=True)
def sparse_xent_kernel(x, labels, loss, backprop, R, C):
    """Like :func:`xent_kernel` with one integer label per row."""
    r = cuda.grid(1)
    if r < R:
        m, s = _row_max_sum(x, r, C)
        ls = math.log(s)
        label = labels[r]
        for j in range(C):
            z = x[r * C + j] - m - ls
            hot = 1.0 if j == label else 0.0
            if j == label:
                loss[r] = -z
            backprop[r * C + j] = math.exp(z) - hot
