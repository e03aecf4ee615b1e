"""Constant folding: compute once, when the plan is built, what every step would
compute the same. On by default, as in TF (``opt_level`` L1); ``L0`` turns it
off.

``tf.constant(2.0) * 3.0 + 1.0`` gives the same number in every step, so a
plan can compute it once and keep the result, as TF's graph optimizer does.
Training steps are full of such ops: the gradient's seed ``Fill(Shape(loss),
1)`` when the loss's shape is known, and the ``Reshape``/``Tile``/``RealDiv``
that spread it over a mean's inputs. An op *folds* when its row allows it and
its inputs are all known now:

* its row is not ``stateful`` (random numbers, variables, queues, Print must run
  in every step) and not ``blocking``;
* it takes no variable reference, never makes dead values (a Switch) and
  does not move values between a while loop's frames (an Enter);
* it has no control inputs, and it runs on a CPU;
* every input is the output of an op that folded (a Const folds first).

The op's kernel then runs once, now (an op whose kernel fails now, a
Placeholder that was not fed or a bad shape, is left in the plan, so that the
step reports the error exactly as it would have without folding). Where a
folded value is still read, by an op that did not fold or as a fetch, its op
stays in the plan as a constant: a step hands out the stored value without
running the kernel, and its trace lists it as a ``Const`` of the op's name,
as TF's does (``k = Const()``). The folded ops before it, and the Consts that
fed only them, leave the plan. Such a kept value may hold at most 10 MiB
(TF's limit; a tensor whose elements are all equal counts as one element, as
TF stores it); a larger one is computed in every step instead, from the
values before it. Kept values are read-only, like a Const's: every step
shares them, so ``sess.run`` hands out copies.
"""

import numpy as np

from minitf.runtime.node import Node
from minitf.runtime.step import KernelContext, StepState


#: The most a folded value that a step still reads may hold (TF's limit).
MAX_FOLDED_BYTES = 10 * 1024 * 1024


def foldable(node, folded_slots):
    op, row = node.op, node.op.op_def
    return (row is not None and not row.stateful and not row.blocking and not row.makes_dead
            and row.frame_move is None
            and not row.ref_inputs and not node.control_inputs and node.members is None
            and node.device.device_type == "CPU"
            and not any(t.dtype.is_ref_dtype for t in op._inputs)
            and all(slot in folded_slots for slot in node.inputs))


def stored_bytes(value):
    """What keeping ``value`` costs, as TF counts it: a tensor whose elements
    are all equal is stored as one element."""
    if not isinstance(value, np.ndarray) or value.dtype == object or value.size <= 1:
        return 0
    flat = value.reshape(-1)
    return value.itemsize if (flat == flat[0]).all() else value.nbytes


def fold(nodes, contexts, fetch_slots):
    """``nodes`` after folding, in the same order. What is left of a folded
    op is what TF's Grappler leaves: where a folded value is still read (by an
    op that did not fold, as a fetch, or as a control input), its op stays in
    the plan as a constant (:func:`frozen`), under its own name and on its
    device; every other folded op, Consts that only fed folded ops included,
    is gone from the plan."""
    values = {}                 # slot -> value, for every folded output
    folded = set()
    for i, node in enumerate(nodes):
        if not foldable(node, values):
            continue
        resources, session_state = contexts[node.device.name]
        ctx = KernelContext(resources, node.device, session_state, StepState())
        try:
            outs = node.compute(ctx, [values[slot] for slot in node.inputs])
        except Exception:  # noqa: BLE001 - it fails again, and is reported, in the step
            continue
        folded.add(i)
        for k, value in enumerate(outs):
            if isinstance(value, np.ndarray) and value.flags.writeable:
                value.flags.writeable = False
            values[node.out_base + k] = value
    read = set(fetch_slots)
    waited_for = set()
    for i, node in enumerate(nodes):
        if i not in folded:
            read.update(node.inputs)
            waited_for.update(node.control_inputs)
    # A read value too large to keep: its op runs in every step after all, so
    # the values it reads are read (its producers come earlier in ``nodes``).
    for i in range(len(nodes) - 1, -1, -1):
        node = nodes[i]
        if i in folded and node.op.type != "Const" and any(
                slot in read and stored_bytes(values[slot]) > MAX_FOLDED_BYTES
                for slot in _outputs(node)):
            folded.discard(i)
            read.update(node.inputs)
    left = []
    for i, node in enumerate(nodes):
        if i not in folded:
            left.append(node)
        elif node.op in waited_for or any(slot in read for slot in _outputs(node)):
            left.append(node if node.op.type == "Const" else
                        frozen(node, [values[slot] for slot in _outputs(node)]))
    return left


def _outputs(node):
    """The slots of ``node``'s outputs."""
    return range(node.out_base, node.out_end)


def frozen(node, outs):
    """A node that hands out ``outs``, computed at plan time, in place of
    ``node``'s kernel: no inputs, cheap to run (TF turns such an op into a
    ``Const`` of the same name; a trace lists it as one)."""
    outs = tuple(outs)

    def compute(ctx, inputs):
        return outs
    const = Node(node.op, compute, node.device, [], (), node.out_base, False)
    const.folded = True
    const.expensive = False
    return const
