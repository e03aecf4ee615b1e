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
                        start_micros, end_micros, edge=""):
        """One tensor that crossed from ``src_device`` to ``dst_device``
        (``edge``: the ``tensor_name`` of the Send/Recv pair that carried it)."""
        with self._lock:
            self.transfers.append(Transfer(
                tensor=tensor, src_device=src_device, dst_device=dst_device, bytes=nbytes,
                wire_bytes=wire_bytes, start_micros=start_micros, end_micros=end_micros,
                edge=edge))

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
            op_type = "Const" if node.folded else op.type   # as TF lists a folded op
            out = outputs
            if not last:   # a fused member's output: its logical size, never allocated
                shape = list(shapes.get(op, ()))
                dt = op._outputs[0].dtype.base_dtype
                out = [NodeOutput(slot=0, tensor_description=TensorDescription(
                    dtype=dt.name, shape=shape,
                    requested_bytes=int(np.prod(shape)) * np.dtype(dt.np_dtype).itemsize))]
            records.append(NodeExecStats(
                node_name=op.name, op_type=op_type, all_start_micros=start,
                op_start_rel_micros=0, op_end_rel_micros=end - start,
                all_end_rel_micros=end - start, output=out,
                timeline_label="%s = %s()%s" % (op.name, op_type, fused), thread_id=thread,
                memory=[memory] if memory is not None and last else []))
        with self._lock:
            self.by_device.setdefault(node.device.name, []).extend(records)

    def device_stats(self):
        return [DeviceStepStats(device=d, node_stats=sorted(n, key=lambda x: x.all_start_micros))
                for d, n in sorted(self.by_device.items())]


def task_of(device):
    """``/job:worker/replica:0/task:1`` of a device name (the name itself if it has no task)."""
    return "/".join(p for p in device.split("/") if not p.startswith("device:"))


def recv_tensor_stats(transfers):
    """TF's record of every tensor a task received from another task.

    A TF worker that receives a tensor over the network adds one
    ``NodeExecStats`` named ``RecvTensor`` to the receiving device's stats, with
    the label ``[<bytes>B] [<rate>Mb/s] edge_<id>_<producer> from <src> to <dst>``
    (the ``tensor_name`` of the Send/Recv pair that carried it)
    and the tensor's bytes in ``output[0]``. minitf writes the same records from
    its :class:`~minitf.runtime.config.Transfer` list, so a program that counts
    the bytes between tasks from ``step_stats.dev_stats`` gives the same answer
    on both. A control edge carries no tensor: 0 bytes, as in TF (minitf's
    ``transfers`` list counts the 1-byte token it sends). Copies inside one task
    (host <-> GPU) are not network receives and are left out.

    Returns ``{receiving device: [NodeExecStats, ...]}``.
    """
    by_device = {}
    for edge, t in enumerate(transfers):
        if "host" in (t.src_device, t.dst_device) or task_of(t.src_device) == task_of(t.dst_device):
            continue
        tensor = t.tensor[:-len(" (fetch)")] if t.tensor.endswith(" (fetch)") else t.tensor
        control = tensor.startswith("^")
        producer = tensor.lstrip("^")
        if producer.endswith(":0"):
            producer = producer[:-2]
        nbytes = 0 if control else int(t.bytes)
        micros = max(int(t.end_micros) - int(t.start_micros), 0)
        rate = nbytes * 8 / micros if micros else 0.0   # bits per microsecond = Mb/s
        # The pair's own name for its edge (what its partition graphs call
        # it); a fetch, which no pair carries, is numbered by its place here.
        name = t.edge.split("#", 1)[0] if t.edge else "edge_%d_%s" % (edge, producer)
        label = "[%dB] [%.6fMb/s] %s from %s to %s" % (
            nbytes, rate, name, t.src_device, t.dst_device)
        by_device.setdefault(t.dst_device, []).append(NodeExecStats(
            node_name="RecvTensor", op_type="RecvTensor", all_start_micros=int(t.start_micros),
            op_start_rel_micros=0, op_end_rel_micros=micros, all_end_rel_micros=micros,
            output=[NodeOutput(slot=0, tensor_description=TensorDescription(
                dtype="", shape=[], requested_bytes=nbytes))],
            timeline_label=label))
    return by_device


def with_recv_tensor_stats(dev_stats, transfers):
    """``dev_stats`` with :func:`recv_tensor_stats` added to each receiving device."""
    extra = recv_tensor_stats(transfers)
    out = []
    for dev in dev_stats:
        nodes = list(dev.node_stats) + extra.pop(dev.device, [])
        out.append(DeviceStepStats(device=dev.device,
                                   node_stats=sorted(nodes, key=lambda x: x.all_start_micros)))
    out.extend(DeviceStepStats(device=d, node_stats=sorted(n, key=lambda x: x.all_start_micros))
               for d, n in sorted(extra.items()))
    return out
