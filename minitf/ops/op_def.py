"""What the runtime needs to know about each op *type* (not each op).

* ``ref_inputs``: input slots that take a variable *reference* rather than its
  value (``Assign`` writes through input 0). The placer keeps such an op on
  the variable's device; the executor passes it the variable, not a copy of
  its value.
* ``stateful``: the op reads or writes state kept across steps (variables,
  queues, random generators); the planner never folds or caches it.
* ``blocking``: the op may wait on something outside the step (a queue, a
  peer task); the executor runs it on its own thread so it cannot starve
  other ops, and the op must honour the step's cancellation and deadline.
* ``dead_when``: when a dead input (the untaken side of a ``tf.cond``, see
  runtime/deadness.py) makes the op dead instead of running it: ``"any"``
  input dead (the default), ``"all"`` inputs dead (``Merge``), or never
  (``"pass"``: ``_Send`` runs to pass the news on).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class OpDef:
    name: str
    ref_inputs: tuple = ()
    stateful: bool = False
    blocking: bool = False
    dead_when: str = "any"


_OP_DEFS = {}


def register_op(name, ref_inputs=(), stateful=False, blocking=False, dead_when="any"):
    _OP_DEFS[name] = OpDef(name, tuple(ref_inputs), stateful, blocking, dead_when)


def get_op_def(name):
    op_def = _OP_DEFS.get(name)
    if op_def is None:
        op_def = OpDef(name)
    return op_def


for _name in ("VariableV2",):
    register_op(_name, stateful=True)
for _name in ("Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
              "ScatterUpdate", "ScatterAdd", "ScatterSub", "ApplyGradientDescent",
              "CountUpTo"):
    register_op(_name, ref_inputs=(0,), stateful=True)
# Optimizer updates take the variable and its slot variables by reference.
register_op("ApplyMomentum", ref_inputs=(0, 1), stateful=True)
register_op("ApplyAdagrad", ref_inputs=(0, 1), stateful=True)
register_op("ApplyRMSProp", ref_inputs=(0, 1, 2), stateful=True)
register_op("ApplyAdam", ref_inputs=(0, 1, 2), stateful=True)
for _name in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal",
              "RandomUniformInt", "RandomShuffle"):
    register_op(_name, stateful=True)
