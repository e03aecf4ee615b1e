"""The kernel registry: which code computes op type X on device type Y.

A *kernel* is registered for ``(op type, device type)`` with the set of dtypes
it supports. At placement time the placer asks :func:`supports` whether a
device type can run an op at all (this is what makes an int32 variable
unplaceable on a GPU, and what soft placement recovers from). At plan time
the executor calls the kernel's *builder* once per op, which returns the
``compute(ctx, inputs) -> outputs`` function used in every step.

Adding a device type means registering kernels for it; nothing else in the
runtime changes.
"""

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelDef:
    op_type: str
    device_type: str
    dtypes: frozenset  # names of supported dtypes; empty = any dtype
    builder: object    # builder(op, device) -> compute(ctx, inputs) -> list of outputs


_KERNELS = {}


def register(op_types, device_types=("CPU",), dtypes=None):
    """Decorator: register ``builder`` for each op type and device type."""
    if isinstance(op_types, str):
        op_types = (op_types,)
    if isinstance(device_types, str):
        device_types = (device_types,)
    names = frozenset(d if isinstance(d, str) else d.name for d in (dtypes or ()))

    def decorate(builder):
        for op_type in op_types:
            for device_type in device_types:
                _KERNELS[(op_type, device_type)] = KernelDef(op_type, device_type, names,
                                                             builder)
        return builder
    return decorate


def kernel_dtype(op):
    """The dtype that selects a kernel: attr ``T``, else ``dtype``, else None."""
    attrs = op._attrs
    dt = attrs.get("T", attrs.get("dtype"))
    return None if dt is None else dt.base_dtype.name


def find(op_type, device_type, dtype_name=None):
    """The KernelDef for this op on this device type and dtype, or None."""
    _ensure_loaded()
    k = _KERNELS.get((op_type, device_type))
    if k is None:
        return None
    if k.dtypes and dtype_name is not None and dtype_name not in k.dtypes:
        return None
    return k


def supports(op, device_type):
    return find(op.type, device_type, kernel_dtype(op)) is not None


def registered_device_types(op_type):
    _ensure_loaded()
    return sorted({d for (o, d) in _KERNELS if o == op_type})


_loaded = False
_load_lock = threading.Lock()


def _ensure_loaded():
    """Import the modules that register kernels (not at ``import minitf`` time).

    Several threads (a server's connections) may ask at once: the lock makes
    the others wait until every kernel is registered.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        _load_kernel_modules()
        _loaded = True


def _load_kernel_modules():
    from minitf.kernels import (grad_kernels, host_kernels, math_kernels,  # noqa: F401
                                queue_kernels, training_kernels)
    from minitf.kernels import accumulator_kernels, compression_kernels  # noqa: F401
    from minitf.kernels import data_kernels, debug_kernels, io_kernels  # noqa: F401
    from minitf.kernels import control_flow_kernels  # noqa: F401
    from minitf.distributed import worker  # noqa: F401  (_Send/_Recv kernels)
    # Last: the GPU table wraps what the modules above registered for GPUs.
    from minitf.kernels import gpu_kernels
    gpu_kernels.install()
