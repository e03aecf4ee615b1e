"""What minitf's processes say to each other: every request, and how values travel.

Frames (``wire.py``) carry a msgpack header and raw tensor bytes. This module
is the vocabulary on top: the name of every request (the header's ``"op"``),
which service answers it, and every Python value that travels as plain data
(a session's config, a device, a graph's nodes, a step's stats). A service
answers by looking the request's name up in a table of handlers
(:func:`dispatch`), never by a chain of ``if``.

Requests to a master (from a client's :class:`~minitf.distributed.client.RemoteRuntime`):

=================  ====================================================================
CreateSession      config, the graph's nodes -> session handle, the cluster's devices
ExtendSession      session, nodes added since -> {}
RunStep            session, step id, fetches/targets/feeds (names), fed tensors,
                   deadline_ms, trace/placement/partitions flags -> fetched tensors
CancelStep         session, step -> {} (Ctrl-C in the client)
CloseSession       session -> {}
Reset              containers -> {} (``tf.Session.reset``)
ListDevices        config, deadline_ms -> the devices its device_filters keep
=================  ====================================================================

Requests to a worker (from a master, and from peers for ``RecvTensor``):

=================  ====================================================================
GetStatus          -> task name and devices (also "are you up?")
RegisterGraph      session, partition nodes, config -> graph handle
RunGraph           graph, step, feeds, fetches, deadline_ms, trace -> tensors, stats
RecvTensor         step, key, deadline_ms -> the tensor (or ``dead``)
AbortStep          step, message -> {} (another task of the step failed)
DeregisterGraph    graph -> {}
CleanupSession     session -> {}
ResetContainers    containers -> {}
ListState          values -> every resource's summary (and variables' values)
=================  ====================================================================

Every request that may wait carries ``deadline_ms``: the milliseconds left
before the caller gives up (0: no deadline), so the callee can fail first and
say precisely what it was waiting for. Anything else (negative, NaN, a
string) is refused: a NaN compares false with every time, so it would
silently mean "wait for ever".

One message is not a request: ``Goodbye`` (no reply) tells a server that the
peer closes this connection on purpose, not because its process died (see
``Peer`` in server.py: values left for a vanished master's steps are dropped).

A handler is called as ``handler(header, tensors, peer)``: ``peer`` is the
server's :class:`~minitf.distributed.server.Peer` for the connection the
request came on (None when a master calls its own worker in-process), which a
handler that waits uses to notice that nobody waits for its answer any more.
"""

import math
import time

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.dtypes import DType
from minitf.framework.graph import Operation
from minitf.framework.op_def import lookup
from minitf.framework.tensor_shape import TensorShape
from minitf.runtime.config import (ConfigProto, DeviceStepStats, NodeExecStats, NodeOutput,
                                   OptimizerOptions, TensorDescription, Transfer)
from minitf.runtime.devices import Device

# -- request names ------------------------------------------------------------------------------
CREATE_SESSION = "CreateSession"
EXTEND_SESSION = "ExtendSession"
RUN_STEP = "RunStep"
CANCEL_STEP = "CancelStep"
CLOSE_SESSION = "CloseSession"
RESET = "Reset"
LIST_DEVICES = "ListDevices"
MASTER_REQUESTS = frozenset({CREATE_SESSION, EXTEND_SESSION, RUN_STEP, CANCEL_STEP,
                             CLOSE_SESSION, RESET, LIST_DEVICES})

GET_STATUS = "GetStatus"
REGISTER_GRAPH = "RegisterGraph"
RUN_GRAPH = "RunGraph"
RECV_TENSOR = "RecvTensor"
RECV_TENSORS = "RecvTensors"
ABORT_STEP = "AbortStep"
DEREGISTER_GRAPH = "DeregisterGraph"
CLEANUP_SESSION = "CleanupSession"
RESET_CONTAINERS = "ResetContainers"
LIST_STATE = "ListState"
WORKER_REQUESTS = frozenset({GET_STATUS, REGISTER_GRAPH, RUN_GRAPH, RECV_TENSOR,
                             RECV_TENSORS, ABORT_STEP, DEREGISTER_GRAPH, CLEANUP_SESSION,
                             RESET_CONTAINERS, LIST_STATE})


class Streamed:
    """A reply sent as several frames, one per item as it is ready (e.g. the
    tensors of a ``RecvTensors`` request, in the order their senders produce
    them). ``frames`` yields ``(header, tensors)``; every header but the last
    says ``"more": True``. A failure part-way ends the stream with an error
    frame."""

    __slots__ = ("frames",)

    def __init__(self, frames):
        self.frames = frames

GOODBYE = "Goodbye"   # not a request: the peer closes the connection on purpose


def dispatch(handlers, header, tensors, peer=None):
    """Answer a request with ``handlers[header["op"]](header, tensors, peer)``."""
    name = header.get("op")
    handler = handlers.get(name) if isinstance(name, str) else None
    if handler is None:
        raise errors.UnimplementedError(None, None, "unknown request %r" % (name,))
    return handler(header, tensors, peer)


# -- deadlines ---------------------------------------------------------------------------------
def remaining_ms(deadline):
    """A deadline (``time.monotonic()``) as milliseconds left, for a header (0: none)."""
    if deadline is None:
        return 0
    return max(1, int((deadline - time.monotonic()) * 1000))


def deadline_from_ms(ms):
    """The absolute deadline a header's ``deadline_ms`` stands for (None: none).

    Raises InvalidArgumentError unless ``ms`` is a finite number >= 0 (or
    missing)."""
    if ms is None or ms == 0:
        return None
    if type(ms) not in (int, float) or not math.isfinite(ms) or ms < 0:
        raise errors.InvalidArgumentError(
            None, None, "deadline_ms must be a finite number of milliseconds >= 0 (0: no "
            "deadline), got %r" % (ms,))
    return time.monotonic() + ms / 1000.0


# -- a session's config ---------------------------------------------------------------------
def config_to_wire(config):
    """The ConfigProto fields a master and its workers honour for a session."""
    graph_options = config.graph_options
    return {"allow_soft_placement": config.allow_soft_placement,
            "log_device_placement": config.log_device_placement,
            "operation_timeout_in_ms": config.operation_timeout_in_ms,
            "device_filters": list(config.device_filters),
            "inter_op_parallelism_threads": config.inter_op_parallelism_threads,
            "intra_op_parallelism_threads": config.intra_op_parallelism_threads,
            "use_per_session_threads": config.use_per_session_threads,
            "fuse_elementwise": graph_options.fuse_elementwise,
            "opt_level": graph_options.optimizer_options.opt_level,
            "do_constant_folding": graph_options.optimizer_options.do_constant_folding,
            "transfer_compression": graph_options.transfer_compression}


def config_from_wire(d):
    config = ConfigProto()
    if d:
        config.allow_soft_placement = bool(d.get("allow_soft_placement"))
        config.log_device_placement = bool(d.get("log_device_placement"))
        config.operation_timeout_in_ms = int(d.get("operation_timeout_in_ms") or 0)
        config.device_filters = list(d.get("device_filters") or [])
        config.inter_op_parallelism_threads = int(d.get("inter_op_parallelism_threads") or 0)
        config.intra_op_parallelism_threads = int(d.get("intra_op_parallelism_threads") or 0)
        config.use_per_session_threads = bool(d.get("use_per_session_threads"))
        config.graph_options.fuse_elementwise = bool(d.get("fuse_elementwise", True))
        config.graph_options.optimizer_options.opt_level = int(
            d.get("opt_level", OptimizerOptions.L1))
        config.graph_options.optimizer_options.do_constant_folding = bool(
            d.get("do_constant_folding"))
        config.graph_options.transfer_compression = d.get("transfer_compression") or ""
    return config


# -- devices ----------------------------------------------------------------------------------
def device_to_wire(device):
    return device.as_dict()


def device_from_wire(d):
    spec = DeviceSpec.from_string(d["name"])
    return Device(spec.job, spec.replica, spec.task, spec.device_type, spec.device_index,
                  memory_limit=d.get("memory_limit", 0), virtual=d.get("virtual", False),
                  description=d.get("description", ""))


# -- a step's stats -----------------------------------------------------------------------------
def stats_to_wire(dev_stats, transfers):
    """A worker's trace of one step as plain data."""
    return {"dev_stats": [{"device": dev.device, "nodes": [
        [n.node_name, n.op_type, n.all_start_micros, n.all_end_rel_micros,
         [[o.slot, o.tensor_description.dtype, o.tensor_description.shape,
           o.tensor_description.requested_bytes] for o in n.output], n.thread_id,
         n.timeline_label]
        for n in dev.node_stats]} for dev in dev_stats],
        "transfers": [transfer_to_wire(t) for t in transfers]}


def transfer_to_wire(t):
    return [t.tensor, t.src_device, t.dst_device, t.bytes, t.start_micros, t.end_micros,
            t.wire_bytes, t.edge]


def stats_from_wire(stats):
    """``(dev_stats, transfers)`` rebuilt from what workers sent."""
    dev_stats = []
    for d in stats.get("dev_stats", []):
        nodes = [NodeExecStats(node_name=n[0], op_type=n[1], all_start_micros=n[2],
                               op_start_rel_micros=0, op_end_rel_micros=n[3],
                               all_end_rel_micros=n[3], thread_id=n[5],
                               timeline_label=n[6],
                               output=[NodeOutput(slot=o[0], tensor_description=TensorDescription(
                                   dtype=o[1], shape=o[2], requested_bytes=o[3]))
                                   for o in n[4]])
                 for n in d["nodes"]]
        dev_stats.append(DeviceStepStats(device=d["device"], node_stats=nodes))
    transfers = [Transfer(tensor=t[0], src_device=t[1], dst_device=t[2], bytes=t[3],
                          start_micros=t[4], end_micros=t[5], wire_bytes=t[6],
                          edge=t[7] if len(t) > 7 else "")
                 for t in stats.get("transfers", [])]
    return dev_stats, transfers


# -- graphs: node defs ----------------------------------------------------------------------
# A remote session ships its graph to the master, and the master ships each task
# its partition, as a list of *node defs*: plain dicts that msgpack can carry
# (no pickle). Attribute values are tagged so they come back with the right
# Python type:
#
#     DType        -> {"dtype": "float32_ref"}
#     TensorShape  -> {"shape": [2, None]}  ({"shape": None}: unknown rank)
#     numpy array  -> {"tensor": 3}         (index into the frame's tensors,
#                                            sent as raw bytes, not encoded)
#     tuple        -> {"tuple": [...]}
#     other dicts  -> {"dict": {...}}
#
# import_nodes rebuilds the ops in a Graph with the same names, inputs, control
# inputs, requested devices and colocation, so the receiving side can prune,
# place and run exactly what the client built.

def _encode_attr(value, tensors):
    if isinstance(value, DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else list(value.as_tuple_or_none())}
    if isinstance(value, np.ndarray):
        tensors.append(value)
        return {"tensor": len(tensors) - 1}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [_encode_attr(v, tensors) for v in value]}
    if isinstance(value, list):
        return [_encode_attr(v, tensors) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: _encode_attr(v, tensors) for k, v in value.items()}}
    return value


def _decode_attr(value, tensors):
    if isinstance(value, dict):
        if "dtype" in value:
            return dtypes.as_dtype(value["dtype"])
        if "shape" in value:
            return TensorShape(value["shape"])
        if "tensor" in value:
            arr = tensors[value["tensor"]]
            arr.flags.writeable = False
            return arr
        if "tuple" in value:
            return tuple(_decode_attr(v, tensors) for v in value["tuple"])
        if "dict" in value:
            return {k: _decode_attr(v, tensors) for k, v in value["dict"].items()}
    if isinstance(value, list):
        return [_decode_attr(v, tensors) for v in value]
    return value


def encode_attr(value, tensors):
    """One attr value as plain data (arrays are appended to ``tensors``)."""
    return _encode_attr(value, tensors)


def encode_op(op, tensors, device=None):
    """One op as a node def; array attrs are appended to ``tensors``."""
    return {
        "name": op.name,
        "op": op.type,
        "inputs": [[t.op.name, t.value_index] for t in op._inputs],
        "control": [c.name for c in op._control_inputs],
        "device": op.device,
        "assigned": device or "",
        "colocation": list(op._colocation),
        "attrs": {k: _encode_attr(v, tensors) for k, v in op._attrs.items()},
        "out": [[t.dtype.name, _encode_attr(t.shape, tensors)["shape"]] for t in op._outputs],
    }


def encode_ops(ops):
    """``(node_defs, tensors)`` for a list of ops in creation order."""
    tensors = []
    return [encode_op(op, tensors) for op in ops], tensors


def import_nodes(graph, node_defs, tensors):
    """Add the node defs to ``graph`` (inputs must already be there or come
    earlier in the list). Returns the new ops; ``op._assigned`` holds the
    device a master chose, when it chose one.

    All or nothing: if one node is refused (an unknown op type, a missing
    input, a malformed attr), the nodes added before it are taken out again,
    so the graph is as it was and sending the same nodes again meets the same
    error, not "Duplicate node name"."""
    created = []
    with graph._lock:
        version, names_in_use = graph._version, dict(graph._names_in_use)
        try:
            _import_each(graph, node_defs, tensors, created)
        except Exception as e:
            _remove_ops(graph, created)
            graph._version, graph._names_in_use = version, names_in_use
            if isinstance(e, errors.OpError):
                raise
            raise errors.InvalidArgumentError(
                None, None, "Cannot import node %d of %d: %s: %s (no node was added)"
                % (len(created) + 1, len(node_defs), type(e).__name__, e)) from None
    return created


def _remove_ops(graph, ops):
    """Undo :func:`_raw_op` for ``ops`` (the newest ops of ``graph``)."""
    for op in reversed(ops):
        del graph._nodes_by_name[op.name]
        for t in op._inputs:
            consumers = graph._consumers.get(t)
            if consumers and op in consumers:
                consumers.remove(op)
                if not consumers:
                    del graph._consumers[t]
    del graph._nodes_by_id[len(graph._nodes_by_id) - len(ops):]


def _import_each(graph, node_defs, tensors, created):
    by_name = graph._nodes_by_name
    later = {nd["name"] for nd in node_defs}
    forward = []   # (op, input index, name, output index): a while loop's back edge
    for nd in node_defs:
        inputs = []
        for name, index in nd["inputs"]:
            producer = by_name.get(name)
            if producer is None:
                if name not in later:
                    raise ValueError("node %s reads %s:%d, which is not in the graph"
                                     % (nd["name"], name, index))
                forward.append((nd["name"], len(inputs), name, index))
                inputs.append(None)       # filled in below
                continue
            inputs.append(producer._outputs[index])
        control = [by_name[c] for c in nd["control"] if c in by_name]
        attrs = {k: _decode_attr(v, tensors) for k, v in nd["attrs"].items()}
        out = nd["out"]
        op = _raw_op(graph, nd["op"], nd["name"], inputs,
                     [dtypes.as_dtype(d) for d, _ in out],
                     [TensorShape(s) for _, s in out], attrs, control, nd["device"],
                     nd["colocation"])
        op._assigned = nd.get("assigned") or ""
        created.append(op)
    for op, nd in zip(created, node_defs):
        for c in nd["control"]:
            if c not in by_name:
                raise ValueError("node %s waits for %s, which is not in the graph"
                                 % (nd["name"], c))
            if by_name[c] not in op._control_inputs:
                op._control_inputs.append(by_name[c])
    for name, position, producer, index in forward:
        by_name[name]._update_input(position, by_name[producer]._outputs[index])


def _raw_op(graph, op_type, name, inputs, out_dtypes, out_shapes, attrs, control, device,
            colocation):
    """Insert an op exactly as described, bypassing the build-time scopes."""
    if name in graph._nodes_by_name:
        raise ValueError("Duplicate node name in graph: '%s'" % name)
    row = lookup(op_type)     # an op type this process does not know is an error
    op = Operation(graph, op_type, name, inputs, out_dtypes, out_shapes, attrs, control,
                   device, colocation)
    op._op_def = row
    graph._nodes_by_name[name] = op
    graph._nodes_by_id.append(op)
    graph._names_in_use[name.lower()] = 1
    for t in inputs:
        if t is not None:
            graph._consumers.setdefault(t, []).append(op)
    graph._version += 1
    return op
