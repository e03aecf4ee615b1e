"""Matrix products on the CPU: OpenBLAS, with the kernels this CPU can run.

A float matmul, and the products inside a convolution (conv.py), are BLAS's
``sgemm``/``dgemm``: ``C[M, N] = op(A)[M, K] @ op(B)[K, N]``, where ``op`` is
nothing or a transpose. BLAS never copies a transposed operand: a row-major
``A`` read with ``CblasTrans`` *is* ``A.T``, so ``x.T`` and ``x`` are the
same bytes with a different flag (:func:`_layout`).

Why minitf loads a BLAS of its own. numpy's wheels ship OpenBLAS built for
many CPUs at once (``DYNAMIC_ARCH``): when the library loads it reads the
CPU's identity and picks the kernels written for it, unless the environment
variable ``OPENBLAS_CORETYPE`` names others. Some machines set it for every
process (one set of kernels, and so one set of rounding, across different
CPUs, for instance); this project's build machines set ``OPENBLAS_CORETYPE=Haswell``
(256-bit AVX2 kernels) on AMD EPYC CPUs that run AVX-512, and there a
product runs at half speed: a 400x400 float32 product takes 1.03 ms on one
core with "Haswell", 0.54 ms with "SkylakeX" (OpenBLAS's AVX-512 kernels),
1.9x. TF's CPU kernels (oneDNN, Eigen) and minitf's Numba kernels are
compiled for what the CPU can do, whatever that variable says.

numpy's copy of OpenBLAS is loaded, with its kernels chosen, long before
minitf is imported. So minitf loads a second OpenBLAS for its own products,
the ``scipy-openblas32`` wheel (the library numpy is built from; its symbols
carry a ``scipy_`` prefix, so it never collides with numpy's), with the
kernels of :func:`coretype`:

* ``MINITF_BLAS_CORETYPE``, if you set it (any name ``OPENBLAS_CORETYPE``
  takes: ``Haswell``, ``SkylakeX``, ``Zen``...);
* else ``SkylakeX`` if the CPU has the AVX-512 instructions those kernels use
  (``avx512f``, ``avx512dq``, ``avx512bw``, ``avx512vl``);
* else the library's own pick from the CPU's identity (``OPENBLAS_CORETYPE``
  is hidden from it while it loads, then put back).

``MINITF_BLAS=numpy`` sends every product to numpy's BLAS instead.

When numpy's OpenBLAS turns out to run the same kernels (no AVX-512 here, or
no ``OPENBLAS_CORETYPE`` to override), a product on one thread goes through
``np.matmul`` after all (:data:`_numpy_same`): numpy calls BLAS from C, where
a ctypes call converts fourteen arguments and reads three pointers in Python,
10-14 us per product on the 2-core build machines, as much as the arithmetic
of an MLP's 256x128 by 128x10 product. A product on several threads still
calls minitf's library, whose threads stop spinning after a few milliseconds
(numpy's copy was loaded before minitf could set that: its threads spin for
0.1 s after every threaded product, and two chains of products side by side
then took 13-15 ms instead of 7), and so does a product added into its output
(BLAS's ``beta = 1``, which numpy has no way to ask for).

It loads on the first product, not at import. Without the wheel (or on a
platform where it cannot load) every product goes to ``np.matmul``: the same
results up to rounding (other kernels add in another order), numpy's speed.
:func:`status` says which, and why.

Threads: the library has a thread pool of its own, whose threads spin for a
few milliseconds after a product (:data:`THREAD_TIMEOUT`), then sleep. :func:`set_threads` sets
how many threads a product may use; :mod:`minitf.kernels.threads` calls it
with numpy's BLAS (one thread for a small product, the kernel's budget for a
large one). A ctypes call releases the GIL, so products started by different
executor threads run at the same time.
"""

import ctypes
import importlib.util
import os
import sys
import threading

import numpy as np

from minitf.kernels import threads

#: The AVX-512 subsets OpenBLAS's SkylakeX kernels use.
SKYLAKEX_FLAGS = ("avx512f", "avx512dq", "avx512bw", "avx512vl")

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112

#: How long the library's threads wait for the next product before they sleep,
#: as OpenBLAS's ``OPENBLAS_THREAD_TIMEOUT`` says it: 2**22 clock ticks, a few
#: milliseconds (the library's own default, 2**28, spins a core for 0.1 s after
#: every threaded product, taking it from the other kernels and processes).
#: A value you set in ``OPENBLAS_THREAD_TIMEOUT`` is used instead.
THREAD_TIMEOUT = "22"

_LOAD_ENVIRONMENT = ("OPENBLAS_CORETYPE", "OPENBLAS_THREAD_TIMEOUT")

_lock = threading.Lock()
_lib = None          # the loaded library, or False when it cannot be
_numpy_same = False  # numpy's OpenBLAS runs the same kernels (see the module docstring)
_why = "not loaded yet (it loads on the first product)"


def cpu_flags():
    """The instruction-set flags of this CPU (Linux's /proc/cpuinfo; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def coretype(flags, environ):
    """The kernels (an ``OPENBLAS_CORETYPE`` name) to load the library with, or
    None to let it pick from the CPU's identity.

    >>> coretype({"avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl"}, {})
    'SkylakeX'
    >>> coretype({"avx2"}, {"OPENBLAS_CORETYPE": "Haswell"}) is None
    True
    >>> coretype({"avx512f"}, {"MINITF_BLAS_CORETYPE": "Zen"})
    'Zen'
    """
    if environ.get("MINITF_BLAS_CORETYPE"):
        return environ["MINITF_BLAS_CORETYPE"]
    if all(f in flags for f in SKYLAKEX_FLAGS):
        return "SkylakeX"
    return None


class _Library:
    """The loaded OpenBLAS: its two products and its thread switch."""

    def __init__(self, dll):
        ptr, i = ctypes.c_void_p, ctypes.c_int
        self.sgemm = dll.scipy_cblas_sgemm
        self.sgemm.argtypes = [i] * 6 + [ctypes.c_float, ptr, i, ptr, i, ctypes.c_float, ptr, i]
        self.sgemm.restype = None
        self.dgemm = dll.scipy_cblas_dgemm
        self.dgemm.argtypes = [i] * 6 + [ctypes.c_double, ptr, i, ptr, i, ctypes.c_double,
                                         ptr, i]
        self.dgemm.restype = None
        self.set_num_threads = dll.scipy_openblas_set_num_threads
        self.set_num_threads.argtypes = [i]
        self.set_num_threads.restype = None
        dll.scipy_openblas_get_num_threads.restype = i
        self.default_threads = int(dll.scipy_openblas_get_num_threads())
        dll.scipy_openblas_get_corename.restype = ctypes.c_char_p
        self.core = dll.scipy_openblas_get_corename().decode()


def _library_path():
    """Where the scipy-openblas32 wheel keeps its library, found without importing
    the package (importing it loads the library, with whatever kernels the
    environment names, before minitf could choose)."""
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.origin:
        return None
    lib_dir = os.path.join(os.path.dirname(spec.origin), "lib")
    try:
        names = sorted(n for n in os.listdir(lib_dir) if n.startswith("libscipy_openblas")
                       and (".so" in n or n.endswith(".dylib")))
    except OSError:
        return None
    return os.path.join(lib_dir, names[0]) if names else None


def _load():
    """Load scipy-openblas32 with :func:`coretype`'s kernels (see the module docstring)."""
    global _lib, _why, _numpy_same
    with _lock:
        if _lib is not None:
            return _lib
        if os.environ.get("MINITF_BLAS") == "numpy":
            _lib, _why = False, "MINITF_BLAS=numpy: products use numpy's BLAS"
            return _lib
        path = _library_path()
        if path is None:
            _lib, _why = False, ("the scipy-openblas32 wheel is not installed: products use "
                                 "numpy's BLAS (pip install scipy-openblas32)")
            return _lib
        threads.find_numpy_blas()
        core = coretype(cpu_flags(), os.environ)
        # Both variables are read once, as the library loads.
        before = {name: os.environ.pop(name, None) for name in _LOAD_ENVIRONMENT}
        try:
            if core is not None:
                os.environ["OPENBLAS_CORETYPE"] = core
            os.environ["OPENBLAS_THREAD_TIMEOUT"] = (before["OPENBLAS_THREAD_TIMEOUT"]
                                                     or THREAD_TIMEOUT)
            try:
                lib = _Library(ctypes.CDLL(path))
            except (OSError, AttributeError) as e:
                _lib, _why = False, "%s could not be loaded (%s): products use numpy's BLAS" % (
                    path, e)
                return _lib
        finally:
            for name, value in before.items():
                os.environ.pop(name, None)
                if value is not None:
                    os.environ[name] = value
        if os.environ.get("MINITF_BLAS_CORETYPE"):
            chosen_by = "MINITF_BLAS_CORETYPE"
        elif core:
            chosen_by = "chosen for this CPU's instructions"
        else:
            chosen_by = "picked by the library"
        _lib = lib
        _why = "minitf's OpenBLAS, %s kernels (%s)" % (lib.core, chosen_by)
        if lib.core.lower() in threads.numpy_blas_cores():
            _numpy_same = True
            _why += ("; numpy's OpenBLAS runs the same kernels, so products on one thread "
                     "go through np.matmul (a cheaper call), except those added into "
                     "their output")
        threads.add_blas(lib, lib.default_threads)
        return _lib


def ready():
    """Load the library now if it is not yet loaded (so that a thread count set
    next reaches it); returns whether it does the products."""
    return bool(_lib if _lib is not None else _load())


def status():
    """``(loaded, why)``: whether minitf's own BLAS does the products, and which kernels."""
    return bool(_lib), _why


def set_threads(n):
    """Products may use ``n`` threads (the library's own pool). The kernels
    switch it through :mod:`minitf.kernels.threads`, which skips a switch to
    the count already set."""
    if _lib:
        _lib.set_num_threads(int(n))


def _layout(x):
    """``(transposed, leading dimension)`` of a 2-D array BLAS can read in place
    (rows contiguous, or columns contiguous: a transposed view), else None."""
    item = x.itemsize
    rows, cols = x.shape
    s0, s1 = x.strides
    if (s1 == item or cols == 1) and s0 % item == 0 and s0 // item >= max(1, cols):
        return False, s0 // item
    if (s0 == item or rows == 1) and s1 % item == 0 and s1 // item >= max(1, rows):
        return True, s1 // item
    return None


def gemm(a, b, out=None, accumulate=False, one_thread=False):
    """``out = a @ b`` (``accumulate``: ``out += a @ b``, BLAS's ``beta = 1``) for
    2-D float32 or float64 ``a`` [M, K] and ``b`` [K, N] of one dtype (either
    may be a transposed view). Returns ``out`` (a new C-contiguous array when
    not given). ``one_thread``: BLAS is set to one thread for this product
    (:mod:`minitf.kernels.threads`), so numpy's copy may do it (see above)."""
    dtype = a.dtype
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = np.empty((m, n), dtype)
    lib = _lib if _lib is not None else _load()
    if (not lib or (_numpy_same and one_thread and not accumulate) or dtype.char not in "fd"
            or b.dtype != dtype or out.dtype != dtype or not out.flags.c_contiguous
            or min(m, n, k) == 0):
        if accumulate:
            out += np.matmul(a, b)
        else:
            np.matmul(a, b, out=out)
        return out
    la, lb = _layout(a), _layout(b)
    if la is None:
        a, la = np.ascontiguousarray(a), (False, max(1, k))
    if lb is None:
        b, lb = np.ascontiguousarray(b), (False, max(1, n))
    product = lib.sgemm if dtype.char == "f" else lib.dgemm
    product(_ROW_MAJOR, _TRANS if la[0] else _NO_TRANS, _TRANS if lb[0] else _NO_TRANS,
            m, n, k, 1.0, a.ctypes.data, la[1], b.ctypes.data, lb[1], 1.0 if accumulate else 0.0,
            out.ctypes.data, max(1, n))
    return out


def matmul(a, b, one_thread=False):
    """``a @ b`` for float32/float64 operands of one dtype: 2-D through :func:`gemm`;
    batched (ndim >= 3, leading dims broadcast) as one :func:`gemm` per matrix
    when the matrices are big enough to pay for a call each, else ``np.matmul``."""
    if a.ndim == 2 and b.ndim == 2:
        return gemm(a, b, one_thread=one_thread)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if m * k * n < BATCH_MIN_PRODUCT or a.dtype != b.dtype or b.shape[-2] != k:
        return np.matmul(a, b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a3 = np.broadcast_to(a, batch + (m, k)).reshape((-1, m, k))
    b3 = np.broadcast_to(b, batch + (k, n)).reshape((-1, k, n))
    out = np.empty((a3.shape[0], m, n), a.dtype)
    for t in range(out.shape[0]):
        gemm(a3[t], b3[t], out[t], one_thread=one_thread)
    return out.reshape(batch + (m, n))


#: Multiply-adds per matrix below which a batched product stays one
#: ``np.matmul`` (numpy's loop over the batch costs less than a call per matrix).
BATCH_MIN_PRODUCT = 1 << 15

if sys.platform == "win32":   # the wheel's DLL has other names there; numpy's BLAS serves
    _lib, _why = False, "minitf's own BLAS is not used on Windows: products use numpy's BLAS"
