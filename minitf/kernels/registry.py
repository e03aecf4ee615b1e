"""The kernel registry: which code computes op type X on device type Y for dtype Z.

It is *built from the op table* (``minitf/framework/op_def.py``) the first time
this module is imported: for every row, every device type in ``row.devices``
and every dtype listed there, one :class:`Kernel` under the key
``(op type, device type, dtype name)`` (dtype ``None`` when the row takes any
dtype). Registering a key twice is an error, at import time, so two rows can
never silently overwrite each other, and nothing else touches the table.

At placement time the placer asks :func:`supports` whether a device type can
run an op at all (this is what makes an int32 variable unplaceable on a GPU,
and what soft placement recovers from). At plan time the executor calls
:meth:`Kernel.build` once per op, which returns the ``compute(ctx, inputs) ->
outputs`` function every step calls.

``build`` hands the row's kernel the *backend* of the device (see
:func:`backend_for`) and adapts it to where the device keeps its tensors:

* a CPU, or a virtual GPU (its memory is host memory): the CPU backend,
  ``minitf.kernels.cpu``; under numba's CUDA simulator a virtual GPU sends
  small tensors through the CUDA kernels instead, so a lesson can step
  through one;
* a real GPU: ``minitf.kernels.cuda`` for rows that compute with the backend
  (``kernel_reads == BACKEND``); rows of numpy code (HOST) run on host copies
  of their inputs, and their outputs go back to the card; rows that never
  read their inputs (NOTHING: Switch, Merge) run as they are.
"""

import threading
from dataclasses import dataclass

import numpy as np

from minitf import ops as _ops  # noqa: F401  (every op family: the table is complete)
from minitf.framework import op_def
from minitf.framework.op_def import ANY_DTYPE, BACKEND, HOST
from minitf.kernels import is_device_array

#: Virtual GPUs under the CUDA simulator run CUDA kernels up to this size.
SIMULATOR_MAX_ELEMENTS = 4096


@dataclass(frozen=True)
class Kernel:
    """One registry entry: the row's kernel, for one device type and dtype."""
    op_def: object
    device_type: str
    dtype: object          # a dtype name, or None: every dtype

    def build(self, op, device):
        """``compute(ctx, inputs) -> outputs`` for ``op`` on ``device``."""
        return _build(self.op_def, op, device)


_KERNELS = {}


def _register(kernel):
    key = (kernel.op_def.name, kernel.device_type, kernel.dtype)
    if key in _KERNELS:
        raise ValueError("a kernel for %s on %s (dtype %s) is registered twice"
                         % key)
    _KERNELS[key] = kernel


def _build_registry():
    for row in op_def.all_op_defs():
        for device_type, dtypes in row.devices.items():
            if dtypes is ANY_DTYPE:
                _register(Kernel(row, device_type, None))
            else:
                for name in dtypes:
                    _register(Kernel(row, device_type, name))
    op_def.seal()


_build_registry()


# -- lookups --------------------------------------------------------------------------------------
def kernel_dtype(op):
    """The dtype name that selects ``op``'s kernel (attr ``T``, else ``dtype``...)."""
    return op.op_def.kernel_dtype(op._attrs)


def find(op_type, device_type, dtype_name=None):
    """The Kernel for this op type on this device type and dtype, or None."""
    kernel = _KERNELS.get((op_type, device_type, None))
    if kernel is not None:
        return kernel
    if dtype_name is None:
        return None
    return _KERNELS.get((op_type, device_type, dtype_name))


def supports(op, device_type):
    return find(op.type, device_type, kernel_dtype(op)) is not None


def registered_dtypes(op_type):
    """``{device type: sorted dtype names, or None for any}`` (for placement errors)."""
    out = {}
    for (name, device_type, dtype) in _KERNELS:
        if name != op_type:
            continue
        if dtype is None:
            out[device_type] = None
        elif out.get(device_type, ()) is not None:
            out.setdefault(device_type, []).append(dtype)
    return {d: (sorted(v) if v is not None else None) for d, v in sorted(out.items())}


# -- building a kernel for a device ----------------------------------------------------------
_backends = {}
_backends_lock = threading.Lock()


def backend(name):
    """The backend module ``"cpu"``, ``"cuda"`` or ``"reference"``."""
    module = _backends.get(name)
    if module is None:
        with _backends_lock:
            # Lazy imports: importing Numba (and numba.cuda's driver probe) is a
            # start-up cost that ``import minitf`` must not pay.
            if name == "cpu":
                from minitf.kernels import cpu as module   # lazy: Numba
            elif name == "cuda":
                from minitf.kernels import cuda as module   # lazy: numba.cuda
            elif name == "reference":
                from minitf.kernels import reference as module   # lazy (for symmetry)
            else:
                raise ValueError("no backend %r (cpu, cuda or reference)" % name)
            _backends[name] = module
    return module


def backend_for(device):
    """The backend a row's kernel computes with on ``device``."""
    if device.device_type == "GPU" and not device.virtual:
        return backend("cuda")
    return backend("cpu")


def _build(row, op, device):
    if row.kernel_reads != BACKEND:
        compute = row.kernel(op, backend("cpu"))
        if row.kernel_reads == HOST and device.device_type == "GPU" and not device.virtual:
            return _on_host_copies(compute, device)
        return compute
    if device.device_type != "GPU":
        return row.kernel(op, backend("cpu"))
    if not device.virtual:
        return row.kernel(op, backend("cuda"))
    cpu_compute = row.kernel(op, backend("cpu"))
    if not _simulating_cuda():
        return cpu_compute
    return _small_through_simulated_cuda(row.kernel(op, backend("cuda")), cpu_compute, op)


def _simulating_cuda():
    """Is numba's CUDA simulator on (``NUMBA_ENABLE_CUDASIM=1``)?"""
    import numba   # lazy import: Numba's start-up cost (only for a virtual GPU)
    return bool(numba.config.ENABLE_CUDASIM)


def fits_the_simulator(op, inputs):
    """Are ``op``'s inputs (and, for an op made from a ``shape`` input such as a
    random op, its output) at most SIMULATOR_MAX_ELEMENTS elements each?"""
    if not all(getattr(x, "size", 1) <= SIMULATOR_MAX_ELEMENTS for x in inputs):
        return False
    return all(int(np.prod(np.asarray(inputs[i]), dtype=np.int64)) <= SIMULATOR_MAX_ELEMENTS
               for i, name in enumerate(op.op_def.inputs) if name == "shape" and i < len(inputs))


def _small_through_simulated_cuda(cuda_compute, cpu_compute, op):
    """A virtual GPU under the simulator: inputs of at most SIMULATOR_MAX_ELEMENTS
    elements run through the CUDA kernels (the simulator runs every GPU thread
    in Python, so big ones take the CPU kernels); outputs come back as numpy.
    An op made from a ``shape`` input (a random op) is as big as that shape."""
    cuda = backend("cuda")
    dtypes = [t.dtype.base_dtype.np_dtype for t in op.outputs]

    def compute(ctx, inputs):
        if not fits_the_simulator(op, inputs):
            return cpu_compute(ctx, inputs)
        outs = cuda_compute(ctx, inputs)
        return [o if not is_device_array(o) and not isinstance(o, np.ndarray) else
                np.asarray(cuda.to_host(o)).astype(dt, copy=False)
                for o, dt in zip(outs, dtypes)]
    return compute


def _on_host_copies(compute, device):
    """A numpy kernel on a real GPU: host copies of device inputs in, array
    outputs uploaded to the card."""
    cuda = backend("cuda")

    def on_host(ctx, inputs):
        host = [cuda.to_host(x) if is_device_array(x) else x for x in inputs]
        outs = compute(ctx, host)
        return [cuda.to_device(o, device) if isinstance(o, np.ndarray) and
                o.dtype != np.dtype(object) else o for o in outs]
    return on_host
