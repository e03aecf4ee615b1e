"""Benchmark: minitf CPU kernels against the equivalent numpy expression.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_kernels.py

Prints the median wall time of each kernel on large inputs (10M float32
elements, float64 too for reduce_max/min, a 1024x1024 matmul) next to numpy's,
and their ratio (minitf / numpy: below 1 means minitf is faster). Kernels are
compiled (or loaded from the cache) before timing.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from minitf.kernels import cpu  # noqa: E402

N = 10_000_000
REPEATS = 15


def median_ms(fn, repeats=REPEATS):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    ai = rng.integers(-9, 9, (256, 256)).astype(np.int32)
    return [
        ("add 10M f32", lambda: cpu.binary("AddV2", x, y), lambda: np.add(x, y)),
        ("mul 10M f32", lambda: cpu.binary("Mul", x, y), lambda: np.multiply(x, y)),
        ("relu 10M f32", lambda: cpu.unary("Relu", x), lambda: np.maximum(x, np.float32(0))),
        ("reduce_sum 10M f32", lambda: cpu.reduce("Sum", x, (0,), False), lambda: np.sum(x)),
        ("sum rows 10Mx1 f32", lambda: cpu.reduce("Sum", x.reshape(-1, 100), (1,), False),
         lambda: np.sum(x.reshape(-1, 100), axis=1)),
        ("matmul 1024^2 f32", lambda: cpu.matmul(a, b), lambda: np.matmul(a, b)),
        ("matmul 256^2 i32", lambda: cpu.matmul(ai, ai), lambda: np.matmul(ai, ai)),
    ] + extreme_cases(x)


def extreme_cases(x32):
    """reduce_max/reduce_min, float32 and float64: all 10M elements, and axis 0 / 1
    of a (10000, 1000) matrix (axis 0: rows into B=1000 lanes; axis 1: runs)."""
    out = []
    for x in (x32, x32.astype(np.float64)):
        t = "f32" if x.dtype == np.float32 else "f64"
        m = x.reshape(10000, 1000)
        for op, fn in (("Max", np.max), ("Min", np.min)):
            name = "reduce_%s" % op.lower()
            out += [
                ("%s 10M %s" % (name, t), lambda op=op, x=x: cpu.reduce(op, x, (0,), False),
                 lambda fn=fn, x=x: fn(x)),
                ("%s ax0 %s" % (name, t), lambda op=op, m=m: cpu.reduce(op, m, (0,), False),
                 lambda fn=fn, m=m: fn(m, axis=0)),
                ("%s ax1 %s" % (name, t), lambda op=op, m=m: cpu.reduce(op, m, (1,), False),
                 lambda fn=fn, m=m: fn(m, axis=1)),
            ]
    return out


def main():
    print("numba threads: %s   (PARALLEL_MIN_SIZE = %d)" % (
        __import__("numba").get_num_threads(), cpu.PARALLEL_MIN_SIZE))
    print("%-22s %12s %12s %8s" % ("kernel", "minitf ms", "numpy ms", "ratio"))
    for name, mine, theirs in cases():
        m, t = median_ms(mine), median_ms(theirs)
        print("%-22s %12.2f %12.2f %8.2f" % (name, m, t, m / t))


if __name__ == "__main__":
    main()
