"""State that outlives a step: variables, queues, readers, in named containers.

Each device has a :class:`ResourceManager`: named *containers*, each a dict of
named resources. A ``VariableV2`` op looks its buffer up by
``(container, shared_name or op name)`` and creates it on first use. In a
local session the managers live as long as the session, so two sessions never
share a variable. On a server they live as long as the server, so every
session (and every client process) that names the same variable sees the same
buffer, until ``tf.Session.reset(target, containers)`` clears them.

What a resource *is* (a variable's buffer, a queue, a reader) is defined with
the ops that use it, in ``minitf/ops/`` (``variables.VariableResource``,
``queues.QueueResource``...); the manager only keeps them by name.

State made outside any ``tf.container(...)`` goes to the *default container*,
named, as in TF, after the job of the device: ``localhost`` in a local session
(its devices are ``/job:localhost/...``), ``worker`` on a task of
``/job:worker``, ``ps`` on a parameter server.
"""

import threading

DEFAULT_CONTAINER = "localhost"   # the default container of a local session's devices


def default_container_for(device_name):
    """The default container of a device: its job's name (TF's ResourceMgr(job))."""
    for part in device_name.split("/"):
        if part.startswith("job:") and len(part) > 4:
            return part[4:]
    return DEFAULT_CONTAINER


class ResourceManager:
    """Containers of named resources on one device."""

    def __init__(self, device_name=""):
        self.device_name = device_name
        self.default_container = default_container_for(device_name)
        self._containers = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container, name, create):
        container = container or self.default_container
        with self._lock:
            resources = self._containers.setdefault(container, {})
            resource = resources.get(name)
            if resource is None:
                resource = resources[name] = create()
            return resource

    def lookup(self, container, name):
        with self._lock:
            return self._containers.get(container or self.default_container, {}).get(name)

    def cleanup(self, container):
        """Drop one container and everything in it (``Session.reset``)."""
        with self._lock:
            dropped = self._containers.pop(container or self.default_container, {})
        for resource in dropped.values():
            close = getattr(resource, "close_for_reset", None)
            if close is not None:
                close()

    def containers(self):
        with self._lock:
            return {c: dict(r) for c, r in self._containers.items()}

    def summary(self):
        """``{container: {name: summary dict}}`` for widgets and ``list_state``."""
        return {c: {n: r.summary() for n, r in res.items()}
                for c, res in self.containers().items()}
