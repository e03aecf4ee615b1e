"""Ops a step need not run: their values are never read, only waited for.

``optimizer.minimize`` builds, for every op on the way back from the loss, the
gradient of each of its inputs, and groups them (``tf.tuple``: with the default
``gate_gradients=GATE_OP`` each gradient waits for all its op's gradients).
So the first layer's ``MatMul`` gets a gradient for the images too,
``gradients/MatMul_grad/MatMul``: nothing reads that value, yet the group's
``NoOp`` has it as a control input, so pruning alone keeps it in the step. In
the CNN benchmark that is a whole convolution (the first layer's
``Conv2DBackpropInput``, a tenth of the step).

TF's graph optimizer (Grappler's dependency optimizer, ``SafeToConvertToNoOp``)
turns such an op into a ``NoOp`` whose control inputs are the op's inputs: an
op that waited for it now waits for what it would have read, and the op does
not run (TF's step stats never list it). :class:`Unread` finds the same ops:

* no op of the plan reads any of its outputs (an op found unread does not
  count as a reader, so whole unread branches go), it is not fetched and it
  is not a target;
* it has outputs (a ``NoOp`` or a ``Group`` is kept: it is cheap, and it is
  what others wait for) and inputs (a constant is kept: what waits for it
  across devices still gets its tiny Send/Recv, see partition_graphs.py), and
  running it changes nothing but its outputs: its
  row is not ``stateful`` (variables, queues, random numbers, Print), not
  ``blocking``, takes no reference, is not a loop or ``cond`` op, not an
  ``Assert`` or ``CheckNumerics`` (whose point is the error they may raise),
  and not an ``Identity`` of a variable or of a ``_Recv``.

:meth:`Unread.waited_for_instead` then says which ops an op that waited for
an unread one waits for instead. Steps with while loops or ``tf.cond``
(Switch, Merge: values that may be dead) are left as they are.
"""

import collections

#: Ops kept even when nothing reads them (TF's ``do_not_rewrite_ops``).
KEEP = frozenset(("Assert", "CheckNumerics", "_Retval", "_Arg", "ControlTrigger"))


def _may_skip(op):
    row = op.op_def
    if (row is None or not op._outputs or not op._inputs or row.stateful or row.blocking
            or row.makes_dead or row.frame_move is not None or row.ref_inputs
            or row.name in KEEP or any(t.dtype.is_ref_dtype for t in op._inputs)):
        return False
    if row.name == "Identity" and op._inputs:
        source = op._inputs[0].op.op_def
        if source is None or source.stateful or source.name == "_Recv":
            return False
    return True


class Unread:
    """The ops of ``needed`` (a pruned step) whose values nobody reads (``ops``,
    see the module docstring), found from the last op back to the first."""

    def __init__(self, needed, fetches, targets, fed):
        self.fed = fed
        self.ops = set()
        self._instead = {}
        if any(op.op_def is not None and (op.op_def.makes_dead or op.op_def.frame_move)
               for op in needed):
            return
        kept = {t.op for t in fetches} | set(targets)
        readers = collections.Counter()
        for op in needed:
            for t in op._inputs:
                if t not in fed:
                    readers[t.op] += 1
        for op in sorted(needed, key=lambda o: o._id, reverse=True):
            if op in kept or readers[op] or not _may_skip(op):
                continue
            self.ops.add(op)
            for t in op._inputs:
                if t not in fed:
                    readers[t.op] -= 1

    def waited_for_instead(self, op):
        """The ops that an op waiting for unread ``op`` waits for instead: what
        ``op`` would have read and waited for, with unread ones replaced in turn."""
        found = self._instead.get(op)
        if found is None:
            found = set()
            sources = [t.op for t in op._inputs if t not in self.fed] + list(op._control_inputs)
            for source in sources:
                if source in self.ops:
                    found |= self.waited_for_instead(source)
                else:
                    found.add(source)
            self._instead[op] = found
        return found
