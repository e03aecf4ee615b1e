"""Top-k and in-top-k on the GPU: one thread per row.

Thread ``r`` picks its row's ``k`` largest values one at a time. Pick ``j``
is the largest element that comes *after* pick ``j - 1`` in the order
"larger value first, then lower index" (NaN is the largest value), so no
element is taken twice and no scratch memory is needed: ``k`` passes over
the row, ``O(N k)`` work per thread.
"""

from numba import cuda


@cuda.jit(device=True)
def _before(a, ia, b, ib):
    """Does element ``(a, ia)`` come before ``(b, ib)`` in top-k order?"""
    a_nan = a != a
    b_nan = b != b
    if a_nan != b_nan:
        return a_nan
    if not a_nan and a != b:
        return a > b
    return ia < ib


@cuda.jit(cache=True)
def top_k_kernel(x, R, N, k, values, indices):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for r in range(start, R, stride):
        row = r * N
        last_v = x[row]
        last_i = -1
        for j in range(k):
            best_i = -1
            best_v = x[row]
            for i in range(N):
                v = x[row + i]
                if last_i >= 0 and not _before(last_v, last_i, v, i):
                    continue                      # already picked, or before a pick
                if best_i < 0 or _before(v, i, best_v, best_i):
                    best_v = v
                    best_i = i
            values[r * k + j] = best_v
            indices[r * k + j] = best_i
            last_v = best_v
            last_i = best_i


@cuda.jit(cache=True)
def in_top_k_kernel(predictions, targets, R, N, k, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for r in range(start, R, stride):
        target = targets[r]
        if target < 0 or target >= N:
            out[r] = False
            continue
        value = predictions[r * N + target]
        ok = value == value and value - value == 0
        larger = 0
        for i in range(N):
            p = predictions[r * N + i]
            if not (p == p and p - p == 0):       # NaN or inf
                ok = False
                break
            if p > value:
                larger += 1
        out[r] = ok and larger < k
