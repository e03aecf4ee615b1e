"""What one step did, as ``RunMetadata.step_stats``: a :class:`Trace`.

With ``RunOptions(trace_level=FULL_TRACE)`` the executor records, for every op
it runs, when it started and ended and what it produced (``NodeExecStats``,
grouped by device), and every tensor that moved between memories or tasks is
recorded once as a :class:`~minitf.runtime.config.Transfer` (a host<->GPU copy,
a ``_Recv`` from another task) through :meth:`Trace.record_transfer`. Ops of
several devices run at once, so every record takes the trace's lock.
"""

import threading

import numpy as np

from minitf.ops.variables import VariableResource
from minitf.runtime.config import (DeviceStepStats, NodeExecStats, NodeOutput,
                                   TensorDescription, Transfer)


class Trace:
    """Collects per-op timings and transfers of one step (``RunOptions.FULL_TRACE``)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_device = {}
        self.transfers = []   # Transfer records: host<->GPU copies, cross-task receives
        self.memory = []      # AllocatorMemoryUsed per GPU at the end of the step

    def record_transfer(self, tensor, src_device, dst_device, nbytes, wire_bytes,
                        start_micros, end_micros):
        """One tensor that crossed from ``src_device`` to ``dst_device``."""
        with self._lock:
            self.transfers.append(Transfer(
                tensor=tensor, src_device=src_device, dst_device=dst_device, bytes=nbytes,
                wire_bytes=wire_bytes, start_micros=start_micros, end_micros=end_micros))

    def record(self, node, start, end, outs, memory=None):
        """What plan node ``node`` did (``start``/``end`` in microseconds)."""
        outputs = []
        for slot, value in enumerate(outs or ()):
            value = value.read() if isinstance(value, VariableResource) and \
                value.value is not None else value
            if isinstance(value, np.ndarray):
                nbytes = 0 if value.dtype == np.dtype(object) else int(value.nbytes)
                outputs.append(NodeOutput(slot=slot, tensor_description=TensorDescription(
                    dtype=node.op._outputs[slot].dtype.base_dtype.name,
                    shape=list(value.shape), requested_bytes=nbytes)))
        thread = threading.get_ident() % 100000
        # A fused node (fusion.py) ran its member ops as one kernel: each member is
        # listed, over the kernel's time span, with a label that says so.
        members = node.members or (node.op,)
        fused = " [fused: %s]" % "+".join(m.type for m in members) if node.members else ""
        records = []
        shapes = getattr(getattr(node.compute, "__self__", None), "last_shapes", {})
        for op in members:
            last = op is node.op
            out = outputs
            if not last:   # a fused member's output: its logical size, never allocated
                shape = list(shapes.get(op, ()))
                dt = op._outputs[0].dtype.base_dtype
                out = [NodeOutput(slot=0, tensor_description=TensorDescription(
                    dtype=dt.name, shape=shape,
                    requested_bytes=int(np.prod(shape)) * np.dtype(dt.np_dtype).itemsize))]
            records.append(NodeExecStats(
                node_name=op.name, op_type=op.type, all_start_micros=start,
                op_start_rel_micros=0, op_end_rel_micros=end - start,
                all_end_rel_micros=end - start, output=out,
                timeline_label="%s = %s()%s" % (op.name, op.type, fused), thread_id=thread,
                memory=[memory] if memory is not None and last else []))
        with self._lock:
            self.by_device.setdefault(node.device.name, []).extend(records)

    def device_stats(self):
        return [DeviceStepStats(device=d, node_stats=sorted(n, key=lambda x: x.all_start_micros))
                for d, n in sorted(self.by_device.items())]
