"""Ops a step need not run: ops whose values are never read, only waited for
(:class:`Unread`), and Identity and NoOp ops that only pass a value or a wait
on (:class:`Bypass`, at the end of this module).

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

from minitf.framework.op_def import ANY

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


# -- going around Identity and NoOp ops ---------------------------------------------------------
#: The ops whose output an Identity must keep copying: a variable's value (its
#: ``read`` snapshot) and what a ``_Recv`` brought (TF's ``SafeToRemoveIdentity``).
_SOURCES_KEPT = frozenset(("VariableV2", "Variable", "VarHandleOp", "_Recv"))


class Bypass:
    """The Identity and NoOp ops a step goes around, as Grappler's dependency
    optimizer does (``OptimizeNode``).

    ``tf.tuple`` (every ``gate_gradients`` group of ``optimizer.minimize``)
    makes, for each gradient, an ``Identity`` that waits for a ``NoOp``
    (``group_deps``) that waits for all the gradients; a while loop adds an
    Identity after each Switch. They copy nothing and cost a scheduling round
    each: in the LSTM benchmark's step, 1,400 of its 7,800 ops were such
    Identities and 400 such NoOps. An op that read an Identity reads the
    Identity's input instead and waits for what the Identity waited for; an
    op that waited for a NoOp waits for what the NoOp waited for::

        x --> Identity --> a          x --> a
        g --^    (^: waits for)  ==>  g --^

    TF's rules decide which (:meth:`_keep`): an op is gone round only when
    that does not add edges (inputs x outputs <= inputs + outputs, counting
    waits), nor edges between devices; never a fetched or fed op, a target, an
    Identity of a variable or a ``_Recv``, an Identity after a Switch that
    another op waits for (a ``tf.cond`` branch's or a loop body's pivot), or
    an Identity with waits of its own read by an op that would not pass on a
    dead wait (a Merge, a ``_Send``).
    Ops are looked at from the last to the first, as TF's work list does.
    """

    def __init__(self, order, preserve, fed, device_of, unread):
        live = set(order)
        self.ops = set()
        self._alias = {}                       # an Identity's output -> what it copied
        self._fed = fed
        self._device = device_of
        self._ctrl = {}                        # op -> the ops it waits for (now)
        self._outs = {op: set() for op in order}   # op -> the ops that read or wait for it
        for op in order:
            waits = []
            for c in op._control_inputs:
                for w in (unread.waited_for_instead(c) if c in unread.ops else (c,)):
                    if w in live and w not in waits:
                        waits.append(w)
            self._ctrl[op] = waits
            for t in op._inputs:
                if t not in fed and t.op in live:
                    self._outs[t.op].add(op)
            for w in waits:
                self._outs[w].add(op)
        # TF's meta optimizer runs the dependency optimizer twice; between the
        # two, waits that another path already implies are dropped.
        for _ in range(2):
            for op in reversed(order):
                if (op not in self.ops and op not in preserve
                        and op.type in ("Identity", "NoOp") and not self._keep(op)):
                    self._go_around(op)
            self._drop_implied_waits([op for op in order if op not in self.ops])

    def resolve(self, t):
        """The tensor read in place of ``t``."""
        while t in self._alias:
            t = self._alias[t]
        return t

    def control_inputs(self, op):
        """The ops ``op`` waits for in the step."""
        return self._ctrl.get(op, op._control_inputs)

    def _source(self, op):
        """An Identity's input op (None when fed or a NoOp)."""
        if op.type != "Identity":
            return None
        t = self.resolve(op._inputs[0])
        return None if t in self._fed else t.op

    def _keep(self, op):
        source = self._source(op)
        waits = self._ctrl[op]
        outs = self._outs[op]
        if op.type == "Identity":
            t = op._inputs[0]
            if (t.dtype.is_ref_dtype or op._outputs[0].dtype.is_ref_dtype
                    or (source is not None and source.type in _SOURCES_KEPT)):
                return True
            if waits and any(o.type == "_Retval" or o.op_def is None
                             or o.op_def.dead_when != ANY for o in outs):
                return True         # (a Merge or a _Send would not pass on a dead wait)
            if source is not None and source.type == "Switch" and any(
                    op in self._ctrl[o] for o in outs):
                return True
        inputs = ([source] if source is not None else []) + list(waits)
        n_in, n_out = len(waits) + (op.type == "Identity"), len(outs)   # (a fed input counts)
        if n_in * n_out > n_in + n_out:
            return True
        here = self._device(op)
        if (len(inputs) == 1 and n_out > 1 and self._device(inputs[0]) != here) or (
                len(inputs) > 1 and n_out == 1 and self._device(next(iter(outs))) != here):
            return True
        cross_in = sum(self._device(i) != here for i in inputs)
        cross_out = sum(self._device(o) != here for o in outs)
        cross_after = sum(self._device(i) != self._device(o) for i in inputs for o in outs)
        if cross_after > cross_in + cross_out:
            return True
        return op.type == "Identity" and cross_in and cross_out and cross_after

    def _reads(self, op):
        """The ops whose outputs ``op`` reads (fed values aside)."""
        return {t.op for t in map(self.resolve, op._inputs) if t not in self._fed}

    def _drop_implied_waits(self, order):
        """Drop each wait ``w -> o`` where ``o`` also reads or waits for an op that
        reads or waits for ``w`` (a path of two edges: TF's transitive
        reduction, here one step deep). A Merge or an op that moves between
        loop frames on that path does not count: it may not wait for ``w``."""
        reads = {op: self._reads(op) for op in order}
        # (what each op reads or waits for as the pass starts: a wait it drops
        # is implied by a longer path, so the answers stay true)
        before = {op: reads[op] | set(self._ctrl[op]) for op in order}
        for o in order:
            waits = self._ctrl[o]
            if not waits:
                continue
            via = [p for p in before[o] if p.op_def is not None and p.type != "Merge"
                   and p.op_def.frame_move is None]
            for w in list(waits):
                if w.op_def is None or w.op_def.frame_move is not None:
                    continue
                if any(p is not w and w in before[p] for p in via):
                    waits.remove(w)
                    if w not in reads[o]:
                        self._outs[w].discard(o)

    def _go_around(self, op):
        source = self._source(op)
        waits = self._ctrl.pop(op)
        if op.type == "Identity":
            self._alias[op._outputs[0]] = self.resolve(op._inputs[0])
        for o in self._outs.pop(op):
            ctrl = self._ctrl[o]
            if op in ctrl:
                ctrl.remove(op)
                if source is not None and source not in ctrl:
                    ctrl.append(source)
            if source is not None:
                self._outs[source].add(o)
            for w in waits:
                if o not in self._outs[w]:
                    ctrl.append(w)
                    self._outs[w].add(o)
        if source is not None:
            self._outs[source].discard(op)
        for w in waits:
            self._outs[w].discard(op)
        self.ops.add(op)
