"""The data behind :class:`PlacementView`: which op ran where, and which
edges cross devices (each cross-device tensor needs a Send/Recv pair).

Three sources, from richest to poorest:

* a Graph plus a RunMetadata: the graph's edges, the step's placement;
* a Graph plus a local Session: the session placer's choices so far;
* a RunMetadata alone: the partition graphs of a remote step (with their
  ``_Send``/``_Recv`` nodes), or just the placement of a local one.

A Graph alone shows each op's *requested* device (nothing is placed yet).
"""

from dataclasses import dataclass, field

import networkx as nx

from .names import device_sort_key, task_of

SEND_RECV = ("_Send", "_Recv", "_HostSend", "_HostRecv")


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

    def __init__(self, ops, edges, send_recv=None, placed=True):
        self.ops = dict(ops)
        self.edges = [e for e in edges if e[0] in self.ops and e[1] in self.ops]
        self.placed = placed
        if send_recv is None:
            send_recv = self._pairs_from_edges()
        self.send_recv = send_recv

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, source, run_metadata=None, session=None):
        """From a Graph (with optional run_metadata or session) or a RunMetadata."""
        if hasattr(source, "get_operations"):
            return cls.from_graph(source, run_metadata, session)
        if hasattr(source, "placement"):
            return cls.from_run_metadata(source)
        raise TypeError("PlacementView needs a tf.Graph or a tf.RunMetadata, got %r"
                        % type(source).__name__)

    @classmethod
    def from_graph(cls, graph, run_metadata=None, session=None):
        placement, soft, placed = {}, set(), False
        if run_metadata is not None and run_metadata.placement:
            placement, soft, placed = dict(run_metadata.placement), set(
                run_metadata.soft_placed), True
        elif session is not None:
            placer = getattr(getattr(session, "_runtime", None), "placer", None)
            if placer is not None:  # a local session: ask its placer
                placement = {op.name: dev.name for op, dev in placer.assigned.items()}
                soft = {op.name for op in placer.soft_moved}
                placed = True
        ops, edges = {}, []
        for op in graph.get_operations():
            if placed and op.name not in placement:
                continue  # not part of any step that ran: nothing to show
            ops[op.name] = OpInfo(
                name=op.name, type=op.type, requested=op.device or "",
                assigned=placement.get(op.name, ""),
                inputs=[t.name for t in op.inputs],
                control_inputs=[c.name for c in op.control_inputs],
                outputs=[(t.name, t.dtype.name, _shape(t.shape)) for t in op.outputs],
                soft_placed=op.name in soft)
            edges += [(t.op.name, op.name, t.name) for t in op.inputs]
            edges += [(c.name, op.name, None) for c in op.control_inputs]
        pairs = None
        if run_metadata is not None and run_metadata.partition_graphs:
            pairs = _pairs_from_partitions(run_metadata.partition_graphs)
        return cls(ops, edges, pairs, placed)

    @classmethod
    def from_run_metadata(cls, md):
        ops, edges = {}, []
        soft = set(md.soft_placed)
        if md.partition_graphs:
            # Follow each Recv back to its Send, so edges skip the pair.
            nodes = [n for part in md.partition_graphs for n in part["nodes"]]
            send_input = {n["attrs"]["key"]: n["inputs"][0] for n in nodes
                          if n["op"] in SEND_RECV and n["op"].endswith("Send")}
            recv_source = {n["name"]: send_input.get(n["attrs"]["key"]) for n in nodes
                           if n["op"] in SEND_RECV and n["op"].endswith("Recv")}
            for n in nodes:
                if n["op"] in SEND_RECV:
                    continue
                inputs = []
                for src, idx in n["inputs"]:
                    if src in recv_source and recv_source[src] is not None:
                        src, idx = recv_source[src]
                    inputs.append("%s:%d" % (src, idx))
                    edges.append((src, n["name"], "%s:%d" % (src, idx)))
                for c in n.get("control", []):
                    c = recv_source.get(c, (c, 0))[0] if c in recv_source else c
                    edges.append((c, n["name"], None))
                ops[n["name"]] = OpInfo(
                    name=n["name"], type=n["op"], requested=n.get("device", ""),
                    assigned=n.get("assigned", ""), inputs=inputs,
                    control_inputs=list(n.get("control", [])),
                    outputs=[("%s:%d" % (n["name"], i), o[0], _shape(o[1]))
                             for i, o in enumerate(n.get("out", []))],
                    soft_placed=n["name"] in soft)
            return cls(ops, edges, _pairs_from_partitions(md.partition_graphs))
        # A local step: placement (and maybe step stats) but no edges.
        types, outputs = {}, {}
        for dev in md.step_stats.dev_stats:
            for ns in dev.node_stats:
                types[ns.node_name] = ns.op_type
                outputs[ns.node_name] = [
                    ("%s:%d" % (ns.node_name, o.slot), o.tensor_description.dtype,
                     list(o.tensor_description.shape)) for o in ns.output]
        for name, device in md.placement.items():
            ops[name] = OpInfo(name=name, type=types.get(name, "?"), assigned=device,
                               outputs=outputs.get(name, []), soft_placed=name in soft)
        return cls(ops, edges, [])

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

    def generations(self, group=None):
        """``{op name: layer}``: each op one layer right of its latest input.

        With ``group`` (op name -> group key) the layers are those of the
        grouped graph, so a group sits right of the groups that feed it.
        """
        group = group or {name: name for name in self.ops}
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


def _pairs_from_partitions(partition_graphs):
    pairs = []
    for part in partition_graphs:
        for n in part["nodes"]:
            if n["op"] in SEND_RECV and n["op"].endswith("Send"):
                key = n["attrs"]["key"].split(";")
                pairs.append(SendRecv(n["attrs"].get("tensor_name", key[0]), key[1], key[2]))
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
