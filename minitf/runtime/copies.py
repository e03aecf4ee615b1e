"""Host<->GPU copies and GPU memory accounting for one plan.

Every tensor lives in one *memory*: the host's (CPU ops, feeds, fetches) or
one GPU's. When an op reads a tensor that lives in another memory, the
planner inserts a copy node on that edge, and only there: two ops on the same
GPU hand each other device buffers directly. Each copy is traced as a
:class:`~minitf.runtime.config.Transfer` (``RunMetadata.step_stats.transfers``)
with its bytes and timing, exactly like a tensor crossing tasks.

Some inputs and outputs of GPU ops stay in host memory, as in TensorFlow
(its ``HostMemory`` annotations): shapes, axes and permutations are read by
the host code that launches the kernel, so copying them to the device would
only mean copying them back. Each op's row of the op table says which
(``host_memory_inputs``, ``host_memory_outputs``).

Memory: a buffer produced on a GPU is *charged* to that GPU's allocator when
its op finishes (OOM -> ResourceExhaustedError) and *released* when the last
node that reads it is done; whatever is left is released when the step ends,
whether it succeeded or not, so a failed step leaks nothing.
"""

import threading
import time

import numpy as np

from minitf.ops.variables import VariableResource
from minitf.runtime import gpu
from minitf.runtime.config import AllocatorMemoryUsed
from minitf.runtime.memory import buffer_key
from minitf.runtime.node import Node


def _host_inputs(op):
    idx = op.op_def.host_memory_inputs if op.op_def is not None else ()
    n = len(op._inputs)
    return {i % n for i in idx} if n else set()


def host_memory_inputs(op, device_type):
    """The inputs of ``op`` that a kernel on ``device_type`` reads from host
    memory: on a GPU, those its row names; on a CPU, none (host memory is
    its device memory)."""
    return _host_inputs(op) if device_type == "GPU" else set()


def outputs_in_host_memory(op, device_type):
    """Whether ``op`` on ``device_type`` leaves its outputs in host memory (a
    GPU op whose row says so; never a CPU op).

    A row's ``host_memory_outputs`` is True (Shape: its outputs always stay on
    the host) or a tuple of dtype names: an int32 constant on a GPU stays in
    host memory (TensorFlow's ``HostConstantOp``): such constants are axes and
    shapes, read on the host, so ``reduce_sum(x, axis=0)`` on a GPU copies
    nothing for its axis.
    """
    if device_type != "GPU":
        return False
    rule = op.op_def.host_memory_outputs if op.op_def is not None else False
    if rule is True:
        return True
    return bool(rule and op._outputs and op._outputs[0].dtype.base_dtype.name in rule)


def _memory_of_output(node):
    """Where the outputs of ``node`` live: a GPU device, or None for the host
    (see :func:`outputs_in_host_memory`)."""
    d = node.device
    if d.device_type != "GPU" or outputs_in_host_memory(node.op, d.device_type):
        return None
    return d


def _memory_for_input(node, i, host_inputs):
    d = node.device
    if d.device_type != "GPU" or i in host_inputs:
        return None
    return d


class _CopyNode:
    """Stands in for an op in a copy node (names it in traces and errors)."""

    is_copy = True
    node_def = None
    op_def = None
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
        trace = ctx.step.trace
        if trace is not None:
            nbytes = 0 if out.dtype == np.dtype(object) else int(out.nbytes)
            trace.record_transfer(tensor_name, src_name, dst_name, nbytes, nbytes, start,
                                  time.time_ns() // 1000)
        return [out]
    return compute


def insert_copies(nodes, fetch_slots, n_slots, feeds):
    """Add copy nodes on edges between memories (in place); return the new slot
    count, the fetch slots (now pointing at host copies) and the plan's
    :class:`MemoryAccounting`."""
    where = {}       # slot -> device whose memory holds it (None: host)
    for s in nodes:
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
        copy = Node(node, _copy_compute(node, src, dst), dst or src, [slot], (), n_slots,
                    False)
        copy.allocator = dst.allocator if dst is not None else None
        where[n_slots] = dst
        copies[key] = n_slots
        n_slots += 1
        before.append(copy)
        return copies[key]

    for s in nodes:
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
    nodes[:] = out
    uses = {}
    for s in nodes:
        for slot in s.inputs:
            uses[slot] = uses.get(slot, 0) + 1
    allocators = {s.device.name: s.allocator for s in nodes if s.allocator is not None}
    return n_slots, new_fetch, (MemoryAccounting(uses, allocators) if allocators else None)


class MemoryAccounting:
    """Per-plan facts for memory accounting: how many nodes read each slot."""

    def __init__(self, uses, allocators):
        self.uses = uses
        self.allocators = allocators

    def start(self, trace):
        return _MemoryRun(self, trace)


class _MemoryRun:
    """Charges and releases of one step."""

    def __init__(self, accounting, trace):
        self.accounting = accounting
        self.trace = trace
        self.left = dict(accounting.uses)
        self.charged = {}     # slot -> (allocator, key)
        self.lock = threading.Lock()
        for a in accounting.allocators.values():
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
            for name, a in sorted(self.accounting.allocators.items()):
                self.trace.memory.append(AllocatorMemoryUsed(
                    allocator_name=name, total_bytes=a.reserved, peak_bytes=a.peak,
                    live_bytes=a.in_use, allocator_bytes_in_use=a.in_use))


def _allocator_name(device, allocator):
    return allocator.device_name
