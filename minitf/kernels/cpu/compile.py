"""Lazy, cached compilation of the CPU kernels.

Numba compiles a function the first time it is asked to, which takes from a
tenth of a second (a ufunc) to a few seconds (a parallel loop nest). minitf
therefore compiles nothing at import time: the kernel modules only *define*
plain Python functions, and this module turns one of them into machine code the
first time some op needs it for some dtype::

    kernel = jit_kernel(reduce_kernel, "void(float32[:, :, ::1], ...)")

Three rules keep this cheap:

* **Explicit signatures.** Each call compiles exactly the one dtype that was
  asked for, never a guess.
* **``cache=True``.** The machine code is written next to the module
  (``__pycache__/*.nbi`` index + ``*.nbc`` code), so a second process loads it
  in milliseconds instead of compiling again. The cache is keyed by the Python
  function's file, name and line, which is why kernels are module-level
  functions: a closure or a function built at run time would miss it.
* **One Python function per cache entry.** Numba's cache key is the function
  plus the signature, *not* the options. Compiling the same function once with
  ``parallel=True`` and once without would make both share one cache entry. So
  each njit kernel is compiled once, with ``parallel=True``, and takes a
  ``parallel`` argument that picks its ``prange`` loop or its plain ``range``
  loop at run time (a ``prange`` launch costs ~100 us on the build machines, see
  :func:`_parallel_min_size`).

Parallel kernels use Numba's threading layer. We pick the ``workqueue`` layer
(unless ``NUMBA_THREADING_LAYER`` says otherwise) because it survives
``fork()``, which the multiprocess lessons rely on; GNU OpenMP does not.
``workqueue`` is not thread-safe, and the executor runs devices on threads, so
every parallel launch holds :data:`PARALLEL_LOCK`. Serial kernels are compiled
with ``nogil=True`` and run concurrently. The fused elementwise kernels
(``minitf/runtime/fusion.py``) are serial only: they split their arrays over
threads of minitf's own (:mod:`minitf.kernels.split`, which says why).
"""

import dis
import os
import tempfile
import threading
import types

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"


def _default_cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "minitf", "numba")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = os.path.join(tempfile.gettempdir(), "minitf-numba-%s" % (
        os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")))
    os.makedirs(path, exist_ok=True)
    return path


def cache_root():
    """numba's cache directory for minitf: ``$NUMBA_CACHE_DIR`` or a per-user one."""
    if not numba.config.CACHE_DIR:
        numba.config.CACHE_DIR = _default_cache_root()
    return numba.config.CACHE_DIR


cache_root()   # only a directory check: nothing is compiled at import

def _parallel_min_size(environ):
    """The size from which kernels run their threaded loop: ``$MINITF_PARALLEL_MIN_SIZE``
    or 8M elements.

    Why so large. The ``workqueue`` layer's threads sleep between launches,
    so every launch wakes them. On the 2-core virtual machines a course runs
    on (this project's build machines; Colab and Binder are alike) waking a
    thread on an idle virtual core is slow, and a launch costs about 100 us.
    Measured there (``python tests/benchmarks/bench_kernels.py --threaded``,
    float32, milliseconds), the threaded loop is slower than the serial one up
    to about 8M elements:

    ============  =============  =============  =============  =============
    elements      Relu           Mul            Tanh           Sum
    ============  =============  =============  =============  =============
    262,144       0.124 / 0.024  0.128 / 0.036  0.140 / 0.046  0.106 / 0.018
    1,048,576     0.224 / 0.079  0.254 / 0.130  0.313 / 0.172  0.181 / 0.053
    4,194,304     1.108 / 0.666  1.767 / 1.622  1.211 / 1.043  0.429 / 0.253
    10,000,000    3.451 / 3.509  4.755 / 4.306  4.468 / 4.099  0.750 / 0.984
    ============  =============  =============  =============  =============

    (threaded / serial). Large memory-bound kernels gain little from a second
    core anyway: writing a fresh 40 MB output is mostly page faults. On a
    machine with more, idle, physical cores a smaller value pays off; set the
    variable before importing minitf.
    """
    text = environ.get("MINITF_PARALLEL_MIN_SIZE")
    if not text:
        return 1 << 23
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 1:
        raise ValueError("MINITF_PARALLEL_MIN_SIZE must be a positive whole number of "
                         "elements, got %r" % text)
    return value


#: Inputs with at least this many elements use the multi-threaded kernel
#: (see :func:`_parallel_min_size`).
PARALLEL_MIN_SIZE = _parallel_min_size(os.environ)

#: Held for every parallel launch (the workqueue layer is not thread-safe).
PARALLEL_LOCK = threading.Lock()

_compiled = {}
_compiling = threading.Lock()


def jit_kernel(py_func, make_signature, dtypes, **options):
    """The njit dispatcher of ``py_func`` for one signature, compiled on first use.

    The signature is ``make_signature(*dtypes)``; it is only built on a miss,
    so a warm call costs one dict lookup. ``options`` are extra ``numba.njit``
    options (e.g. ``fastmath``). Every kernel gets ``cache=True, nogil=True,
    parallel=True``.
    """
    key = (py_func, dtypes)
    kernel = _compiled.get(key)
    if kernel is None:
        with _compiling:
            kernel = _compiled.get(key)
            if kernel is None:
                kernel = numba.njit(make_signature(*dtypes), cache=True, nogil=True,
                                    parallel=True, **options)(py_func)
                _compiled[key] = kernel
    return kernel


def _helpers(fn, seen):
    """``fn`` and the plain functions of its own module that it calls, recursively."""
    if fn in seen:
        return seen
    seen.append(fn)
    for ins in dis.get_instructions(fn):
        if ins.opname == "LOAD_GLOBAL":
            other = fn.__globals__.get(ins.argval)
            if isinstance(other, types.FunctionType) and other.__module__ == fn.__module__:
                _helpers(other, seen)
    return seen


def _with_jitted_helpers(py_func):
    """``py_func``, reading its helper functions as njit functions.

    A scalar function may call helpers of its module (``_polygamma`` calls
    ``_digamma``), but compiled code can only call compiled code. So the
    function and its helpers get a copy of their module's globals in which
    each helper name is the helper's njit version (compiled with the caller,
    cached on disk like any kernel)."""
    used = _helpers(py_func, [])
    if len(used) == 1:
        return py_func
    names = dict(py_func.__globals__)
    for helper in used[1:]:
        copy = types.FunctionType(helper.__code__, names, helper.__name__,
                                  helper.__defaults__)
        names[helper.__name__] = numba.njit(cache=True, nogil=True)(copy)
    return types.FunctionType(py_func.__code__, names, py_func.__name__,
                              py_func.__defaults__)


def ufunc_kernel(py_func, signature, parallel):
    """A numpy ufunc built from the scalar function ``py_func``, on first use.

    ``numba.vectorize`` writes the loop over elements for us (and numpy does the
    broadcasting). ``parallel=True`` splits that loop over threads; it only pays
    on large, contiguous inputs. Both variants share the cached scalar code.
    """
    key = (py_func, signature, parallel)
    kernel = _compiled.get(key)
    if kernel is None:
        with _compiling:
            kernel = _compiled.get(key)
            if kernel is None:
                built = numba.vectorize([signature], nopython=True, cache=True,
                                        target="parallel" if parallel else "cpu")(
                                            _with_jitted_helpers(py_func))
                # The serial target returns a DUFunc wrapper; its ``.ufunc`` is the
                # plain numpy ufunc, which is ~0.5 us cheaper to call.
                kernel = getattr(built, "ufunc", built)
                _compiled[key] = kernel
    return kernel


def compiled_count():
    """How many (function, signature) kernels this process has built so far."""
    return len(_compiled)
