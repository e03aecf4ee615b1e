"""Read what servers hold: the data behind VariableStateView and ClusterView.

Everything here asks with a short deadline, so a task that is down shows up
as "not answering" instead of freezing the notebook.
"""

import numpy as np

from minitf.distributed.inspect import cluster_state

LOCAL_TASK = "/job:localhost/replica:0/task:0"


def _target_of(source):
    """A session target for a Server or a remote Session, else None."""
    target = getattr(source, "target", None)
    if isinstance(target, str) and target:
        return target
    target = getattr(source, "_target", None)
    if isinstance(target, str) and target:
        return target
    return None


def _local_runtime(source):
    runtime = getattr(source, "_runtime", None)
    return runtime if hasattr(runtime, "resource_managers") else None


def read_tasks(source, values=True, timeout=1.0):
    """``[{"task", "address", "up", "devices", "resources", "error"?}]`` for a
    target string, ClusterSpec, dict, LocalCluster, Server or Session.

    A local Session (no target) is read directly from its resource managers.
    """
    runtime = _local_runtime(source)
    if runtime is not None:
        resources = {}
        for device, rm in runtime.resource_managers().items():
            containers = {}
            for container, held in rm.containers().items():
                containers[container] = {}
                for name, resource in held.items():
                    summary = resource.summary()
                    value = getattr(resource, "value", None)
                    if values and summary.get("kind") == "Variable" and value is not None:
                        summary["value"] = np.array(value)
                    containers[container][name] = summary
            resources[device] = containers
        devices = []
        for d in runtime.list_devices():
            info = d.as_dict()
            allocator = getattr(d, "allocator", None)  # a GPU's allocator knows its use
            if allocator is not None and getattr(allocator, "in_use", None) is not None:
                info["bytes_in_use"] = int(allocator.in_use)
            devices.append(info)
        return [{"task": LOCAL_TASK, "address": "(in this process)", "up": True,
                 "devices": devices, "resources": resources}]
    target = _target_of(source)
    return cluster_state(target if target is not None else source, values=values,
                         timeout=timeout)


def variables_of(tasks):
    """``{(task, name): summary}`` of every variable in ``tasks`` (each
    summary has "device", "container" and, once initialized, "value")."""
    out = {}
    for task in tasks:
        for device, containers in (task.get("resources") or {}).items():
            for container, held in containers.items():
                for name, summary in held.items():
                    if summary.get("kind") == "Variable":
                        out[(task["task"], name)] = dict(summary, device=device,
                                                         container=container)
    return out


def nbytes(summary):
    """Bytes a held resource occupies (variables: shape x dtype size)."""
    if "value" in summary:
        return int(np.asarray(summary["value"]).nbytes)
    if "bytes" in summary:  # a summary made from a trace
        return int(summary["bytes"])
    if summary.get("kind") != "Variable" or not summary.get("initialized"):
        return 0
    try:
        itemsize = np.dtype(summary["dtype"].replace("_ref", "")).itemsize
    except (TypeError, KeyError):
        return 0
    return int(np.prod(summary.get("shape") or [], dtype=np.int64)) * itemsize
