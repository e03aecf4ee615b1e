"""Linear algebra on the GPU: one thread per matrix of a batch.

Matrices are stored one after another (``T`` matrices of ``n x n``, row
major). Thread ``t`` owns matrix ``t`` and works on it in global memory,
which is simple to read and fine for the small matrices lessons use (TF
calls cuSOLVER, which splits one matrix over many threads):

* ``inverse_kernel``: Gauss-Jordan elimination with partial pivoting on a
  copy of the matrix, applying every row operation to an identity matrix
  too, which becomes the inverse;
* ``determinant_kernel``: the same elimination forward only (an LU
  factorisation): the product of the pivots, negated per row swap;
* ``solve_kernel``: elimination on ``[A | B]``, then back substitution;
* ``cholesky_kernel``: ``L[i, j] = (A[i, j] - sum L[i, k] L[j, k]) / L[j, j]``,
  column by column, from A's lower triangle (NaN in the lower triangle of a
  matrix that is not positive definite, as TF answers);
* ``triangular_solve_kernel``: substitution, reading one triangle;
* ``permute_kernel``: one thread per output element of a transpose.

With ``adjoint``/``transpose`` a kernel reads ``A[j, i]`` for ``A[i, j]``.
A zero pivot sets ``failed[t]``; the host turns it into TF's error.
"""

from numba import cuda

from minitf.kernels.cuda.reductions import strided_offset


@cuda.jit(device=True)
def _at(a, base, n, i, j, transpose):
    return a[base + j * n + i] if transpose else a[base + i * n + j]


@cuda.jit(cache=True)
def inverse_kernel(a, work, inv, T, n, transpose, failed):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for t in range(start, T, stride):
        base = t * n * n
        for i in range(n):
            for j in range(n):
                work[base + i * n + j] = _at(a, base, n, i, j, transpose)
                inv[base + i * n + j] = 1.0 if i == j else 0.0
        failed[t] = 0
        for col in range(n):
            pivot = col                       # the largest entry at or below the diagonal
            for r in range(col + 1, n):
                if abs(work[base + r * n + col]) > abs(work[base + pivot * n + col]):
                    pivot = r
            p = work[base + pivot * n + col]
            if p == 0:
                failed[t] = 1
                break
            if pivot != col:
                for j in range(n):
                    k1 = base + col * n + j
                    k2 = base + pivot * n + j
                    work[k1], work[k2] = work[k2], work[k1]
                    inv[k1], inv[k2] = inv[k2], inv[k1]
            for j in range(n):
                work[base + col * n + j] /= p
                inv[base + col * n + j] /= p
            for r in range(n):
                if r == col:
                    continue
                f = work[base + r * n + col]
                if f != 0:
                    for j in range(n):
                        work[base + r * n + j] -= f * work[base + col * n + j]
                        inv[base + r * n + j] -= f * inv[base + col * n + j]


@cuda.jit(cache=True)
def determinant_kernel(a, work, det, T, n):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for t in range(start, T, stride):
        base = t * n * n
        for k in range(n * n):
            work[base + k] = a[base + k]
        d = 1.0
        for col in range(n):
            pivot = col
            for r in range(col + 1, n):
                if abs(work[base + r * n + col]) > abs(work[base + pivot * n + col]):
                    pivot = r
            p = work[base + pivot * n + col]
            if p == 0:
                d = 0.0
                break
            if pivot != col:
                d = -d
                for j in range(n):
                    k1 = base + col * n + j
                    k2 = base + pivot * n + j
                    work[k1], work[k2] = work[k2], work[k1]
            d *= p
            for r in range(col + 1, n):
                f = work[base + r * n + col] / p
                for j in range(col, n):
                    work[base + r * n + j] -= f * work[base + col * n + j]
        det[t] = d


@cuda.jit(cache=True)
def solve_kernel(a, b, work, x, T, n, m, transpose, failed):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for t in range(start, T, stride):
        base = t * n * n
        bb = t * n * m
        for i in range(n):
            for j in range(n):
                work[base + i * n + j] = _at(a, base, n, i, j, transpose)
            for c in range(m):
                x[bb + i * m + c] = b[bb + i * m + c]
        failed[t] = 0
        for col in range(n):
            pivot = col
            for r in range(col + 1, n):
                if abs(work[base + r * n + col]) > abs(work[base + pivot * n + col]):
                    pivot = r
            p = work[base + pivot * n + col]
            if p == 0:
                failed[t] = 1
                break
            if pivot != col:
                for j in range(n):
                    k1 = base + col * n + j
                    k2 = base + pivot * n + j
                    work[k1], work[k2] = work[k2], work[k1]
                for c in range(m):
                    k1 = bb + col * m + c
                    k2 = bb + pivot * m + c
                    x[k1], x[k2] = x[k2], x[k1]
            for r in range(col + 1, n):
                f = work[base + r * n + col] / p
                for j in range(col, n):
                    work[base + r * n + j] -= f * work[base + col * n + j]
                for c in range(m):
                    x[bb + r * m + c] -= f * x[bb + col * m + c]
        if failed[t]:
            continue
        for step in range(n):                 # back substitution
            i = n - 1 - step
            for c in range(m):
                s = x[bb + i * m + c]
                for j in range(i + 1, n):
                    s -= work[base + i * n + j] * x[bb + j * m + c]
                x[bb + i * m + c] = s / work[base + i * n + i]


@cuda.jit(cache=True)
def cholesky_kernel(a, out, T, n, failed):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for t in range(start, T, stride):
        base = t * n * n
        failed[t] = 0
        for k in range(n * n):
            out[base + k] = 0.0
        for j in range(n):
            s = a[base + j * n + j]
            for k in range(j):
                s -= out[base + j * n + k] * out[base + j * n + k]
            if not s > 0:                     # not positive definite: NaN, as TF
                for i in range(n):
                    for k in range(n):
                        out[base + i * n + k] = (s - s) / 0.0 if k <= i else 0.0
                failed[t] = 1
                break
            d = s ** 0.5
            out[base + j * n + j] = d
            for i in range(j + 1, n):
                s = a[base + i * n + j]
                for k in range(j):
                    s -= out[base + i * n + k] * out[base + j * n + k]
                out[base + i * n + j] = s / d


@cuda.jit(cache=True)
def triangular_solve_kernel(a, b, x, T, n, m, lower, adjoint):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    upward = lower == adjoint
    for t in range(start, T, stride):
        base = t * n * n
        bb = t * n * m
        for c in range(m):
            for step in range(n):
                i = n - 1 - step if upward else step
                s = b[bb + i * m + c]
                lo = i + 1 if upward else 0
                hi = n if upward else i
                for j in range(lo, hi):
                    s -= _at(a, base, n, i, j, adjoint) * x[bb + j * m + c]
                x[bb + i * m + c] = s / a[base + i * n + i]


@cuda.jit(cache=True)
def permute_kernel(x, out, out_shape, strides):
    """``out[i] = x[offset(i)]``: ``strides`` are x's strides in output axis order."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[strided_offset(i, out_shape, strides)]
