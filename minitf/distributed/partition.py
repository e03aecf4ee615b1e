"""Split a placed graph into one partition per task.

Every op goes to the partition of the task its device belongs to. Wherever an
edge crosses from task A to task B, the edge is cut and a pair of ops is
spliced in::

    task A:   producer --> _Send(key)          task B:   _Recv(key) --> consumer

The key names the tensor and both devices, so the ``_Recv`` knows what to ask
A's worker for. A control edge that crosses tasks becomes a ``_Send`` of a
tiny token that waits for the producer, and a ``_Recv`` the consumer waits
for. A fed tensor becomes an ``_Arg`` op in each partition that reads it: the
master hands the fed value to those partitions directly.

The result is plain node defs (see ``protocol.py``) ready to ship.
"""

import numpy as np

from minitf.distributed import protocol
from minitf.framework import errors
from minitf.framework.op_def import ENTERS, EXITS
from minitf.ops.array_ops import IDENTITY
from minitf.ops.compression_ops import DEQUANTIZE_LINEAR8, QUANTIZE_LINEAR8
from minitf.ops.control_flow_ops import ENTER, LOOP_COND, MERGE, NEXT_ITERATION, SWITCH
from minitf.ops.core import CONST
from minitf.ops.math_ops import CAST
from minitf.ops.sendrecv_ops import ARG, RECV, SEND
from minitf.runtime import frames


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


def _safe(name):
    return name.replace(":", "_").replace("/", "_")


COMPRESSIONS = ("", "bfloat16", "int8")


def partition(ops, assigned, fetches, fed, compression="", incarnations=None):
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
    """
    if compression not in COMPRESSIONS:
        raise ValueError("transfer_compression must be one of %s, not %r"
                         % (", ".join(repr(c) for c in COMPRESSIONS), compression))
    incarnations = incarnations or {}
    specs = {}

    def spec_for(task):
        spec = specs.get(task)
        if spec is None:
            spec = specs[task] = PartitionSpec(task)
        return spec

    ordered = sorted(ops, key=lambda o: o._id)
    head = {}   # task -> nodes that must come first (_Arg, _Recv)
    tail = {}   # task -> _Send nodes (after everything they read)
    recv_of = {}  # (tensor or ("ctl", op), task) -> (recv name, output index)
    sent = set()
    loops = _Loops(ordered, fed)
    recv_frames = {}   # (task, recv name) -> the while-loop frame it receives in

    def add_recv(task, src_device, dst_device, tensor_name, dtype, shape, suffix="",
                 extra_attrs=None, frame=None):
        key = "%s;%s;%s%s" % (tensor_name, src_device.name, dst_device.name, suffix)
        name = "_recv_%s_%s%s" % (_safe(tensor_name), _safe(dst_device.name),
                                  suffix.replace("#", "_"))
        attrs = {"key": key, "send_task": src_device.task_name,
                 "send_device": src_device.name, "recv_device": dst_device.name,
                 "tensor_name": tensor_name, "T": {"dtype": dtype},
                 "send_incarnation": incarnations.get(src_device.task_name, "")}
        attrs.update(extra_attrs or {})
        head.setdefault(task, []).append({
            "name": name, "op": RECV.name, "inputs": [], "control": [], "device": "",
            "assigned": dst_device.name, "colocation": [], "attrs": attrs,
            "out": [[dtype, shape]]})
        if frame is not None:
            recv_frames[(task, name)] = frame
        return key, name

    def add_node(where, task, name, op_type, inputs, device, attrs, out):
        where.setdefault(task, []).append({
            "name": name, "op": op_type, "inputs": inputs, "control": [], "device": "",
            "assigned": device.name, "colocation": [], "attrs": attrs, "out": out})
        return name

    def cross(t, pname, index, src_device, dst_device):
        """Splice the ops that carry ``t`` from its task to ``dst_device``'s;
        returns the name of the node whose output 0 stands for ``t`` there."""
        task, src_task = dst_device.task_name, src_device.task_name
        shape = _shape_list(t.shape)
        dtype = t.dtype.base_dtype.name
        frame = loops.value_frame(t.op)
        if not compression or dtype != "float32":
            key, recv = add_recv(task, src_device, dst_device, t.name, dtype, shape,
                                 frame=frame)
            add_send(src_task, src_device, [pname, index], key, t.name)
            return recv
        base = _safe(t.name) + "_" + _safe(dst_device.name)
        orig = {"orig_dtype": "float32", "compression": compression}
        if compression == "bfloat16":
            enc = add_node(tail, src_task, "_compress_" + base, CAST.name, [[pname, index]],
                           src_device, {"SrcT": {"dtype": "float32"},
                                        "DstT": {"dtype": "bfloat16"},
                                        "T": {"dtype": "float32"}}, [["bfloat16", shape]])
            key, recv = add_recv(task, src_device, dst_device, t.name, "bfloat16", shape,
                                 extra_attrs=orig, frame=frame)
            add_send(src_task, src_device, [enc, 0], key, t.name)
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
            key, recv = add_recv(task, src_device, dst_device, t.name, dt, shp, suffix,
                                 extra_attrs=orig if slot == 0 else {"aux": True},
                                 frame=frame)
            add_send(src_task, src_device, [enc, slot], key, t.name)
            parts.append([recv, 0])
        return add_node(head, task, "_dequantize_" + base, DEQUANTIZE_LINEAR8.name, parts,
                        dst_device, {"T": {"dtype": "float32"}}, [["float32", shape]])

    def add_send(src_task, src_device, input_ref, key, tensor_name, control=()):
        if (key, src_task) in sent:
            return
        sent.add((key, src_task))
        tail.setdefault(src_task, []).append({
            "name": "_send_%s_%d" % (_safe(tensor_name), len(sent)), "op": SEND.name,
            "inputs": [input_ref] if input_ref else [], "control": list(control),
            "device": "", "assigned": src_device.name, "colocation": [],
            "attrs": {"key": key, "tensor_name": tensor_name}, "out": []})

    for op in ordered:
        device = assigned[op]
        task = device.task_name
        spec = spec_for(task)
        spec.has_work = True
        nd = protocol.encode_op(op, spec.tensors, device.name)
        new_inputs = []
        for (pname, index), t in zip(nd["inputs"], op._inputs):
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
                recv_of[cache_key] = cross(t, pname, index, src_device, device)
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
                token = "_token_%s" % _safe(c.name)
                src_spec = spec_for(src_device.task_name)
                tail.setdefault(src_device.task_name, []).append({
                    "name": token, "op": CONST.name, "inputs": [], "control": [c.name],
                    "device": "", "assigned": src_device.name, "colocation": [],
                    "attrs": {"value": {"tensor": len(src_spec.tensors)},
                              "dtype": {"dtype": "bool"}},
                    "out": [["bool", []]]})
                src_spec.tensors.append(np.array(True))
                key, recv_name = add_recv(task, src_device, device, "^" + c.name, "bool", [],
                                          frame=loops.value_frame(c))
                add_send(src_device.task_name, src_device, [token, 0], key, "^" + c.name)
                recv_of[cache_key] = recv_name
            new_control.append(recv_of[cache_key])
        nd["control"] = new_control
        spec.nodes.append(nd)

    if loops.frames:
        _add_loop_control(loops, assigned, recv_frames, head, tail, spec_for, cross, recv_of)
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
