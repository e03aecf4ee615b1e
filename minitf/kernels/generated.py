"""Kernels written as Python source at run time, and imported so Numba caches them.

Two kinds of kernel depend on what a program builds: the fused elementwise
loops (``minitf/runtime/fusion.py``) and the CUDA kernel of each elementwise
op (``minitf/kernels/cuda/elementwise.py``, from its row of the op table).
Both are generated as the text of a small Python module, written to a
per-user cache directory (``<numba cache dir>/<folder>/``) and imported from
there, so ``cache=True`` lets Numba's disk cache serve the machine code to the
next process. A closure or an ``exec``'d string could not be cached: Numba keys
its cache by the function's source file.

The file name is a hash of the source, so a changed source is a new file and
never a stale cache entry. Open a file to see exactly what a kernel does.
"""

import hashlib
import importlib.util
import os
import sys
import threading

_loaded = {}
_lock = threading.Lock()


def cache_dir(folder):
    """Where generated kernels of one kind go: ``folder`` in Numba's cache directory."""
    from minitf.kernels.cpu.compile import cache_root   # lazy import: Numba's start-up cost
    path = os.path.join(cache_root(), folder)
    os.makedirs(path, exist_ok=True)
    return path


def load_source(source, folder, prefix):
    """Write ``source`` to ``folder`` (once, atomically) and import it as a module."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    name = "%s_%s" % (prefix, digest)
    with _lock:
        module = _loaded.get(name)
        if module is not None:
            return module
        path = os.path.join(cache_dir(folder), name + ".py")
        if not os.path.exists(path):
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _loaded[name] = module
        return module
