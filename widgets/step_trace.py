"""Read one step's trace into plain records the views draw from.

A trace is a ``RunMetadata`` filled by ``sess.run(..., options=RunOptions(
trace_level=FULL_TRACE, output_partition_graphs=True), run_metadata=md)``.
Two kinds are understood, and give the same records:

* **minitf's**: ``step_stats.dev_stats`` (every op, ``_Send``/``_Recv``
  included), ``step_stats.transfers`` (one record per tensor that crossed
  devices), ``placement`` and ``partition_graphs``;
* **real TensorFlow's** protocol buffer: ``step_stats.dev_stats`` (every op,
  plus one ``RecvTensor`` record per tensor a worker received over the
  network) and ``partition_graphs``.

Both runtimes' ``partition_graphs`` are TF's ``GraphDef``\\ s, one per
device, with the ``_Send`` and ``_Recv`` nodes the partitioner added, and
are read the same way (:func:`read_partition_graphs`).

When did a transfer happen? Three moments matter, and a trace records them
on two different tasks:

* ``asked``: the receiver's ``_Recv`` started waiting for the tensor;
* ``ready``: the sender had the value and handed it over (its ``_Send``
  finished; or, when the ``_Send`` is not traced, the op that produced the
  value finished);
* ``arrived``: the receiver had the value.

So ``ready -> arrived`` is the transfer itself (what an arrow shows), and
``asked -> ready`` is time the receiver spent *waiting for the sender*,
which is the cost of a dependency between tasks, not of the network.
"""

import re
from dataclasses import dataclass, field

from minitf.timeline import sender_ready

from .names import canonical_device, task_of

#: Ops that wait for something outside the device (a peer, a queue): their
#: time on a lane is "waiting", not "running".
RECV_OPS = ("_Recv", "_HostRecv")
SEND_OPS = ("_Send", "_HostSend")
#: TF's bookkeeping nodes, never shown.
HIDDEN_OPS = ("_SOURCE", "_SINK")

# TF's DataType enum (types.proto), the values a trace uses; ref types are +100.
_TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
              7: "string", 8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16",
              17: "uint16", 19: "float16", 20: "resource", 21: "variant", 22: "uint32",
              23: "uint64"}
_TF_RECV_LABEL = re.compile(r"^\[(?P<bytes>\d+)B\] \[[^\]]*\] (?P<edge>.+) from "
                            r"(?P<src>\S+) to (?P<dst>\S+)$")


@dataclass
class OpRun:
    """One op's run: where, from when to when (µs since the epoch), what it made."""
    step: int
    device: str
    name: str
    type: str
    start: int
    end: int
    outputs: list = field(default_factory=list)   # (dtype, shape, bytes)

    @property
    def micros(self):
        return max(0, self.end - self.start)

    @property
    def output_bytes(self):
        return sum(b for _, _, b in self.outputs if b)


@dataclass
class Node:
    """One node of a partition graph (what a task was given to run)."""
    name: str
    op: str
    device: str
    inputs: list = field(default_factory=list)    # (producer name, output index)
    control: list = field(default_factory=list)   # producer names
    attrs: dict = field(default_factory=dict)     # str -> str / number
    outputs: list = field(default_factory=list)   # (dtype, shape)


@dataclass
class Transfer:
    """A tensor that crossed from one device to another in a step."""
    step: int
    tensor: str
    src_device: str
    dst_device: str
    bytes: int
    wire_bytes: int
    ready: int            # the sender handed the value over (µs since the epoch)
    arrived: int          # the receiver had it
    asked: int = None     # the receiver began waiting (None: nobody waited, e.g. a copy)
    control: bool = False  # a control signal (a token that only says "done")
    fetch: bool = False   # a fetched result going back to the master
    sender: str = ""      # the op whose end is ``ready``
    receiver: str = ""    # the op that waited (a _Recv), if traced
    ready_from: str = ""  # how ``ready`` was found, for the tooltip

    @property
    def kind(self):
        """"network" between tasks, "copy" between devices of one task."""
        return "network" if task_of(self.src_device) != task_of(self.dst_device) else "copy"

    @property
    def link(self):
        return (self.src_device, self.dst_device)

    @property
    def waited(self):
        """µs the receiver waited before the sender was even ready."""
        return max(0, self.ready - self.asked) if self.asked is not None else 0

    @property
    def wire_micros(self):
        """µs from the sender's hand-over to the arrival."""
        return max(0, self.arrived - self.ready)

    @property
    def mb_per_s(self):
        """Wire bytes per µs of wire time is exactly MB/s (decimal megabytes)."""
        return self.wire_bytes / self.wire_micros if self.wire_micros else float("inf")

    @property
    def compression(self):
        """bytes / wire_bytes: 4.0 means the wire carried a quarter."""
        return self.bytes / self.wire_bytes if self.wire_bytes else 1.0


@dataclass
class StepTrace:
    """Everything one step's trace says, whichever runtime wrote it."""
    step: int
    source: str                                   # "minitf" or "tensorflow"
    ops: list = field(default_factory=list)       # OpRun
    transfers: list = field(default_factory=list)  # Transfer
    nodes: dict = field(default_factory=dict)     # name -> Node (partition graphs)
    placement: dict = field(default_factory=dict)  # op name -> device
    soft_placed: set = field(default_factory=set)
    memory: dict = field(default_factory=dict)    # device -> {"peak", "live", "limit"}

    @property
    def start(self):
        times = [o.start for o in self.ops] + [t.ready for t in self.transfers]
        return min(times) if times else 0

    @property
    def end(self):
        times = [o.end for o in self.ops] + [t.arrived for t in self.transfers]
        return max(times) if times else 0

    def devices(self):
        found = {o.device for o in self.ops} | set(self.placement.values())
        found |= {n.device for n in self.nodes.values() if n.device}
        for t in self.transfers:
            found |= {t.src_device, t.dst_device}
        return found


# -- entry points ---------------------------------------------------------------------------
def is_tensorflow(run_metadata):
    """True for real TensorFlow's protocol buffer (it has a DESCRIPTOR)."""
    return hasattr(run_metadata, "DESCRIPTOR")


def as_list(run_metadata):
    """One RunMetadata or a list of them -> a non-empty list."""
    if hasattr(run_metadata, "step_stats"):
        return [run_metadata]
    steps = list(run_metadata)
    if not steps:
        raise ValueError("a view needs at least one RunMetadata")
    return steps


def read_steps(run_metadata):
    """``[StepTrace]`` for one RunMetadata or a list (steps numbered from 1)."""
    return [read_step(md, i) for i, md in enumerate(as_list(run_metadata), 1)]


def read_step(md, step=1):
    """One RunMetadata (minitf's or TF's) -> :class:`StepTrace`."""
    if is_tensorflow(md):
        return _read_tensorflow(md, step)
    return _read_minitf(md, step)


# -- minitf ---------------------------------------------------------------------------------
def _read_minitf(md, step):
    trace = StepTrace(step, "minitf")
    for dev in md.step_stats.dev_stats:
        device = canonical_device(dev.device)
        for ns in dev.node_stats:
            if ns.node_name == "RecvTensor":   # TF's receive records: md.step_stats.transfers has them
                continue
            start = int(ns.all_start_micros)
            outputs = [(o.tensor_description.dtype, list(o.tensor_description.shape or []),
                        int(o.tensor_description.requested_bytes)) for o in ns.output]
            trace.ops.append(OpRun(step, device, ns.node_name, ns.op_type, start,
                                   start + int(ns.all_end_rel_micros), outputs))
    trace.nodes = read_partition_graphs(md.partition_graphs)
    trace.placement = {k: canonical_device(v) for k, v in dict(md.placement).items()}
    trace.soft_placed = set(md.soft_placed)
    for m in getattr(md.step_stats, "memory", []) or []:
        trace.memory[canonical_device(m.allocator_name)] = {
            "peak": int(m.peak_bytes), "live": int(m.live_bytes),
            "limit": int(m.total_bytes)}
    runs = _runs_by_name(trace.ops)
    pairs = {(recv.attrs.get("tensor_name", "").split("#")[0],) + endpoint_devices(recv):
             (recv, send) for recv, send in send_recv_pairs(trace.nodes)}
    for t in md.step_stats.transfers:
        trace.transfers.append(_minitf_transfer(step, t, runs, pairs))
    return trace


def _runs_by_name(ops):
    out = {}
    for o in ops:
        out.setdefault(o.name, []).append(o)
    return out


def _run_on(runs, name, device):
    """The run of op ``name`` on ``device`` (or anywhere, if only one ran)."""
    candidates = runs.get(name, [])
    here = [o for o in candidates if o.device == device]
    return (here or candidates or [None])[0]


def _minitf_transfer(step, t, runs, pairs):
    src, dst = canonical_device(t.src_device), canonical_device(t.dst_device)
    # A host<->GPU copy names host memory "host": the CPU of the same task.
    if src == "host":
        src = task_of(dst) + "/device:CPU:0"
    if dst == "host":
        dst = task_of(src) + "/device:CPU:0"
    tensor = t.tensor
    fetch = tensor.endswith(" (fetch)")
    if fetch:
        tensor = tensor[:-len(" (fetch)")]
    record = Transfer(step=step, tensor=tensor, src_device=src, dst_device=dst,
                      bytes=int(t.bytes), wire_bytes=int(t.wire_bytes or t.bytes),
                      ready=int(t.start_micros), arrived=int(t.end_micros),
                      control=tensor.startswith("^"), fetch=fetch)
    if task_of(src) == task_of(dst):
        # A copy kernel starts when its input is ready: its record is the copy.
        record.ready_from = "the copy started"
        record.sender = "%s/_copy_to_..." % tensor.replace(":", "_")
        return record
    if fetch:
        producer = _run_on(runs, tensor.split(":")[0], src)
        _set_ready(record, None, producer)
        return record
    record.asked = int(t.start_micros)
    edge = (getattr(t, "edge", "") or "").split("#")[0]
    recv_node, send_node = pairs.get((edge, src, dst), (None, None))
    if recv_node is not None:  # the partition graphs say exactly which pair it was
        recv = _run_on(runs, recv_node.name, dst)
    else:   # minitf names a pair after the producer: <producer>_S<n>
        recv = _only(_runs_on(runs, dst), tensor, ("_Recv", "_HostRecv"))
    if recv is not None:
        record.receiver = recv.name
    if send_node is not None:
        producer = send_node.inputs[0][0] if send_node.inputs else None
        _set_ready(record, _run_on(runs, send_node.name, src),
                   _run_on(runs, producer, src) if producer else None)
        return record
    # No partition graphs: find the sender by the names minitf's partitioner gives.
    src_ops = [(o.name, o.type, o.start, o.end) for o in _runs_on(runs, src)]
    found = sender_ready(tensor, dst, src_ops, record.arrived)
    if found is not None:
        record.ready, record.sender, record.ready_from = found
    else:
        record.ready_from = "unknown (the sender is not in the trace)"
    return record


def _runs_on(runs, device):
    return [o for group in runs.values() for o in group if o.device == device]


def _only(ops, tensor, types):
    """The one op of ``types`` named ``<producer>_S<n>`` among ``ops``, if one."""
    producer = tensor[1:] if tensor.startswith("^") else tensor.rsplit(":", 1)[0]
    pattern = re.compile(r"^%s_S\d+$" % re.escape(producer))
    found = [o for o in ops if o.type in types and pattern.match(o.name)]
    return found[0] if len(found) == 1 else None


def endpoint_devices(node):
    """``(send device, recv device)`` of a _Send or _Recv node, from its attrs."""
    src, dst = node.attrs.get("send_device"), node.attrs.get("recv_device")
    return canonical_device(src or node.device), canonical_device(dst or "")


def send_recv_pairs(nodes):
    """``[(recv node, send node or None)]``, one per tensor a partition
    receives: every ``_Recv`` except a client-terminated one (a fed value)
    and the extra parts of a compressed tensor (minitf marks them
    ``_minitf_aux``). The ``_Send`` has the same tensor name and devices."""
    by_tensor = {}
    for n in nodes.values():
        if n.op in SEND_OPS and not n.attrs.get("client_terminated"):
            by_tensor.setdefault((n.attrs.get("tensor_name"),) + endpoint_devices(n), n)
    pairs = []
    for n in nodes.values():
        if n.op in RECV_OPS and not n.attrs.get("_minitf_aux") and \
                not n.attrs.get("client_terminated"):
            pairs.append((n, by_tensor.get((n.attrs.get("tensor_name"),)
                                           + endpoint_devices(n))))
    return pairs


def _set_ready(record, send, producer):
    """``ready``: the _Send's end (or its start, if the receiver's arrival
    was stamped first), else the producer's end, else the recorded start."""
    if send is not None:
        record.ready = send.end if send.end <= record.arrived else min(send.start,
                                                                        record.arrived)
        record.sender = send.name
        record.ready_from = "its _Send finished" if send.end <= record.arrived else \
            "its _Send started"
    elif producer is not None:
        record.ready = min(producer.end, record.arrived)
        record.sender = producer.name
        record.ready_from = "%s finished" % producer.name
    else:
        record.ready_from = "unknown (the sender is not in the trace)"


# -- real TensorFlow ------------------------------------------------------------------------
def _tf_dtype(value):
    value = int(value)
    name = _TF_DTYPES.get(value % 100 if value > 100 else value, "dtype%d" % value)
    return name + "_ref" if value > 100 else name


def _tf_shape(shape_proto):
    if shape_proto.unknown_rank:
        return None
    return [None if d.size < 0 else int(d.size) for d in shape_proto.dim]


def _tf_attrs(node):
    """The attrs the views read, as plain Python values."""
    out = {}
    for key, value in node.attr.items():
        kind = value.WhichOneof("value")
        if kind == "s":
            out[key] = value.s.decode("utf-8", "replace")
        elif kind in ("i", "f", "b"):
            out[key] = getattr(value, kind)
        elif kind == "type":
            out[key] = _tf_dtype(value.type)
        elif kind == "shape":
            out[key] = _tf_shape(value.shape)
        elif kind == "tensor":
            out[key] = {"dtype": _tf_dtype(value.tensor.dtype),
                        "shape": _tf_shape(value.tensor.tensor_shape)}
    return out


def _split_input(text):
    """``"x:1"`` -> ("x", 1), ``"x"`` -> ("x", 0)."""
    name, _, index = text.partition(":")
    return name, int(index) if index.isdigit() else 0


def read_partition_graphs(graphs):
    """``{name: Node}`` of every node of ``RunMetadata.partition_graphs``
    (TF's GraphDefs, from either runtime)."""
    nodes = {}
    for graph in graphs or []:
        for n in graph.node:
            if n.name in HIDDEN_OPS:
                continue
            inputs = [_split_input(i) for i in n.input if not i.startswith("^")]
            attrs = _tf_attrs(n)
            dtype = attrs.get("dtype") or attrs.get("T") or attrs.get("tensor_type")
            value = attrs.get("value")
            shape = attrs["shape"] if "shape" in attrs else \
                value["shape"] if isinstance(value, dict) else None
            nodes[n.name] = Node(
                name=n.name, op=n.op, device=canonical_device(n.device), inputs=inputs,
                control=[i[1:] for i in n.input if i.startswith("^")], attrs=attrs,
                outputs=[(dtype, shape)] if isinstance(dtype, str) else [])
    return nodes


def _read_tensorflow(md, step):
    trace = StepTrace(step, "tensorflow")
    received = []  # (device, NodeExecStats) of TF's RecvTensor records
    for dev in md.step_stats.dev_stats:
        device = canonical_device(dev.device)
        for ns in dev.node_stats:
            if ns.node_name == "RecvTensor" and _TF_RECV_LABEL.match(ns.timeline_label):
                received.append((device, ns))
                continue
            if ns.node_name in HIDDEN_OPS:
                continue
            start = int(ns.all_start_micros)
            outputs = [(_tf_dtype(o.tensor_description.dtype),
                        _tf_shape(o.tensor_description.shape),
                        int(o.tensor_description.allocation_description.requested_bytes))
                       for o in ns.output]
            op_type = ns.timeline_label.split(" = ", 1)[1].split("(", 1)[0] \
                if " = " in ns.timeline_label else ns.node_name
            trace.ops.append(OpRun(step, device, ns.node_name, op_type, start,
                                   start + int(ns.all_end_rel_micros), outputs))
    trace.nodes = read_partition_graphs(md.partition_graphs)
    # TF has no placement field: the partition graphs are the placement.
    trace.placement = {n.name: n.device for n in trace.nodes.values()
                       if n.op not in SEND_OPS + RECV_OPS}
    if not trace.placement:
        trace.placement = {o.name: o.device for o in trace.ops}
    runs = _runs_by_name(trace.ops)
    sends = {}
    for n in trace.nodes.values():
        if n.op in SEND_OPS:
            sends[(n.attrs.get("tensor_name"), canonical_device(n.attrs.get("send_device", "")),
                   canonical_device(n.attrs.get("recv_device", "")))] = n
    for device, ns in received:
        m = _TF_RECV_LABEL.match(ns.timeline_label)
        src, dst = canonical_device(m.group("src")), canonical_device(m.group("dst"))
        send = sends.get((m.group("edge"), src, dst))
        if send is not None and send.inputs:
            producer_name, index = send.inputs[0]
        else:  # TF names an edge "edge_<id>_<producer>"
            producer_name, index = re.sub(r"^edge_\d+_", "", m.group("edge")), 0
        producer_node = trace.nodes.get(producer_name)
        nbytes = int(m.group("bytes"))
        start = int(ns.all_start_micros)
        record = Transfer(
            step=step, tensor="%s:%d" % (producer_name, index), src_device=src,
            dst_device=dst, bytes=nbytes, wire_bytes=nbytes, ready=start,
            arrived=start + int(ns.all_end_rel_micros), asked=start,
            # TF carries a control edge between tasks as an empty Const that
            # waits for the op (its only inputs are control inputs).
            control=producer_node is not None and producer_node.op == "Const" and
            bool(producer_node.control) and not producer_node.inputs,
            receiver="RecvTensor")
        _set_ready(record, _run_on(runs, send.name, src) if send is not None else None,
                   _run_on(runs, producer_name, src))
        if record.control:
            record.tensor = "^" + ",".join(producer_node.control)
        trace.transfers.append(record)
    return trace
