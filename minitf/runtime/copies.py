"""Host<->GPU copies and GPU memory accounting for one plan.

Every tensor lives in one *memory*: the host's (CPU ops, feeds, fetches) or
one GPU's. When an op reads a tensor that lives in another memory, the
planner inserts a copy step on that edge, and only there: two ops on the same
GPU hand each other device buffers directly. Each copy is traced as a
:class:`~minitf.runtime.config.Transfer` (``RunMetadata.step_stats.transfers``)
with its bytes and timing, exactly like a tensor crossing tasks.

Some inputs and outputs of GPU ops stay in host memory, as in TensorFlow
(its ``HostMemory`` annotations): shapes, axes and permutations are read by
the host code that launches the kernel, so copying them to the device would
only mean copying them back. :data:`HOST_MEMORY_INPUTS` and
:data:`HOST_MEMORY_OUTPUTS` list them.

Memory: a buffer produced on a GPU is *charged* to that GPU's allocator when
its op finishes (OOM -> ResourceExhaustedError) and *released* when the last
step that reads it is done; whatever is left is released when the step ends,
whether it succeeded or not, so a failed step leaks nothing.
"""

import threading
import time

import numpy as np

from minitf.runtime import gpu
from minitf.runtime.config import AllocatorMemoryUsed, Transfer
from minitf.runtime.resource_manager import VariableResource

#: op type -> input indices read on the host even when the op runs on a GPU.
HOST_MEMORY_INPUTS = {
    "Sum": (1,), "Mean": (1,), "Max": (1,), "Min": (1,), "Prod": (1,), "All": (1,),
    "Any": (1,), "ArgMax": (1,), "ArgMin": (1,), "Reshape": (1,), "Transpose": (1,),
    "Fill": (0,), "ExpandDims": (1,), "Tile": (1,), "Slice": (1, 2),
    "StridedSlice": (1, 2, 3), "ConcatV2": (-1,), "BroadcastTo": (1,),
    "Switch": (1,), "RefSwitch": (1,),
}
#: op types whose outputs stay on the host even on a GPU.
HOST_MEMORY_OUTPUTS = frozenset(["Shape", "Size", "Rank", "ShapeN", "BroadcastGradientArgs"])


def _host_inputs(op):
    idx = HOST_MEMORY_INPUTS.get(op.type, ())
    n = len(op._inputs)
    return {i % n for i in idx} if n else set()


def _memory_of_output(step):
    """Where the outputs of ``step`` live: a GPU device, or None for the host.

    An int32 constant on a GPU stays in host memory too (TensorFlow's
    ``HostConstantOp``): such constants are axes and shapes, read on the host,
    so ``reduce_sum(x, axis=0)`` on a GPU copies nothing for its axis.
    """
    d = step.device
    if d.device_type != "GPU" or step.op.type in HOST_MEMORY_OUTPUTS:
        return None
    if step.op.type == "Const" and step.op.outputs[0].dtype.name == "int32":
        return None
    return d


def _memory_for_input(step, i, host_inputs):
    d = step.device
    if d.device_type != "GPU" or i in host_inputs:
        return None
    return d


class _CopyNode:
    """Stands in for an op in a copy step (names it in traces and errors)."""

    is_copy = True
    node_def = None
    _control_inputs = ()
    _inputs = ()

    def __init__(self, tensor, src, dst):
        self.tensor = tensor
        side = "%s_%d" % (dst.device_type, dst.index) if dst is not None else "host"
        self.name = "%s/_copy_to_%s" % (tensor.name.replace(":", "_"), side)
        self.type = "_HostToDevice" if src is None else (
            "_DeviceToHost" if dst is None else "_DeviceToDevice")
        self._outputs = [tensor]


def _copy_compute(node, src, dst):
    src_name = src.name if src is not None else "host"
    dst_name = dst.name if dst is not None else "host"
    tensor_name = node.tensor.name

    def compute(ctx, inputs):
        value = inputs[0]
        if isinstance(value, VariableResource):
            value = value.read()
        start = time.time_ns() // 1000
        out = gpu.to_host(value)
        if dst is not None:
            out = gpu.to_device(out, dst)
        trace = ctx.step.extra.get("trace")
        if trace is not None:
            nbytes = 0 if out.dtype == np.dtype(object) else int(out.nbytes)
            with trace._lock:
                trace.transfers.append(Transfer(
                    tensor=tensor_name, src_device=src_name, dst_device=dst_name,
                    bytes=nbytes, wire_bytes=nbytes, start_micros=start,
                    end_micros=time.time_ns() // 1000))
        return [out]
    return compute


def insert_copies(steps, fetch_slots, n_slots, feeds):
    """Add copy steps on edges between memories (in place); return the new slot
    count, the fetch slots (now pointing at host copies) and a MemoryPlan."""
    from minitf.runtime.executor import _Step
    where = {}       # slot -> device whose memory holds it (None: host)
    for s in steps:
        mem = _memory_of_output(s)
        for k in range(s.n_out):
            where[s.out_base + k] = mem
        s.allocator = mem.allocator if mem is not None else None
    copies = {}      # (slot, dst device name or None) -> copy slot
    out = []

    def copy_of(slot, tensor, dst, before):
        nonlocal n_slots
        key = (slot, dst.name if dst is not None else None)
        if key in copies:
            return copies[key]
        src = where.get(slot)
        node = _CopyNode(tensor, src, dst)
        step = _Step(node, _copy_compute(node, src, dst), dst or src, [slot], (), n_slots,
                     False)
        step.allocator = dst.allocator if dst is not None else None
        where[n_slots] = dst
        copies[key] = n_slots
        n_slots += 1
        before.append(step)
        return copies[key]

    for s in steps:
        host_inputs = _host_inputs(s.op)
        pending = []
        for i, slot in enumerate(s.inputs):
            want = _memory_for_input(s, i, host_inputs)
            have = where.get(slot)
            if (want.name if want is not None else None) != \
                    (have.name if have is not None else None):
                if s.op._inputs[i].dtype.is_ref_dtype and i not in s.deref:
                    continue   # a ref input: the placer keeps it on the variable's device
                s.inputs[i] = copy_of(slot, s.op._inputs[i], want, pending)
        out.extend(pending)
        out.append(s)
    producers = {}
    for s in out:
        for k in range(s.n_out):
            producers[s.out_base + k] = s
    new_fetch = []
    tail = []
    for slot in fetch_slots:
        if where.get(slot) is not None:
            s = producers[slot]
            tensor = s.op._outputs[slot - s.out_base] if not getattr(s.op, "is_copy", False) \
                else s.op.tensor
            slot = copy_of(slot, tensor, None, tail)
        new_fetch.append(slot)
    out.extend(tail)
    steps[:] = out
    uses = {}
    for s in steps:
        for slot in s.inputs:
            uses[slot] = uses.get(slot, 0) + 1
    allocators = {s.device.name: s.allocator for s in steps if s.allocator is not None}
    return n_slots, new_fetch, (MemoryPlan(uses, allocators) if allocators else None)


class MemoryPlan:
    """Per-plan facts for memory accounting: how many steps read each slot."""

    def __init__(self, uses, allocators):
        self.uses = uses
        self.allocators = allocators

    def start(self, trace):
        return _MemoryRun(self, trace)


def buffer_key(value):
    """One key per underlying buffer (views of one array share it)."""
    data = getattr(value, "gpu_data", None)
    if data is not None:
        return ("dev", id(data))
    base = value
    while isinstance(base, np.ndarray) and base.base is not None and \
            isinstance(base.base, np.ndarray):
        base = base.base
    return ("np", id(base))


class _MemoryRun:
    """Charges and releases of one step."""

    def __init__(self, plan, trace):
        self.plan = plan
        self.trace = trace
        self.left = dict(plan.uses)
        self.charged = {}     # slot -> (allocator, key)
        self.lock = threading.Lock()
        for a in plan.allocators.values():
            a.reset_peak()

    def after(self, s, outs):
        """Charge ``s``'s outputs, release inputs nobody reads any more; return
        this op's AllocatorMemoryUsed (or None off the GPU)."""
        allocator = s.allocator
        total = 0
        if allocator is not None and outs:
            for k, value in enumerate(outs):
                if isinstance(value, VariableResource) or value is None or \
                        getattr(value, "dtype", None) is None or \
                        value.dtype == np.dtype(object):
                    continue
                key = buffer_key(value)
                if allocator.is_variable_buffer(key):
                    continue            # a read of a variable: charged to the variable
                try:
                    total += allocator.charge(key, value.nbytes, value.shape,
                                              value.dtype.name)
                except Exception:
                    self._release_inputs(s)
                    raise
                with self.lock:
                    self.charged[s.out_base + k] = (allocator, key)
        self._release_inputs(s)
        if allocator is None:
            return None
        return AllocatorMemoryUsed(allocator_name=_allocator_name(s.device if not getattr(
            s.op, "is_copy", False) else None, allocator), total_bytes=total,
            peak_bytes=allocator.peak, live_bytes=allocator.in_use,
            allocator_bytes_in_use=allocator.in_use)

    def _release_inputs(self, s):
        with self.lock:
            for slot in s.inputs:
                n = self.left.get(slot, 0) - 1
                self.left[slot] = n
                if n <= 0 and slot in self.charged:
                    allocator, key = self.charged.pop(slot)
                    allocator.release(key)

    def finish(self):
        with self.lock:
            for allocator, key in self.charged.values():
                allocator.release(key)
            self.charged.clear()
        if self.trace is not None:
            for name, a in sorted(self.plan.allocators.items()):
                self.trace.memory.append(AllocatorMemoryUsed(
                    allocator_name=name, total_bytes=a.reserved, peak_bytes=a.peak,
                    live_bytes=a.in_use, allocator_bytes_in_use=a.in_use))


def _allocator_name(device, allocator):
    return allocator.device_name
