"""The executor's threads: an inter-op pool and a pool for blocking ops.

As in TF, the ops of a step that are ready to run are handed to an *inter-op*
thread pool, ``ConfigProto.inter_op_parallelism_threads`` wide (0: one thread
per core, at least 2). Sessions share one pool per width unless
``use_per_session_threads`` asks for a pool of their own, as in TF. Ops that
may block (a dequeue, a receive from another task) run on a second pool, so a
blocked op never holds a thread that a ready op needs; it grows to 64
threads.

Every thread of these pools runs its kernels with the session's
``intra_op_parallelism_threads`` budget (see ``minitf/kernels/threads.py``).
The pools start on first use: a step that runs inline never needs them.
"""

import concurrent.futures
import os
import threading

from minitf.kernels import threads

BLOCKING_THREADS = 64


def inter_op_width(config):
    """The inter-op pool's width for ``config`` (0 means one thread per core)."""
    return config.inter_op_parallelism_threads or max(2, os.cpu_count() or 2)


class ThreadPools:
    """An inter-op pool and a blocking-op pool, started on first :meth:`get`."""

    def __init__(self, width, kernel_threads=0, name="minitf"):
        self.width = width
        self.kernel_threads = kernel_threads
        self.name = name
        self.pid = os.getpid()   # threads do not survive fork(): a child starts its own
        self._pools = None
        self._lock = threading.Lock()

    def _start_thread(self):
        if self.kernel_threads:
            threads.set_kernel_threads(self.kernel_threads)

    def get(self):
        """``(inter-op pool, blocking pool)``."""
        if self._pools is None:
            with self._lock:
                if self._pools is None:
                    self._pools = (
                        concurrent.futures.ThreadPoolExecutor(
                            self.width, self.name + "-inter-op",
                            initializer=self._start_thread),
                        concurrent.futures.ThreadPoolExecutor(
                            BLOCKING_THREADS, self.name + "-blocking",
                            initializer=self._start_thread))
        return self._pools

    def shutdown(self):
        with self._lock:
            pools, self._pools = self._pools, None
        for pool in pools or ():
            pool.shutdown(wait=False, cancel_futures=True)


_shared = {}
_shared_lock = threading.Lock()


def pools_for(config, name="minitf"):
    """The pools a session with ``config`` runs on: its own with
    ``use_per_session_threads``, else the process's pools of that width and
    kernel budget. Returns ``(pools, owned)``: ``owned`` pools are the
    session's to shut down."""
    width, budget = inter_op_width(config), config.intra_op_parallelism_threads
    if config.use_per_session_threads:
        return ThreadPools(width, budget, name), True
    with _shared_lock:
        pools = _shared.get((width, budget))
        if pools is None or pools.pid != os.getpid():
            pools = _shared[(width, budget)] = ThreadPools(width, budget, name)
        return pools, False
