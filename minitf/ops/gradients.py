"""``tf.gradients``: reverse-mode automatic differentiation on the graph.

Like micrograd, but the "values" are graph tensors and the backward pass
*builds ops* instead of computing numbers. Given ``ys`` and ``xs``:

1. find the ops on some path from an ``x`` to a ``y`` (everything else
   cannot contribute);
2. seed ``dy/dy = 1`` (or ``grad_ys``) and walk those ops from the last
   created to the first. For each op, sum the gradients that reached its
   outputs and call the op type's *gradient function*, which adds ops that
   compute the gradient of each input (the chain rule, one op at a time);
3. return, for each ``x``, the sum of all gradients that reached it
   (``None`` when no path connects it to ``ys``).

Each op type's gradient function is part of its row of the op table
(``OpDef.gradient``, next to the op in its family module: ``Mul``'s is in
``minitf/ops/math_ops.py``). ``tf.stop_gradient`` and ops declared
``NOT_DIFFERENTIABLE`` (comparisons, argmax, integer ops) stop the walk.
``tf.RegisterGradient`` adds a gradient for an op type that has none.
"""

import contextlib

from minitf.framework import dtypes
from minitf.framework import op_def as _op_def
from minitf.framework.graph import get_default_graph
from minitf.ops import array_ops, control_flow_ops, math_ops, while_gradients
from minitf.ops.while_loop import WhileContext
from minitf.ops.core import convert_to_tensor, name_scope

_REGISTERED = {}          # op type -> gradient function, from tf.RegisterGradient
_NOT_DIFFERENTIABLE = set()


class RegisterGradient:
    """Decorator: ``@tf.RegisterGradient("MyOp") def _my_grad(op, grad): ...``.

    The function receives the op and one gradient per output (``None`` for
    outputs nothing depends on) and returns one gradient per input (``None``
    where the input gets none). As in TF, an op type that already has a
    gradient cannot get a second one (KeyError).
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        if _gradient_of(self._op_type) is not None or self._op_type in _NOT_DIFFERENTIABLE:
            raise KeyError("Registering two gradient with name '%s'! (Previous registration "
                           "was in the op table, minitf/ops/)" % self._op_type)
        _REGISTERED[self._op_type] = fn
        return fn


def NotDifferentiable(op_type):  # noqa: N802  (TF's name)
    """Declare that ``op_type`` passes no gradient to its inputs."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _NOT_DIFFERENTIABLE.add(op_type)


NoGradient = NotDifferentiable


def _gradient_of(op_type):
    """The op type's gradient function, NOT_DIFFERENTIABLE, or None."""
    if op_type in _NOT_DIFFERENTIABLE:
        return _op_def.NOT_DIFFERENTIABLE
    row = _op_def.lookup(op_type)
    if row.gradient is not None:
        return row.gradient
    return _REGISTERED.get(op_type)


_nothing = contextlib.nullcontext


def _between(ys, xs, blocked=frozenset()):
    """The ops that lie on a path from some x to some y (not through ``blocked``)."""
    x_ops = {t.op for t in xs}
    # Ops reachable backwards from ys.
    from_ys = set()
    stack = [t.op for t in ys]
    while stack:
        op = stack.pop()
        if op in from_ys or op in blocked:
            continue
        from_ys.add(op)
        if op not in x_ops:
            stack.extend(t.op for t in op._inputs)
    # Of those, the ones that depend on some x. A while loop is a cycle (its
    # Merge reads a later NextIteration), so repeat until nothing changes.
    between = set()
    ordered = sorted(from_ys, key=lambda o: o._id)
    changed = True
    while changed:
        changed = False
        for op in ordered:
            if op not in between and (op in x_ops or any(t.op in between
                                                        for t in op._inputs)):
                between.add(op)
                changed = True
    return between


def _loop_inside(op, within):
    """The while loop directly inside ``within`` (a loop, or None: the top of the
    graph) that ``op`` belongs to, or None when ``op`` is in ``within`` itself."""
    found = None
    context = op._control_flow_context
    while context is not None and context is not within:
        if isinstance(context, WhileContext):
            found = context
        context = context.outer
    return found


def _sum_grads(graph, grads, op, colocate):
    """One gradient for a tensor of ``op`` from its contributions (one per
    consumer), summed as TF's ``_AggregatedGrads`` / ``_MultiDeviceAddN`` do:
    first one ``AddN`` per device the contributions asked for, each placed with
    its first contribution, then one ``AddN`` of those partial sums. With
    ``colocate_gradients_with_ops`` that last sum runs where ``op`` runs, so
    in a model split over tasks the gradients of a tensor that several tasks
    read are added on the task that made it, and only the partial sums cross."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    by_device = {}
    # The walk runs from the last op made to the first, so reversed, the
    # contributions come in the order their consumers were made, as in TF.
    for g in reversed(grads):
        by_device.setdefault(g.device or "", []).append(g)
    with (graph.colocate_with(op) if colocate else _nothing()):
        summands = []
        for device in sorted(by_device):
            group = by_device[device]
            if len(group) == 1:
                summands.append(group[0])
                continue
            with graph.colocate_with(group[0].op, ignore_existing=True):
                summands.append(math_ops.add_n(group))
        return summands[0] if len(summands) == 1 else math_ops.add_n(summands)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None):
    """Symbolic derivatives of ``sum(ys)`` with respect to each of ``xs``."""
    single_x = not isinstance(xs, (list, tuple))
    ys = [ys] if not isinstance(ys, (list, tuple)) else list(ys)
    xs = [xs] if single_x else list(xs)
    ys = [convert_to_tensor(y) for y in ys]
    xs = [x._ref() if hasattr(x, "_ref") else convert_to_tensor(x) for x in xs]
    stop_ops = {convert_to_tensor(t).op for t in (stop_gradients or [])}
    graph = ys[0].graph if ys else get_default_graph()
    with graph.as_default(), name_scope(name, "gradients", ys + xs):
        if grad_ys is None:
            grad_ys = [None] * len(ys)
        elif not isinstance(grad_ys, (list, tuple)):
            grad_ys = [grad_ys]         # one tensor for one y, as TF allows
        if len(grad_ys) != len(ys):
            raise ValueError("Length mismatch. Passed %d grad_ys for %d ys"
                             % (len(grad_ys), len(ys)))
        grads = {}  # tensor -> list of gradient contributions
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if not y.dtype.base_dtype.is_floating:
                # An integer (or bool, string) y has no gradient: nothing flows
                # back from it, so every x it alone reaches gets None, as in TF.
                continue
            if gy is None:
                gy = _default_grad_y(y, i)
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype.base_dtype)
            grads.setdefault(y, []).append(gy)
        between = _between(ys, xs)
        _walk(graph, grads, between, stop_ops, set(xs), colocate_gradients_with_ops,
              gate_gradients, within=None)
        result = []
        for x in xs:
            g = _sum_grads(graph, grads.get(x, []), x.op, colocate_gradients_with_ops)
            if g is not None and g.dtype.base_dtype != x.dtype.base_dtype:
                g = math_ops.cast(g, x.dtype.base_dtype)
            result.append(g)
    return result


def _default_grad_y(y, i):
    """The seed ``dy/dy``: TF's ``Fill(Shape(y), 1)``, named ``grad_ys_<i>``. When
    ``y``'s shape is static, ``Shape`` is a constant (TF's ``shape(optimize=True)``),
    so the seed does not read ``y``: a training step that fetches only the
    update then never runs the loss's own last op (the forward ``Mean``)."""
    if y.shape.is_fully_defined():
        dims = array_ops.constant(y.shape.as_list(), dtype=dtypes.int32, name="Shape")
    else:
        dims = array_ops.shape(y)
    with name_scope("grad_ys_%d" % i) as scope:
        one = array_ops.constant(1, dtype=y.dtype.base_dtype)
        return array_ops.fill(dims, one, name=scope)


def _walk(graph, grads, between, stop_ops, x_set, colocate_gradients_with_ops, gate_gradients,
          within):
    """Add, to ``grads`` (tensor -> contributions), the gradients that flow back
    through the ``between`` ops, from the last created to the first.

    A while loop inside ``within`` is one unit: at its first ``Exit`` (the
    last one made) the gradients of all its exits are known, and
    while_gradients.py builds the backward loop; the loop's own ops are skipped."""
    loops_done = set()
    for op in sorted(between, key=lambda o: -o._id):
        if _loop_inside(op, within) is not None:
            continue           # part of a loop: done with the loop's gradient
        loop = getattr(op, "_exit_of", None)
        if loop is not None:
            if loop not in loops_done:
                loops_done.add(loop)
                _loop_grad(graph, loop, grads, between, x_set, colocate_gradients_with_ops,
                           gate_gradients)
            continue
        out_grads = [_sum_grads(graph, grads.get(t, []), op, colocate_gradients_with_ops)
                     for t in op._outputs]
        if op in stop_ops or all(g is None for g in out_grads):
            continue
        if not op._inputs:
            continue          # a source (a variable, a placeholder, a constant)
        fn = _gradient_of(op.type)
        if fn is _op_def.NOT_DIFFERENTIABLE:
            continue
        if fn is None:
            raise LookupError("No gradient defined for operation '%s' (op type: %s). "
                              "minitf cannot differentiate through it; wrap it in "
                              "tf.stop_gradient if no gradient should flow."
                              % (op.name, op.type))
        with graph.name_scope(op.name + "_grad"), \
                (graph.colocate_with(op) if colocate_gradients_with_ops else _nothing()):
            # With colocate_gradients_with_ops, an op's gradient runs where
            # the op ran (model parallelism: no activations sent back).
            in_grads = fn(op, *out_grads)
        if not isinstance(in_grads, (list, tuple)):
            in_grads = [in_grads]
        if gate_gradients and sum(g is not None for g in in_grads) > 1:
            # GATE_OP: an op's input gradients become available together.
            # Without it, an optimizer may update a weight (its gradient is
            # ready) while the gradient for an earlier layer, which reads
            # that same weight, is still being computed on another device.
            with graph.name_scope(op.name + "_grad_gate"):
                in_grads = control_flow_ops.tuple_(list(in_grads))
        if len(in_grads) != len(op._inputs):
            raise ValueError("Gradient function for %s returned %d gradients, expected %d"
                             % (op.type, len(in_grads), len(op._inputs)))
        for t, g in zip(op._inputs, in_grads):
            if g is None or not t.dtype.base_dtype.is_floating:
                continue
            if t.op in between or t in x_set:
                grads.setdefault(t, []).append(g)


def _loop_grad(graph, loop, grads, between, x_set, colocate, gate):
    exit_grads = [_sum_grads(graph, grads.get(x.outputs[0], []), x, colocate)
                  for x in loop.exits]
    if all(g is None for g in exit_grads):
        return

    def needs_grad(t):
        return t.op in between or t in x_set

    def body_grads(ys, grad_ys, xs, forward, state):
        """The gradient of one iteration of ``forward``'s body (in the backward loop)."""
        body = {}
        for y, g in zip(ys, grad_ys):
            body.setdefault(y, []).append(g)
        blocked = set(forward.merges + forward.switches + forward.next_iterations +
                      forward.enters) | {forward.loop_cond.op}
        inner = _between(ys, xs, blocked)
        # The walk stops at the body's inputs (an iteration's Identity, a captured Enter).
        _walk(graph, body, inner, {x.op for x in xs}, set(xs), colocate, gate, within=forward)
        return [_sum_grads(graph, body.get(x, []), x.op, colocate) for x in xs]

    results = while_gradients.build(graph, loop, exit_grads, needs_grad, body_grads)
    for t, g in results.items():
        if g is not None and t.dtype.base_dtype.is_floating and needs_grad(t):
            grads.setdefault(t, []).append(g)
