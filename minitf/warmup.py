"""Compile every CPU kernel ahead of time: ``python -m minitf.warmup``.

Numba compiles a kernel the first time an op needs it for a dtype (0.1 s to a
few seconds each) and keeps the machine code in its disk cache
(:func:`minitf.kernels.cpu.compile.cache_root`: ``$NUMBA_CACHE_DIR``, else
``~/.cache/minitf/numba``). Running this once - Binder's ``postBuild`` does -
fills that cache for every (op, dtype) and both the serial and the parallel
variants, so a lesson's first ``sess.run`` only loads code.

Options: ``--quiet`` (no progress bar), ``--list`` (print the tasks and exit).
"""

import argparse
import sys
import time

import numpy as np

DTYPES = ("bool", "int32", "int64", "float32", "float64")
SMALL = 3


def _arrays(dtype, big):
    from minitf.kernels.cpu import PARALLEL_MIN_SIZE
    n = PARALLEL_MIN_SIZE + 1 if big else SMALL
    if dtype == "bool":
        return np.arange(n) % 2 == 0
    x = (np.arange(n) % 7 + 1).astype(dtype)
    return x


def tasks():
    """(label, callable) for every kernel the CPU backend can compile."""
    from minitf.kernels import cpu
    from minitf.kernels.cpu import elementwise
    out = []

    def add(label, fn):
        out.append((label, fn))

    for dtype in DTYPES:
        dt = np.dtype(dtype)
        for op in elementwise.UNARY_FUNCTIONS:
            if cpu.supports(op, dt):
                for big in (False, True):
                    add("%s %s%s" % (op, dtype, " parallel" if big else ""),
                        lambda op=op, dtype=dtype, big=big: cpu.unary(op, _arrays(dtype, big)))
        for op in elementwise.BINARY_FUNCTIONS:
            if cpu.supports(op, dt):
                for big in (False, True):
                    add("%s %s%s" % (op, dtype, " parallel" if big else ""),
                        lambda op=op, dtype=dtype, big=big: cpu.binary(
                            op, _arrays(dtype, big), _arrays(dtype, big)))
        for op in ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any"):
            if cpu.supports(op, dt):
                add("%s %s" % (op, dtype),
                    lambda op=op, dtype=dtype: cpu.reduce(op, _arrays(dtype, True), (0,),
                                                          False))
        if cpu.supports("ArgMax", dt):
            add("ArgMax/ArgMin %s" % dtype, lambda dtype=dtype: (
                cpu.argmax(_arrays(dtype, False), 0, np.int64),
                cpu.argmin(_arrays(dtype, True), 0, np.int64)))
        if cpu.supports("MatMul", dt) and dt.kind in "iu":
            add("MatMul %s" % dtype, lambda dtype=dtype: cpu.matmul(
                _arrays(dtype, False).reshape(1, SMALL), _arrays(dtype, False).reshape(SMALL, 1)))
        if cpu.supports("Select", dt):
            add("Select %s" % dtype, lambda dtype=dtype: cpu.select(
                _arrays("bool", False), _arrays(dtype, False), _arrays(dtype, False)))
        if cpu.supports("Softmax", dt):
            def nn(dtype=dtype):
                x = _arrays(dtype, False).reshape(1, SMALL)
                cpu.softmax(x)
                cpu.log_softmax(x)
                cpu.softmax_xent(x, x)
                cpu.sparse_softmax_xent(x, np.zeros(1, np.int64))
                cpu.sparse_softmax_xent(x, np.zeros(1, np.int32))
            add("Softmax/xent %s" % dtype, nn)
    return out


def warm_up(quiet=False, stream=None):
    """Compile (or load from the cache) every task; return the seconds taken."""
    stream = stream or sys.stderr
    from minitf.kernels.cpu.compile import cache_root
    todo = tasks()
    start = time.perf_counter()
    width = 30
    if not quiet:
        print("minitf warm-up: compiling %d kernels into %s" % (len(todo), cache_root()),
              file=stream)
    for i, (label, fn) in enumerate(todo, 1):
        with np.errstate(all="ignore"):
            fn()
        if not quiet:
            done = width * i // len(todo)
            stream.write("\r[%s%s] %3d/%d %-32s" % ("#" * done, "." * (width - done), i,
                                                     len(todo), label[:32]))
            stream.flush()
    took = time.perf_counter() - start
    if not quiet:
        stream.write("\nminitf warm-up: done in %.1f s\n" % took)
    return took


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minitf.warmup", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--list", action="store_true", help="print the kernels and exit")
    args = parser.parse_args(argv)
    if args.list:
        for label, _ in tasks():
            print(label)
        return 0
    warm_up(quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
