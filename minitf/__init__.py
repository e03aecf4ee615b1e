"""minitf: a small, readable graph runtime that runs TensorFlow 1.x-style code.

``import minitf.compat.v1 as tf`` gives the TF1 namespace (``import minitf as
tf`` works too). Importing minitf is cheap: no kernel is compiled until a
graph first runs an op that needs it.
"""

__version__ = "0.1.0"

from minitf import compat  # noqa: E402,F401
from minitf.compat.v1 import *  # noqa: E402,F401,F403
from minitf.compat import v1 as _v1  # noqa: E402

from minitf.runtime.devices import list_devices  # noqa: E402
from minitf.runtime.gpu import cuda_status  # noqa: E402

__all__ = list(_v1.__all__) + ["compat", "list_devices", "cuda_status"]
