"""Top-k and in-top-k as Numba loop nests over the rows of ``x[R, N]``.

``top_k_kernel`` keeps, for every row, the ``k`` largest values in
descending order; equal values keep their order in the row (the lower index
first), NaN counts as the largest value::

    for r in prange(R):
        order = stable ascending argsort of the row *reversed*
        # reading ``order`` backwards gives values descending and, among
        # equal values, the lower original index first (the reversal undid
        # the stable sort's tie order)
        for j in range(k):
            i = N - 1 - order[N - 1 - j]
            values[r, j] = x[r, i]; indices[r, j] = i

``in_top_k_kernel`` answers, per row, "is the target class among the ``k``
largest predictions": fewer than ``k`` predictions are strictly larger than
the target's, and every prediction of the row is finite (TF's rule).
"""

import math

import numba
import numpy as np
from numba import prange

from minitf.kernels.cpu.reductions import readonly


def top_k_signature(dtype):
    t = numba.from_dtype(dtype)
    return numba.void(readonly(dtype, 2), numba.int64, t[:, ::1], numba.int32[:, ::1],
                      numba.boolean)


@numba.njit(inline="always")
def _top_k_row(x, r, k, values, indices):
    n = x.shape[1]
    order = np.argsort(x[r, ::-1], kind="mergesort")
    for j in range(k):
        i = n - 1 - order[n - 1 - j]
        values[r, j] = x[r, i]
        indices[r, j] = i


def top_k_kernel(x, k, values, indices, parallel):
    """The ``k`` largest values of each row of ``x`` and their indices."""
    if parallel:
        for r in prange(x.shape[0]):
            _top_k_row(x, r, k, values, indices)
    else:
        for r in range(x.shape[0]):
            _top_k_row(x, r, k, values, indices)


def in_top_k_signature(target_dtype):
    return numba.void(readonly(np.float32, 2), readonly(target_dtype, 1), numba.int64,
                      numba.boolean[::1], numba.boolean)


@numba.njit(inline="always")
def _in_top_k_row(predictions, targets, k, out, r):
    n = predictions.shape[1]
    target = targets[r]
    if target < 0 or target >= n:
        out[r] = False
        return
    value = predictions[r, target]
    larger = 0
    finite = math.isfinite(value)
    for i in range(n):
        p = predictions[r, i]
        if not math.isfinite(p):
            finite = False
            break
        if p > value:
            larger += 1
    out[r] = finite and larger < k


def in_top_k_kernel(predictions, targets, k, out, parallel):
    """``out[r]``: is ``targets[r]`` among the ``k`` largest of row ``r``?"""
    if parallel:
        for r in prange(predictions.shape[0]):
            _in_top_k_row(predictions, targets, k, out, r)
    else:
        for r in range(predictions.shape[0]):
            _in_top_k_row(predictions, targets, k, out, r)
