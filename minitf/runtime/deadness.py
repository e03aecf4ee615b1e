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
"""

__all__ = ["DEAD", "ANY", "ALL", "PASS"]


class _Dead:
    __slots__ = ()

    def __repr__(self):
        return "DEAD"


#: The value of a tensor whose op did not run because its branch was not taken.
DEAD = _Dead()

#: When is an op dead? ANY dead input (most ops); ALL inputs dead (Merge);
#: never (PASS: ``_Send`` runs to pass the marker on).
ANY, ALL, PASS = "any", "all", "pass"
