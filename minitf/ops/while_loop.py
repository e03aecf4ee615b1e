"""``tf.while_loop``: a loop built from five routing ops, TF1's frame design.

TensorFlow 1.x has no "loop" node. ``while_loop(cond, body, [i0, x0])``
builds a cycle in the graph out of ops that only route values::

    i0 ─► Enter ─► Merge ─┬─► cond(...) ─► LoopCond ─┐
                    ▲     └──────────────► Switch ◄──┘
                    │                        │ true            │ false
                    │                     Identity            Exit ─► result
                    │                        │
                    └── NextIteration ◄── body(...)

* ``Enter`` moves a value *into* the loop's **frame** (the loop's own
  execution context, named by its ``frame_name`` attr). A value the body
  reads from outside enters once with ``is_constant=True`` and is then seen by
  every iteration;
* ``Merge`` takes whichever input arrives: the ``Enter`` in iteration 0, the
  ``NextIteration`` (the back edge) after that;
* ``LoopCond`` marks the loop's condition, and each ``Switch`` sends the
  value to the body (true) or to ``Exit`` (false). Like a ``tf.cond``, the
  untaken side is *dead* (runtime/deadness.py);
* ``NextIteration`` carries the body's result to the next iteration;
* ``Exit`` moves the final value out of the frame.

The executor (runtime/frames.py) keeps one set of values per (frame,
iteration), so ops of different iterations can run at the same time, up to
``parallel_iterations`` iterations at once. Gradients of a loop are another
loop that runs the iterations backwards (ops/while_gradients.py).

While the cond and body functions run, the loop's :class:`WhileContext` is the
graph's control-flow context: every op they create belongs to the loop, a
tensor they read from outside is captured through an ``Enter`` (once per
tensor), an op with no inputs waits on the loop's *pivot* so that it runs once
per iteration, and control inputs from outside the loop are dropped (the
loop's ``Enter`` ops already wait for them).
"""

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops
from minitf.ops.control_flow_ops import (ENTER, EXIT, LOOP_COND, NEXT_ITERATION, REF_ENTER,
                                         REF_EXIT, REF_NEXT_ITERATION, ControlFlowContext,
                                         _switch, in_context, merge)
from minitf.ops.core import convert_to_tensor, make_op, name_scope


def _routing_op(row, ref_row, x, name, attrs=None):
    """One output that is ``x`` routed somewhere (Enter, Exit, NextIteration)."""
    is_ref = x.dtype.is_ref_dtype
    dt = x.dtype if is_ref else x.dtype.base_dtype
    attrs = dict(attrs or {}, T=x.dtype.base_dtype)
    return make_op(ref_row if is_ref else row, [x], [dt], [x.shape], name=name,
                   attrs=attrs).outputs[0]


def enter(x, frame_name, is_constant=False, parallel_iterations=10, name="Enter"):
    return _routing_op(ENTER, REF_ENTER, x, name, {
        "frame_name": frame_name, "is_constant": is_constant,
        "parallel_iterations": parallel_iterations})


def exit(x, name="Exit"):  # noqa: A001 - TF's name
    return _routing_op(EXIT, REF_EXIT, x, name)


def next_iteration(x, name="NextIteration"):
    return _routing_op(NEXT_ITERATION, REF_NEXT_ITERATION, x, name)


def loop_cond(pred, name="LoopCond"):
    return make_op(LOOP_COND, [pred], [dtypes.bool], [pred.shape], name=name).outputs[0]


class WhileContext(ControlFlowContext):
    """One ``tf.while_loop`` being built, and what its gradient needs later.

    ``enters``/``merges``/``switches``/``identities``/``next_iterations``/
    ``exits``: the routing ops of each loop variable, in order;
    ``loop_cond``: the ``LoopCond`` output; ``captured``: outside tensor ->
    its constant ``Enter`` output inside the frame; ``pivot``: the op that ops
    without inputs wait on (the first ``Merge`` while ``cond`` is built, the
    first body ``Identity`` while ``body`` is)."""

    def __init__(self, name, parallel_iterations, back_prop, swap_memory, outer):
        super().__init__(outer)
        self.name = name
        self.frame_name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.captured = {}
        self.pivot = None
        self.enters = self.merges = self.switches = self.identities = ()
        self.next_iterations = self.exits = ()
        self.loop_cond = None
        self.gradient_state = None   # set while a gradient of this loop is being built

    # -- the graph's hooks ----------------------------------------------------------------
    def capture_inputs(self, inputs, op_name):
        return [self.capture(t, op_name) for t in inputs]

    def capture(self, t, op_name):
        """``t`` as the loop's ops see it: itself if made in the loop, else
        (once) a constant ``Enter`` of it into this frame."""
        if self.contains(t.op):
            return t
        if self.gradient_state is not None:
            # Building a gradient loop: a value of the forward loop comes
            # from the forward iteration this backward iteration mirrors.
            found = self.gradient_state.forward_value(t, op_name)
            if found is not None:
                return found
        found = self.captured.get(t)
        if found is None:
            graph = t.graph
            # The Enter is made in the enclosing context, which captures ``t`` in turn.
            with in_context(graph, self.outer), graph.control_dependencies(None), \
                    graph.name_scope(op_name + "/"):
                found = enter(t, self.frame_name, is_constant=True,
                              parallel_iterations=self.parallel_iterations)
            found.op._control_flow_context = self   # its output lives in this frame
            self.captured[t] = found
        return found

    def control_inputs(self, inputs, controls):
        """Drop control inputs from outside the loop; an op whose inputs are all
        loop invariants (or that has none) waits on the pivot, so it runs once
        per iteration and not in the iteration that exits."""
        controls = [c for c in controls if self.contains(c)]
        if self.pivot is not None and not controls and all(
                self.is_invariant(t) for t in inputs):
            controls = [self.pivot]
        return controls

    def is_invariant(self, t):
        """A value that is the same in every iteration: a captured outside value."""
        op = t.op
        return not self.contains(op) or (
            op._control_flow_context is self and op.type in (ENTER.name, REF_ENTER.name)
            and op.get_attr("is_constant"))


# -- loop variables: tensors, TensorArrays, and nests of them ---------------------------
def _flatten(structure):
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for s in structure for leaf in _flatten(s)]
    return [structure]


def _pack(template, flat):
    it = iter(flat)

    def build(t):
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, (list, tuple)):
            items = [build(s) for s in t]
            if hasattr(t, "_fields"):
                return type(t)(*items)
            return type(t)(items)
        return next(it)
    return build(template)


def _is_tensor_array(x):
    return hasattr(x, "_flow") and hasattr(x, "_with_flow")


def _as_flows(flat):
    """TensorArrays travel through the loop as their ``flow`` tensor."""
    return [x._flow if _is_tensor_array(x) else convert_to_tensor(x) for x in flat]


def _from_flows(templates, flows):
    return [t._with_flow(f) if _is_tensor_array(t) else f for t, f in zip(templates, flows)]


def _check_same_structure(loop_vars, result):
    def shape(s):
        if isinstance(s, dict):
            return ("dict", tuple(sorted(s)), tuple(shape(s[k]) for k in sorted(s)))
        if isinstance(s, (list, tuple)):
            return ("seq", len(s), tuple(shape(x) for x in s))
        return "leaf"
    if shape(loop_vars) != shape(result):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         "First structure: %s\n\nSecond structure: %s\n\nThe body of a "
                         "tf.while_loop must return the same structure as loop_vars."
                         % (loop_vars, result))


def _invariant_shape(x, invariant):
    if invariant is None:
        return x.shape
    invariant = TensorShape(invariant) if not isinstance(invariant, TensorShape) else invariant
    if not invariant.is_compatible_with(x.shape):
        raise ValueError("The shape invariant specified for %s is not compatible with the "
                         "initial shape of the loop variable. It enters the loop with shape "
                         "%s, but the specified shape invariant is %s."
                         % (x.name, x.shape, invariant))
    return invariant


def _check_shape(merge_out, next_value, enter_value):
    if not merge_out.shape.is_compatible_with(next_value.shape) or (
            merge_out.shape.ndims is not None and next_value.shape.ndims is None):
        raise ValueError(
            "Input tensor '%s' enters the loop with shape %s, but has shape %s after one "
            "iteration. To allow the shape to vary across iterations, use the "
            "`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
            % (enter_value.name, merge_out.shape, next_value.shape))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeat ``body`` while ``cond`` is true (TF1's ``tf.while_loop``).

    ``loop_vars`` is a list or tuple (possibly nested, TensorArrays allowed);
    ``cond(*loop_vars)`` returns a scalar bool tensor and ``body(*loop_vars)``
    the new loop variables: the same structure and dtypes and, unless
    ``shape_invariants`` relaxes them, the same shapes. Both functions are
    called once, now, to build the loop; each step then runs the body as many
    times as the condition says. Up to ``parallel_iterations`` iterations run
    at the same time; ``maximum_iterations`` stops the loop after that many;
    ``back_prop=False`` stops ``tf.gradients`` at the loop. ``swap_memory``
    (TF: keep the values saved for the gradient in host memory) changes
    nothing here: saved values live in host memory already.

    Returns the final loop variables: one value when there is one loop
    variable (unless ``return_same_structure``), else the structure the body
    returns.
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if not isinstance(parallel_iterations, int) or parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError("loop_vars must be a list or tuple of tensors, got %s (wrap a single "
                        "tensor: loop_vars=[x])" % type(loop_vars).__name__)
    if not _flatten(loop_vars):
        raise ValueError("No loop variables provided")
    graph = get_default_graph()
    with name_scope(name, "while", _flatten(loop_vars)) as scope:
        if maximum_iterations is not None:
            # TF's rewrite: one more loop variable counts the iterations.
            maximum_iterations = convert_to_tensor(maximum_iterations,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError("maximum_iterations must be a scalar, saw shape: %s"
                                 % maximum_iterations.shape)
            counter = array_ops.constant(0, dtype=maximum_iterations.dtype,
                                         name="iteration_counter")
            user_cond, user_body = cond, body
            if len(loop_vars) == 1 and not return_same_structure:
                loop_vars = (counter, loop_vars[0])

                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, user_cond(lv))

                def body(i, lv):
                    return (i + 1, user_body(lv))
            else:
                loop_vars = (counter, loop_vars)

                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, user_cond(*lv))

                def body(i, lv):
                    return (i + 1, user_body(*lv))
            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants)
        result = _build_loop(graph, scope, cond, body, loop_vars, shape_invariants,
                             parallel_iterations, back_prop, swap_memory)
    if maximum_iterations is not None:
        result = result[1]
    elif not return_same_structure and len(_flatten(result)) == 1:
        result = _flatten(result)[0]
    return result


def _build_loop(graph, scope, cond, body, loop_vars, shape_invariants, parallel_iterations,
                back_prop, swap_memory):
    flat_vars = _flatten(loop_vars)
    flows = _as_flows(flat_vars)
    if shape_invariants is not None:
        flat_invariants = _flatten(shape_invariants)
        if len(flat_invariants) != len(flows):
            raise ValueError("The two structures don't have the same number of elements: "
                             "shape_invariants must match loop_vars.")
    else:
        flat_invariants = [None] * len(flows)
    outer = graph._control_flow_context
    context = WhileContext(scope + "while_context", parallel_iterations, back_prop,
                           swap_memory, outer)
    with graph.control_dependencies(None):
        # The Enter ops are made in the enclosing context (which captures what they read).
        enters = [enter(x, context.frame_name, is_constant=False,
                        parallel_iterations=parallel_iterations, name="Enter")
                  for x in flows]
    for e, inv in zip(enters, flat_invariants):
        e._shape = _invariant_shape(e, inv)
        e.op._control_flow_context = context      # its output lives in the loop's frame
    with in_context(graph, context):
        merges = [merge([e, e], name="Merge")[0] for e in enters]
        context.pivot = merges[0].op
        pred = convert_to_tensor(cond(*_pack(loop_vars, _from_flows(flat_vars, merges))))
        if pred.dtype.base_dtype != dtypes.bool or pred.shape.ndims not in (None, 0):
            raise TypeError("cond of a tf.while_loop must return a scalar bool tensor, "
                            "got %s of shape %s" % (pred.dtype.name, pred.shape))
        pivot = loop_cond(pred, name="LoopCond")
        switches = [_switch(m, pivot, name="Switch") for m in merges]
        identities = [array_ops.identity(s[1], name="Identity") for s in switches]
        context.pivot = identities[0].op
        body_args = _pack(loop_vars, _from_flows(flat_vars, identities))
        result = body(*body_args)
        if not isinstance(result, (list, tuple, dict)):
            result = [result]
        _check_same_structure(list(body_args), list(result))
        flat_result = _flatten(result)
        if len(flat_result) != len(merges):
            raise ValueError("Number of inputs and outputs of body must match loop_vars: "
                             "%d, %d" % (len(merges), len(flat_result)))
        next_vars = []
        for m, r, x in zip(merges, _as_flows(flat_result), flows):
            if r.dtype.base_dtype != m.dtype.base_dtype:
                raise ValueError("Loop variable %s enters the loop with dtype %s, but the body "
                                 "returns dtype %s." % (x.name, m.dtype.base_dtype.name,
                                                        r.dtype.base_dtype.name))
            if context.is_invariant(r):
                # A value the same in every iteration must still stop with the loop.
                r = array_ops.identity(r)
            _check_shape(m, r, x)
            nxt = next_iteration(r, name="NextIteration")
            m.op._update_input(1, nxt)
            next_vars.append(nxt)
    with in_context(graph, outer):
        exits = [exit(s[0], name="Exit") for s in switches]
    for x, m in zip(exits, merges):
        x._shape = m.shape
        x.op._exit_of = context
    context.enters = tuple(e.op for e in enters)
    context.merges = tuple(m.op for m in merges)
    context.switches = tuple(s[0].op for s in switches)
    context.identities = tuple(i.op for i in identities)
    context.next_iterations = tuple(n.op for n in next_vars)
    context.exits = tuple(e.op for e in exits)
    context.loop_cond = pivot
    if outer is None:
        graph.add_to_collection("while_context", context)
    return _pack(result, _from_flows(flat_result, exits))
