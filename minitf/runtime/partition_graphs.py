"""``RunOptions(output_partition_graphs=True)``: what each device ran, as TF's GraphDefs.

TF answers that option with ``run_metadata.partition_graphs``: one ``GraphDef``
per device that took part in the step, each holding the ops placed there
plus the nodes the partitioner added. This module builds the same thing for
minitf, in three steps a learner can follow:

1. **records** - every op of the step becomes a plain dict (name, op type,
   placed device, inputs as a NodeDef writes them, output dtypes); the step's
   feeds and fetches become the nodes TF gives them (below);
2. **split by device** (:func:`split`, TF's ``graph_partition.cc``) - every
   edge whose two ends sit on different devices is cut, and a pair is
   spliced in::

       device A:  producer -> _Send(tensor_name="edge_4_b")
       device B:  _Recv(tensor_name="edge_4_b") -> consumer

   named after the producer with a counter (``b/_0``, ``b/_1`` in a local
   session). One ``_Recv`` serves every consumer on its device. A control
   edge sends a tiny constant instead (``b/ctrl/_2``) and the consumer waits
   for an ``Identity`` of what arrived. On a GPU, a tensor that lives in
   host memory travels with ``_HostSend``/``_HostRecv`` (the same rule
   runtime/copies.py uses to decide which host<->GPU copies a plan needs);
3. **GraphDefs** (:func:`graph_defs`) - each device's records as a GraphDef,
   the ops of the graph with all their attrs, the devices sorted by name.

Feeds and fetches. A local session (TF's DirectSession) reads fed values
through ``_Arg`` nodes and hands fetched ones back through ``_Retval``
nodes, both on the client's device (``/job:localhost/replica:0/task:0/
device:CPU:0``), numbered in the order of the tensors' names
(``_arg_x_0_0``, ``_retval_y_0_0``). A remote session's partitions receive
fed values and send fetched ones with *client-terminated* ``_Recv``/``_Send``
nodes (``_recv_x_0``, ``_send_y_0``, see minitf/distributed/partition.py).

What differs from TF: minitf's local executor runs one plan over all the
session's devices, so between two CPU devices the value is simply handed
over (the same pointer TF's in-process ``_Send``/``_Recv`` pass) and between
host and GPU a copy node moves it; the pairs here show the edges where that
happens. The ops are the graph's as built: TF's graph optimizer (grappler)
may rewrite them first, minitf fuses elementwise chains only later, inside
the plan.
"""

import itertools
import re

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph_def import PRODUCER_VERSION, attr_to_proto, input_name, node_def
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape
from minitf.runtime.copies import host_memory_inputs, outputs_in_host_memory

#: Where a local session's feeds and fetches live (TF's client device).
LOCAL_CLIENT_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
#: TF's send_device_incarnation for a local session's devices.
LOCAL_INCARNATION = 1


# -- 1. records ---------------------------------------------------------------------------------
def edge_ids(ops):
    """TF names a Send/Recv pair after the id of the edge it cuts. The ids
    here number the edges of the step's graph: ops in creation order, each
    op's data inputs and then its control inputs. Returns
    ``{(consumer op, input index or control input op): id}``."""
    ids = {}
    counter = itertools.count()
    for op in ops:
        for i in range(len(op._inputs)):
            ids[(op, i)] = next(counter)
        for c in op._control_inputs:
            ids[(op, c)] = next(counter)
    return ids


def op_record(op, device, inputs, device_type=None):
    """One op of the step as a record: ``inputs`` are NodeDef input strings
    (``"b"``, ``"b:1"``, ``"^c"``); ``device_type`` (``"GPU"``...) marks the
    inputs and outputs a GPU kernel keeps in host memory."""
    record = {"name": op.name, "op": op.type, "device": device, "input": list(inputs),
              "out": [t.dtype.base_dtype.name for t in op._outputs], "graph": True}
    if device_type == "GPU":
        host_in = sorted(host_memory_inputs(op, device_type))
        if host_in:
            record["host_in"] = host_in
        if outputs_in_host_memory(op, device_type):
            record["host_out"] = list(range(len(op._outputs)))
    return record


def node_record(name, op_type, device, inputs, attrs, out=()):
    """A node the partitioner adds (``attrs``: plain values, dtypes as
    ``{"dtype": name}``, small arrays as ``{"array": ...}``, see :func:`array_attr`)."""
    return {"name": name, "op": op_type, "device": device, "input": list(inputs),
            "attr": dict(attrs), "out": list(out), "graph": False}


def array_attr(value):
    """A small numpy array as a plain record value (it crosses the wire in a
    master's reply, where raw tensors are not sent)."""
    value = np.asarray(value)
    return {"array": {"dtype": dtypes.as_dtype(value.dtype).name, "shape": list(value.shape),
                      "values": value.reshape(-1).tolist()}}


def local_records(graph, placement, feeds, fetches, device_types):
    """The records of one local step: ``placement`` (op name -> device name,
    the plan's ops), the fed and fetched tensors, and ``device_types``
    (device name -> "CPU"/"GPU")."""
    ops = sorted((graph.get_operation_by_name(n) for n in placement), key=lambda o: o._id)
    used = {t for op in ops for t in op._inputs}
    fed = sorted((t for t in set(feeds) if t in used or t in fetches), key=lambda t: t.name)
    args = {t: "_arg_%s_%d_%d" % (t.op.name, t.value_index, i) for i, t in enumerate(fed)}
    records = [node_record(args[t], "_Arg", LOCAL_CLIENT_DEVICE, [],
                           {"T": {"dtype": t.dtype.base_dtype.name}, "index": i},
                           [t.dtype.base_dtype.name])
               for i, t in enumerate(fed)]

    def name_of(t):
        return args[t] if t in args else input_name(t)

    for op in ops:
        device = placement[op.name]
        inputs = [name_of(t) for t in op._inputs]
        inputs += sorted("^" + c.name for c in op._control_inputs if c.name in placement)
        records.append(op_record(op, device, inputs, device_types.get(device)))
    for i, t in enumerate(sorted(set(fetches), key=lambda t: t.name)):
        records.append(node_record("_retval_%s_%d_%d" % (t.op.name, t.value_index, i),
                                   "_Retval", LOCAL_CLIENT_DEVICE, [name_of(t)],
                                   {"T": {"dtype": t.dtype.base_dtype.name}, "index": i}))
    return records


# -- 2. split by device -------------------------------------------------------------------------
def _split_input(text):
    """``"^c"`` -> ("c", None); ``"b:1"`` -> ("b", 1); ``"b"`` -> ("b", 0)."""
    if text.startswith("^"):
        return text[1:], None
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def _is_gpu(device, device_types):
    return device_types.get(device) == "GPU" if device_types else "/device:GPU:" in device


def split(records, new_name, incarnation=lambda device: LOCAL_INCARNATION, device_types=None):
    """Cut every edge between devices (TF's ``Partition``). ``records`` in an
    order where producers come before consumers (loop back edges aside);
    ``new_name(prefix)`` names an added node; ``incarnation(device)``: its
    ``send_device_incarnation``. Returns ``{device: [records]}``."""
    by_name = {r["name"]: r for r in records}
    parts = {}
    made = {}      # (producer, output or None, receiving device, host memory) -> node to read
    edges = itertools.count()
    for dst in records:
        here = dst["device"]
        part = parts.setdefault(here, [])
        inputs, added = [], []
        for position, text in enumerate(dst["input"]):
            edge_id = next(edges)
            src_name, port = _split_input(text)
            src = by_name.get(src_name)
            if src is None:
                inputs.append(text)
                continue
            control = port is None
            src_host = not control and port in src.get("host_out", ())
            dst_host = not control and position in dst.get("host_in", ())
            gpu_dst = _is_gpu(here, device_types)
            same = src["device"] == here
            # On one GPU, host memory and device memory still need a pair.
            if same and (control or not gpu_dst or src_host == dst_host):
                inputs.append(text)
                continue
            on_host = dst_host or not gpu_dst
            key = (src_name, port, here, on_host)
            if key not in made:
                made[key] = _add_pair(parts, added, src, dst, port, edge_id, new_name,
                                      incarnation, device_types, src_host, dst_host, same)
            inputs.append(("^" if control else "") + made[key])
        part.extend(added)
        part.append(dict(dst, input=inputs))
    return parts


def _add_pair(parts, added, src, dst, port, edge_id, new_name, incarnation, device_types,
              src_host, dst_host, same):
    """Splice a Send/Recv pair into the edge ``src:port -> dst`` (``port``
    None: a control edge); return the name of the node ``dst`` reads."""
    src_device, dst_device = src["device"], dst["device"]
    tensor_name = "edge_%d_%s" % (edge_id, src["name"])
    if port is None:
        dummy = new_name(src["name"] + "/ctrl")
        parts.setdefault(src_device, []).append(node_record(
            dummy, "Const", src_device, ["^" + src["name"]],
            {"dtype": {"dtype": "float32"}, "value": array_attr(np.zeros([0], np.float32))},
            ["float32"]))
        send_from, dtype = dummy, "float32"
    else:
        send_from = src["name"] if port == 0 else "%s:%d" % (src["name"], port)
        dtype = src["out"][port]
    common = {"tensor_name": tensor_name, "send_device": src_device,
              "send_device_incarnation": incarnation(src_device), "recv_device": dst_device,
              "client_terminated": False, "_src": src["name"], "_dst": dst["name"]}
    send = new_name(src["name"])
    send_op = "_HostSend" if src_host and _is_gpu(src_device, device_types) else "_Send"
    parts.setdefault(src_device, []).append(node_record(
        send, send_op, src_device, [send_from], dict(common, T={"dtype": dtype})))
    recv = new_name(src["name"])
    recv_op = "_HostRecv" if dst_host else "_Recv"
    added.append(node_record(recv, recv_op, dst_device, ["^" + send] if same else [],
                             dict(common, tensor_type={"dtype": dtype}), [dtype]))
    if port is not None:
        return recv
    identity = new_name(src["name"])
    added.append(node_record(identity, "Identity", dst_device, [recv],
                             {"T": {"dtype": "float32"}}, ["float32"]))
    return identity


def local_partitions(graph, placement, feeds, fetches, device_types, names):
    """A local step's partitions: ``[(device, [records])]``, devices sorted
    (see :func:`local_records`; ``names`` numbers the added nodes, ``b/_0``)."""
    records = local_records(graph, placement, feeds, fetches, device_types)
    parts = split(records, lambda prefix: "%s/_%d" % (prefix, next(names)),
                  device_types=device_types)
    return sorted_parts(parts)


def _device_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def sorted_parts(parts):
    """``{device: records}`` as a list of (device, records), devices in name order
    (TF's order is that of a hash map, so programs sort them anyway)."""
    return [(d, parts[d]) for d in sorted(parts, key=_device_key)]


# -- 3. GraphDefs -------------------------------------------------------------------------------
def _attr_value(value):
    if isinstance(value, dict):
        if "dtype" in value:
            return dtypes.as_dtype(value["dtype"])
        if "shape" in value:
            return TensorShape(value["shape"])
        if "array" in value:
            a = value["array"]
            return np.array(a["values"], dtype=dtypes.as_dtype(a["dtype"]).np_dtype) \
                .reshape(a["shape"])
        if "tuple" in value:
            return [_attr_value(v) for v in value["tuple"]]
    if isinstance(value, list):
        return [_attr_value(v) for v in value]
    return value


def _added_node_def(record):
    nd = proto("node_def_pb2").NodeDef(name=record["name"], op=record["op"],
                                       device=record["device"])
    nd.input.extend(record["input"])
    for key, value in sorted(record.get("attr", {}).items()):
        value = _attr_value(value)
        if value is None or (isinstance(value, dict)):
            continue           # a value only minitf's runtime reads (none of TF's)
        nd.attr[key].CopyFrom(attr_to_proto(value))
    return nd


def graph_defs(parts, graph):
    """``[(device, records)]`` as TF's ``GraphDef``\\ s, one per device. An op
    of ``graph`` is written with all its attrs (as ``as_graph_def`` writes
    it); an added node with the attrs its record holds."""
    out = []
    for device, records in parts:
        gd = proto("graph_pb2").GraphDef()
        gd.versions.producer = PRODUCER_VERSION
        gd.library.SetInParent()
        for record in records:
            op = graph._nodes_by_name.get(record["name"]) if record.get("graph") else None
            if op is None or op.type != record["op"]:
                gd.node.add().CopyFrom(_added_node_def(record))
                continue
            nd = node_def(op, record["device"])
            del nd.input[:]
            nd.input.extend(record["input"])
            row = op._op_def
            for node in (row.to_tf(op, nd) if row is not None and row.to_tf else [nd]):
                gd.node.add().CopyFrom(node)
        out.append(gd)
    return out
