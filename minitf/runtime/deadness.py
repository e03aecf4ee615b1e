"""Dead tensors: the values of the branch of a ``tf.cond`` that did not run.

``tf.cond(pred, true_fn, false_fn)`` builds *both* branches into the graph.
Each value a branch reads from outside goes through a ``Switch(x, pred)``,
which has two outputs: ``x`` on the side ``pred`` chose and :data:`DEAD` on
the other. The executor never runs an op that has a dead input (or a dead
control input): it marks the op's outputs dead too, so the whole untaken
branch is skipped, its side effects included. ``Merge`` at the end of the
cond is the exception: it outputs whichever of its inputs is alive.

Dead values cross tasks like any other: a ``_Send`` of a dead value sends a
"dead" marker and the ``_Recv`` on the other side outputs :data:`DEAD`.
Fetching a dead tensor is an error, as in TensorFlow.

The marker :data:`DEAD` and the three rules (``OpDef.dead_when``: ANY dead
input, the default; ALL inputs dead, ``Merge``; never, PASS: ``_Send`` runs to
pass the marker on; a dead control input, CONTROLS) are declared with the op table, in
``minitf/framework/op_def.py``; this module applies them.
"""

from minitf.framework.op_def import ALL, ANY, CONTROLS, DEAD

__all__ = ["DEAD", "is_dead"]


def is_dead(node, inputs, dead):
    """Whether ``node`` is skipped this step: by its row's ``dead_when`` rule on its
    input values, or because a control predecessor was skipped (``dead[i]``)."""
    if node.dead_when == ANY:
        return any(v is DEAD for v in inputs) or any(dead[p] for p in node.control_preds)
    if node.dead_when == ALL:
        return all(v is DEAD for v in inputs) or any(dead[p] for p in node.control_preds)
    if node.dead_when == CONTROLS:
        return any(dead[p] for p in node.control_preds)
    return False
