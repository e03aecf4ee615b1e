"""Reductions on the GPU: a tree reduction in shared memory.

The input is read where it is, through strides (no transpose copy): output
element ``r`` starts at ``base(r)`` (its kept coordinates dotted with the kept
strides) and its ``k``-th reduced element is at ``base(r) + off(k)``.

Launch layout: a 2-D grid of 1-D blocks of ``THREADS`` threads::

    grid = (R, C)        # R outputs; C blocks share one output's K elements
    block (r, c), thread t:
        acc = identity
        for k in range(c * THREADS + t, K, C * THREADS):   # strided over K
            acc = combine(acc, x[base(r) + off(k)])
        cache[t] = acc                      # cache: THREADS float64 in shared memory
        syncthreads()
        s = THREADS // 2                    # the tree: halve the active threads
        while s > 0:                        # each round, thread t < s folds in t + s
            if t < s: cache[t] = combine(cache[t], cache[t + s])
            syncthreads()
            s //= 2
        if t == 0: partial[r, c] = cache[0]

With ``C > 1`` a second launch reduces ``partial[R, C]`` the same way. Every
float type accumulates in float64 (as the CPU kernels do); Max/Min let the
first NaN win, like numpy and TF.
"""

from numba import config, cuda, float64

THREADS = 8 if config.ENABLE_CUDASIM else 128   # a power of two (the tree halves it)
SUM, PROD, MAX, MIN = 0, 1, 2, 3


@cuda.jit(device=True)
def combine(op, acc, v):
    if op == SUM:
        return acc + v
    if op == PROD:
        return acc * v
    if acc != acc:
        return acc
    if v != v:
        return v
    if op == MAX:
        return v if v > acc else acc
    return v if v < acc else acc


@cuda.jit(device=True)
def strided_offset(i, shape, strides):
    off = 0
    for d in range(shape.size - 1, -1, -1):
        off += (i % shape[d]) * strides[d]
        i //= shape[d]
    return off


@cuda.jit(cache=True)
def reduce_kernel(x, op, init, kept_shape, kept_strides, red_shape, red_strides, K,
                  partial):
    """``partial[r, c]`` = combination of block (r, c)'s share of output r's K inputs."""
    r = cuda.blockIdx.x
    c = cuda.blockIdx.y
    C = cuda.gridDim.y
    t = cuda.threadIdx.x
    cache = cuda.shared.array(THREADS, float64)
    base = strided_offset(r, kept_shape, kept_strides)
    acc = init
    k = c * THREADS + t
    while k < K:
        acc = combine(op, acc, float64(x[base + strided_offset(k, red_shape, red_strides)]))
        k += C * THREADS
    cache[t] = acc
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if t < s:
            cache[t] = combine(op, cache[t], cache[t + s])
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[r, c] = cache[0]


@cuda.jit(cache=True)
def arg_reduce_kernel(x, find_max, R, K, B, out):
    """ArgMax/ArgMin of ``x[A, K, B]`` (flat): one thread per output (a, b),
    scanning k in order so that the first of equal values wins."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, R, stride):
        a = i // B
        b = i % B
        best = x[a * K * B + b]
        where = 0
        for k in range(1, K):
            v = x[(a * K + k) * B + b]
            if best != best:
                break
            better = (v > best) if find_max else (v < best)
            if better or v != v:
                best = v
                where = k
        out[i] = where
