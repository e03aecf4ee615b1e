"""Shipping a graph to another process as plain data (our GraphDef).

A remote session sends its graph to the master, and the master sends each
task its partition, as a list of *node defs*: plain dicts that msgpack can
carry (no pickle). Attribute values are tagged so they come back with the
right Python type::

    DType        -> {"dtype": "float32_ref"}
    TensorShape  -> {"shape": [2, None]}  ({"shape": None}: unknown rank)
    numpy array  -> {"tensor": 3}         (index into the frame's tensors,
                                           sent as raw bytes, not encoded)
    tuple        -> {"tuple": [...]}
    other dicts  -> {"dict": {...}}

:func:`import_nodes` rebuilds the ops in a :class:`Graph` with the same
names, inputs, control inputs, requested devices and colocation, so the
receiving side can prune, place and run exactly what the client built.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.dtypes import DType
from minitf.framework.graph import Graph
from minitf.framework.tensor_shape import TensorShape


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
    device a master chose, when it chose one."""
    created = []
    by_name = graph._nodes_by_name
    with graph._lock:
        for nd in node_defs:
            inputs = []
            for name, index in nd["inputs"]:
                producer = by_name.get(name)
                if producer is None:
                    raise ValueError("node %s reads %s:%d, which is not in the graph"
                                     % (nd["name"], name, index))
                inputs.append(producer._outputs[index])
            control = [by_name[c] for c in nd["control"]]
            attrs = {k: _decode_attr(v, tensors) for k, v in nd["attrs"].items()}
            out = nd["out"]
            op = _raw_op(graph, nd["op"], nd["name"], inputs,
                         [dtypes.as_dtype(d) for d, _ in out],
                         [TensorShape(s) for _, s in out], attrs, control, nd["device"],
                         nd["colocation"])
            op._assigned = nd.get("assigned") or ""
            created.append(op)
    return created


def _raw_op(graph, op_type, name, inputs, out_dtypes, out_shapes, attrs, control, device,
            colocation):
    """Insert an op exactly as described, bypassing the build-time scopes."""
    from minitf.framework.graph import Operation
    if name in graph._nodes_by_name:
        raise ValueError("Duplicate node name in graph: '%s'" % name)
    op = Operation(graph, op_type, name, inputs, out_dtypes, out_shapes, attrs, control,
                   device, colocation)
    graph._nodes_by_name[name] = op
    graph._nodes_by_id.append(op)
    graph._names_in_use[name.lower()] = 1
    for t in inputs:
        graph._consumers.setdefault(t, []).append(op)
    graph._version += 1
    return op


def new_graph_from(node_defs, tensors):
    graph = Graph()
    import_nodes(graph, node_defs, tensors)
    return graph
