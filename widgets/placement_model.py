"""The data behind :class:`PlacementView`: which op ran where, and which
edges cross devices (each cross-device tensor needs a Send/Recv pair).

Sources, from richest to poorest:

* a Graph plus a RunMetadata (minitf's or real TF's): the graph's edges,
  the step's placement;
* a Graph plus a local Session: the session placer's choices so far;
* a RunMetadata alone: its partition graphs (with their ``_Send``/``_Recv``
  nodes, followed back so an edge joins the producer to the consumer), or
  just the placement of a local minitf step.

A Graph alone shows each op's *requested* device (nothing is placed yet).
"""

import re
from dataclasses import dataclass, field

import networkx as nx

from .names import canonical_device, device_sort_key, task_of
from .step_trace import RECV_OPS, SEND_OPS, endpoint_devices, read_step, send_recv_pairs

#: How real TF names a Send/Recv pair: "edge_<id>_<producer>".
TF_EDGE = re.compile(r"^edge_\d+_")


@dataclass
class OpInfo:
    """One op as the picture and the details panel show it."""
    name: str
    type: str
    requested: str = ""
    assigned: str = ""
    inputs: list = field(default_factory=list)      # tensor names, "x:0"
    control_inputs: list = field(default_factory=list)  # op names
    outputs: list = field(default_factory=list)     # (tensor name, dtype, shape)
    soft_placed: bool = False
    start: int = None                               # µs, when the step traced it
    micros: int = None

    @property
    def device(self):
        """Where the picture puts it: the assigned device, else the request."""
        return self.assigned or self.requested or "(unplaced)"


@dataclass
class SendRecv:
    """A tensor that one device sends and another receives in this step."""
    tensor: str
    src_device: str
    dst_device: str

    @property
    def crosses_tasks(self):
        return task_of(self.src_device) != task_of(self.dst_device)


class PlacementModel:
    """Ops (``self.ops``: name -> OpInfo), data/control edges
    (``self.edges``: (src op, dst op, tensor or None)) and ``self.send_recv``."""

    def __init__(self, ops, edges, send_recv=None, placed=True, source="minitf"):
        self.ops = dict(ops)
        self.edges = [e for e in edges if e[0] in self.ops and e[1] in self.ops]
        self.placed = placed
        self.source = source
        if send_recv is None:
            send_recv = self._pairs_from_edges()
        self.send_recv = send_recv

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, source, run_metadata=None, session=None):
        """From a Graph (with optional run_metadata or session) or a RunMetadata."""
        if hasattr(source, "get_operations"):
            return cls.from_graph(source, run_metadata, session)
        if hasattr(source, "step_stats"):
            return cls.from_trace(read_step(source))
        raise TypeError("PlacementView needs a tf.Graph or a tf.RunMetadata, got %r"
                        % type(source).__name__)

    @classmethod
    def from_graph(cls, graph, run_metadata=None, session=None):
        trace = read_step(run_metadata) if run_metadata is not None else None
        placement, soft, placed = {}, set(), False
        if trace is not None and trace.placement:
            placement, soft, placed = dict(trace.placement), set(trace.soft_placed), True
        elif session is not None:
            placer = getattr(getattr(session, "_runtime", None), "placer", None)
            if placer is not None:  # a local session: ask its placer
                placement = {op.name: dev.name for op, dev in placer.assigned.items()}
                soft = {op.name for op in placer.soft_moved}
                placed = True
        times = _times(trace)
        ops, edges = {}, []
        for op in graph.get_operations():
            if placed and op.name not in placement:
                continue  # not part of any step that ran: nothing to show
            ops[op.name] = OpInfo(
                name=op.name, type=op.type, requested=op.device or "",
                assigned=canonical_device(placement.get(op.name, "")),
                inputs=[t.name for t in op.inputs],
                control_inputs=[c.name for c in op.control_inputs],
                outputs=[(t.name, t.dtype.name, _shape(t.shape)) for t in op.outputs],
                soft_placed=op.name in soft, **times.get(op.name, {}))
            edges += [(t.op.name, op.name, t.name) for t in op.inputs]
            edges += [(c.name, op.name, None) for c in op.control_inputs]
        pairs = _pairs_from_nodes(trace.nodes) if trace is not None and trace.nodes else None
        return cls(ops, edges, pairs, placed, trace.source if trace else "minitf")

    @classmethod
    def from_trace(cls, trace):
        """From a step's trace alone (see :mod:`minitf.widgets.step_trace`)."""
        ops, edges = {}, []
        times = _times(trace)
        if trace.nodes:
            nodes = trace.nodes
            # Follow each Recv back to its Send, so edges skip the pair.
            source_of = {}
            for recv, send in send_recv_pairs(nodes):
                if send is not None and send.inputs:
                    source_of[recv.name] = send.inputs[0]
                elif send is not None and send.control:
                    source_of[recv.name] = (send.control[0], None)
            for n in nodes.values():
                if n.op in SEND_OPS + RECV_OPS:
                    continue
                inputs, controls = [], []
                for src, idx in n.inputs:
                    src, idx = source_of.get(src, (src, idx))
                    if idx is None:  # a control token stands for its op
                        controls.append(src)
                        edges.append((src, n.name, None))
                        continue
                    inputs.append("%s:%d" % (src, idx))
                    edges.append((src, n.name, "%s:%d" % (src, idx)))
                for c in n.control:
                    c = source_of.get(c, (c, 0))[0]
                    controls.append(c)
                    edges.append((c, n.name, None))
                ops[n.name] = OpInfo(
                    name=n.name, type=n.op, assigned=n.device, inputs=inputs,
                    control_inputs=controls,
                    outputs=[("%s:%d" % (n.name, i), dt, _shape(shape))
                             for i, (dt, shape) in enumerate(n.outputs)],
                    soft_placed=n.name in trace.soft_placed, **times.get(n.name, {}))
            return cls(ops, edges, _pairs_from_nodes(nodes), source=trace.source)
        # A local step: placement (and maybe step stats) but no edges.
        runs = {o.name: o for o in trace.ops}
        for name, device in trace.placement.items():
            run = runs.get(name)
            ops[name] = OpInfo(name=name, type=run.type if run else "?", assigned=device,
                               outputs=[("%s:%d" % (name, i), dt, shape) for i, (dt, shape, _)
                                        in enumerate(run.outputs)] if run else [],
                               soft_placed=name in trace.soft_placed, **times.get(name, {}))
        return cls(ops, edges, [], source=trace.source)

    def _pairs_from_edges(self):
        """One Send/Recv pair per (tensor, receiving device) whose producer
        sits on another device - what the partitioner inserts."""
        seen = {}
        for src, dst, tensor in self.edges:
            a, b = self.ops[src].device, self.ops[dst].device
            if tensor is not None and a != b and self.placed:
                seen.setdefault((tensor, b), SendRecv(tensor, a, b))
        return list(seen.values())

    # -- questions a view asks ---------------------------------------------------------------
    def devices(self):
        return sorted({op.device for op in self.ops.values()}, key=device_sort_key)

    def tasks(self):
        return sorted({task_of(d) for d in self.devices()}, key=device_sort_key)

    def ops_per_device(self):
        counts = {d: 0 for d in self.devices()}
        for op in self.ops.values():
            counts[op.device] += 1
        return counts

    def soft_placed(self):
        return sorted(name for name, op in self.ops.items() if op.soft_placed)

    def scopes(self):
        """Every name scope that holds ops (``a/b`` for an op ``a/b/c``)."""
        out = set()
        for name in self.ops:
            parts = name.split("/")
            for i in range(1, len(parts)):
                out.add("/".join(parts[:i]))
        return out

    def generations(self, group):
        """``{op name: layer}`` for the graph whose nodes are ``group``'s
        values (op name -> group key): a group sits one layer right of the
        latest group that feeds it."""
        g = nx.DiGraph()
        g.add_nodes_from(set(group.values()))
        g.add_edges_from((group[a], group[b]) for a, b, _ in self.edges
                         if group[a] != group[b])
        # Groups can form cycles (scope A feeds B feeds A): one layer per
        # strongly connected component then.
        dag = nx.condensation(g)
        layer = {}
        for i, gen in enumerate(nx.topological_generations(dag)):
            for component in gen:
                for key in dag.nodes[component]["members"]:
                    layer[key] = i
        # Constants and other sources: just left of their first consumer,
        # not all piled up in column 0.
        for key in g:
            if g.in_degree(key) == 0 and g.out_degree(key) > 0:
                layer[key] = max(0, min(layer[s] for s in g.successors(key)) - 1)
        return {name: layer[key] for name, key in group.items()}


def _times(trace):
    """``{op name: {"start", "micros"}}`` from a trace's op runs."""
    if trace is None:
        return {}
    return {o.name: {"start": o.start, "micros": o.micros} for o in trace.ops}


def _pairs_from_nodes(nodes):
    """One SendRecv per tensor a partition receives from another device."""
    pairs = []
    for recv, send in send_recv_pairs(nodes):
        src, dst = endpoint_devices(recv)
        tensor = recv.attrs.get("tensor_name", "")
        if TF_EDGE.match(tensor) and send is not None and send.inputs:
            tensor = "%s:%d" % send.inputs[0]   # TF names the pair after its edge
        pairs.append(SendRecv(tensor, src, dst))
    return pairs


def _shape(shape):
    """A Tensor shape (or list) as a list with None for unknown dims, or None."""
    if shape is None:
        return None
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return None
    out = []
    for d in dims:
        d = getattr(d, "value", d)
        out.append(None if d is None or (isinstance(d, int) and d < 0) else int(d))
    return out
