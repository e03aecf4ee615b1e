"""Cumulative sums and products (TF's ``Cumsum``/``Cumprod``) as a Numba loop nest.

The caller views the input as a C-contiguous ``x[A, K, B]`` with the scanned
axis as ``K`` (``A``: the axes before it, ``B``: the axes after). Each of the
``A * B`` columns is one independent running total::

    for a in prange(A):                        # split over threads
        for b in range(B):
            acc = 0 (sum) or 1 (product)
            for k in 0 .. K-1 (or K-1 .. 0 with reverse):
                if exclusive: out[a, k, b] = acc; acc = acc op x[a, k, b]
                else:         acc = acc op x[a, k, b]; out[a, k, b] = acc

The total is kept in the dtype itself, as TF does (an int32 cumsum wraps).
"""

import numba
from numba import prange

from minitf.kernels.cpu.reductions import readonly


def scan_signature(dtype):
    t = numba.from_dtype(dtype)
    return numba.void(readonly(dtype, 3), t[:, :, ::1], t, numba.boolean, numba.boolean,
                      numba.boolean, numba.boolean)


@numba.njit(inline="always")
def _scan_column(x, out, a, b, init, product, exclusive, reverse):
    K = x.shape[1]
    acc = init
    for step in range(K):
        k = K - 1 - step if reverse else step
        v = x[a, k, b]
        if exclusive:
            out[a, k, b] = acc
        acc = acc * v if product else acc + v
        if not exclusive:
            out[a, k, b] = acc


def scan_kernel(x, out, init, product, exclusive, reverse, parallel):
    """``out`` = the running sums (or products, from ``init`` = 0 or 1) of ``x``
    along its axis 1."""
    A, K, B = x.shape
    if K == 0:
        return
    if parallel:
        for a in prange(A):
            for b in range(B):
                _scan_column(x, out, a, b, init, product, exclusive, reverse)
    else:
        for a in range(A):
            for b in range(B):
                _scan_column(x, out, a, b, init, product, exclusive, reverse)
