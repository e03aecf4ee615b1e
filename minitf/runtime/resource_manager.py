"""State that outlives a step: variables, queues, readers.

Each device has a :class:`ResourceManager`: named *containers*, each a dict of
named resources. A ``VariableV2`` op looks its buffer up by
``(container, shared_name or op name)`` and creates it on first use. In a
local session the managers live as long as the session, so two sessions never
share a variable. On a server they live as long as the server, so every
session (and every client process) that names the same variable sees the same
buffer, until ``tf.Session.reset(target, containers)`` clears them.
"""

import collections
import threading

import numpy as np

from minitf.framework import errors

DEFAULT_CONTAINER = "localhost"


class VariableResource:
    """The buffer behind a TF1 ref variable.

    As in TF1, a read (``v/read``) does not copy: it hands out a read-only
    *view* of the buffer, and assignments write into the buffer in place. So
    an op that runs after an assign sees the new value even through a read
    made earlier in the step - TF1's ref semantics, which
    ``control_dependencies`` lessons rely on. Fetching a variable copies it
    (read-only arrays are copied on the way to the client).

    ``lock`` serialises read-modify-write updates (``assign_add``) so
    concurrent steps never lose an increment.
    """

    kind = "Variable"

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None   # read-only view of _buffer, handed to readers
        self._buffer = None
        self.lock = threading.Lock()
        self.version = 0  # number of writes so far (staleness measurements use it)
        # staleness -> count: for each update by an optimizer, how many other
        # updates happened between the step's read of the variable and it.
        self.staleness = collections.Counter()

    @property
    def initialized(self):
        return self.value is not None

    def read(self):
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, "Attempting to use uninitialized value %s" % self.name)
        return value

    def write(self, value):
        """Store ``value``: in place when shape and dtype match, else in a new
        buffer (``validate_shape=False`` assignments may change the shape)."""
        buf = self._buffer
        if buf is not None and buf.shape == value.shape and buf.dtype == value.dtype:
            np.copyto(buf, value)
        else:
            buf = self._buffer = np.array(value, copy=True)
            view = buf.view()
            view.flags.writeable = False
            self.value = view
        self.version += 1

    def record_update(self, read_version):
        """Count one optimizer update; ``read_version`` is the version the
        step read (None when the step did not read this variable)."""
        if read_version is not None:
            self.staleness[self.version - read_version] += 1
        self.version += 1

    def summary(self):
        v = self.value
        out = {"kind": self.kind, "name": self.name, "dtype": self.dtype.name,
               "shape": list(v.shape) if v is not None else self.shape.as_tuple_or_none(),
               "initialized": v is not None, "version": self.version}
        if self.staleness:
            out["staleness"] = dict(self.staleness)
        return out

    def nbytes(self):
        v = self.value
        return 0 if v is None or v.dtype == np.dtype(object) else int(v.nbytes)


class ResourceManager:
    """Containers of named resources on one device."""

    def __init__(self, device_name=""):
        self.device_name = device_name
        self._containers = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container, name, create):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            resources = self._containers.setdefault(container, {})
            resource = resources.get(name)
            if resource is None:
                resource = resources[name] = create()
            return resource

    def lookup(self, container, name):
        with self._lock:
            return self._containers.get(container or DEFAULT_CONTAINER, {}).get(name)

    def cleanup(self, container):
        """Drop one container and everything in it (``Session.reset``)."""
        with self._lock:
            dropped = self._containers.pop(container or DEFAULT_CONTAINER, {})
        for resource in dropped.values():
            close = getattr(resource, "close_for_reset", None)
            if close is not None:
                close()

    def clear(self):
        with self._lock:
            names = list(self._containers)
        for name in names:
            self.cleanup(name)

    def containers(self):
        with self._lock:
            return {c: dict(r) for c, r in self._containers.items()}

    def summary(self):
        """``{container: {name: summary dict}}`` for widgets and ``list_state``."""
        return {c: {n: r.summary() for n, r in res.items()}
                for c, res in self.containers().items()}
