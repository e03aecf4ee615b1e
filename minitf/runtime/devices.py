"""The devices a session or server can place ops on.

A device is named by its full name ``/job:J/replica:0/task:T/device:TYPE:N``.
A local session's devices belong to ``/job:localhost/replica:0/task:0``: one
CPU by default, more with ``ConfigProto(device_count={"CPU": n})``.

GPUs come in two kinds (see :mod:`minitf.runtime.gpu`):

* **real** ones, when numba finds a CUDA driver and a card: one
  ``/device:GPU:N`` per visible card (``CUDA_VISIBLE_DEVICES`` hides cards
  from the driver; ``gpu_options.visible_device_list="1,0"`` picks and
  renumbers them; ``device_count={"GPU": n}`` keeps at most ``n``);
* **virtual** ones, on machines without a GPU: ``device_count={"GPU": n}`` or
  the environment variable ``MINITF_VIRTUAL_GPUS=n``. They are marked
  ``virtual`` in device listings and placement logs, obey the GPU kernel
  table, and have a memory budget (2 GiB unless configured). The ``n``
  virtual cards are shared by every session of the process, and
  ``gpu_options.visible_device_list`` picks and renumbers them like real ones.

Every GPU device has a :class:`~minitf.runtime.memory.GPUAllocator`.
"""

import os
from dataclasses import dataclass, field

from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph
from minitf.runtime import gpu, memory, runtimes
from minitf.runtime.config import ConfigProto

LOCAL_TASK = ("localhost", 0, 0)  # job, replica, task of a local session

# The placer prefers the first type in this list when a group could go
# to several (TF puts an unpinned op on GPU:0 when it has a kernel for it).
DEVICE_TYPE_PRIORITY = ("GPU", "CPU")


@dataclass
class Device:
    """One device of one task."""
    job: str
    replica: int
    task: int
    device_type: str
    index: int
    memory_limit: int = 0
    virtual: bool = False
    description: str = ""
    physical_index: int = 0      # the CUDA device id of a real GPU
    allocator: object = field(default=None, repr=False, compare=False)
    name: str = field(init=False)
    spec: DeviceSpec = field(init=False, repr=False)

    def __post_init__(self):
        self.spec = DeviceSpec(self.job, self.replica, self.task, self.device_type, self.index)
        self.name = self.spec.to_string()

    @property
    def task_name(self):
        return "/job:%s/replica:%d/task:%d" % (self.job, self.replica, self.task)

    def as_dict(self):
        return {"name": self.name, "device_type": self.device_type,
                "memory_limit": self.memory_limit, "virtual": self.virtual,
                "description": self.description}


def local_devices(config, job="localhost", replica=0, task=0):
    """The devices of one task, as configured by ``config.device_count``."""
    counts = dict(config.device_count) if config is not None else {}
    n_cpu = int(counts.get("CPU", 1)) or 1
    devices = [Device(job, replica, task, "CPU", i, memory_limit=268435456,
                      description="numba-compiled CPU kernels")
               for i in range(n_cpu)]
    return devices + gpu_devices(config, job, replica, task)


def _visible_list(config):
    text = config.gpu_options.visible_device_list if config is not None else ""
    if not text:
        return None
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError("Could not parse entry in 'visible_device_list': '%s'. "
                         "visible_device_list = %s" % (text, text)) from None


def gpu_devices(config, job="localhost", replica=0, task=0):
    """The GPU devices of one task: real cards if numba finds any, else virtual
    ones if the config or ``MINITF_VIRTUAL_GPUS`` asks for them."""
    counts = dict(config.device_count) if config is not None else {}
    wanted = counts.get("GPU")
    if wanted is not None and int(wanted) <= 0:
        return []
    options = config.gpu_options if config is not None else None
    fraction = options.per_process_gpu_memory_fraction if options is not None else 0.0
    growth = options.allow_growth if options is not None else False
    status = gpu.cuda_status() if wanted is not None or not os.environ.get(
        "MINITF_VIRTUAL_GPUS") else None
    devices = []
    if status is not None and status.real:
        ids = _visible_list(config)
        if ids is None:
            ids = list(range(len(status.devices)))
        for bad in ids:
            if not 0 <= bad < len(status.devices):
                raise ValueError("'visible_device_list' listed an invalid GPU id '%d' but "
                                 "visible device count is %d" % (bad, len(status.devices)))
        if wanted is not None:
            ids = ids[:int(wanted)]
        for index, physical in enumerate(ids):
            name, total = status.devices[physical]
            d = Device(job, replica, task, "GPU", index, physical_index=physical,
                       description="real GPU %d: %s (numba.cuda)" % (physical, name))
            d.allocator = memory.GPUAllocator(
                d.name, memory.card(("real", physical), name, total), fraction, growth)
            d.memory_limit = d.allocator.limit
            devices.append(d)
        return devices
    # Virtual GPUs: ``n`` pretend cards in this process. ``visible_device_list``
    # picks and renumbers them as it does real cards ("1" = card 1 only, as GPU:0),
    # so two sessions can be given separate cards.
    n = int(wanted) if wanted is not None else int(os.environ.get("MINITF_VIRTUAL_GPUS") or 0)
    ids = _visible_list(config)
    if ids is None or n == 0:
        ids = list(range(n))
    for bad in ids:
        if not 0 <= bad < n:
            raise ValueError("'visible_device_list' listed an invalid GPU id '%d' but "
                             "visible device count is %d" % (bad, n))
    budget = gpu.virtual_gpu_memory(config)
    for index, physical in enumerate(ids):
        d = Device(job, replica, task, "GPU", index, virtual=True, physical_index=physical,
                   description="virtual GPU %d (no CUDA driver: %s kernels, %g MiB budget)"
                   % (physical, "simulated CUDA" if status is not None and status.simulated
                      else "CPU", round(budget / (1 << 20), 3)))
        d.allocator = memory.GPUAllocator(
            d.name, memory.card(("virtual", physical, budget), "virtual GPU %d" % physical,
                                budget), fraction, growth)
        d.memory_limit = d.allocator.limit
        devices.append(d)
    return devices


def describe(device):
    """How a placement log names a device: a virtual GPU says so."""
    return device.name + (" (virtual)" if device.virtual else "")


def priority(device):
    """Sort key: preferred type first, then lowest index."""
    t = device.device_type
    rank = DEVICE_TYPE_PRIORITY.index(t) if t in DEVICE_TYPE_PRIORITY else len(
        DEVICE_TYPE_PRIORITY)
    return (rank, device.index)


def list_devices(target="", config=None):
    """The devices a session on ``target`` would see, as dicts (name, device_type,
    memory_limit, virtual, description). ``""`` lists this process's devices
    (with ``config``, e.g. ``ConfigProto(device_count={"GPU": 2})``);
    ``"grpc://host:port"`` asks that server's master for its cluster's devices."""
    if target:
        runtime = runtimes.connect(target, Graph(), config if config is not None
                                   else ConfigProto())
        try:
            devices = runtime.list_devices()
        finally:
            runtime.close()
    else:
        devices = local_devices(config if config is not None else ConfigProto())
        for d in devices:
            if d.allocator is not None:
                d.allocator.close()   # only listing: hold no GPU memory
    return [d.as_dict() for d in devices]
