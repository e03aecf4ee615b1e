"""The gradient of a ``tf.while_loop``: another while loop, running backwards.

The forward loop ran its body N times (N is only known when the step runs).
Its gradient runs the gradient of the body N times, last iteration first, in
a second loop built here (TF1's design, control_flow_grad.py and
control_flow_state.py). For ``tf.gradients`` the forward loop is one unit:
given the gradients of its ``Exit`` outputs it produces the gradients of its
inputs, the initial loop variables and the outside values the body read.

1. **A counter in the forward loop.** A new loop variable counts the
   iterations; its ``Exit`` is N. (It is added now, at gradient time: graph
   mode allows adding ops to a loop that has not run yet.)
2. **Saved values.** A gradient function may need a value of the forward
   body (``Mul``'s needs both factors). Such a value differs in every
   iteration, so the forward loop ``StackPushV2``\\ es it in each iteration and
   the backward loop ``StackPopV2``\\ s it (ops/stack_ops.py): last in, first out
   is exactly the reverse order. A value the body read from outside is the
   same in every iteration and is simply read again.
3. **The backward loop.** Its loop variables are the count (N, down to 0),
   the gradient of each float loop variable (starting from the gradient of
   its ``Exit``), and one accumulator per outside value the body read (its
   gradient adds up over the iterations). Its body is the gradient of the
   forward body, built with the ordinary ``tf.gradients`` walk while the
   backward loop's context turns every forward value into a pop.
4. **Order.** Within a loop, iterations may overlap (``parallel_iterations``),
   but pushes must happen in iteration order and pops in reverse: every push
   of an iteration waits on the counter's value of that iteration, and the
   counter's increment waits on a ``ControlTrigger`` that waits on every push
   (a ControlTrigger runs even when a push was skipped because it sat in the
   untaken branch of a cond). The backward loop does the same with its pops
   and its decrement. A value that sits in a cond branch inside the loop is
   dead in the iterations where that branch did not run: its push then saves
   DEAD (``StackPushV2`` runs unless its *control* input is dead), so the
   mirrored backward iteration pops DEAD and skips that gradient in turn.
"""

from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, control_flow_ops, math_ops, stack_ops
from minitf.ops.control_flow_ops import ENTER, REF_ENTER, _switch, in_context, merge
from minitf.ops.while_loop import enter, exit, next_iteration, while_loop


class _ForwardCounter:
    """The counter added to forward loop ``W``: its per-iteration value (the
    pivot pushes wait on), its sync trigger, and its final value N."""

    def __init__(self, graph, W):
        with in_context(graph, W.outer), graph.control_dependencies(None):
            zero = array_ops.constant(0, name="f_count_init")
            start = enter(zero, W.frame_name, is_constant=False,
                          parallel_iterations=W.parallel_iterations, name="f_count")
        start.op._control_flow_context = W
        with in_context(graph, W), graph.control_dependencies(None):
            merged = merge([start, start], name="f_count_merge")[0]
            switched = _switch(merged, W.loop_cond, name="f_count_switch")
            self.pivot = array_ops.identity(switched[1], name="f_count_pivot")
            with graph.control_dependencies([self.pivot]):
                self.sync = control_flow_ops.control_trigger(name="f_sync")
            with graph.control_dependencies([self.sync]):
                self.add = math_ops.add(self.pivot, 1, name="f_count_add")
            merged.op._update_input(1, next_iteration(self.add, name="f_count_next"))
        with in_context(graph, W.outer):
            self.count = exit(switched[0], name="f_count_exit")


class LoopGradient:
    """The gradient of forward loop ``W`` for one ``tf.gradients`` call."""

    def __init__(self, graph, W):
        self.graph = graph
        self.W = W
        self.counter = _ForwardCounter(graph, W)
        self.stacks = {}        # forward tensor -> its stack handle (outside the loop)
        self.pops = {}          # forward tensor -> its pop in the backward body being built
        self.backward = None    # the backward loop's WhileContext

    # -- called by the backward loop's context for each tensor its ops read -----------------
    def forward_value(self, t, op_name):
        """``t``'s value in the forward iteration this backward iteration mirrors,
        or None if ``t`` is not a value of the forward loop."""
        W = self.W
        op = t.op
        if not W.contains(op):
            return None
        if op.type in (ENTER.name, REF_ENTER.name) and op._control_flow_context is W \
                and op.get_attr("is_constant"):
            # A value from outside: the same in every iteration; read it again.
            return self.backward.capture(op.inputs[0], op_name)
        return self._pop(t)

    def _pop(self, t):
        popped = self.pops.get(t)
        if popped is not None:
            return popped
        graph = self.graph
        handle = self.stacks.get(t)
        base = t.op.name.replace("/", "_")
        if handle is None:
            # The stack lives outside every loop: one per step.
            with in_context(graph, None), graph.control_dependencies(None), \
                    graph.name_scope(None):
                handle = stack_ops.stack(t.dtype.base_dtype, name="f_acc_" + base)
            self.stacks[t] = handle
            W = self.W
            with in_context(graph, W), graph.control_dependencies([self.counter.pivot]):
                push = stack_ops.push(handle, t, swap_memory=W.swap_memory)
            self.counter.sync._add_control_input(push.op)
        B = self.backward
        with in_context(graph, B), graph.control_dependencies([B.pivot]):
            popped = stack_ops.pop(handle, t.dtype.base_dtype, t.shape)
        self.pops[t] = popped
        return popped


def build(graph, W, exit_grads, needs_grad, backprop_body):
    """The backward loop of ``W``. ``exit_grads[k]``: the gradient of exit ``k``
    (or None); ``needs_grad(t)``: whether an outside tensor wants a gradient;
    ``backprop_body(ys, grad_ys, xs, W, state)``: the gradients.py walk over W's
    body, returning a gradient (or None) per x. Returns ``{outside tensor: gradient}``."""
    if not W.back_prop:
        return {}
    # A loop nested in a loop whose gradient is being built: its pushes must all
    # happen before the next outer iteration's, and its pops before the next
    # outer backward iteration's, so the outer syncs wait for it as a whole.
    enclosing = graph._control_flow_context
    enclosing = enclosing.while_context() if enclosing is not None else None
    outer_state = enclosing.gradient_state if enclosing is not None else None
    state = LoopGradient(graph, W)
    if outer_state is not None:
        outer_state.counter.sync._add_control_input(state.counter.count.op)
    float_vars = [k for k, x in enumerate(W.exits)
                  if x.outputs[0].dtype.base_dtype.is_floating]
    # (each captured value keyed by what its Enter reads: in a nested loop, the
    # enclosing loop's Enter of it)
    captured = [(e.op.inputs[0], e) for e in W.captured.values()]
    captured = [(t, e) for t, e in captured if t.dtype.base_dtype.is_floating and needs_grad(t)]
    starts = []
    for k in float_vars:
        g = exit_grads[k]
        starts.append(g if g is not None else array_ops.zeros_like(W.exits[k].outputs[0]))
    accs = [array_ops.zeros_like(t) for t, _ in captured]
    n_vars = len(float_vars)

    def cond(count, *rest):
        return math_ops.greater(count, 0)

    def body(count, *rest):
        B = graph._control_flow_context
        state.backward = B
        B.gradient_state = state
        state.pops = {}
        try:
            grads_in, accs_in = rest[:n_vars], rest[n_vars:]
            ys = [W.next_iterations[k].inputs[0] for k in float_vars]
            xs = [W.identities[k].outputs[0] for k in float_vars] + [e for _, e in captured]
            grads = backprop_body(ys, list(grads_in), xs, W, state)
        finally:
            B.gradient_state = None
        new_vars = [g if g is not None else array_ops.zeros_like(g_in)
                    for g, g_in in zip(grads[:n_vars], grads_in)]
        new_accs = [a if g is None else math_ops.add(a, g)
                    for a, g in zip(accs_in, grads[n_vars:])]
        with graph.control_dependencies(None):
            sync = control_flow_ops.control_trigger(name="b_sync")
        for p in state.pops.values():
            sync._add_control_input(p.op)
        sync._add_control_input(B.pivot)
        with graph.control_dependencies([sync]):
            next_count = math_ops.subtract(count, 1)
        return [next_count] + new_vars + new_accs

    shapes = [TensorShape([])] + [s.shape for s in starts] + [a.shape for a in accs]
    results = while_loop(cond, body, [state.counter.count] + starts + accs,
                         shape_invariants=shapes, parallel_iterations=W.parallel_iterations,
                         name="while_grad", return_same_structure=True)
    if outer_state is not None:
        outer_state.pops[("loop", W)] = results[0]
    out = {}
    for k, g in zip(float_vars, results[1:1 + n_vars]):
        out[W.enters[k].inputs[0]] = g
    for (t, _), g in zip(captured, results[1 + n_vars:]):
        out[t] = g
    return out

