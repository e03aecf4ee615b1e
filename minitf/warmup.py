"""Compile every CPU kernel ahead of time: ``python -m minitf.warmup``.

Numba compiles a kernel the first time an op needs it for a dtype (0.1 s to a
few seconds each) and keeps the machine code in its disk cache
(:func:`minitf.kernels.cpu.compile.cache_root`: ``$NUMBA_CACHE_DIR``, else
``~/.cache/minitf/numba``). Running this once - Binder's ``postBuild`` does -
fills that cache for every op of the op table whose kernel computes with the
CPU backend, for each common dtype, on small and large inputs (the serial and
the parallel variants), so a lesson's first ``sess.run`` only loads code.

Options: ``--quiet`` (no progress bar), ``--list`` (print the tasks and exit).
"""

import argparse
import sys
import time

import numpy as np

from minitf.kernels import examples, registry

#: Warm-up compiles these dtypes (a kernel for another dtype compiles on first use).
DTYPES = ("bool", "int32", "int64", "float32", "float64")


def tasks():
    """(label, callable) for every example of every CPU kernel in the op table
    (see ``minitf/kernels/examples.py``), for the dtypes in :data:`DTYPES`, and
    the loop a RandomShuffleQueue picks its elements with (its queue op's
    output is a queue, not a tensor, so the row has no examples)."""
    cpu = registry.backend("cpu")
    out = []
    for row in examples.rows_with_examples("CPU"):
        for case in examples.cases(row, "CPU", only=DTYPES):
            out.append((case.label, lambda case=case: examples.run(case, cpu)))
    out.append(("RandomShuffleQueueV2 picker", lambda: cpu.shuffle_queue_picker(1, 2).pick(
        np.arange(8, dtype=np.int64), 8, 8)))
    return out


def warm_up(quiet=False, stream=None):
    """Compile (or load from the cache) every task; return the seconds taken."""
    stream = stream or sys.stderr
    cache_root = registry.backend("cpu").compile.cache_root
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
