"""Tiled matrix multiplication in shared memory.

``out[t] = op(a[t]) @ op(b[t])`` for each batch index ``t`` (``op`` = optional
transpose, done by swapping strides, never by copying).

Launch layout: blocks of ``TILE x TILE`` threads, one per output element of a
``TILE x TILE`` output tile; the grid covers the output and its z axis the
batch::

    grid  = (ceil(N / TILE), ceil(M / TILE), T)
    block = (TILE, TILE)         # thread (tx, ty) owns out[t, row, col]
    for each k-tile p of the inner dimension:
        sa[ty, tx] = A[row, p*TILE + tx]      # the block loads one tile of A
        sb[ty, tx] = B[p*TILE + ty, col]      # and one of B into shared memory
        syncthreads()                          # wait until both tiles are in
        acc += sum(sa[ty, j] * sb[j, tx] for j in range(TILE))
        syncthreads()                          # before the next load overwrites them
    out[t, row, col] = acc

Each element of A and B is read from global memory once per tile instead of
once per multiply-add: TILE times less traffic, which is the whole point.
Shared arrays need a dtype at compile time, so there is one kernel per float
type (the bodies are the same).
"""

from numba import config, cuda, float32, float64

TILE = 4 if config.ENABLE_CUDASIM else 16     # small tiles keep the simulator quick


@cuda.jit(device=True)
def _at(m, t, i, j, rows_stride, cols_stride, batch_stride, rows, cols):
    if i < rows and j < cols:
        return m[t * batch_stride + i * rows_stride + j * cols_stride]
    return 0


# Two copies, float32 and float64, the same to the letter but for the dtype: a shared
# array's dtype must be a compile-time constant in numba.cuda, and a kernel made by a
# closure per dtype would miss Numba's cache (see minitf/kernels/cpu/compile.py).
@cuda.jit(cache=True)
def matmul_f32(a, b, out, M, K, N, a_rs, a_cs, a_bs, b_rs, b_cs, b_bs):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    t = cuda.blockIdx.z
    acc = float32(0)
    for p in range((K + TILE - 1) // TILE):
        sa[ty, tx] = _at(a, t, row, p * TILE + tx, a_rs, a_cs, a_bs, M, K)
        sb[ty, tx] = _at(b, t, p * TILE + ty, col, b_rs, b_cs, b_bs, K, N)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < M and col < N:
        out[(t * M + row) * N + col] = acc


@cuda.jit(cache=True)
def matmul_f64(a, b, out, M, K, N, a_rs, a_cs, a_bs, b_rs, b_cs, b_bs):
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    t = cuda.blockIdx.z
    acc = float64(0)
    for p in range((K + TILE - 1) // TILE):
        sa[ty, tx] = _at(a, t, row, p * TILE + tx, a_rs, a_cs, a_bs, M, K)
        sb[ty, tx] = _at(b, t, p * TILE + ty, col, b_rs, b_cs, b_bs, K, N)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < M and col < N:
        out[(t * M + row) * N + col] = acc
