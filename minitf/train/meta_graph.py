"""Meta graphs: a graph with everything needed to go on using it, as TF's
``MetaGraphDef`` (a ``.meta`` file).

A ``MetaGraphDef`` holds

* ``graph_def`` - every op (with ``_output_shapes``, so shapes survive);
* ``collection_def`` - the graph's collections: variables as ``VariableDef``
  (the names of a variable's op, initializer and snapshot), savers as
  ``SaverDef``, ops and tensors by name (``train_op``, ``summaries``...),
  strings and numbers as themselves;
* ``saver_def`` - which ops save and restore the variables;
* ``meta_info_def.stripped_op_list`` - TF's definitions of the op types used.

``export_scoped_meta_graph`` writes one; ``import_scoped_meta_graph`` adds
its graph to the default graph and rebuilds the collections, so that
``tf.get_collection("train_op")`` and ``tf.trainable_variables()`` work
again after ``tf.train.import_meta_graph("model.ckpt.meta")``. The user-facing
``tf.train.export_meta_graph``/``import_meta_graph`` are in ``saver.py``,
as in TF, because importing returns a Saver.

A collection item that has no TF form (a queue runner, a ``tf.cond``
context) is left out with a warning, exactly as TF does with a collection it
cannot serialize.
"""

import os

from minitf.framework import tf_logging as logging
from minitf.framework import graph_def as _graph_def
from minitf.framework import tf_op_defs
from minitf.framework.graph import GraphKeys, Operation, Tensor, get_default_graph
from minitf.framework.protos import proto, text_format
from minitf.ops import importer
from minitf.ops import variables as _variables
from minitf.ops.save_restore_ops import write_atomically


# key -> (proto type "module.Message", to_proto(item, export_scope), from_proto(pb, import_scope))
_PROTO_FUNCTIONS = {}


def register_proto_function(key, proto_type, to_proto, from_proto):
    """Say how the items of collection ``key`` become protos and back (TF's
    ``ops.register_proto_function``); ``proto_type`` is ``"saver_pb2.SaverDef"``."""
    _PROTO_FUNCTIONS[key] = (proto_type, to_proto, from_proto)


def _proto_type(name):
    module, _, message = name.partition(".")
    return getattr(proto(module), message)


for _key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
             GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES, GraphKeys.GLOBAL_STEP,
             "moving_average_variables", "metric_variables"):
    register_proto_function(_key, "variable_pb2.VariableDef",
                            to_proto=lambda v, export_scope=None: v.to_proto(export_scope),
                            from_proto=_variables.Variable.from_proto)

#: Collections minitf cannot rebuild from a meta graph (TF keeps them as protos
#: minitf has no Python object for).
_NOT_IMPORTED = {GraphKeys.QUEUE_RUNNERS: "queue runners",
                 GraphKeys.COND_CONTEXT: "tf.cond contexts",
                 GraphKeys.WHILE_CONTEXT: "tf.while_loop contexts"}


def _kind(item):
    if isinstance(item, (str, bytes)):
        return "bytes_list"
    if isinstance(item, bool):
        return "node_list"
    if isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    return "node_list"


def _strip_scope(name, scope):
    if scope and name.startswith(scope.rstrip("/") + "/"):
        return name[len(scope.rstrip("/")) + 1:]
    return name


def _prepend_scope(name, scope):
    if not scope:
        return name
    prefix = scope.rstrip("/") + "/"
    if name.startswith("^"):
        return "^" + prefix + name[1:]
    return prefix + name


def add_collection_def(meta_graph_def, key, graph=None, export_scope=None):
    """Add collection ``key`` of ``graph`` to ``meta_graph_def`` (or warn and
    skip it, as TF does, when an item has no TF form)."""
    graph = graph or get_default_graph()
    if not isinstance(key, (str, bytes)):
        logging.warning("Only collections with string type keys will be serialized. This key "
                     "has %s", type(key))
        return
    items = graph.get_collection(key)
    if export_scope:
        items = [x for x in items if not hasattr(x, "name") or
                 x.name.startswith(export_scope.rstrip("/") + "/")]
    if not items:
        return
    try:
        col_def = meta_graph_def.collection_def[key]
        registered = _PROTO_FUNCTIONS.get(key)
        if registered:
            proto_type, to_proto, _ = registered
            cls = _proto_type(proto_type)
            for x in items:
                pb = to_proto(x, export_scope=export_scope)
                if pb is not None:
                    if not isinstance(pb, cls):
                        raise TypeError("%r is not a %s" % (x, proto_type))
                    col_def.bytes_list.value.append(pb.SerializeToString())
            return
        kind = _kind(items[0])
        if kind == "node_list":
            for x in items:
                if not isinstance(x, (Tensor, Operation)):
                    raise TypeError("%s object has no TF form (it is neither an op nor a "
                                    "tensor)" % type(x).__name__)
                col_def.node_list.value.append(_strip_scope(x.name, export_scope))
        elif kind == "bytes_list":
            col_def.bytes_list.value.extend(x.encode("utf-8") if isinstance(x, str) else x
                                            for x in items)
        else:
            getattr(col_def, kind).value.extend(items)
    except Exception as e:  # noqa: BLE001  (TF skips any collection it cannot write)
        logging.warning("Issue encountered when serializing %s.\n%s", key, e)
        if key in meta_graph_def.collection_def:
            del meta_graph_def.collection_def[key]


def _strip_default_attrs(graph_def):
    for node in graph_def.node:
        defaults = _graph_def.default_attrs(node.op)
        for key in list(node.attr):
            if key in defaults:
                default_pb = _graph_def.attr_to_proto(defaults[key])
                if node.attr[key] == default_pb:
                    del node.attr[key]


def create_meta_graph_def(meta_info_def=None, graph_def=None, saver_def=None,
                          collection_list=None, graph=None, export_scope=None,
                          clear_extraneous_savers=False, strip_default_attrs=False):
    """A ``MetaGraphDef`` of ``graph`` (default: the default graph)."""
    meta_graph_pb2 = proto("meta_graph_pb2")
    graph = graph or get_default_graph()
    mgd = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        mgd.meta_info_def.CopyFrom(meta_info_def)
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if export_scope:
        graph_def = _scoped_graph_def(graph_def, export_scope)
    mgd.graph_def.CopyFrom(graph_def)
    if strip_default_attrs:
        _strip_default_attrs(mgd.graph_def)
        mgd.meta_info_def.stripped_default_attrs = True
    mgd.meta_info_def.stripped_op_list.CopyFrom(
        tf_op_defs.stripped_op_list(n.op for n in mgd.graph_def.node))
    if saver_def is not None:
        mgd.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        if clear_extraneous_savers and key == GraphKeys.SAVERS:
            continue
        add_collection_def(mgd, key, graph, export_scope)
    return mgd


def _scoped_graph_def(graph_def, scope):
    prefix = scope.rstrip("/") + "/"
    out = proto("graph_pb2").GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    for node in graph_def.node:
        if not node.name.startswith(prefix):
            continue
        new = out.node.add()
        new.CopyFrom(node)
        new.name = node.name[len(prefix):]
        del new.input[:]
        for i in node.input:
            bare = i[1:] if i.startswith("^") else i
            if not bare.startswith(prefix):
                raise ValueError("minitf cannot export scope %s: node %s reads %s, which is "
                                 "outside it" % (scope, node.name, i))
            new.input.append(("^" if i.startswith("^") else "") + bare[len(prefix):])
        if "_class" in new.attr:
            values = [v.replace(b"loc:@" + prefix.encode(), b"loc:@")
                      for v in new.attr["_class"].list.s]
            del new.attr["_class"].list.s[:]
            new.attr["_class"].list.s.extend(values)
    return out


def export_scoped_meta_graph(filename=None, graph_def=None, graph=None, export_scope=None,
                             as_text=False, clear_devices=False, saver_def=None,
                             clear_extraneous_savers=False, strip_default_attrs=False,
                             save_debug_info=False, meta_info_def=None, collection_list=None):
    """Build a ``MetaGraphDef`` (see :func:`create_meta_graph_def`) and write
    it to ``filename`` if given (binary, or protobuf text with ``as_text``)."""
    if save_debug_info:
        raise NotImplementedError("minitf keeps no GraphDebugInfo; leave save_debug_info "
                                  "False")
    graph = graph or get_default_graph()
    if graph_def is not None and clear_devices:
        graph_def = type(graph_def).FromString(graph_def.SerializeToString())
    mgd = create_meta_graph_def(meta_info_def=meta_info_def, graph_def=graph_def,
                                saver_def=saver_def, collection_list=collection_list,
                                graph=graph, export_scope=export_scope,
                                clear_extraneous_savers=clear_extraneous_savers,
                                strip_default_attrs=strip_default_attrs)
    if clear_devices:
        for node in mgd.graph_def.node:
            node.device = ""
    if filename:
        data = text_format().MessageToString(mgd).encode("utf-8") if as_text \
            else mgd.SerializeToString()
        write_atomically(os.fspath(filename), lambda f: f.write(data))
    return mgd


def read_meta_graph_file(filename):
    """A ``MetaGraphDef`` from a ``.meta`` file, binary or text."""
    meta_graph_pb2 = proto("meta_graph_pb2")
    filename = os.fspath(filename)
    if not os.path.exists(filename):
        raise IOError("File %s does not exist." % filename)
    with open(filename, "rb") as f:
        data = f.read()
    mgd = meta_graph_pb2.MetaGraphDef()
    try:
        mgd.ParseFromString(data)
        return mgd
    except Exception:  # noqa: BLE001  (not binary: try text, as TF does)
        pass
    try:
        text_format().Merge(data.decode("utf-8"), mgd)
    except Exception as e:  # noqa: BLE001
        raise IOError("Cannot parse file %s: %s." % (filename, e)) from None
    return mgd


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None, input_map=None, return_elements=None):
    """Add the graph of a ``MetaGraphDef`` (or ``.meta`` file) to ``graph`` and
    rebuild its collections. Returns the ``return_elements`` (or None)."""
    mgd = read_meta_graph_file(meta_graph_or_file) \
        if isinstance(meta_graph_or_file, (str, os.PathLike)) else meta_graph_or_file
    graph = graph or get_default_graph()
    graph_def = mgd.graph_def
    if clear_devices:
        graph_def = type(graph_def).FromString(graph_def.SerializeToString())
        for node in graph_def.node:
            node.device = ""
    with graph.as_default():
        returned = importer.import_graph_def(graph_def, input_map=input_map,
                                             return_elements=return_elements,
                                             name=import_scope or "")
        for key, col_def in sorted(mgd.collection_def.items()):
            if key == "unbound_inputs":
                continue
            if key in _NOT_IMPORTED:
                logging.warning("minitf does not rebuild %s from a meta graph (collection %r "
                             "skipped); create them again after importing",
                             _NOT_IMPORTED[key], key)
                continue
            kind = col_def.WhichOneof("kind")
            if kind is None:
                logging.error("Cannot identify data type for collection %s. Skipping.", key)
                continue
            registered = _PROTO_FUNCTIONS.get(key)
            if kind == "bytes_list" and registered:
                proto_type, _, from_proto = registered
                cls = _proto_type(proto_type)
                for value in col_def.bytes_list.value:
                    pb = cls()
                    pb.ParseFromString(value)
                    graph.add_to_collection(key, from_proto(pb, import_scope=import_scope))
            elif kind == "node_list":
                for value in col_def.node_list.value:
                    graph.add_to_collection(key, graph.as_graph_element(
                        _prepend_scope(value, import_scope)))
            elif kind == "int64_list":
                for value in col_def.int64_list.value:
                    graph.add_to_collection(key, int(value))
            elif kind == "bytes_list":
                for value in col_def.bytes_list.value:
                    graph.add_to_collection(key, value)
            else:
                for value in getattr(col_def, kind).value:
                    graph.add_to_collection(key, value)
    return returned
