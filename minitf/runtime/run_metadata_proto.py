"""minitf's ``RunMetadata`` as TF's ``RunMetadata`` protocol buffer.

``sess.run(..., options=RunOptions(trace_level=FULL_TRACE), run_metadata=md)``
fills a minitf :class:`~minitf.runtime.config.RunMetadata` with the step's
trace: for every device, one ``NodeExecStats`` per op that ran (start time,
duration, output shapes and bytes, GPU memory). TensorBoard and TF's tools
read TF's ``RunMetadata`` message (``config_pb2``), so this module writes the
same facts into it, field for field:

====================================  =========================================
minitf                                TF's ``RunMetadata``
====================================  =========================================
``step_stats.dev_stats[d]``           ``step_stats.dev_stats`` (``device``)
``node_stats[n]``: name, times        ``node_name``, ``all_start_micros``,
                                      ``op_start_rel_micros``... and the same
                                      times in nanoseconds (``all_start_nanos``)
``output[k].tensor_description``      ``output`` (``slot``, ``dtype`` enum,
                                      ``shape``, ``allocation_description``
                                      with the requested bytes)
``memory``                            ``memory`` (``AllocatorMemoryUsed``)
``partition_graphs``                  ``partition_graphs``, as they are (one
                                      ``GraphDef`` per device, see
                                      partition_graphs.py)
====================================  =========================================

TensorBoard's graph dashboard uses exactly these: with a run's metadata
selected it colours each node by the device its stats name and shows its
compute time and memory. minitf's extra fields (``transfers``, the step's
memory summary, ``placement``) have no place in TF's message and are left out.
"""

from minitf.framework import dtypes
from minitf.framework.graph_def import shape_to_proto
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape


def step_stats_to_proto(step_stats):
    """A minitf ``StepStats`` as TF's ``StepStats``."""
    pb = proto("step_stats_pb2").StepStats()
    for dev in step_stats.dev_stats:
        d = pb.dev_stats.add(device=dev.device)
        for n in dev.node_stats:
            node = d.node_stats.add(
                node_name=n.node_name, all_start_micros=int(n.all_start_micros),
                op_start_rel_micros=int(n.op_start_rel_micros),
                op_end_rel_micros=int(n.op_end_rel_micros),
                all_end_rel_micros=int(n.all_end_rel_micros),
                timeline_label=n.timeline_label, thread_id=int(n.thread_id))
            node.all_start_nanos = node.all_start_micros * 1000
            node.op_start_rel_nanos = node.op_start_rel_micros * 1000
            node.op_end_rel_nanos = node.op_end_rel_micros * 1000
            node.all_end_rel_nanos = node.all_end_rel_micros * 1000
            for out in n.output:
                td = out.tensor_description
                o = node.output.add(slot=int(out.slot))
                if td.dtype:   # a RecvTensor record names no dtype, as in TF
                    o.tensor_description.dtype = dtypes.as_dtype(td.dtype).as_datatype_enum
                o.tensor_description.shape.CopyFrom(shape_to_proto(TensorShape(list(td.shape))))
                alloc = o.tensor_description.allocation_description
                alloc.requested_bytes = int(td.requested_bytes)
                alloc.allocated_bytes = int(td.requested_bytes)
                alloc.allocator_name = "cpu" if "/device:CPU" in dev.device else \
                    dev.device.rsplit("/", 1)[-1].lower()
            for m in n.memory:
                node.memory.add(allocator_name=m.allocator_name, total_bytes=int(m.total_bytes),
                                peak_bytes=int(m.peak_bytes), live_bytes=int(m.live_bytes),
                                allocator_bytes_in_use=int(m.allocator_bytes_in_use))
    return pb


def run_metadata_to_proto(run_metadata):
    """A minitf ``RunMetadata`` (or TF's, returned as is) as TF's ``RunMetadata``."""
    config_pb2 = proto("config_pb2")
    if isinstance(run_metadata, config_pb2.RunMetadata):
        return run_metadata
    pb = config_pb2.RunMetadata()
    pb.step_stats.CopyFrom(step_stats_to_proto(run_metadata.step_stats))
    for graph in run_metadata.partition_graphs:    # already TF's GraphDefs
        pb.partition_graphs.add().CopyFrom(graph)
    return pb
