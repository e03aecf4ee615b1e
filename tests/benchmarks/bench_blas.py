"""Benchmark: one float32 product on one thread, numpy's BLAS against minitf's.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_blas.py

minitf loads an OpenBLAS of its own with the kernels of the CPU it runs on
(``minitf/kernels/cpu/blas.py``); numpy's copy runs whatever kernels it was
loaded with (``OPENBLAS_CORETYPE`` decides, if set). Both are limited to one
thread, and the two take turns on each product: the shapes are the MLP's,
the LSTM's and the CNN's of the other benchmarks. Prints which kernels each
library runs, then the medians.
"""

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from minitf.kernels.cpu import blas  # noqa: E402

SHAPES = [(400, 400, 400, "two-chain benchmark"), (256, 64, 128, "MLP, first layer"),
          (256, 128, 10, "MLP, logits"), (64, 160, 512, "LSTM gates"),
          (64, 512, 160, "LSTM, input gradient"), (1024, 800, 64, "CNN conv2, 1024 im2col rows"),
          (12544, 25, 32, "CNN conv1, 16 images")]


def median_us(fn, target_s=0.2):
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    inner = max(1, int(0.01 / once))
    samples = []
    for _ in range(max(5, int(target_s / (once * inner)))):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples) * 1e6


def main():
    import threadpoolctl
    blas.ready()
    _, why = blas.status()
    numpy_info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
                  and "numpy" in i["filepath"]]
    print("numpy's BLAS:", ", ".join("%s %s kernels" % (i["internal_api"], i["architecture"])
                                     for i in numpy_info) or "unknown")
    print("minitf's BLAS:", why)
    blas.set_threads(1)
    rng = np.random.default_rng(0)
    print("%-50s %12s %12s %9s" % ("product M x K by K x N (one thread, median)", "numpy",
                                    "minitf", "speed-up"))
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        blas.set_threads(1)
        for m, k, n, what in SHAPES:
            a = rng.standard_normal((m, k)).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            out = np.empty((m, n), np.float32)
            times = {"numpy": [], "minitf": []}
            for _ in range(3):
                times["numpy"].append(median_us(lambda: np.matmul(a, b, out=out)))
                times["minitf"].append(median_us(lambda: blas.gemm(a, b, out)))
            t_np, t_mine = (statistics.median(times[e]) for e in ("numpy", "minitf"))
            label = "%dx%d by %dx%d (%s)" % (m, k, k, n, what)
            print("%-50s %9.1f us %9.1f us %8.2fx" % (label, t_np, t_mine, t_np / t_mine))


if __name__ == "__main__":
    main()
