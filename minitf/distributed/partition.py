"""Split a placed graph into one partition per task.

Every op goes to the partition of the task its device belongs to. Wherever an
edge crosses from task A to task B, the edge is cut and a pair of ops is
spliced in::

    task A:   producer --> _Send(key)          task B:   _Recv(key) --> consumer

The key names the tensor and both devices, so the ``_Recv`` knows what to ask
A's worker for. A control edge that crosses tasks becomes a ``_Send`` of a
tiny token that waits for the producer, and a ``_Recv`` whose ``Identity``
the consumer waits for (TF's shape of it). A fed tensor becomes an ``_Arg`` op in each partition that reads it: the
master hands the fed value to those partitions directly.

The names are TF's master's: both ops of a pair are named after the producer
with a session-wide counter (``b_S0`` sends, ``b_S1`` receives), a control
token is ``<op>/ctrl_S<n>``, and the pair's ``tensor_name`` attr is TF's
``edge_<id>_<producer>``, ``<id>`` numbering the edges of the step's graph.
The rendezvous ``key`` (``tensor;send device;recv device``) is minitf's own.

The result is plain node defs (see ``protocol.py``) ready to ship.
:func:`report` turns them into what ``RunOptions(output_partition_graphs=True)``
returns: one graph per device, in TF's vocabulary.
"""

import itertools

import numpy as np

from minitf.distributed import protocol
from minitf.framework import errors
from minitf.framework.graph_def import MINITF_ATTR
from minitf.framework.op_def import ENTERS, EXITS
from minitf.ops.array_ops import IDENTITY
from minitf.ops.compression_ops import DEQUANTIZE_LINEAR8, QUANTIZE_LINEAR8
from minitf.ops.control_flow_ops import ENTER, LOOP_COND, MERGE, NEXT_ITERATION, SWITCH
from minitf.ops.core import CONST
from minitf.ops.math_ops import CAST
from minitf.ops.sendrecv_ops import ARG, RECV, SEND
from minitf.runtime import frames, partition_graphs


class PartitionSpec:
    """What one task runs in one step signature."""

    def __init__(self, task):
        self.task = task
        self.nodes = []
        self.tensors = []
        self.feeds = {}    # fed tensor name (client's) -> "_arg_...:0" in this partition
        self.fetches = []  # tensor names fetched from this partition
        self.has_work = False


def _shape_list(shape):
    return None if shape.ndims is None else list(shape.as_tuple_or_none())


def _key(tensor_name, src_device, dst_device, suffix=""):
    """The rendezvous key of a pair: ``tensor;send device;recv device`` (a
    compressed tensor's parts add ``#q``, ``#lo``, ``#scale``)."""
    return "%s;%s;%s%s" % (tensor_name, src_device.name, dst_device.name, suffix)


def _safe(name):
    return name.replace(":", "_").replace("/", "_")


COMPRESSIONS = ("", "bfloat16", "int8")


def partition(ops, assigned, fetches, fed, compression="", incarnations=None, names=None):
    """``ops``: the pruned ops; ``assigned``: op -> Device; ``fetches``: the
    fetched tensors; ``fed``: the set of fed tensors. Returns
    ``{task name: PartitionSpec}``.

    ``incarnations`` (task name -> the incarnation its server reported when
    the session was created) goes into every ``_Recv`` as
    ``send_incarnation``, so a receive from a task that was restarted since
    fails with AbortedError instead of waiting for a step the new process
    never heard of (TF's ``send_device_incarnation``).

    ``compression`` ("bfloat16" or "int8") rewrites every float32 edge that
    crosses tasks: the sender encodes the tensor (a Cast to bfloat16, or an
    8-bit linear quantization with its min and scale), the receiver decodes
    it, and only the small encoding crosses the network.

    ``names``: the counter that numbers the Send/Recv names (TF's master
    keeps one per session, so two step signatures never reuse a name).
    """
    if compression not in COMPRESSIONS:
        raise ValueError("transfer_compression must be one of %s, not %r"
                         % (", ".join(repr(c) for c in COMPRESSIONS), compression))
    incarnations = incarnations or {}
    names = names if names is not None else itertools.count()
    specs = {}

    def new_name(prefix):
        return "%s_S%d" % (prefix, next(names))

    def spec_for(task):
        spec = specs.get(task)
        if spec is None:
            spec = specs[task] = PartitionSpec(task)
        return spec

    ordered = sorted(ops, key=lambda o: o._id)
    edge_ids = partition_graphs.edge_ids(ordered)
    more_edges = itertools.count(len(edge_ids))   # edges the partitioner adds (loops)
    head = {}   # task -> nodes that must come first (_Arg, _Recv)
    tail = {}   # task -> _Send nodes (after everything they read)
    recv_of = {}  # (tensor or ("ctl", op), task) -> (recv name, output index)
    sent = set()
    loops = _Loops(ordered, fed)
    recv_frames = {}   # (task, recv name) -> the while-loop frame it receives in

    def add_recv(task, src_device, dst_device, key, dtype, shape, edge, suffix="",
                 extra_attrs=None, frame=None):
        name = new_name(edge["_src"])
        attrs = dict(edge, key=key, send_task=src_device.task_name,
                     send_device=src_device.name, recv_device=dst_device.name,
                     T={"dtype": dtype}, client_terminated=False,
                     send_incarnation=incarnations.get(src_device.task_name, ""))
        attrs["tensor_name"] += suffix
        attrs.update(extra_attrs or {})
        head.setdefault(task, []).append({
            "name": name, "op": RECV.name, "inputs": [], "control": [], "device": "",
            "assigned": dst_device.name, "colocation": [], "attrs": attrs,
            "out": [[dtype, shape]]})
        if frame is not None:
            recv_frames[(task, name)] = frame
        return name

    def add_node(where, task, name, op_type, inputs, device, attrs, out):
        where.setdefault(task, []).append({
            "name": name, "op": op_type, "inputs": inputs, "control": [], "device": "",
            "assigned": device.name, "colocation": [], "attrs": attrs, "out": out})
        return name

    def edge_attrs(producer, consumer, edge_id):
        """TF's attrs naming the edge a pair carries (the first one it serves)."""
        return {"tensor_name": "edge_%d_%s" % (edge_id, producer), "_src": producer,
                "_dst": consumer}

    def cross(t, pname, index, src_device, dst_device, edge):
        """Splice the ops that carry ``t`` from its task to ``dst_device``'s;
        returns the name of the node whose output 0 stands for ``t`` there.
        ``edge``: :func:`edge_attrs` of the edge that needs it."""
        task, src_task = dst_device.task_name, src_device.task_name
        shape = _shape_list(t.shape)
        dtype = t.dtype.base_dtype.name
        frame = loops.value_frame(t.op)
        if not compression or dtype != "float32":
            key = _key(t.name, src_device, dst_device)
            add_send(src_task, src_device, dst_device, [pname, index], key, edge)
            return add_recv(task, src_device, dst_device, key, dtype, shape, edge,
                            frame=frame)
        base = _safe(t.name) + "_" + _safe(dst_device.name)
        orig = {"orig_dtype": "float32", "compression": compression}
        if compression == "bfloat16":
            enc = add_node(tail, src_task, "_compress_" + base, CAST.name, [[pname, index]],
                           src_device, {"SrcT": {"dtype": "float32"},
                                        "DstT": {"dtype": "bfloat16"},
                                        "T": {"dtype": "float32"}}, [["bfloat16", shape]])
            key = _key(t.name, src_device, dst_device)
            add_send(src_task, src_device, dst_device, [enc, 0], key, edge)
            recv = add_recv(task, src_device, dst_device, key, "bfloat16", shape, edge,
                            extra_attrs=orig, frame=frame)
            return add_node(head, task, "_decompress_" + base, CAST.name, [[recv, 0]],
                            dst_device, {"SrcT": {"dtype": "bfloat16"},
                                         "DstT": {"dtype": "float32"},
                                         "T": {"dtype": "bfloat16"}}, [["float32", shape]])
        enc = add_node(tail, src_task, "_quantize_" + base, QUANTIZE_LINEAR8.name,
                       [[pname, index]], src_device, {"T": {"dtype": "float32"}},
                       [["uint8", shape], ["float32", []], ["float32", []]])
        parts = []
        for slot, (suffix, dt, shp) in enumerate((("#q", "uint8", shape),
                                                  ("#lo", "float32", []),
                                                  ("#scale", "float32", []))):
            key = _key(t.name, src_device, dst_device, suffix)
            add_send(src_task, src_device, dst_device, [enc, slot], key, edge, suffix)
            recv = add_recv(task, src_device, dst_device, key, dt, shp, edge, suffix,
                            extra_attrs=orig if slot == 0 else {"aux": True}, frame=frame)
            parts.append([recv, 0])
        return add_node(head, task, "_dequantize_" + base, DEQUANTIZE_LINEAR8.name, parts,
                        dst_device, {"T": {"dtype": "float32"}}, [["float32", shape]])

    def add_send(src_task, src_device, dst_device, input_ref, key, edge, suffix=""):
        if (key, src_task) in sent:
            return
        sent.add((key, src_task))
        attrs = dict(edge, key=key, send_device=src_device.name,
                     recv_device=dst_device.name, client_terminated=False)
        attrs["tensor_name"] += suffix
        tail.setdefault(src_task, []).append({
            "name": new_name(edge["_src"]), "op": SEND.name,
            "inputs": [input_ref], "control": [],
            "device": "", "assigned": src_device.name, "colocation": [],
            "attrs": attrs, "out": []})

    for op in ordered:
        device = assigned[op]
        task = device.task_name
        spec = spec_for(task)
        spec.has_work = True
        nd = protocol.encode_op(op, spec.tensors, device.name)
        new_inputs = []
        for slot, ((pname, index), t) in enumerate(zip(nd["inputs"], op._inputs)):
            if t in fed:
                arg_name = "_arg_%s" % _safe(t.name)
                if t.name not in spec.feeds:
                    spec.feeds[t.name] = arg_name + ":0"
                    head.setdefault(task, []).append({
                        "name": arg_name, "op": ARG.name, "inputs": [], "control": [],
                        "device": "", "assigned": device.name, "colocation": [],
                        "attrs": {"T": {"dtype": t.dtype.base_dtype.name}},
                        "out": [[t.dtype.base_dtype.name, _shape_list(t.shape)]]})
                new_inputs.append([arg_name, 0])
                continue
            src_device = assigned[t.op]
            if src_device.task_name == task:
                new_inputs.append([pname, index])
                continue
            cache_key = (t, task)
            if cache_key not in recv_of:
                recv_of[cache_key] = cross(t, pname, index, src_device, device,
                                           edge_attrs(pname, op.name, edge_ids[(op, slot)]))
            new_inputs.append([recv_of[cache_key], 0])
        nd["inputs"] = new_inputs
        new_control = []
        for c, cname in zip(op._control_inputs, nd["control"]):
            if c not in assigned:
                continue
            src_device = assigned[c]
            if src_device.task_name == task:
                new_control.append(cname)
                continue
            cache_key = (("ctl", c), task)
            if cache_key not in recv_of:
                token = new_name(c.name + "/ctrl")
                src_spec = spec_for(src_device.task_name)
                tail.setdefault(src_device.task_name, []).append({
                    "name": token, "op": CONST.name, "inputs": [], "control": [c.name],
                    "device": "", "assigned": src_device.name, "colocation": [],
                    "attrs": {"value": {"tensor": len(src_spec.tensors)},
                              "dtype": {"dtype": "bool"}},
                    "out": [["bool", []]]})
                src_spec.tensors.append(np.array(True))
                edge = edge_attrs(c.name, op.name, edge_ids[(op, c)])
                key = _key("^" + c.name, src_device, device)
                add_send(src_device.task_name, src_device, device, [token, 0], key, edge)
                recv_name = add_recv(task, src_device, device, key, "bool", [], edge,
                                     frame=loops.value_frame(c))
                recv_of[cache_key] = add_node(head, task, new_name(c.name), IDENTITY.name,
                                              [[recv_name, 0]], device,
                                              {"T": {"dtype": "bool"}}, [["bool", []]])
            new_control.append(recv_of[cache_key])
        nd["control"] = new_control
        spec.nodes.append(nd)

    if loops.frames:
        def cross_loop(t, pname, index, src_device, dst_device):
            return cross(t, pname, index, src_device, dst_device,
                         edge_attrs(pname, "_loop_" + _safe(dst_device.task_name),
                                    next(more_edges)))
        _add_loop_control(loops, assigned, recv_frames, head, tail, spec_for, cross_loop,
                          recv_of)
    for t in fetches:
        if t in fed:
            continue
        spec_for(assigned[t.op].task_name).fetches.append(t.name)
    for task, spec in specs.items():
        spec.nodes = head.get(task, []) + spec.nodes + tail.get(task, [])
    return specs


# -- while loops split across tasks ------------------------------------------------------------
class _Loops:
    """The while-loop frames of a step's ops (runtime/frames.py's rule)."""

    def __init__(self, ordered, fed):
        index = {op: i for i, op in enumerate(ordered)}
        successors = [[] for _ in ordered]
        has_pred = [False] * len(ordered)
        for i, op in enumerate(ordered):
            preds = [t.op for t in op._inputs if t not in fed] + list(op._control_inputs)
            for p in preds:
                if p in index:
                    successors[index[p]].append(i)
                    has_pred[i] = True
        move = [op.op_def.frame_move for op in ordered]
        child = [op.get_attr("frame_name") if m == ENTERS else None
                 for op, m in zip(ordered, move)]
        self.frames = {}
        self.parent = {}
        self.loop_cond = {}
        self.parallel = {}
        if not any(move):
            return
        frame_of = frames.assign_frames(successors, move, child,
                                        [i for i in range(len(ordered)) if not has_pred[i]],
                                        lambda i: ordered[i].name)
        for i, op in enumerate(ordered):
            self.frames[op] = frame_of[i]
            if move[i] == ENTERS:
                self.parent[child[i]] = frame_of[i]
                self.parallel[child[i]] = op.get_attr("parallel_iterations")
            if op.op_def is LOOP_COND:
                self.loop_cond[frame_of[i]] = op
        self.move = dict(zip(ordered, move))
        self.child = dict(zip(ordered, child))

    def value_frame(self, op):
        """The frame ``op``'s outputs live in (an Enter's: the loop it enters)."""
        if not self.frames:
            return None
        frame = self.frames[op]
        move = self.move[op]
        if move == ENTERS:
            return self.child[op]
        if move == EXITS:
            return self.parent[frame]
        return frame


def _add_loop_control(loops, assigned, recv_frames, head, tail, spec_for, cross, recv_of):
    """TF's AddControlFlow (graph_partition.cc): every task that runs part of a
    loop without running the loop's condition gets a *control loop* of its own,
    ``Enter -> Merge -> Switch(pred) -> Identity -> NextIteration``, whose pred
    is the condition received from its task in every iteration: it makes the
    iterations of the loop's frame on that task. Every ``_Recv`` inside a loop
    then waits on its task's anchor for that frame (that control loop's Merge,
    or the ``LoopCond`` itself on the condition's task), so it runs once per
    iteration, with a key of its own (ops/sendrecv_ops.py adds frame and
    iteration)."""
    devices_in = {}     # (frame, task) -> a device of that task with ops of the frame
    for op, frame in loops.frames.items():
        f = loops.value_frame(op) if loops.move[op] == ENTERS else frame
        while f is not None:
            devices_in.setdefault((f, assigned[op].task_name), assigned[op])
            f = loops.parent.get(f)
    anchors = {}

    def anchor(frame, task):
        key = (frame, task)
        if key in anchors:
            return anchors[key]
        cond = loops.loop_cond.get(frame)
        if cond is None:
            raise errors.InvalidArgumentError(None, None, "The while loop %s has no LoopCond "
                                              "among the ops of this step" % frame)
        if assigned[cond].task_name == task:
            anchors[key] = cond.name
            return cond.name
        device = devices_in[key]
        base = "_loop_%s_%s" % (_safe(frame), _safe(task))
        parent = loops.parent.get(frame)
        dummy = {"name": base + "/dummy", "op": CONST.name, "inputs": [], "device": "",
                 "control": [anchor(parent, task)] if parent is not None else [],
                 "assigned": device.name, "colocation": [], "out": [["bool", []]],
                 "attrs": {"value": {"tensor": len(spec_for(task).tensors)},
                           "dtype": {"dtype": "bool"}}}
        spec_for(task).tensors.append(np.array(True))
        routing = [
            dummy,
            _node(base + "/Enter", ENTER.name, [[dummy["name"], 0]], device, {
                "T": {"dtype": "bool"}, "frame_name": frame, "is_constant": False,
                "parallel_iterations": loops.parallel.get(frame, 10)}),
            _node(base + "/Merge", MERGE.name, [[base + "/Enter", 0],
                                                [base + "/NextIteration", 0]], device,
                  {"T": {"dtype": "bool"}, "N": 2}, out=[["bool", []], ["int32", []]]),
        ]
        anchors[key] = base + "/Merge"
        t = cond.outputs[0]
        if (t, task) not in recv_of:
            recv_of[(t, task)] = cross(t, cond.name, 0, assigned[cond], device)
        pred = recv_of[(t, task)]
        routing += [
            _node(base + "/Switch", SWITCH.name, [[base + "/Merge", 0], [pred, 0]], device,
                  {"T": {"dtype": "bool"}}, out=[["bool", []], ["bool", []]]),
            _node(base + "/Identity", IDENTITY.name, [[base + "/Switch", 1]], device,
                  {"T": {"dtype": "bool"}}),
            _node(base + "/NextIteration", NEXT_ITERATION.name, [[base + "/Identity", 0]],
                  device, {"T": {"dtype": "bool"}}),
        ]
        tail.setdefault(task, []).extend(routing)
        return anchors[key]

    gated = set()
    while True:      # (making a control loop adds the Recv of its condition)
        todo = [(k, f) for k, f in recv_frames.items() if f is not None and k not in gated]
        if not todo:
            break
        for (task, recv), frame in todo:
            gated.add((task, recv))
            gate = anchor(frame, task)
            for nd in head.get(task, []):
                if nd["name"] == recv and gate not in nd["control"]:
                    nd["control"].append(gate)


def _node(name, op_type, inputs, device, attrs, out=None):
    return {"name": name, "op": op_type, "inputs": inputs, "control": [], "device": "",
            "assigned": device.name, "colocation": [], "attrs": attrs,
            "out": out or [["bool", []]]}


# -- what RunOptions(output_partition_graphs=True) reports ---------------------------------------
#: The attrs TF's _Send and _Recv have.
_TF_PAIR_ATTRS = {"T", "tensor_type", "tensor_name", "send_device", "send_device_incarnation",
                  "recv_device", "client_terminated", "_src", "_dst"}


def _incarnation_number(incarnation):
    """TF's ``send_device_incarnation`` (an int64) of minitf's hex incarnation."""
    try:
        return int(incarnation, 16)
    except (TypeError, ValueError):
        return 0


def _input_strings(nd):
    return [name if index == 0 else "%s:%d" % (name, index) for name, index in nd["inputs"]] \
        + ["^" + c for c in nd["control"]]


def _report_attrs(nd, tensors):
    """A node def's attrs as record values (arrays inline, see partition_graphs.array_attr)."""
    out = {}
    for key, value in nd["attrs"].items():
        if isinstance(value, dict) and "tensor" in value:
            value = partition_graphs.array_attr(tensors[value["tensor"]])
        out[key] = value
    return out


def report(specs, graph, assigned, client_device, incarnations, worker_names):
    """The step's partition graphs as TF's master and workers report them:
    ``[(device, [records])]`` (minitf/runtime/partition_graphs.py turns them
    into GraphDefs).

    Each task's partition is cut again per device, the way a TF worker cuts
    what its master registered (the pairs it adds are named ``b_G0``, with
    ``worker_names[task]`` counting). The nodes minitf's partitioner added
    keep their names and gain TF's attrs (``tensor_type`` and
    ``send_device_incarnation`` on a ``_Recv``). Feeds and fetches are where
    minitf's master hands them over: a fed value goes straight to every task
    that reads it (minitf's ``_Arg``, reported as TF's client-terminated
    ``_Recv`` named ``_recv_x_0``), and a fetched value comes back from the
    task that made it (a client-terminated ``_Send`` named ``_send_y_0``).
    TF instead routes both through the client device, the master task's
    CPU:0, with one more Send/Recv pair when the reader or the maker sits
    elsewhere."""
    parts = {}
    for task, spec in specs.items():
        incarnation = _incarnation_number(incarnations.get(task, ""))
        renamed = {arg.split(":")[0]: "_recv_%s" % name.replace(":", "_")
                   for name, arg in spec.feeds.items()}
        fed = {arg.split(":")[0]: name for name, arg in spec.feeds.items()}
        records, types = [], {}
        by_out = {(nd["name"], i): dtype for nd in spec.nodes
                  for i, (dtype, _) in enumerate(nd["out"])}
        for nd in spec.nodes:
            device = nd["assigned"]
            types[device] = "GPU" if "/device:GPU:" in device else "CPU"
            inputs = []
            for text in _input_strings(nd):
                name, sep, rest = text.partition(":")
                inputs.append(renamed.get(name, name) + sep + rest)
            op = graph._nodes_by_name.get(nd["name"])
            if op is not None and op.type == nd["op"] and op in assigned:
                records.append(partition_graphs.op_record(op, device, inputs, types[device]))
                continue
            attrs = _report_attrs(nd, spec.tensors)
            out = [dtype for dtype, _ in nd["out"]]
            if nd["op"] == ARG.name:
                tensor = fed[nd["name"]]
                records.append(partition_graphs.node_record(
                    renamed[nd["name"]], RECV.name, device, [], {
                        "tensor_type": attrs["T"], "tensor_name": tensor,
                        "send_device": client_device, "recv_device": device,
                        "send_device_incarnation": incarnation, "client_terminated": True},
                    out))
                continue
            if nd["op"] == RECV.name:
                attrs["tensor_type"] = attrs.pop("T")
                attrs["send_device_incarnation"] = _incarnation_number(
                    attrs.pop("send_incarnation", ""))
            elif nd["op"] == SEND.name:
                attrs["send_device_incarnation"] = incarnation
                attrs["T"] = {"dtype": by_out[(nd["inputs"][0][0], nd["inputs"][0][1])]}
            if nd["op"] in (RECV.name, SEND.name):
                # minitf's own attrs (the rendezvous key...), named as TF names
                # attrs it does not know (see framework/graph_def.py).
                attrs = {k if k in _TF_PAIR_ATTRS else MINITF_ATTR + k: v
                         for k, v in attrs.items()}
            records.append(partition_graphs.node_record(nd["name"], nd["op"], device, inputs,
                                                        attrs, out))
        by_name = {r["name"]: r for r in records}
        for tensor in spec.fetches:
            name, _, index = tensor.rpartition(":")
            producer = by_name[renamed.get(name, name)]
            index = int(index)
            records.append(partition_graphs.node_record(
                "_send_%s" % tensor.replace(":", "_"), SEND.name, producer["device"],
                [producer["name"] if index == 0 else "%s:%d" % (producer["name"], index)],
                {"T": {"dtype": producer["out"][index]}, "tensor_name": tensor,
                 "send_device": producer["device"], "recv_device": client_device,
                 "send_device_incarnation": incarnation, "client_terminated": True}))
        counter = worker_names.setdefault(task, itertools.count())
        parts.update(partition_graphs.split(
            records, lambda prefix, c=counter: "%s_G%d" % (prefix, next(c)),
            lambda device, n=incarnation: n, types))
    return partition_graphs.sorted_parts(parts)
