"""Is there a GPU, and how do bytes get onto it and back?

Three answers are possible, and :func:`cuda_status` says which one holds and
why:

* **real** - numba found a CUDA driver and at least one GPU. Sessions get
  ``/device:GPU:N`` devices backed by the card; their tensors are numba
  device arrays and the kernels in :mod:`minitf.kernels.cuda` run on it.
* **simulated** - ``NUMBA_ENABLE_CUDASIM=1``: numba runs CUDA kernels in
  Python, one thread at a time. ``numba.cuda.is_available()`` says True here,
  which is why minitf checks ``numba.config.ENABLE_CUDASIM`` first: a
  simulator is not a GPU, so no *real* GPU device appears. Virtual GPUs (below)
  use the simulated CUDA kernels for small tensors.
* **absent** - no driver library, no device, or the driver failed to start.

Without a real GPU a session can still have *virtual* GPUs, for lessons about
placement: ``ConfigProto(device_count={"GPU": n})`` or ``MINITF_VIRTUAL_GPUS=n``.
A virtual GPU obeys the GPU kernel table (no int32 variables...) and has its
own memory budget, but its "device memory" is ordinary host memory.

The probe runs once per process and never *imports* ``numba.cuda`` when no
driver library is on the system, so it costs nothing on a laptop.
"""

import ctypes.util
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from minitf.kernels import is_device_array, registry

#: Default budget of a virtual GPU (override with ``MINITF_VIRTUAL_GPU_MEMORY``
#: in bytes, or per session with ``gpu_options.virtual_memory_limit_mb``).
VIRTUAL_GPU_MEMORY = 2 << 30


@dataclass(frozen=True)
class CudaStatus:
    """What :func:`cuda_status` found."""
    mode: str            # "real", "simulated" or "absent"
    reason: str          # one sentence a learner can act on
    devices: tuple = field(default=())   # ((name, total_bytes), ...) of real GPUs

    @property
    def real(self):
        return self.mode == "real"

    @property
    def simulated(self):
        return self.mode == "simulated"

    def __str__(self):
        text = "CUDA: %s - %s" % (self.mode, self.reason)
        for i, (name, total) in enumerate(self.devices):
            text += "\n  GPU %d: %s, %.1f GiB" % (i, name, total / (1 << 30))
        return text


_status = None
_status_lock = threading.Lock()


def _driver_library_present():
    if os.environ.get("NUMBA_CUDA_DRIVER"):
        return True
    return ctypes.util.find_library("cuda") is not None


def _probe():
    import numba   # lazy import: importing Numba is a start-up cost
    if numba.config.ENABLE_CUDASIM:
        return CudaStatus("simulated", "NUMBA_ENABLE_CUDASIM=1: numba runs CUDA kernels in "
                          "its Python simulator (cuda.is_available() is True, but there is "
                          "no GPU); GPUs can only be virtual")
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return CudaStatus("absent", "CUDA_VISIBLE_DEVICES=%r hides every GPU"
                          % os.environ["CUDA_VISIBLE_DEVICES"])
    if not _driver_library_present():
        return CudaStatus("absent", "no CUDA driver library (libcuda) is installed on this "
                          "machine; ask for virtual GPUs with "
                          "ConfigProto(device_count={'GPU': 1}) or MINITF_VIRTUAL_GPUS=1")
    try:
        from numba import cuda   # lazy import: the CUDA driver probe, only with a driver
        if not cuda.is_available():
            return CudaStatus("absent", "the CUDA driver is installed but numba found no "
                              "usable GPU (driver too old, or no device)")
        found = []
        for gpu in cuda.gpus:
            with gpu:
                free, total = cuda.current_context().get_memory_info()
                name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
                found.append((name, int(total)))
    except Exception as e:  # noqa: BLE001 - any driver failure means "no GPU", with why
        return CudaStatus("absent", "the CUDA driver failed to start: %s" % e)
    if not found:
        return CudaStatus("absent", "numba's CUDA driver reports no GPU")
    return CudaStatus("real", "numba found %d GPU(s) through the CUDA driver" % len(found),
                      tuple(found))


def cuda_status():
    """Whether CUDA is real, simulated or absent on this machine, and why."""
    global _status
    if _status is None:
        with _status_lock:
            if _status is None:
                _status = _probe()
    return _status


def virtual_gpu_memory(config=None):
    """The budget of a virtual GPU in bytes: the session's
    ``gpu_options.virtual_memory_limit_mb``, else ``MINITF_VIRTUAL_GPU_MEMORY``,
    else 2 GiB."""
    if config is not None:
        mb = getattr(config.gpu_options, "virtual_memory_limit_mb", 0)
        if mb:
            return int(mb * (1 << 20))
    env = os.environ.get("MINITF_VIRTUAL_GPU_MEMORY")
    if env:
        return int(float(env))
    return VIRTUAL_GPU_MEMORY


# -- where the bytes of a tensor live -----------------------------------------------------------
def to_host(value):
    """A host (numpy) copy of ``value``. Device arrays are copied back over the bus;
    a virtual GPU's array is copied in host memory, so the two buffers are as
    separate as on a real machine."""
    if is_device_array(value):
        return value.copy_to_host()
    return np.array(value, copy=True)


def to_device(value, device):
    """``value`` (a numpy array) copied into ``device``'s memory."""
    if device.virtual:
        return np.array(value, copy=True)
    return registry.backend("cuda").to_device(value, device)
