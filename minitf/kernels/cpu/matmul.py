"""Integer matrix multiplication as a Numba loop nest.

Float matmul does not come here: numpy hands float32/float64 products straight
to BLAS (OpenBLAS/MKL), which is already multi-threaded and tuned per CPU.
Numba's own ``np.dot`` would call the same BLAS routine after an extra
dispatch, so wrapping it would teach nothing and cost a copy. BLAS has no
integer routines, so int32/int64 products are computed here.

The caller gives 3-D C-contiguous operands ``a[T, M, K]`` and ``b[T, K, N]``
(``T`` = the flattened batch; 1 for a plain matrix product). Each output row is one
parallel item, and the ``i, k, j`` loop order reads ``b`` row by row so that
the innermost loop is a SIMD-able ``out_row += a[t, i, k] * b_row``::

    for item in prange(T * M):          # one output row per item
        t, i = divmod(item, M)
        out[t, i, :] = 0
        for k in range(K):
            a_ik = a[t, i, k]
            for j in range(N):
                out[t, i, j] += a_ik * b[t, k, j]

Integer overflow wraps (two's complement), as in TensorFlow.
"""

import numba
from numba import prange

from minitf.kernels.cpu.reductions import readonly


@numba.njit(inline="always")
def _matmul_row(a, b, out, item):
    M = a.shape[1]
    t = item // M
    i = item % M
    for j in range(out.shape[2]):
        out[t, i, j] = 0
    for k in range(a.shape[2]):
        a_ik = a[t, i, k]
        for j in range(out.shape[2]):
            out[t, i, j] += a_ik * b[t, k, j]


def matmul_kernel(a, b, out, parallel):
    """``out[t] = a[t] @ b[t]`` for every batch index t (see the module docstring)."""
    n_items = out.shape[0] * out.shape[1]
    if parallel:
        for item in prange(n_items):
            _matmul_row(a, b, out, item)
    else:
        for item in range(n_items):
            _matmul_row(a, b, out, item)


def matmul_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 3), readonly(np_dtype, 3), t[:, :, ::1],
                      numba.boolean)
