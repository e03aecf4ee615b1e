"""One op of a plan, as the executor sees it: a :class:`Node`, and how a
failure of its kernel is reported (:func:`annotate`)."""

from minitf.framework import errors
from minitf.framework.op_def import ANY


class Node:
    """One op of a plan: its kernel and where its inputs and outputs live.

    ``inputs`` are slot numbers; outputs go to ``out_base .. out_end``
    (``out_end = out_base + n_out``).
    ``members`` is None for an ordinary op; a fused node (fusion.py) lists the
    ops it replaced. ``allocator`` is the GPU allocator its outputs are
    charged to (None on a CPU or for host-memory outputs)."""

    __slots__ = ("op", "compute", "device", "inputs", "deref", "out_base", "n_out", "out_end",
                 "successors", "n_preds", "blocking", "members", "allocator",
                 "control_preds", "dead_when")

    def __init__(self, op, compute, device, inputs, deref, out_base, blocking):
        self.op = op
        self.compute = compute
        self.device = device
        self.inputs = inputs
        self.deref = deref
        self.out_base = out_base
        self.n_out = len(op._outputs)
        self.out_end = out_base + self.n_out
        self.successors = []
        self.n_preds = 0
        self.blocking = blocking
        self.members = None
        self.allocator = None
        self.control_preds = ()
        # (a host<->GPU copy has no row: it is dead when its input is)
        self.dead_when = op.op_def.dead_when if op.op_def is not None else ANY


def annotate(exc, op):
    """Attach the failing op to an error, TF style."""
    if isinstance(exc, errors.OpError):
        if exc.op is None:
            exc._op = op
            exc._node_def = op.node_def
            exc._message = "%s\n\t [[{{node %s}}]]" % (exc._message, op.name)
            exc.args = (exc._message,)
        return exc
    err = errors.InternalError(op.node_def, op, "%s in op %s (%s): %s\n\t [[{{node %s}}]]" % (
        type(exc).__name__, op.name, op.type, exc, op.name))
    err.__cause__ = exc
    return err
