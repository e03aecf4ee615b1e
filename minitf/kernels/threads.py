"""How many threads one kernel may use: Numba's parallel loops, kernels that
split their own arrays (:mod:`minitf.kernels.split`) and BLAS.

Four things decide it:

* ``intra_op_parallelism_threads`` (TF's name): how many threads *one* kernel
  may use. The executor gives every thread that runs kernels that budget
  (:func:`set_kernel_threads`); Numba's ``set_num_threads`` is per calling
  thread, so a parallel loop launched from that thread splits over at most that
  many workers, a fused chain cuts its arrays into no more parts
  (:func:`kernel_parts`), and a large matrix product asks BLAS for no more. With 0 (the
  default) a kernel may use every core. Setting it to 1 while ops of several
  devices run at once keeps concurrent kernels from oversubscribing the cores.
* small products: OpenBLAS starts a thread per core for every product, even
  a small one; waking and synchronising those threads costs more than the
  arithmetic of a small one. So a product of fewer than :data:`SMALL_PRODUCT`
  multiply-adds (1M: a 128x128 by 128x64 product, about 10 us on one core)
  runs on one thread (:func:`use_threads_for`); from there on two threads
  pay (measured on 2 cores, one process: an MLP's 256x64 by 64x128 product,
  2M, 25 us on one thread and 16 us on two; tests/benchmarks' LSTM step 16%
  faster, its MLP step 4%).
* products side by side: the executor runs two independent products at once
  (two chains of matmuls), each from its own thread. OpenBLAS has one thread
  count for the whole library, and two products that each start a thread per
  core put four threads on two cores, which wait for each other at every
  block of the product: measured here, two chains of four 400x400 products
  took 12-28 ms that way against 6-10 ms with one thread each. So while
  another product is running (:func:`product`, which counts them), or while
  the executor runs expensive kernels side by side (:func:`begin_beside`:
  it says so before the second starts, so that the first does not start
  alone on every core), a product runs on one thread.
* processes that share the cores: a server of a cluster on one machine
  (``tf.train.Server`` calls :func:`share_cores`) runs beside the other
  tasks' processes, and a product whose second thread waits for a core that
  another process holds stalls: measured on 2 cores with other processes
  running, OpenBLAS's second thread made an LSTM step's 64x160 by 160x512
  product (5M) 100x slower (9 ms instead of 0.09 ms). There products below
  :data:`SHARED_SMALL_PRODUCT` (64M multiply-adds, about a millisecond on
  one core) run on one thread.

The BLAS switch goes through the library's own ``set_num_threads``, found with
threadpoolctl once (numpy's OpenBLAS) or registered by the library's loader
(minitf's own, :mod:`minitf.kernels.cpu.blas`, through :func:`add_blas`); it
costs about a microsecond. Without threadpoolctl or an
OpenBLAS, nothing changes. Nothing here imports Numba until a budget is set.
"""

import threading

from minitf.kernels import split

#: Multiply-adds below which a product runs on one thread.
SMALL_PRODUCT = 1 << 20
#: The same in a process that shares the cores with a cluster's other tasks.
SHARED_SMALL_PRODUCT = 1 << 26

_controllers = None
_lock = threading.Lock()
_current = None
_local = threading.local()   # .budget: this thread's kernel thread budget (0: none)
_shared = False              # see share_cores
_running = 0                 # products running now (see product)
_beside = 0                  # kernels the executor runs side by side (begin_beside)
_running_lock = threading.Lock()


def _blas():
    global _controllers
    if _controllers is None:
        with _lock:
            if _controllers is None:
                try:
                    from threadpoolctl import ThreadpoolController  # lazy: its start-up
                    found = ThreadpoolController().select(user_api="blas").lib_controllers
                except Exception:  # noqa: BLE001 - no threadpoolctl, or no BLAS found
                    found = []
                _controllers = [(c, c.num_threads) for c in found]
    return _controllers


def add_blas(controller, default):
    """Also switch this BLAS from now on: ``controller.set_num_threads(n)``, as
    threadpoolctl's controllers have it; ``default`` threads when unlimited."""
    global _current
    controllers = _blas()
    with _lock:
        controllers.append((controller, default))
        _current = None


def numpy_blas_cores():
    """The kernels (OpenBLAS core names, lower case) of the BLAS libraries
    threadpoolctl found, numpy's among them; empty if it found none."""
    return {str(getattr(c, "architecture", "")).lower() for c, _ in _blas()} - {""}


def find_numpy_blas():
    """Find numpy's BLAS now (before another OpenBLAS loads, so that
    threadpoolctl does not count that one too)."""
    _blas()


def set_kernel_threads(n):
    """Kernels run from the calling thread use at most ``n`` threads (0: all)."""
    n = int(n or 0)
    if getattr(_local, "budget", 0) == n:
        return
    import numba   # lazy import: Numba's start-up cost, only when a budget is set
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS) if n > 0
                          else numba.config.NUMBA_NUM_THREADS)
    _local.budget = n


def kernel_threads():
    """The calling thread's budget (0: no limit)."""
    return getattr(_local, "budget", 0)


def kernel_parts():
    """How many threads a kernel that splits its own range
    (:mod:`minitf.kernels.split`) may use now: the calling thread's budget
    (every core when it has none), and one while the executor runs expensive
    kernels side by side or products run, which have the cores already."""
    if _beside or _running:
        return 1
    budget = kernel_threads()
    cores = split.cores()
    return min(budget, cores) if budget else cores


def share_cores():
    """This process shares the machine's cores with other busy processes (the
    other tasks of a cluster): products below SHARED_SMALL_PRODUCT keep to
    one thread from now on."""
    global _shared, _current
    with _lock:
        _shared = True
        _current = None


def use_threads_for(multiply_adds, beside=0):
    """Set BLAS to one thread for a small product, or one that runs while
    ``beside`` others do, else to its default capped by the calling thread's
    budget. Returns whether it is one thread."""
    global _current
    budget = kernel_threads()
    small = beside > 0 or multiply_adds < (SHARED_SMALL_PRODUCT if _shared
                                           else SMALL_PRODUCT)
    want = (small, budget)
    if want != _current:
        for controller, default in _blas():
            controller.set_num_threads(1 if small else (min(default, budget) if budget
                                                        else default))
        _current = want
    return small or budget == 1


class product:
    """``with product(multiply_adds) as one_thread: <one BLAS call>``: sets the
    BLAS threads for it (:func:`use_threads_for`; ``one_thread``: it runs on
    one), counting it among the products running now, so that one started
    beside it runs on one thread.

    A product that started alone keeps its threads when another starts
    beside it (a running call cannot be changed); from its next call on
    both run on one thread each, and when one chain ends, the other's next
    product has every thread again."""

    __slots__ = ("multiply_adds",)

    def __init__(self, multiply_adds):
        self.multiply_adds = multiply_adds

    def __enter__(self):
        global _running
        with _running_lock:
            beside = _running + _beside
            _running += 1
            return use_threads_for(self.multiply_adds, beside)

    def __exit__(self, *exc):
        global _running
        with _running_lock:
            _running -= 1


def begin_beside():
    """The executor hands an expensive kernel to another thread, to run beside
    the ones it runs itself: until :func:`end_beside`, every product runs on
    one thread."""
    global _beside
    with _running_lock:
        _beside += 1


def end_beside():
    global _beside
    with _running_lock:
        _beside -= 1
