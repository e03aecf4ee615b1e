"""``tf.train.write_graph``: a graph's GraphDef written to a ``.pb`` or ``.pbtxt`` file."""

import os

from minitf.framework.graph import Graph
from minitf.framework.protos import text_format
from minitf.ops.save_restore_ops import write_atomically


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Write the ``GraphDef`` of a graph (or a GraphDef) to ``logdir/name``,
    in protobuf text format (``as_text``) or binary; creates ``logdir``;
    returns the file's path."""
    graph_def = graph_or_graph_def.as_graph_def() if isinstance(graph_or_graph_def, Graph) \
        else graph_or_graph_def
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        data = text_format().MessageToString(graph_def).encode("utf-8")
    else:
        data = graph_def.SerializeToString(deterministic=True)
    write_atomically(path, lambda f: f.write(data))
    return path
