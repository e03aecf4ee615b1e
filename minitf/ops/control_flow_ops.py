"""Ops that order other ops (``no_op``, ``group``, ``tuple``) and ``tf.cond``."""

import contextlib

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.graph import Operation, Tensor, as_operation, get_default_graph
from minitf.framework.op_def import (ALL, DEAD, ENTERS, EXITS, NOT_DIFFERENTIABLE, NOTHING,
                                     PASS, OpDef, declare)
from minitf.framework.op_def import NEXT_ITERATION as NEXT_ITERATION_MOVE
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops
from minitf.ops.core import EVERY_DEVICE, convert_to_tensor, make_op, name_scope


def _no_op_kernel(op, backend):
    return lambda ctx, inputs: []


NO_OP = declare(OpDef("NoOp", gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                      kernel=_no_op_kernel))


#: TF's ``ControlTrigger``: a NoOp that runs even when its control inputs are dead.
#: A while loop's gradient orders the stack pushes of one iteration before the
#: next with it, whichever branch of a cond inside the loop ran.
CONTROL_TRIGGER = declare(OpDef("ControlTrigger", gradient=NOT_DIFFERENTIABLE, dead_when=PASS,
                                devices=EVERY_DEVICE, kernel=_no_op_kernel))


def control_trigger(name="ControlTrigger"):
    return make_op(CONTROL_TRIGGER, [], [], [], name=name, graph=get_default_graph())


def no_op(name=None):
    """An op that does nothing; useful as a target with control inputs."""
    return make_op(NO_OP, [], [], [], name=name or "NoOp", graph=get_default_graph())


def group(*inputs, **kwargs):
    """One op that finishes when all ``inputs`` have run (a NoOp with control
    inputs). The ``name`` keyword names it.

    As in TF, the inputs are grouped by the device they asked for: inputs of
    one device get one NoOp *on that device*, and with several devices the
    group is a NoOp whose control inputs are one such NoOp per device (sorted
    by device name). So grouping updates that live on different tasks waits
    for one small message per task, not one per update."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Unknown keyword arguments: %s" % ", ".join(kwargs))
    ops = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            ops.extend(x)
        else:
            ops.append(x)
    on_device = {}            # requested device -> its ops, in the order given
    for x in ops:
        op = as_operation(x)
        if op is None:
            raise TypeError("Expected tf.group() expected Tensor arguments not '%s' with type "
                            "'%s'" % (x, type(x)))
        on_device.setdefault(op.device, []).append(op)
    graph = ops and as_operation(ops[0]).graph or get_default_graph()
    with graph.as_default(), name_scope(name, "group_deps", []) as scope:
        if not on_device:
            return no_op(name=scope)
        if len(on_device) == 1:
            (device, deps), = on_device.items()
            return _no_op_after(graph, device, deps, scope)
        per_device = [_no_op_after(graph, device, on_device[device], None)
                      for device in sorted(on_device)]
        with graph.control_dependencies(per_device):
            return no_op(name=scope)


def _no_op_after(graph, device, deps, name):
    """A NoOp on ``device`` that runs after ``deps``."""
    with graph.control_dependencies(deps), graph.device(device):
        return no_op(name=name)


def tuple_(tensors, name=None, control_inputs=None):
    """Return tensors that are only available after *all* of ``tensors`` are."""
    graph = get_default_graph()
    gate = group(*[t for t in tensors if t is not None] + list(control_inputs or []),
                 name=name or "tuple")
    out = []
    with graph.control_dependencies([gate]):
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            # As in TF (with_dependencies), each gated copy lives with its
            # tensor: gating gradients must not move them to another task.
            with graph.colocate_with(t):
                out.append(array_ops.identity(t))
    return out


# -- tf.cond ---------------------------------------------------------------------------------
# How a cond is built (TensorFlow 1.x's design, see runtime/deadness.py for how it runs):
#
#   pred ──► Switch(pred, pred) ──► switch_t, switch_f     (the two "pivots")
#   x (made outside) ──► Switch(x, pred) ──► x_f, x_t      (one per value a branch reads)
#   true_fn() builds on x_t, false_fn() on x_f; ops with no inputs wait on their pivot
#   Merge([false result, true result]) ──► the result of whichever branch ran
#
# Only one output of each Switch is alive in a step, so only one branch runs.

# Switch and Merge only route values, so they run on every device type as they
# are (``kernel_reads=NOTHING``): a value on a GPU stays there. The Switch's
# predicate is read on the host (a host-memory input).

def _switch_kernel(op, backend):
    def compute(ctx, inputs):
        data, pred = inputs
        pred = np.asarray(pred)
        if pred.shape != ():
            raise errors.InvalidArgumentError(
                None, None, "The second input must be a scalar, but it has shape %s"
                % list(pred.shape))
        return [DEAD, data] if bool(pred) else [data, DEAD]
    return compute


def _switch_grad(op, g_false, g_true):
    """A value a branch read from outside: its gradient is the branch's, merged.

    The side that got no gradient (it did not use the value) contributes
    zeros that are alive exactly when that side ran, so the Merge always has
    one live input whichever way ``pred`` went.
    """
    if g_false is None and g_true is None:
        return None, None
    if g_false is None:
        g_false = array_ops.zeros_like(op.outputs[0])
    if g_true is None:
        g_true = array_ops.zeros_like(op.outputs[1])
    return merge([g_false, g_true], name="cond_grad")[0], None


SWITCH = declare(OpDef("Switch", inputs=("data", "pred"), attrs=("T",), gradient=_switch_grad,
                       makes_dead=True, devices=EVERY_DEVICE, kernel=_switch_kernel,
                       kernel_reads=NOTHING, host_memory_inputs=(1,)))
#: A Switch of a variable reference itself (so an ``assign`` inside a branch works).
REF_SWITCH = declare(OpDef("RefSwitch", inputs=("data", "pred"), attrs=("T",),
                           gradient=NOT_DIFFERENTIABLE, ref_inputs=(0,), makes_dead=True,
                           devices=EVERY_DEVICE, kernel=_switch_kernel, kernel_reads=NOTHING,
                           host_memory_inputs=(1,)))


def _merge_kernel(op, backend):
    def compute(ctx, inputs):
        for i, value in enumerate(inputs):
            if value is not DEAD:
                return [value, np.int32(i)]
        raise errors.InternalError(None, None, "Merge ran with every input dead")
    return compute


def _merge_grad(op, grad, _):
    """The gradient goes back to the branch that ran: ``Switch(grad, pred)``."""
    g_false, g_true = _switch(grad, op._cond_pred)
    return [g_false, g_true]


# A Merge is alive when any input is (``dead_when=ALL``: dead only if all are).
MERGE = declare(OpDef("Merge", inputs=("*inputs",), attrs=("T", "N"), gradient=_merge_grad,
                      dead_when=ALL, devices=EVERY_DEVICE, kernel=_merge_kernel,
                      kernel_reads=NOTHING))
REF_MERGE = declare(OpDef("RefMerge", inputs=("*inputs",), attrs=("T", "N"),
                          gradient=_merge_grad, ref_inputs=(0, 1), dead_when=ALL,
                          devices=EVERY_DEVICE, kernel=_merge_kernel, kernel_reads=NOTHING))


# -- the routing ops of tf.while_loop (ops/while_loop.py builds loops from them) --------------
# Each passes its input on unchanged; *where* the value goes (into the loop's
# frame, out of it, to the next iteration) is the row's ``frame_move``, which
# the executor reads (runtime/frames.py). Gradients of a loop are built for the
# whole loop at once (ops/while_gradients.py), never op by op.

def _forward_kernel(op, backend):
    return lambda ctx, inputs: [inputs[0]]


def _loop_op_grad(op, *grads):
    raise LookupError("%s (%s) is part of a tf.while_loop: its gradient is built for the "
                      "whole loop by minitf/ops/while_gradients.py, never for one routing op"
                      % (op.name, op.type))


def _routing_row(name, frame_move, ref=False, attrs=("T",)):
    return declare(OpDef(name, inputs=("data",), attrs=attrs, gradient=_loop_op_grad,
                         ref_inputs=(0,) if ref else (), frame_move=frame_move,
                         devices=EVERY_DEVICE, kernel=_forward_kernel, kernel_reads=NOTHING))


_ENTER_ATTRS = ("T", "frame_name", "is_constant", "parallel_iterations")
ENTER = _routing_row("Enter", ENTERS, attrs=_ENTER_ATTRS)
REF_ENTER = _routing_row("RefEnter", ENTERS, ref=True, attrs=_ENTER_ATTRS)
EXIT = _routing_row("Exit", EXITS)
REF_EXIT = _routing_row("RefExit", EXITS, ref=True)
NEXT_ITERATION = _routing_row("NextIteration", NEXT_ITERATION_MOVE)
REF_NEXT_ITERATION = _routing_row("RefNextIteration", NEXT_ITERATION_MOVE, ref=True)
#: The loop's condition, marked so that a reader of the graph can find it.
LOOP_COND = declare(OpDef("LoopCond", inputs=("input",), gradient=NOT_DIFFERENTIABLE,
                          devices=EVERY_DEVICE, kernel=_forward_kernel, kernel_reads=NOTHING,
                          host_memory_inputs=(0,), host_memory_outputs=True))


def _switch(data, pred, name=None):
    """``(output_false, output_true)``: ``data`` on the side ``pred`` picks."""
    row = REF_SWITCH if data.dtype.is_ref_dtype else SWITCH
    dt = data.dtype if data.dtype.is_ref_dtype else data.dtype.base_dtype
    op = make_op(row, [data, pred], [dt, dt], [data.shape, data.shape],
                 name=name or row.name, attrs={"T": data.dtype.base_dtype})
    return op.outputs[0], op.outputs[1]


def merge(inputs, name=None):
    """``(output, value_index)``: the one input that is alive, and which one."""
    inputs = [convert_to_tensor(t) for t in inputs]
    dt = inputs[0].dtype.base_dtype
    shape = inputs[0].shape
    for t in inputs[1:]:
        if t.dtype.base_dtype != dt:
            raise TypeError("Merge inputs must have one dtype, got %s and %s"
                            % (dt.name, t.dtype.name))
        shape = _common_shape(shape, t.shape)
    refs = len(inputs) == 2 and all(t.dtype.is_ref_dtype for t in inputs)
    op = make_op(REF_MERGE if refs else MERGE, inputs,
                 [inputs[0].dtype if refs else dt, dtypes.int32], [shape, TensorShape([])],
                 name=name or "Merge", attrs={"T": dt, "N": len(inputs)})
    return op.outputs[0], op.outputs[1]


def _common_shape(a, b):
    """What two branches' shapes have in common: unknown where they differ."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class ControlFlowContext:
    """A construct being built: a branch of a cond or the body of a while loop.

    ``Graph.create_op`` calls ``capture_inputs`` and ``control_inputs`` for
    every op made while the context is the graph's ``_control_flow_context``,
    and records it as the op's ``_control_flow_context``. ``outer`` is the
    context this one is nested in (None at the top of the graph)."""

    def __init__(self, outer):
        self.outer = outer

    def contains(self, op):
        """Whether ``op`` was made inside this construct (or one nested in it)."""
        context = op._control_flow_context
        while context is not None:
            if context is self:
                return True
            context = context.outer
        return False

    def while_context(self):
        """The innermost while loop this context is in (itself included), or None."""
        context = self
        while context is not None and not hasattr(context, "frame_name"):
            context = context.outer
        return context

    def entered(self, graph):
        """A ``with`` block in which new ops of ``graph`` belong to this context."""
        return in_context(graph, self)


@contextlib.contextmanager
def in_context(graph, context):
    """A ``with`` block in which new ops of ``graph`` belong to ``context``
    (None: to no construct, the top level of the graph)."""
    saved = graph._control_flow_context
    graph._control_flow_context = context
    try:
        yield context
    finally:
        graph._control_flow_context = saved


class _CondContext(ControlFlowContext):
    """One branch being built: routes outside values through Switch ops."""

    def __init__(self, pred, pivot, branch, outer):
        super().__init__(outer)
        self.pred, self.pivot, self.branch = pred, pivot, branch
        self.captured = {}

    def capture_inputs(self, inputs, op_name):
        return [self.capture(t) for t in inputs]

    def control_inputs(self, inputs, controls):
        """An op with no data inputs waits on the branch's pivot, so it runs
        only when the branch does."""
        if self.outer is not None:
            controls = self.outer.control_inputs(inputs, controls)
        return controls if inputs else controls + [self.pivot.op]

    def capture(self, t):
        if self.contains(t.op) or t.op is self.pivot.op:
            return t
        found = self.captured.get(t)
        if found is None:
            # Made in the enclosing context (so an outer cond or loop captures it in turn).
            with in_context(t.graph, self.outer):
                found = _switch(t, self.pred)[self.branch]
            self.captured[t] = found
        return found


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _pack_as(structure, flat):
    flat = list(flat)

    def build(v):
        if isinstance(v, (list, tuple)):
            return type(v)(build(x) for x in v)
        return flat.pop(0)
    return build(structure)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``, decided when the step runs.

    Both functions are called once, now, to build their branch; in each step
    only the ops of the branch ``pred`` chose run (side effects included).
    They must return the same structure of tensors (a tensor, a list or a
    tuple). The result is differentiable: gradients flow through the branch
    that ran.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    graph = get_default_graph()
    with name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool or (pred.shape.ndims not in (None, 0)):
            raise TypeError("pred must be a scalar bool tensor, got %s of shape %s"
                            % (pred.dtype.name, pred.shape))
        identity = array_ops.identity
        p_false, p_true = _switch(pred, pred)
        pivot_t = identity(p_true, name="switch_t")
        pivots = (identity(p_false, name="switch_f"), pivot_t)
        pred_id = identity(pred, name="pred_id")
        outer = graph._control_flow_context
        results = []
        for branch, fn in ((1, true_fn), (0, false_fn)):
            context = _CondContext(pred_id, pivots[branch], branch, outer)
            with context.entered(graph):
                value = fn()
                # A result made outside the branch passes through it (an Identity
                # of its Switch), so that it too is dead when the branch is.
                flat = [v if isinstance(v, Operation) or (isinstance(v, Tensor) and
                                                          context.contains(v.op))
                        else identity(convert_to_tensor(v)) for v in _flatten(value)]
            results.append((value, flat))
        (true_value, true_flat), (false_value, false_flat) = results
        if len(true_flat) != len(false_flat):
            raise ValueError("true_fn and false_fn must return the same number of results, "
                             "got %d and %d" % (len(true_flat), len(false_flat)))
        merged = []
        for f, t in zip(false_flat, true_flat):
            if isinstance(f, Operation) or isinstance(t, Operation):
                raise TypeError("minitf's tf.cond needs branches that return tensors; "
                                "return a tensor that depends on the op instead.")
            out, _ = merge([f, t])
            out.op._cond_pred = pred_id
            merged.append(out)
    if not isinstance(true_value, (list, tuple)) and len(merged) == 1:
        return merged[0]
    return _pack_as(true_value, merged)
