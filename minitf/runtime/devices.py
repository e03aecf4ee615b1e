"""The devices a session or server can place ops on.

A device is named by its full name ``/job:J/replica:0/task:T/device:TYPE:N``.
A local session's devices belong to ``/job:localhost/replica:0/task:0``: one
CPU by default, more with ``ConfigProto(device_count={"CPU": n})``.
"""

from dataclasses import dataclass, field

from minitf.framework.device_spec import DeviceSpec

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
    return devices


def priority(device):
    """Sort key: preferred type first, then lowest index."""
    t = device.device_type
    rank = DEVICE_TYPE_PRIORITY.index(t) if t in DEVICE_TYPE_PRIORITY else len(
        DEVICE_TYPE_PRIORITY)
    return (rank, device.index)
