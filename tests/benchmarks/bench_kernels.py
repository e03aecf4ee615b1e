"""Benchmark: minitf CPU kernels against the equivalent numpy expression.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_kernels.py

Prints the median wall time of each kernel on large inputs (10M float32
elements, float64 too for the math functions and reduce_max/min, a 1024x1024
matmul, 10000x1000 softmax) next to numpy's, and their ratio (minitf / numpy:
below 1 means minitf is faster). Kernels are compiled (or loaded from the
cache) before timing, and the two sides are timed alternately, call by call,
so that a burst of load from another process hits both.

``--threaded`` instead times four kernels (Relu, Mul, Tanh, Sum) with their
threaded loop and with their serial loop at sizes from 256K to 10M elements,
the measurement behind ``PARALLEL_MIN_SIZE``'s default
(minitf/kernels/cpu/compile.py).
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from minitf.framework.op_def import lookup  # noqa: E402
from minitf.kernels import cpu  # noqa: E402

N = 10_000_000
REPEATS = 15


def median_ms(mine, theirs, repeats=REPEATS):
    """Median milliseconds of ``mine`` and of ``theirs``, timed in alternation."""
    mine()
    theirs()
    times = ([], [])
    for _ in range(repeats):
        for fn, out in zip((mine, theirs), times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return tuple(1e3 * float(np.median(t)) for t in times)


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    ai = rng.integers(-9, 9, (256, 256)).astype(np.int32)
    return [
        ("add 10M f32", lambda: cpu.binary(lookup("AddV2"), x, y), lambda: np.add(x, y)),
        ("mul 10M f32", lambda: cpu.binary(lookup("Mul"), x, y), lambda: np.multiply(x, y)),
        ("relu 10M f32", lambda: cpu.unary(lookup("Relu"), x), lambda: np.maximum(x, np.float32(0))),
        ("reduce_sum 10M f32", lambda: cpu.reduce("sum", x, (0,), False), lambda: np.sum(x)),
        ("sum rows 10Mx1 f32", lambda: cpu.reduce("sum", x.reshape(-1, 100), (1,), False),
         lambda: np.sum(x.reshape(-1, 100), axis=1)),
        ("matmul 1024^2 f32", lambda: cpu.matmul(a, b), lambda: np.matmul(a, b)),
        ("matmul 256^2 i32", lambda: cpu.matmul(ai, ai), lambda: np.matmul(ai, ai)),
    ] + math_cases(x) + softmax_cases() + extreme_cases(x)


def math_cases(x32):
    """Exp/Log/Tanh/Sigmoid (vector_math) against numpy's SIMD versions, and
    Pow, which stays on the C library's scalar pow (numpy's is SIMD)."""
    out = []
    for x in (x32, x32.astype(np.float64)):
        t = "f32" if x.dtype == np.float32 else "f64"
        pos = np.abs(x) + x.dtype.type(0.1)
        out += [
            ("exp 10M %s" % t, lambda x=x: cpu.unary(lookup("Exp"), x), lambda x=x: np.exp(x)),
            ("log 10M %s" % t, lambda p=pos: cpu.unary(lookup("Log"), p), lambda p=pos: np.log(p)),
            ("tanh 10M %s" % t, lambda x=x: cpu.unary(lookup("Tanh"), x), lambda x=x: np.tanh(x)),
            ("sigmoid 10M %s" % t, lambda x=x: cpu.unary(lookup("Sigmoid"), x),
             lambda x=x: 1 / (1 + np.exp(-x))),
            ("pow 10M %s" % t, lambda p=pos, x=x: cpu.binary(lookup("Pow"), p, x),
             lambda p=pos, x=x: np.power(p, x)),
        ]
    return out


def softmax_cases():
    """Softmax and sparse cross-entropy over (10000, 1000) logits, against the
    numpy formula (max, exp, sum, divide as separate array passes)."""
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((10000, 1000)).astype(np.float32)
    labels = rng.integers(0, 1000, 10000)

    def np_softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def np_sparse_xent(x, lab):
        z = x - x.max(axis=1, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        backprop = np.exp(log_p)
        backprop[np.arange(len(lab)), lab] -= 1
        return -log_p[np.arange(len(lab)), lab], backprop

    return [
        ("softmax 10Kx1K f32", lambda: cpu.softmax(logits), lambda: np_softmax(logits)),
        ("sparse xent 10Kx1K", lambda: cpu.sparse_softmax_xent(logits, labels),
         lambda: np_sparse_xent(logits, labels)),
    ]


def extreme_cases(x32):
    """reduce_max/reduce_min, float32 and float64: all 10M elements, and axis 0 / 1
    of a (10000, 1000) matrix (axis 0: rows into B=1000 lanes; axis 1: runs)."""
    out = []
    for x in (x32, x32.astype(np.float64)):
        t = "f32" if x.dtype == np.float32 else "f64"
        m = x.reshape(10000, 1000)
        for op, fn in (("max", np.max), ("min", np.min)):
            name = "reduce_%s" % op
            out += [
                ("%s 10M %s" % (name, t), lambda op=op, x=x: cpu.reduce(op, x, (0,), False),
                 lambda fn=fn, x=x: fn(x)),
                ("%s ax0 %s" % (name, t), lambda op=op, m=m: cpu.reduce(op, m, (0,), False),
                 lambda fn=fn, m=m: fn(m, axis=0)),
                ("%s ax1 %s" % (name, t), lambda op=op, m=m: cpu.reduce(op, m, (1,), False),
                 lambda fn=fn, m=m: fn(m, axis=1)),
            ]
    return out


def threaded_against_serial():
    """Each kernel's threaded loop against its serial loop, timed alternately
    (``cpu.PARALLEL_MIN_SIZE`` switched between 1 and "never")."""
    relu, mul, tanh = lookup("Relu"), lookup("Mul"), lookup("Tanh")
    rng = np.random.default_rng(0)
    print("threaded / serial, median ms (numba threads: %d)"
          % __import__("numba").get_num_threads())
    print("%-12s %16s %16s %16s %16s" % ("elements", "Relu", "Mul", "Tanh", "Sum"))
    for size in (1 << 18, 1 << 20, 1 << 22, N):
        x = rng.standard_normal(size).astype(np.float32)
        y = rng.standard_normal(size).astype(np.float32)
        cells = []
        for fn in (lambda: cpu.unary(relu, x), lambda: cpu.binary(mul, x, y),
                   lambda: cpu.unary(tanh, x), lambda: cpu.reduce("sum", x, (0,), False)):
            saved = cpu.PARALLEL_MIN_SIZE

            def threaded(fn=fn):
                cpu.PARALLEL_MIN_SIZE = 1
                fn()

            def serial(fn=fn):
                cpu.PARALLEL_MIN_SIZE = 1 << 62
                fn()
            try:
                cells.append("%.3f / %.3f" % median_ms(threaded, serial))
            finally:
                cpu.PARALLEL_MIN_SIZE = saved
        print("%-12s %16s %16s %16s %16s" % ("{:,}".format(size), *cells))


def main():
    if sys.argv[1:] == ["--threaded"]:
        threaded_against_serial()
        return
    print("numba threads: %s   (PARALLEL_MIN_SIZE = %d)" % (
        __import__("numba").get_num_threads(), cpu.PARALLEL_MIN_SIZE))
    print("%-22s %12s %12s %8s" % ("kernel", "minitf ms", "numpy ms", "ratio"))
    for name, mine, theirs in cases():
        m, t = median_ms(mine, theirs)
        print("%-22s %12.2f %12.2f %8.2f" % (name, m, t, m / t))


if __name__ == "__main__":
    main()
