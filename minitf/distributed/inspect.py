"""Look inside a running cluster: which tasks answer, their devices, and the
state (variables, queues, readers) their resource containers hold.

This is what the widgets poll; a learner can call it directly too::

    from minitf.distributed.inspect import cluster_state
    cluster_state(cluster)                 # a ClusterSpec, dict or LocalCluster
    cluster_state("grpc://localhost:2222")  # one server

Each task is asked with a short deadline, so a dead task shows up as
``{"up": False, "error": "..."}`` instead of blocking the caller.
"""

import time

import numpy as np

from minitf.framework import errors
from minitf.distributed.cluster_spec import ClusterSpec
from minitf.distributed import protocol
from minitf.distributed.rpc import Channel


def _tasks_of(where):
    """``[(task name, address)]`` for a target, ClusterSpec, dict or LocalCluster."""
    if isinstance(where, str):
        address = where[len("grpc://"):] if where.startswith("grpc://") else where
        return [(None, address)]
    if hasattr(where, "spec") and isinstance(where.spec, ClusterSpec):  # LocalCluster
        where = where.spec
    spec = ClusterSpec(where)
    return [("/job:%s/replica:0/task:%d" % (job, i), spec.task_address(job, i))
            for job in spec.jobs for i in spec.task_indices(job)]


def task_state(address, task_name=None, values=True, timeout=2.0):
    """One task: ``{"up", "task", "address", "devices", "resources"}``.

    ``resources`` maps device -> container -> name -> summary dict; with
    ``values``, each initialized variable's summary has its ``"value"``
    (a numpy array).
    """
    channel = Channel(address, task_name or address)
    out = {"task": task_name, "address": address, "up": False}
    try:
        deadline = time.monotonic() + timeout
        status, _ = channel.call({"op": protocol.GET_STATUS}, deadline=deadline)
        out["task"] = status["task"]
        out["devices"] = status["devices"]
        reply, arrays = channel.call({"op": protocol.LIST_STATE, "values": bool(values)},
                                     deadline=deadline)
        state = reply["state"]
        for containers in state.values():
            for resources in containers.values():
                for summary in resources.values():
                    index = summary.pop("value_index", None)
                    if index is not None:
                        summary["value"] = np.array(arrays[index])
        out["resources"] = state
        out["up"] = True
    except errors.OpError as e:
        out["error"] = "%s: %s" % (type(e).__name__, e.message)
    finally:
        channel.close()
    return out


def cluster_state(where, values=True, timeout=2.0):
    """Every task of ``where``: a list of :func:`task_state` dicts."""
    return [task_state(address, name, values, timeout) for name, address in _tasks_of(where)]


def variable_values(where, timeout=2.0):
    """``{(task, variable name): value}`` of every initialized variable."""
    out = {}
    for task in cluster_state(where, True, timeout):
        for containers in task.get("resources", {}).values():
            for resources in containers.values():
                for name, summary in resources.items():
                    if summary.get("kind") == "Variable" and "value" in summary:
                        out[(task["task"], name)] = summary["value"]
    return out
