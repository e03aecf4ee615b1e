"""TF's own protocol buffers, taken from the ``tensorboard`` package.

TensorFlow's file formats are protocol buffers: a GraphDef is a list of
NodeDefs, a ``.meta`` file is a MetaGraphDef, an event file holds Event
records wrapping Summary messages and RunMetadata. The ``tensorboard`` pip
package (no TensorFlow needed) ships TF's generated message classes under
``tensorboard.compat.proto``, so minitf writes and reads exactly TF's bytes
with them - never with an encoder of its own.

``tensorboard`` is an optional dependency (``pip install 'minitf-edu[tensorboard]'``,
also in the ``lessons`` and ``test`` extras): :func:`proto` imports a module
the first time a graph is turned into a GraphDef or a summary is written,
and without the package it raises an ImportError that says what to install.

Two messages TF keeps outside those files are built here from a descriptor
(:func:`message_class`): protobuf's own library then reads and writes their
text and binary forms, as for every other message.
"""

import importlib

_EXTRA = "tensorboard"
_MODULES = {}
_CLASSES = {}

#: What to tell a learner when the package is missing.
MISSING = ("TensorFlow's file formats (GraphDef, MetaGraphDef, Summary, event files) come "
           "from the 'tensorboard' package. Install it with: pip install "
           "'minitf-edu[%s]' (or pip install tensorboard)" % _EXTRA)


def proto(name):
    """The module ``tensorboard.compat.proto.<name>`` (``"graph_pb2"``...)."""
    module = _MODULES.get(name)
    if module is None:
        try:
            # lazy: tensorboard is optional and costs ~0.1 s to import; only
            # programs that write TF's formats pay for it.
            module = importlib.import_module("tensorboard.compat.proto." + name)
        except ImportError as e:
            raise ImportError("%s (importing tensorboard.compat.proto.%s failed: %s)"
                              % (MISSING, name, e)) from e
        _MODULES[name] = module
    return module


def tensorboard_module(name):
    """A module of the tensorboard package itself (its event writer, reader)."""
    try:
        # lazy: see proto(); the writer and the reader are only needed by tf.summary.
        return importlib.import_module("tensorboard." + name)
    except ImportError as e:
        raise ImportError("%s (importing tensorboard.%s failed: %s)" % (MISSING, name, e)) \
            from e


def message_class(full_name, fields):
    """A protobuf message class for a TF message the tensorboard package lacks.

    ``full_name`` is TF's name (``"tensorflow.CheckpointState"``); ``fields``
    are ``(name, number, type, repeated)`` rows with ``type`` one of
    ``"string"``, ``"double"``, ``"int64"``, ``"int32"``, ``"bool"``,
    ``"float"``, or ``"message:<module>.<Message>"`` for one of tensorboard's
    messages (``"message:cluster_pb2.ClusterDef"``). The field numbers are
    TF's, so the bytes are TF's bytes. The class lives in protobuf's default
    pool, beside tensorboard's messages.
    """
    cls = _CLASSES.get(full_name)
    if cls is not None:
        return cls
    descriptor_pb2 = _protobuf("descriptor_pb2")
    descriptor_pool = _protobuf("descriptor_pool")
    message_factory = _protobuf("message_factory")
    package, _, short = full_name.rpartition(".")
    kinds = {"string": "TYPE_STRING", "double": "TYPE_DOUBLE", "int64": "TYPE_INT64",
             "bool": "TYPE_BOOL", "float": "TYPE_FLOAT", "int32": "TYPE_INT32"}
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="minitf/%s.proto" % full_name.replace(".", "_"), package=package,
        syntax="proto3")
    deps = set()
    message = file_proto.message_type.add(name=short)
    for name, number, kind, repeated in fields:
        field = message.field.add(name=name, number=number)
        field.label = getattr(descriptor_pb2.FieldDescriptorProto,
                              "LABEL_REPEATED" if repeated else "LABEL_OPTIONAL")
        if kind.startswith("message:"):
            module, _, name_ = kind.split(":", 1)[1].partition(".")
            target = getattr(proto(module), name_).DESCRIPTOR
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
            field.type_name = "." + target.full_name
            deps.add(target.file.name)
        else:
            field.type = getattr(descriptor_pb2.FieldDescriptorProto, kinds[kind])
    file_proto.dependency.extend(sorted(deps))
    pool = descriptor_pool.Default()
    pool.Add(file_proto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))
    _CLASSES[full_name] = cls
    return cls


def _protobuf(name):
    try:
        # lazy: protobuf comes with tensorboard (see proto()).
        return importlib.import_module("google.protobuf." + name)
    except ImportError as e:
        raise ImportError("%s (importing google.protobuf.%s failed: %s)"
                          % (MISSING, name, e)) from e


def text_format():
    """protobuf's text format (``MessageToString``/``Parse``), as TF uses it."""
    return _protobuf("text_format")
