"""What a step's trace says about state: the variables the step used (where
they live, their dtype, shape and size, which ops wrote them) and the tasks
and devices that took part.

A trace holds no variable *values*; for those, give a view the cluster or
a session instead. This is what VariableStateView and ClusterView show when
they are given a RunMetadata (minitf's or real TensorFlow's).
"""

import numpy as np

from .names import parse_device, task_of

VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _is_writer(op_type):
    return op_type.startswith(("Assign", "Apply", "ResourceApply", "Scatter",
                               "ResourceScatter"))


def _nbytes(dtype, shape):
    if not dtype or shape is None or any(d is None for d in shape):
        return 0
    try:
        itemsize = np.dtype(dtype.replace("_ref", "")).itemsize
    except TypeError:
        return 0
    return int(np.prod(shape, dtype=np.int64)) * itemsize


def trace_variables(trace):
    """``{(task, name): summary}``: "device", "dtype", "shape", "bytes" and
    "writes" (``[(op name, op type, µs since the step began)]``)."""
    runs = {o.name: o for o in trace.ops}
    found = {}
    if trace.nodes:
        for n in trace.nodes.values():
            if n.op in VARIABLE_OPS:
                dtype, shape = (n.outputs[0] if n.outputs else (None, None))
                run = runs.get(n.name)
                if run is not None and run.outputs and run.outputs[0][1] is not None:
                    shape = run.outputs[0][1]
                found[n.name] = {"device": n.device, "dtype": (dtype or "").replace("_ref", ""),
                                 "shape": shape}
        writers = [(n.name, n.op, n.inputs[0][0]) for n in trace.nodes.values()
                   if _is_writer(n.op) and n.inputs]
    else:  # a local minitf step: only what ran, with its outputs
        for o in trace.ops:
            if o.type in VARIABLE_OPS:
                dtype, shape, _ = o.outputs[0] if o.outputs else (None, None, 0)
                found[o.name] = {"device": o.device, "dtype": (dtype or "").replace("_ref", ""),
                                 "shape": shape}
        writers = []
    t0 = trace.start
    out = {}
    for name, s in found.items():
        s["bytes"] = _nbytes(s["dtype"], s["shape"])
        s["writes"] = sorted(((w, t, runs[w].start - t0 if w in runs else None)
                              for w, t, var in writers if var == name),
                             key=lambda x: (x[2] is None, x[2] or 0))
        out[(task_of(s["device"]), name)] = s
    return out


def trace_tasks(trace):
    """Tasks as ClusterView draws them, from a trace: ``[{"task", "address",
    "up", "devices", "resources", "ops", "busy"}]`` - every task that ran an
    op, its devices (with the step's memory peak where the trace has one) and
    the variables it holds."""
    variables = trace_variables(trace)
    tasks = {}
    for device in trace.devices():
        if not device.startswith("/job:"):
            continue
        task = tasks.setdefault(task_of(device), {
            "task": task_of(device), "address": "(from the trace)", "up": True,
            "devices": [], "resources": {}, "ops": 0})
        memory = trace.memory.get(device, {})
        task["devices"].append({"name": device, "device_type": parse_device(device)["type"],
                                "memory_limit": memory.get("limit", 0),
                                "bytes_in_use": memory.get("live"),
                                "peak_bytes": memory.get("peak"), "virtual": False})
        task["ops"] += sum(1 for o in trace.ops if o.device == device)
    for (task, name), s in variables.items():
        if task in tasks:
            held = tasks[task]["resources"].setdefault(s["device"], {}).setdefault("", {})
            held[name] = {"kind": "Variable", "dtype": s["dtype"], "shape": s["shape"],
                          "initialized": True, "bytes": s["bytes"]}
    return [tasks[t] for t in sorted(tasks)]
