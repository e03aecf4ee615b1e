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

A :class:`Pool` hands each piece of work to a thread it knows is idle (or
starts one, up to its width) instead of leaving it in a shared queue for
whichever thread wakes first: with a shared queue (``concurrent.futures``),
two products submitted together often run one after the other on the same
thread, because the thread that took the first is awake again before the
idle one has been scheduled. Only when every thread is busy does work wait,
in submission order.
"""

import collections
import os
import queue
import threading

from minitf.kernels import threads

BLOCKING_THREADS = 64


def inter_op_width(config):
    """The inter-op pool's width for ``config`` (0 means one thread per core)."""
    return config.inter_op_parallelism_threads or max(2, os.cpu_count() or 2)


class Pool:
    """Up to ``width`` threads, each with a queue of its own (see above)."""

    def __init__(self, width, name, initializer=None):
        self.width = width
        self.name = name
        self._initializer = initializer
        self._lock = threading.Lock()
        self._idle = []                         # inboxes of threads waiting for work
        self._threads = []
        self._backlog = collections.deque()     # work waiting for a thread
        self._closed = False

    def submit(self, fn, *args):
        """Run ``fn(*args)`` on a pool thread (its result is dropped: work
        reports back on its own, e.g. through a queue)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the %s pool was shut down" % self.name)
            if self._idle:
                inbox = self._idle.pop()
            elif len(self._threads) < self.width:
                inbox = queue.SimpleQueue()
                thread = threading.Thread(target=self._serve, args=(inbox,), daemon=True,
                                          name="%s-%d" % (self.name, len(self._threads)))
                self._threads.append(thread)
                thread.start()
            else:
                self._backlog.append((fn, args))
                return
        inbox.put((fn, args))

    def call(self, fn):
        """``fn()`` run on a pool thread; waits for it and returns its result
        (or raises its error)."""
        box = queue.SimpleQueue()

        def run():
            try:
                box.put((fn(), None))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                box.put((None, e))
        self.submit(run)
        result, error = box.get()
        if error is not None:
            raise error
        return result

    def _serve(self, inbox):
        if self._initializer is not None:
            self._initializer()
        item = inbox.get()
        while item is not None:
            fn, args = item
            try:
                fn(*args)
            except BaseException:  # noqa: BLE001 - work reports its own errors
                pass
            with self._lock:
                if self._backlog:
                    item = self._backlog.popleft()
                    continue
                if self._closed:
                    return
                self._idle.append(inbox)
            item = inbox.get()

    def shutdown(self):
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._backlog.clear()
        for inbox in idle:
            inbox.put(None)


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
                        Pool(self.width, self.name + "-inter-op", self._start_thread),
                        Pool(BLOCKING_THREADS, self.name + "-blocking", self._start_thread))
        return self._pools

    def shutdown(self):
        with self._lock:
            pools, self._pools = self._pools, None
        for pool in pools or ():
            pool.shutdown()


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
