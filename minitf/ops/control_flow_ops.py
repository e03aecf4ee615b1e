"""Ops that only order other ops: ``no_op``, ``group``, ``tuple``."""

from minitf.framework.graph import as_operation, get_default_graph
from minitf.ops.core import make_op


def no_op(name=None):
    """An op that does nothing; useful as a target with control inputs."""
    return make_op("NoOp", [], [], [], name=name or "NoOp", graph=get_default_graph())


def group(*inputs, **kwargs):
    """One op that finishes when all ``inputs`` have run (a NoOp with control
    inputs). The ``name`` keyword names it."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Unknown keyword arguments: %s" % ", ".join(kwargs))
    ops = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            ops.extend(x)
        else:
            ops.append(x)
    deps = []
    for x in ops:
        op = as_operation(x)
        if op is None:
            raise TypeError("Expected tf.group() expected Tensor arguments not '%s' with type "
                            "'%s'" % (x, type(x)))
        deps.append(op)
    graph = deps[0].graph if deps else get_default_graph()
    with graph.as_default(), graph.control_dependencies(deps):
        return no_op(name=name or "group_deps")


def tuple_(tensors, name=None, control_inputs=None):
    """Return tensors that are only available after *all* of ``tensors`` are."""
    from minitf.ops.array_ops import identity
    graph = get_default_graph()
    gate = group(*[t for t in tensors if t is not None] + list(control_inputs or []),
                 name=name or "tuple")
    out = []
    with graph.control_dependencies([gate]):
        for t in tensors:
            out.append(None if t is None else identity(t))
    return out
