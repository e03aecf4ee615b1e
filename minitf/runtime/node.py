"""One op of a plan, as the executor sees it: a :class:`Node`, and how a
failure of its kernel is reported (:func:`annotate`; running out of memory
is TF's ResourceExhaustedError)."""

from minitf.framework import errors
from minitf.framework.op_def import ANY


class Node:
    """One op of a plan: its kernel and where its inputs and outputs live.

    ``inputs`` are slot numbers; outputs go to ``out_base .. out_end``
    (``out_end = out_base + n_out``).
    ``members`` is None for an ordinary op; a fused node (fusion.py) lists the
    ops it replaced. ``allocator`` is the GPU allocator its outputs are
    charged to (None on a CPU or for host-memory outputs). ``expensive``:
    the op's row says it may be worth a pool thread (``OpDef.expensive``);
    ``seconds``: how long its kernel took last time (the dataflow executor
    times expensive ops and other devices' ops; 0.0 until then). ``folded``:
    its kernel ran once, when the plan was built, and it hands out that
    result (constant_folding.py). ``control_inputs``: the ops it waits
    for."""

    __slots__ = ("op", "compute", "device", "inputs", "deref", "out_base", "n_out", "out_end",
                 "successors", "n_preds", "blocking", "members", "allocator",
                 "control_preds", "dead_when", "expensive", "seconds", "begin", "folded",
                 "control_inputs")

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
        self.expensive = op.op_def is not None and op.op_def.expensive
        self.seconds = 0.0      # its last kernel time, where timed (executor.py)
        self.begin = None       # an asynchronous kernel's start (OpDef.async_kernel)
        self.folded = False
        #: the ops it waits for (its op's control inputs, or what the dependency
        #: optimizer put in their place: dependency_optimizer.Bypass)
        self.control_inputs = tuple(op._control_inputs)


# TF's names for dtypes in its messages (DataTypeString): "type float", not float32.
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _oom(exc, op, device):
    """A kernel ran out of host memory: TF's ResourceExhaustedError, naming
    the shape and type it could not allocate and the device. numpy's
    MemoryError carries the shape and dtype; otherwise the op's static output
    shape is the best guess."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    if shape is None and op._outputs:
        static = op._outputs[0].shape
        shape = static.as_list() if static.is_fully_defined() else None
        dtype = op._outputs[0].dtype.base_dtype.name
    shape_text = "[%s]" % ",".join(str(int(d)) for d in shape) if shape is not None \
        else " of unknown shape"
    type_name = str(getattr(dtype, "name", dtype or "unknown"))
    where = device.name if device is not None else (op.device or "its device")
    allocator = device.device_type.lower() if device is not None else "cpu"
    return errors.ResourceExhaustedError(
        op.node_def, op, "OOM when allocating tensor with shape%s and type %s on %s by "
        "allocator %s (%s)\n\t [[{{node %s}}]]" % (
            shape_text, _TF_TYPE_NAMES.get(type_name, type_name), where, allocator,
            exc or "out of memory", op.name))


def annotate(exc, op, device=None):
    """Attach the failing op to an error, TF style. A MemoryError becomes
    ResourceExhaustedError (TF's OOM), other Python errors InternalError."""
    if isinstance(exc, errors.OpError):
        if exc.op is None:
            exc._op = op
            exc._node_def = op.node_def
            exc._message = "%s\n\t [[{{node %s}}]]" % (exc._message, op.name)
            exc.args = (exc._message,)
        return exc
    if isinstance(exc, MemoryError):
        err = _oom(exc, op, device)
        err.__cause__ = exc
        return err
    err = errors.InternalError(op.node_def, op, "%s in op %s (%s): %s\n\t [[{{node %s}}]]" % (
        type(exc).__name__, op.name, op.type, exc, op.name))
    err.__cause__ = exc
    return err
