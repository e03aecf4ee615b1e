"""Cumulative sums and products on the GPU: one thread per column.

The input is ``x[A, K, B]`` flattened (the scanned axis is ``K``). Thread
``i`` owns column ``(a, b) = divmod(i, B)`` and walks its ``K`` elements in
order (or backwards with ``reverse``), keeping the running total in a
register. Columns are independent, so ``A * B`` threads run at once; the
walk along ``K`` is sequential (a parallel prefix scan would split it too).
"""

from numba import cuda


@cuda.jit(cache=True)
def scan_kernel(x, out, A, K, B, init, product, exclusive, reverse):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, A * B, stride):
        a = i // B
        b = i % B
        acc = init
        for step in range(K):
            k = K - 1 - step if reverse else step
            j = (a * K + k) * B + b
            v = x[j]
            if exclusive:
                out[j] = acc
            if product:
                acc = acc * v
            else:
                acc = acc + v
            if not exclusive:
                out[j] = acc
