"""``minitf.compat.v1`` is the TF1 namespace, as ``tensorflow.compat.v1``."""

from minitf.compat import v1  # noqa: F401
