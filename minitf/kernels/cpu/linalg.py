"""Triangular solves and axis permutations as Numba loop nests.

Inverse, determinant, Cholesky and general solves call LAPACK through numpy
(``minitf/kernels/cpu/__init__.py``), as float matmul calls BLAS: a loop nest
of ours would be slower and less accurate. Two kernels are ours:

``triangular_solve_kernel`` solves ``L x = b`` (or ``U x = b``) for every
matrix of a batch by substitution, reading only the triangle it is told to
(what TF's MatrixTriangularSolve does: the other triangle is ignored)::

    for t in prange(T):                       # matrices of the batch
        for each right-hand side column c:
            for i in rows, top-down (lower) or bottom-up (upper):
                s = b[t, i, c] - sum over solved j of a[t, i, j] * x[t, j, c]
                x[t, i, c] = s / a[t, i, i]

With ``adjoint`` the matrix is read transposed (``a[t, j, i]``), which turns
a lower triangle into an upper one.
"""

import numba
from numba import prange

from minitf.kernels.cpu.reductions import readonly


def triangular_solve_signature(dtype):
    t = numba.from_dtype(dtype)
    return numba.void(readonly(dtype, 3), readonly(dtype, 3), t[:, :, ::1], numba.boolean,
                      numba.boolean, numba.boolean)


@numba.njit(inline="always")
def _solve_one(a, b, x, t, lower, adjoint):
    n = a.shape[1]
    upward = lower == adjoint        # a transposed lower triangle is upper
    for c in range(b.shape[2]):
        for step in range(n):
            i = n - 1 - step if upward else step
            s = b[t, i, c]
            if upward:
                for j in range(i + 1, n):
                    s -= (a[t, j, i] if adjoint else a[t, i, j]) * x[t, j, c]
            else:
                for j in range(i):
                    s -= (a[t, j, i] if adjoint else a[t, i, j]) * x[t, j, c]
            x[t, i, c] = s / a[t, i, i]


def triangular_solve_kernel(a, b, x, lower, adjoint, parallel):
    """``x[t] = solve(triangle of a[t], b[t])`` for each matrix ``t``."""
    if parallel:
        for t in prange(a.shape[0]):
            _solve_one(a, b, x, t, lower, adjoint)
    else:
        for t in range(a.shape[0]):
            _solve_one(a, b, x, t, lower, adjoint)
