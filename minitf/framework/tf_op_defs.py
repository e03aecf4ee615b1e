"""What TensorFlow says each op type is: its ``OpDef`` (inputs, outputs, attrs
with their defaults), as recorded from real TF.

TF keeps a registry of op definitions in its C++ core; a GraphDef only names
an op type (``op: "MatMul"``) and relies on that registry for the rest. minitf
keeps the facts it needs from TF's registry in ``tf_op_defs.pbtxt``, an
``OpList`` written by ``scripts/record_tf_op_defs.py`` from TF 2.21, and the
op types only minitf has in ``minitf_op_defs.pbtxt``. They are used to

* write TF's default attrs into a NodeDef (TF's GraphDefs carry them:
  ``MatMul`` always has ``grad_a: false``);
* give a node read from a GraphDef its output dtypes (``Shape`` outputs
  ``out_type``; ``Split`` outputs ``num_split`` tensors of type ``T``);
* write the ``stripped_op_list`` of a ``.meta`` file, as TF does.

minitf's own op table (``minitf/ops``) stays the one place that says how an
op is built and computed; these files only hold TF's description of it.
"""

import os
import threading

from minitf.framework.protos import proto, text_format

_HERE = os.path.dirname(os.path.abspath(__file__))
_FILES = ("tf_op_defs.pbtxt", "minitf_op_defs.pbtxt")
_lock = threading.Lock()
_BY_NAME = {}


_TF = set()      # the op types TF has (from tf_op_defs.pbtxt)


def _load():
    with _lock:
        if _BY_NAME:
            return _BY_NAME
        op_def_pb2 = proto("op_def_pb2")
        for filename in _FILES:
            ops = op_def_pb2.OpList()
            with open(os.path.join(_HERE, filename)) as f:
                text_format().Parse(f.read(), ops)
            for od in ops.op:
                _BY_NAME.setdefault(od.name, od)
                if filename == _FILES[0]:
                    _TF.add(od.name)
        return _BY_NAME


def op_def(op_type):
    """TF's ``OpDef`` proto of ``op_type`` (minitf's for its own ops), or None."""
    return _load().get(op_type)


def is_tf_op(op_type):
    """Whether real TF has an op type of this name."""
    _load()
    return op_type in _TF


def stripped_op_list(op_types):
    """An ``OpList`` of the definitions of ``op_types`` (sorted by name), as a
    ``.meta`` file's ``meta_info_def.stripped_op_list``."""
    ops = proto("op_def_pb2").OpList()
    for name in sorted(set(op_types)):
        od = op_def(name)
        if od is not None:
            ops.op.add().CopyFrom(od)
    return ops
