"""How many threads BLAS may use for one matrix product.

numpy's OpenBLAS starts a thread per core for every product, even a small
one. For the matrices of a small network (a 256x64 by 64x128 product takes
tens of microseconds on one core) waking and synchronising those threads
costs far more than the arithmetic - and while minitf's executor runs ops
of two devices at once, the BLAS threads compete with its own. So a small
product runs on one thread and a large one on all of them.

The switch goes through the BLAS library's own ``set_num_threads``, found
with threadpoolctl once; it costs about a microsecond. Without threadpoolctl
or an OpenBLAS, nothing changes.
"""

import threading

SMALL_PRODUCT = 1 << 22   # multiply-adds below which one thread is faster

_controllers = None
_lock = threading.Lock()
_current = None


def _blas():
    global _controllers
    if _controllers is None:
        with _lock:
            if _controllers is None:
                try:
                    from threadpoolctl import ThreadpoolController
                    found = ThreadpoolController().select(user_api="blas").lib_controllers
                except Exception:  # noqa: BLE001 - no threadpoolctl, or no BLAS found
                    found = []
                _controllers = [(c, c.num_threads) for c in found]
    return _controllers


def use_threads_for(multiply_adds):
    """Set BLAS to one thread for a small product, its default for a big one."""
    global _current
    small = multiply_adds < SMALL_PRODUCT
    if small is _current:
        return
    for controller, default in _blas():
        controller.set_num_threads(1 if small else default)
    _current = small
