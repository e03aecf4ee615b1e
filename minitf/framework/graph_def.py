"""A minitf graph as TF's ``GraphDef`` protocol buffer, and back.

A GraphDef is what TensorBoard draws and what ``.pb``/``.pbtxt``/``.meta``
files hold: one ``NodeDef`` per operation, in creation order::

    node {
      name: "MatMul"
      op: "MatMul"
      input: "x"                 # output 0 of op x; "split:1" is output 1
      input: "^init"             # a control input
      device: "/job:worker/task:0"   # the *requested* device
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "transpose_a" value { b: false } }
    }

Each attribute value becomes an ``AttrValue`` as TF writes it: a dtype is a
``type``, a :class:`TensorShape` a ``shape`` (``-1`` for an unknown
dimension), a numpy array a ``tensor`` (a ``TensorProto``, see
:func:`tensor_to_proto`), Python bools/ints/floats/strings ``b``/``i``/``f``/``s``,
lists a ``list``. Attributes TF gives a default (``MatMul``'s ``grad_a``)
are written with it, as TF does, from TF's own op definitions recorded in
``tf_op_defs.pbtxt`` (see :mod:`minitf.framework.tf_op_defs`).

Where minitf's op differs from TF's, the GraphDef still reads in both:

* an attr TF's op does not have (``Cast``'s ``T``) is written as
  ``_minitf_T``: TF ignores attrs whose name starts with ``_``;
* an op whose row has a ``to_tf`` hook (the random ops, which keep their
  range in attrs where TF adds ``Mul``/``AddV2`` nodes) is written as the
  nodes TF builds, the last one keeping the op's name;
* a Python structure TF has no attr type for (the slice spec of minitf's
  ``StridedSlice``) is written as a string ``"minitf.json:..."``, so minitf
  reads its own files back; TF, which builds those ops with other inputs,
  refuses such a node.

The protos are TF's, from ``tensorboard.compat.proto`` (:mod:`.protos`).
"""

import json

import numpy as np

from minitf.framework import dtypes, tf_op_defs
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape

#: The GraphDef version TF 2.21 writes (``versions { producer: 2474 }``).
PRODUCER_VERSION = 2474

_JSON = b"minitf.json:"

#: The prefix of an attr minitf keeps on an op TF also has, but TF's version of
#: which has no such attr (minitf's ``Cast`` remembers ``T``): TF ignores attrs
#: whose name starts with ``_``, and minitf reads the name back without it.
MINITF_ATTR = "_minitf_"


# -- shapes and dtypes ------------------------------------------------------------------------
def shape_to_proto(shape):
    """A :class:`TensorShape` as a ``TensorShapeProto`` (unknown dims are -1)."""
    pb = proto("tensor_shape_pb2").TensorShapeProto()
    shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
    if shape.ndims is None:
        pb.unknown_rank = True
        return pb
    for d in shape.as_tuple_or_none():
        pb.dim.add(size=-1 if d is None else int(d))
    return pb


def shape_from_proto(pb):
    if pb.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else d.size for d in pb.dim])


# -- tensors -----------------------------------------------------------------------------------
# Which TensorProto field holds each dtype's values when they are not packed
# into ``tensor_content`` (TF's tensor_util.make_tensor_proto).
_VALUE_FIELD = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val",
    "int16": "int_val", "int8": "int_val", "uint8": "int_val", "uint16": "int_val",
    "int64": "int64_val", "bool": "bool_val", "string": "string_val",
    "float16": "half_val", "bfloat16": "half_val",
}


def tensor_to_proto(value, dtype=None):
    """A numpy array as a ``TensorProto``, packed as TF packs it.

    TF's rule (``make_tensor_proto``): a numeric array of more than one
    element is written as its raw little-endian bytes (``tensor_content``);
    one value goes into the typed field (``float_val: 1``); strings are
    always ``string_val``; float16 and bfloat16 single values are written as
    their 16 bits in ``half_val``.
    """
    arr = np.asarray(value)
    dt = dtypes.as_dtype(dtype).base_dtype if dtype is not None else dtypes.dtype_of_numpy(arr)
    pb = proto("tensor_pb2").TensorProto(dtype=dt.as_datatype_enum)
    pb.tensor_shape.CopyFrom(shape_to_proto(TensorShape(list(arr.shape))))
    if dt == dtypes.string:
        pb.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8")
                             for v in arr.reshape(-1))
        return pb
    arr = arr.astype(dt.np_dtype, copy=False)
    if arr.size > 1:
        pb.tensor_content = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"),
                                                            copy=False).tobytes()
        return pb
    field = getattr(pb, _VALUE_FIELD[dt.name])
    flat = arr.reshape(-1)
    if dt.name in ("float16", "bfloat16"):
        field.extend(int(v) for v in flat.view(np.uint16))
    else:
        field.extend(v.item() for v in flat)
    return pb


def tensor_from_proto(pb):
    """A ``TensorProto`` as a numpy array (TF's ``tf.make_ndarray``). A typed
    field shorter than the shape is filled with its last value, as in TF."""
    dt = dtypes.as_dtype(pb.dtype)
    shape = [d.size for d in pb.tensor_shape.dim]
    count = int(np.prod(shape)) if shape else 1
    if dt == dtypes.string:
        values = list(pb.string_val)
        out = np.empty(count, dtype=object)
        for i in range(count):
            out[i] = values[i] if i < len(values) else (values[-1] if values else b"")
        return out.reshape(shape)
    if pb.tensor_content:
        return np.frombuffer(pb.tensor_content, dtype=dt.np_dtype.newbyteorder("<")) \
            .astype(dt.np_dtype).reshape(shape).copy()
    values = list(getattr(pb, _VALUE_FIELD[dt.name]))
    if dt.name in ("float16", "bfloat16"):
        values = np.array(values, dtype=np.uint16).view(dt.np_dtype)
    flat = np.zeros(count, dtype=dt.np_dtype)
    if len(values):
        n = min(len(values), count)
        flat[:n] = np.asarray(values[:n], dtype=dt.np_dtype)
        flat[n:] = flat[n - 1] if n else 0
    return flat.reshape(shape)


# -- attribute values ----------------------------------------------------------------------------
def _is_tf_list(value):
    kinds = {type(v) for v in value}
    if not kinds:
        return True
    return all(k in (bool, int, float, str, bytes) or issubclass(k, (dtypes.DType, TensorShape,
                                                                         np.generic))
               for k in kinds) and len({_list_field(v) for v in value}) == 1


def _list_field(v):
    if isinstance(v, dtypes.DType):
        return "type"
    if isinstance(v, TensorShape):
        return "shape"
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if isinstance(v, (int, np.integer)):
        return "i"
    if isinstance(v, (float, np.floating)):
        return "f"
    return "s"


def _json_default(value):
    if isinstance(value, dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else list(value.as_tuple_or_none())}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError("minitf cannot write the attr value %r in a GraphDef" % (value,))


def _tag_tuples(value):
    if isinstance(value, tuple):
        return {"tuple": [_tag_tuples(v) for v in value]}
    if isinstance(value, list):
        return [_tag_tuples(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: _tag_tuples(v) for k, v in value.items()}}
    return value


def _untag(value):
    if isinstance(value, dict):
        if "tuple" in value:
            return tuple(_untag(v) for v in value["tuple"])
        if "dict" in value:
            return {k: _untag(v) for k, v in value["dict"].items()}
        if "dtype" in value:
            return dtypes.as_dtype(value["dtype"])
        if "shape" in value:
            return TensorShape(value["shape"])
    if isinstance(value, list):
        return [_untag(v) for v in value]
    return value


def attr_to_proto(value):
    """One minitf attr value as TF's ``AttrValue``."""
    av = proto("attr_value_pb2").AttrValue()
    if isinstance(value, dtypes.DType):
        av.type = value.as_datatype_enum
    elif isinstance(value, TensorShape):
        av.shape.CopyFrom(shape_to_proto(value))
    elif isinstance(value, np.ndarray):
        av.tensor.CopyFrom(tensor_to_proto(value))
    elif isinstance(value, (bool, np.bool_)):
        av.b = bool(value)
    elif isinstance(value, (int, np.integer)):
        av.i = int(value)
    elif isinstance(value, (float, np.floating)):
        av.f = float(value)
    elif isinstance(value, str):
        av.s = value.encode("utf-8")
    elif isinstance(value, bytes):
        av.s = value
    elif isinstance(value, list) and _is_tf_list(value):
        av.list.SetInParent()
        for v in value:
            field = _list_field(v)
            if field == "type":
                av.list.type.append(v.as_datatype_enum)
            elif field == "shape":
                av.list.shape.add().CopyFrom(shape_to_proto(v))
            elif field == "s":
                av.list.s.append(v.encode("utf-8") if isinstance(v, str) else bytes(v))
            else:
                getattr(av.list, field).append({"b": bool, "i": int, "f": float}[field](v))
    else:
        av.s = _JSON + json.dumps(_tag_tuples(value), default=_json_default).encode("utf-8")
    return av


def attr_from_proto(av):
    """A TF ``AttrValue`` as the Python value minitf keeps in ``op._attrs``."""
    kind = av.WhichOneof("value")
    if kind == "s":
        if av.s.startswith(_JSON):
            return _untag(json.loads(av.s[len(_JSON):].decode("utf-8")))
        try:
            return av.s.decode("utf-8")
        except UnicodeDecodeError:
            return av.s
    if kind in ("i", "f", "b"):
        return getattr(av, kind)
    if kind == "type":
        return dtypes.as_dtype(av.type)
    if kind == "shape":
        return shape_from_proto(av.shape)
    if kind == "tensor":
        return tensor_from_proto(av.tensor)
    if kind == "list":
        lst = av.list
        if lst.type:
            return [dtypes.as_dtype(t) for t in lst.type]
        if lst.shape:
            return [shape_from_proto(s) for s in lst.shape]
        if lst.s:
            return [s.decode("utf-8") for s in lst.s]
        for field in ("i", "f", "b"):
            if getattr(lst, field):
                return list(getattr(lst, field))
        if lst.tensor:
            return [tensor_from_proto(t) for t in lst.tensor]
        return []
    if kind is None:
        return None
    raise ValueError("minitf cannot read an attr of kind %r (functions and placeholders "
                     "are TF features minitf does not have)" % kind)


# -- nodes and graphs ---------------------------------------------------------------------------
def input_name(tensor):
    """How a NodeDef names an input: ``op`` for output 0, ``op:i`` otherwise."""
    return tensor.op.name if tensor.value_index == 0 else \
        "%s:%d" % (tensor.op.name, tensor.value_index)


def node_def(op, device=None, add_shapes=False):
    """``op`` as a ``NodeDef``: its name, type, inputs (then ``^control``
    inputs), requested device (or ``device``, a placed one) and attrs, with
    TF's default attrs filled in. ``add_shapes`` adds ``_output_shapes``.
    An attr TF's version of the op does not have is written as ``_minitf_<name>``."""
    nd = proto("node_def_pb2").NodeDef(name=op.name, op=op.type)
    nd.input.extend(input_name(t) for t in op._inputs)
    nd.input.extend(sorted("^" + c.name for c in op._control_inputs))   # TF sorts them
    nd.device = op.device if device is None else device
    attrs = dict(default_attrs(op.type))
    attrs.update(op._attrs)
    od = tf_op_defs.op_def(op.type) if tf_op_defs.is_tf_op(op.type) else None
    tf_attrs = None if od is None else {a.name for a in od.attr}
    for key, value in attrs.items():
        if tf_attrs is not None and key not in tf_attrs and not key.startswith("_"):
            key = MINITF_ATTR + key       # minitf's own attr: TF skips "_" attrs
        if key == "value" and getattr(op, "_splat", False) and value.size > 1:
            value = value.reshape(-1)[:1]           # one value for the whole shape, as TF
            nd.attr[key].CopyFrom(attr_to_proto(value))
            nd.attr[key].tensor.tensor_shape.CopyFrom(shape_to_proto(op.outputs[0].shape))
            continue
        nd.attr[key].CopyFrom(attr_to_proto(value))
    if getattr(op, "_manual_control_dep", False):
        # TF marks every op a control_dependencies block waits for.
        nd.attr["_has_manual_control_dependencies"].b = True
    if op._colocation:
        nd.attr["_class"].CopyFrom(attr_to_proto([c.encode("utf-8") for c in op._colocation]))
    if add_shapes and op._outputs:
        nd.attr["_output_shapes"].CopyFrom(attr_to_proto([t.shape for t in op._outputs]))
    return nd


def graph_to_graph_def(graph, from_version=None, add_shapes=False, devices=None, ops=None):
    """The whole graph (or ``ops``) as a ``GraphDef``; ``devices`` maps op
    names to placed devices (written instead of the requested ones)."""
    gd = proto("graph_pb2").GraphDef()
    gd.versions.producer = PRODUCER_VERSION
    with graph._lock:
        chosen = graph._nodes_by_id if ops is None else ops
        for op in chosen:
            if from_version is not None and op._id < from_version:
                continue
            placed = devices.get(op.name) if devices else None
            nd = node_def(op, placed, add_shapes)
            row = op._op_def
            for node in (row.to_tf(op, nd) if row is not None and row.to_tf else [nd]):
                gd.node.add().CopyFrom(node)
    return gd


_DEFAULTS = {}


def default_attrs(op_type):
    """``{attr: value}`` of the attrs TF's ``OpDef`` of ``op_type`` gives a default."""
    found = _DEFAULTS.get(op_type)
    if found is None:
        od = tf_op_defs.op_def(op_type)
        found = {} if od is None else {a.name: attr_from_proto(a.default_value)
                                       for a in od.attr if a.HasField("default_value")}
        _DEFAULTS[op_type] = found
    return found


def new_node(like, name, op_type, inputs, attrs, shapes=None):
    """A NodeDef for a row's ``to_tf`` hook: ``op_type`` named ``name`` with
    these inputs and attrs (TF's defaults added), on the device and in the
    colocation group of ``like`` (the NodeDef it replaces); ``shapes``: its
    ``_output_shapes`` when ``like`` has them."""
    nd = proto("node_def_pb2").NodeDef(name=name, op=op_type, device=like.device)
    nd.input.extend(inputs)
    values = dict(default_attrs(op_type))
    values.update(attrs)
    for key, value in values.items():
        nd.attr[key].CopyFrom(attr_to_proto(value))
    if "_class" in like.attr:
        nd.attr["_class"].CopyFrom(like.attr["_class"])
    if shapes is not None and "_output_shapes" in like.attr:
        nd.attr["_output_shapes"].CopyFrom(attr_to_proto(list(shapes)))
    return nd


def const_node(like, name, value, dtype):
    """A ``Const`` NodeDef holding ``value`` (see :func:`new_node`)."""
    arr = np.asarray(value, dtype=dtypes.as_dtype(dtype).np_dtype)
    return new_node(like, name, "Const", [], {"value": arr, "dtype": dtypes.as_dtype(dtype)},
                    [TensorShape(list(arr.shape))])
