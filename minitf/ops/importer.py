"""``tf.import_graph_def``: the nodes of a ``GraphDef`` added to a graph as ops.

Each ``NodeDef`` becomes an :class:`~minitf.framework.graph.Operation` of the
same type, with its inputs, control inputs, requested device, colocation
(``_class``) and attrs, under a name prefix (``import/`` by default; ``""``
keeps the names, which is what ``import_meta_graph`` does). Nodes may come in
any order: they are created inputs first.

A NodeDef names its op type and attrs but not its outputs; as TF, minitf
reads each output's dtype from the op's definition (``tf_op_defs``: TF's
``OpDef``, whose output args say "``T``", "``out_type``", "``num_split`` times
``T``"...) and each output's shape from the ``_output_shapes`` attr TF and
minitf write into meta graphs (else from the attrs that fix it - a
constant's value, a placeholder's or variable's ``shape`` - else unknown).

A node must be an op type of minitf's op table and have the inputs minitf's
version of it takes; minitf builds a few ops differently from TF (a
``StridedSlice`` keeps its slice in an attr; ``Split`` takes its axis as an
attr) and such a node is refused with an error that says so.
"""

import heapq

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework import op_def as _op_def
from minitf.framework import tf_op_defs
from minitf.framework.graph import Operation, Tensor, get_default_graph
from minitf.framework.graph_def import MINITF_ATTR, attr_from_proto, default_attrs
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import name_scope

_SKIPPED_ATTRS = ("_class", "_output_shapes", "_has_manual_control_dependencies")


def _parse_input(name):
    """``"^op"`` -> (op, None); ``"op:2"`` -> (op, 2); ``"op"`` -> (op, 0)."""
    if name.startswith("^"):
        return name[1:], None
    op, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return op, int(index)
    return name, 0


def _order(nodes):
    """The nodes, each after every node it reads (Kahn's algorithm); a cycle
    or an input that is in neither the GraphDef nor the input map is an error."""
    by_name = {n.name: n for n in nodes}
    if len(by_name) != len(nodes):
        seen = set()
        for n in nodes:
            if n.name in seen:
                raise ValueError("Duplicate node name in graph: '%s'" % n.name)
            seen.add(n.name)
    waiting = {}
    readers = {}
    position = {n.name: i for i, n in enumerate(nodes)}
    ready = []
    for n in nodes:
        deps = {_parse_input(i)[0] for i in n.input} & by_name.keys()
        waiting[n.name] = len(deps)
        for d in deps:
            readers.setdefault(d, []).append(n.name)
        if not deps:
            ready.append(position[n.name])
    heapq.heapify(ready)      # among the ready nodes, the GraphDef's order
    ordered = []
    while ready:
        node = nodes[heapq.heappop(ready)]
        ordered.append(node)
        for r in readers.get(node.name, ()):
            waiting[r] -= 1
            if waiting[r] == 0:
                heapq.heappush(ready, position[r])
    if len(ordered) != len(nodes):
        stuck = sorted(n for n, k in waiting.items() if k > 0)
        raise ValueError("GraphDef cannot be imported: the nodes %s read each other in a "
                         "cycle" % ", ".join(stuck[:5]))
    return ordered


def output_dtypes(op_type, attrs):
    """The dtypes of a node's outputs, from TF's ``OpDef`` output args and its attrs."""
    od = tf_op_defs.op_def(op_type)
    if od is None:
        raise errors.NotFoundError(None, None, "Op type not registered '%s' in minitf: it has "
                                   "no definition of it to read its outputs from" % op_type)
    out = []
    for arg in od.output_arg:
        if arg.type_list_attr:
            kinds = list(attrs[arg.type_list_attr])
        else:
            one = dtypes.as_dtype(arg.type) if arg.type else attrs[arg.type_attr]
            kinds = [one] * (int(attrs[arg.number_attr]) if arg.number_attr else 1)
        out.extend(dtypes.as_dtype(k)._as_ref if arg.is_ref else dtypes.as_dtype(k)
                   for k in kinds)
    return out


def _shapes(node, attrs, count):
    if "_output_shapes" in node.attr:
        shapes = attr_from_proto(node.attr["_output_shapes"])
        if len(shapes) == count:
            return list(shapes)
    if count == 1:
        if node.op == "Const" and isinstance(attrs.get("value"), np.ndarray):
            return [TensorShape(list(attrs["value"].shape))]
        if isinstance(attrs.get("shape"), TensorShape):
            return [attrs["shape"]]
    return [TensorShape(None)] * count


def _check_inputs(row, node, data_inputs):
    fixed = [i for i in row.inputs if not i.startswith("*")]
    listed = len(fixed) != len(row.inputs)
    n = len(data_inputs)
    if (not listed and n != len(fixed)) or (listed and n < len(fixed)):
        raise ValueError(
            "minitf cannot import node '%s': its %s op has %d inputs, and minitf's %s takes %s "
            "(%s). minitf builds this op differently from TensorFlow; build it with minitf's "
            "tf.* function instead." % (node.name, node.op, n, node.op,
                                        "at least %d" % len(fixed) if listed else len(fixed),
                                        ", ".join(row.inputs) or "none"))


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Add the nodes of ``graph_def`` to the default graph (see module docstring).

    ``input_map`` maps tensor names of ``graph_def`` (``"x:0"``) to tensors of
    this graph that replace them; ``return_elements`` names the ops or tensors
    (``"y:0"``) to return; ``name`` is the prefix (default ``"import"``).
    """
    graph_pb2 = proto("graph_pb2")
    if isinstance(graph_def, (bytes, bytearray)):
        raise TypeError("graph_def must be a GraphDef proto.")
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError("graph_def must be a GraphDef proto.")
    if op_dict is not None:
        raise ValueError("op_dict is deprecated and minitf does not use it; leave it unset.")
    input_map = dict(input_map or {})
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError("input_map keys must be strings (tensor names), got %r" % (key,))
        if not isinstance(value, Tensor) and not key.startswith("^"):
            raise TypeError("input_map must be a dictionary mapping strings to Tensor "
                            "objects; %r maps to %r" % (key, value))
    graph = get_default_graph()
    if name == "":
        prefix = ""
        return _import(graph, graph_def, input_map, return_elements, prefix)
    with name_scope(name, "import", list(input_map.values())) as scope:
        prefix = scope
    return _import(graph, graph_def, input_map, return_elements, prefix)


def _import(graph, graph_def, input_map, return_elements, prefix):
    nodes = _order(list(graph_def.node))
    mapped = {}
    for key, value in input_map.items():
        if not key.startswith("^"):
            mapped[_parse_input(key)] = (key, value)
    used = set()
    created = {}
    with graph._lock:
        if graph._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        for node in nodes:
            new_name = prefix + node.name
            if new_name in graph._nodes_by_name:
                raise ValueError("Duplicate node name in graph: '%s' (import it under a "
                                 "name prefix: tf.import_graph_def(..., name='prefix'))"
                                 % new_name)
            try:
                row = _op_def.lookup(node.op)
            except KeyError:
                raise errors.NotFoundError(
                    None, None, "Op type not registered '%s' in minitf (node '%s'): minitf "
                    "does not have this op" % (node.op, node.name)) from None
            attrs = dict(default_attrs(node.op))
            for key in node.attr:
                if key not in _SKIPPED_ATTRS:
                    value = attr_from_proto(node.attr[key])
                    attrs[key[len(MINITF_ATTR):] if key.startswith(MINITF_ATTR) else key] = value
            if "dataset_key" in attrs:
                raise ValueError("minitf cannot import node '%s' (%s): a tf.data pipeline "
                                 "lives in Python beside its graph; rebuild it instead"
                                 % (node.name, node.op))
            inputs, control = [], []
            for text in node.input:
                op_name, index = _parse_input(text)
                if index is None:
                    if ("^" + op_name) in input_map:
                        used.add("^" + op_name)
                        control.append(input_map["^" + op_name].op
                                       if isinstance(input_map["^" + op_name], Tensor)
                                       else input_map["^" + op_name])
                    else:
                        control.append(_producer(created, op_name, node))
                    continue
                if (op_name, index) in mapped:
                    key, value = mapped[(op_name, index)]
                    used.add(key)
                    inputs.append(value)
                    continue
                producer = _producer(created, op_name, node)
                if index >= len(producer._outputs):
                    raise ValueError("Node '%s' reads output %d of '%s', which has %d outputs"
                                     % (node.name, index, op_name, len(producer._outputs)))
                inputs.append(producer._outputs[index])
            _check_inputs(row, node, inputs)
            out_dtypes = output_dtypes(node.op, attrs)
            shapes = _shapes(node, attrs, len(out_dtypes))
            colocation = []
            if "_class" in node.attr:
                for c in node.attr["_class"].list.s:
                    text = c.decode("utf-8")
                    colocation.append("loc:@" + prefix + text[5:] if text.startswith("loc:@")
                                      else text)
            op = Operation(graph, node.op, new_name, inputs, out_dtypes, shapes, attrs,
                           control, node.device, sorted(colocation))
            op._op_def = row
            if "_has_manual_control_dependencies" in node.attr:
                op._manual_control_dep = True
            if node.op == "Const" and "value" in node.attr:
                op._splat = _is_splat(node.attr["value"].tensor)
            graph._nodes_by_name[new_name] = op
            graph._nodes_by_id.append(op)
            parts = new_name.split("/")
            for i in range(1, len(parts) + 1):
                key = "/".join(parts[:i]).lower()
                graph._names_in_use[key] = max(graph._names_in_use.get(key, 0), 1)
            for t in inputs:
                graph._consumers.setdefault(t, []).append(op)
            graph._version += 1
            created[node.name] = op
    missing = sorted(set(input_map) - used)
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: [%s]"
                         % ", ".join(missing))
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        if ":" in element:
            results.append(graph.get_tensor_by_name(prefix + element))
        else:
            results.append(graph.get_operation_by_name(prefix + element))
    return results


def _is_splat(tensor_proto):
    """A constant written as one value for a bigger shape (TF's tf.zeros)."""
    size = 1
    for d in tensor_proto.tensor_shape.dim:
        size *= d.size
    if tensor_proto.tensor_content or size <= 1:
        return False
    counts = [len(getattr(tensor_proto, f)) for f in
              ("float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val",
               "string_val")]
    return sum(counts) == 1


def _producer(created, op_name, node):
    producer = created.get(op_name)
    if producer is None:
        raise ValueError("Node '%s' has an input named '%s' that is not in the GraphDef (and "
                         "not in input_map)" % (node.name, op_name))
    return producer
