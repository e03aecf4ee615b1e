"""Run one serial kernel over parts of an array on several threads at once.

A kernel that streams through a large array (a fused elementwise chain over
10M floats) is limited by memory bandwidth, and one core cannot draw all of
it: two cores reading halves of the arrays finish in little more than half
the time. Numba could split the loop itself (``prange`` under its threading
layer), but measured on the 2-core build machines (tests/benchmarks/
bench_fusion.py's chain, 10M float32) its ``workqueue`` layer was no faster
than one thread (3.6-4.7 ms against 3.5-4.2: its threads sleep between
launches and sometimes share one core), while the same serial kernel run on
two halves from two Python threads took 2.6-3.0 ms, under numpy's threaded
``dot`` over the same bytes (2.9-3.6 ms). The kernel is compiled with
``nogil=True``, so the threads really run side by side.

So such a kernel is compiled serial only, and :func:`run` calls it once per
part: part 0 in the calling thread, the others on helper threads kept for the
process (started on first use, one fewer than the cores; a forked child
starts its own). How many parts a kernel may use is
:func:`minitf.kernels.threads.kernel_parts`: the calling thread's
``intra_op_parallelism_threads`` budget, and one while the executor runs
expensive kernels side by side.
"""

import os
import queue
import threading

_jobs = None            # SimpleQueue of (fn, args, index, results, done); None: no helpers yet
_helpers = 0
_lock = threading.Lock()


def cores():
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _serve(jobs):
    while True:
        fn, args, index, results, done = jobs.get()
        try:
            results[index] = fn(*args)
            done.put(None)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller
            done.put(e)


def _start_helpers(count):
    global _jobs, _helpers
    with _lock:
        if _jobs is None:
            _jobs = queue.SimpleQueue()
        while _helpers < count:
            threading.Thread(target=_serve, args=(_jobs,), daemon=True,
                             name="minitf-split-%d" % _helpers).start()
            _helpers += 1
    return _jobs


def _forget_helpers():
    # A forked child has none of the parent's threads: it starts its own.
    global _jobs, _helpers, _lock
    _jobs, _helpers, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def bounds(n, parts):
    """Where each of ``parts`` contiguous parts of ``n`` elements starts and
    ends: ``[(0, n // parts), ...]``, sizes within one of each other."""
    return [(k * n // parts, (k + 1) * n // parts) for k in range(parts)]


def run(fn, arg_lists):
    """``[fn(*args) for args in arg_lists]``, the first in this thread and the
    rest on helper threads, all at once; returns the results in order and
    raises the first part's error, if any, once every part has finished.

    There is one helper thread fewer than the cores: parts beyond that, or
    parts of kernels run at once from other threads, wait in the helpers'
    queue. So ``fn`` must not call :func:`run` itself (its part could wait
    behind itself)."""
    if len(arg_lists) == 1:
        return [fn(*arg_lists[0])]
    jobs = _start_helpers(min(len(arg_lists) - 1, max(cores() - 1, 1)))
    results = [None] * len(arg_lists)
    done = queue.SimpleQueue()
    for k in range(1, len(arg_lists)):
        jobs.put((fn, arg_lists[k], k, results, done))
    error = None
    try:
        results[0] = fn(*arg_lists[0])
    except BaseException as e:  # noqa: BLE001 - the other parts still write into results
        error = e
    for _ in range(1, len(arg_lists)):
        e = done.get()
        if error is None and e is not None:
            error = e
    if error is not None:
        raise error
    return results
