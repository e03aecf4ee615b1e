"""Constant folding: compute once, when the plan is built, what every step would
compute the same (``OptimizerOptions(do_constant_folding=True)``).

``tf.constant(2.0) * 3.0 + 1.0`` gives the same number in every step, so a
plan can compute it once and keep the result, as TF's graph optimizer does.
An op *folds* when its row allows it and its inputs are all known now:

* its row is not ``stateful`` (random numbers, variables, queues, Print must run
  in every step) and not ``blocking``;
* it takes no variable reference, never makes dead values (a Switch) and
  does not move values between a while loop's frames (an Enter);
* it has no control inputs, and it runs on a CPU;
* every input is the output of an op that folded (a Const folds first).

The op's kernel then runs once, now, and its outputs become constants of the
plan: a step finds them in their slots and runs nothing for them, and its
trace no longer lists the op. An op whose kernel fails now (a Placeholder that
was not fed, a bad shape) is left in the plan, so the step reports the error
exactly as it would have without folding.
"""

from minitf.runtime.step import KernelContext, StepState


def foldable(node, folded_slots):
    op, row = node.op, node.op.op_def
    return (row is not None and not row.stateful and not row.blocking and not row.makes_dead
            and row.frame_move is None
            and not row.ref_inputs and not op._control_inputs and node.members is None
            and node.device.device_type == "CPU"
            and not any(t.dtype.is_ref_dtype for t in op._inputs)
            and all(slot in folded_slots for slot in node.inputs))


def fold(nodes, contexts):
    """``(nodes left to run, {slot: value})``: ``nodes`` without the ones that
    folded, and the values their outputs now hold."""
    constants = {}
    left = []
    for node in nodes:
        if foldable(node, constants):
            resources, session_state = contexts[node.device.name]
            ctx = KernelContext(resources, node.device, session_state, StepState())
            try:
                outs = node.compute(ctx, [constants[slot] for slot in node.inputs])
            except Exception:  # noqa: BLE001 - it fails again, and is reported, in the step
                left.append(node)
                continue
            for k, value in enumerate(outs):
                constants[node.out_base + k] = value
            continue
        left.append(node)
    return left, constants
