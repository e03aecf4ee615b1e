"""Reductions (Sum, Prod, Max, Min) and ArgMax/ArgMin as Numba loop nests.

The caller first views the input as a 3-D C-contiguous array ``x[A, K, B]``:
``A`` = the kept axes before the reduced block, ``K`` = the reduced axes,
``B`` = the kept axes after it. Every reduction is then::

    out[a, b] = combine(x[a, 0, b], x[a, 1, b], ..., x[a, K - 1, b])

The work is cut into ``A * C`` items: item ``(a, c)`` reduces the ``c``-th of
``C`` chunks of the ``k`` range into ``partial[a, c, :]``; the caller combines
the ``C`` partials (``C`` is 1 unless ``A`` alone is too small to keep every
thread busy, e.g. a full reduction, where ``A == B == 1``)::

    for item in prange(A * C):                 # one item per task
        a, c = divmod(item, C)
        for k in chunk c of range(K):
            if B == 1:  acc = combine(acc, x[a, k, 0])          # a contiguous run
            else:       for b in range(B):                      # a contiguous row
                            partial[a, c, b] = combine(partial[a, c, b], x[a, k, b])

Both inner loops read memory in order, which lets LLVM use SIMD. Float sums
and products accumulate in float64 (``partial`` is float64 for float32 input):
as accurate as numpy's pairwise sum, and ``fastmath={"reassoc"}`` lets the
compiler reorder the additions for speed.
"""

import numba
import numpy as np
from numba import prange

SUM, PROD, MAX, MIN = 0, 1, 2, 3
OP_CODES = {"Sum": SUM, "Prod": PROD, "Max": MAX, "Min": MIN}


@numba.njit(inline="always")
def _combine(op, acc, v):
    if op == SUM:
        return acc + v
    if op == PROD:
        return acc * v
    if op == MAX:
        # ``v != v`` is NaN: the first NaN wins and then sticks, like numpy.
        return v if (v > acc or v != v) else acc
    return v if (v < acc or v != v) else acc


@numba.njit(inline="always")
def _reduce_item(x, op, init, partial, item):
    A, K, B = x.shape
    C = partial.shape[1]
    a = item // C
    c = item % C
    lo = c * K // C
    hi = (c + 1) * K // C
    if B == 1:
        # A contiguous run: index a 1-D slice from 0 so that numba can drop its
        # negative-index checks and LLVM can vectorize the loop.
        run = x.reshape(x.size)[a * K + lo:a * K + hi]
        acc = init
        if op == SUM:
            for k in range(run.size):
                acc += run[k]
        elif op == PROD:
            for k in range(run.size):
                acc *= run[k]
        else:
            # Max/Min with NaN checks do not vectorize; four independent
            # accumulators at least let the CPU overlap four comparisons.
            m0 = m1 = m2 = m3 = acc
            n4 = run.size // 4 * 4
            for k in range(0, n4, 4):
                m0 = _combine(op, m0, run[k])
                m1 = _combine(op, m1, run[k + 1])
                m2 = _combine(op, m2, run[k + 2])
                m3 = _combine(op, m3, run[k + 3])
            for k in range(n4, run.size):
                m0 = _combine(op, m0, run[k])
            acc = _combine(op, _combine(op, m0, m1), _combine(op, m2, m3))
        partial[a, c, 0] = acc
    else:
        for b in range(B):
            partial[a, c, b] = init
        for k in range(lo, hi):
            for b in range(B):
                partial[a, c, b] = _combine(op, partial[a, c, b], x[a, k, b])


def reduce_kernel(x, op, init, partial, parallel):
    """``partial[a, c, b]`` = ``op``-combination of ``x[a, k, b]`` over chunk ``c`` of k.

    ``op`` is one of SUM, PROD, MAX, MIN; ``init`` its identity (0, 1, lowest,
    highest), which is also the answer over an empty ``k`` range. Loop nest::

        for item in prange(A * C):      # range(...) when parallel is False
            reduce chunk (a, c) = divmod(item, C) into partial[a, c, :]
    """
    n_items = partial.shape[0] * partial.shape[1]
    if parallel:
        for item in prange(n_items):
            _reduce_item(x, op, init, partial, item)
    else:
        for item in range(n_items):
            _reduce_item(x, op, init, partial, item)


@numba.njit(inline="always")
def _arg_item(x, find_max, best, where, item):
    A, K, B = x.shape
    C = best.shape[1]
    a = item // C
    c = item % C
    lo = c * K // C
    hi = (c + 1) * K // C
    for b in range(B):
        best[a, c, b] = x[a, lo, b]
        where[a, c, b] = lo
    for k in range(lo + 1, hi):
        for b in range(B):
            v = x[a, k, b]
            cur = best[a, c, b]
            # Strict comparison keeps the first of equal values (TF, numpy);
            # the first NaN wins, as in numpy.
            better = (v > cur) if find_max else (v < cur)
            if better or (v != v and cur == cur):
                best[a, c, b] = v
                where[a, c, b] = k


def arg_reduce_kernel(x, find_max, best, where, parallel):
    """``where[a, c, b]`` = index k of the max (or min) of ``x[a, k, b]`` in chunk c.

    ``best`` holds the winning values, so the caller can pick the best chunk.
    Loop nest::

        for item in prange(A * C):
            a, c = divmod(item, C)
            for k in chunk c:  for b in range(B):
                if x[a, k, b] beats best[a, c, b]:  best, where = x[a, k, b], k
    """
    n_items = best.shape[0] * best.shape[1]
    if parallel:
        for item in prange(n_items):
            _arg_item(x, find_max, best, where, item)
    else:
        for item in range(n_items):
            _arg_item(x, find_max, best, where, item)


def readonly(np_dtype, ndim):
    """The numba type of a C-contiguous input array. Declared read-only so that
    read-only numpy arrays (constants, broadcast views) are accepted too."""
    return numba.types.Array(numba.from_dtype(np_dtype), ndim, "C", readonly=True)


def reduce_signature(np_dtype, acc_dtype):
    a = numba.from_dtype(acc_dtype)
    return numba.void(readonly(np_dtype, 3), numba.int64, a, a[:, :, ::1], numba.boolean)


def arg_reduce_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 3), numba.boolean, t[:, :, ::1],
                      numba.int64[:, :, ::1], numba.boolean)


def accumulator_dtype(np_dtype, op):
    """float32 sums/products accumulate in float64; everything else in its own type."""
    if np_dtype == np.float32 and op in (SUM, PROD):
        return np.dtype(np.float64)
    return np.dtype(np_dtype)
