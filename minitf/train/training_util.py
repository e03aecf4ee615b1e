"""The global step: one int64 variable that counts training steps.

Every worker of a cluster reads and increments the same ``global_step`` (it
lives on a parameter server), so it is the cluster's shared clock: hooks stop
training at a step, checkpoints are numbered by it, and staleness is measured
against it.
"""

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import init_ops, variable_scope
from minitf.ops import variables as _variables
from minitf.ops.variables import VARIABLE_V2


def get_global_step(graph=None):
    """The graph's global step variable, or None."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise TypeError("There should only be one global step: %s" % steps)
    if steps:
        return steps[0]
    op = graph._nodes_by_name.get("global_step")
    if op is not None and op.op_def is VARIABLE_V2:
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if v.op is op:
                return v
    return None


def create_global_step(graph=None):
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("\"global_step\" already exists.")
    # As TF: an int64 scalar from a zeros initializer, counted once however many
    # replicas update it.
    with graph.as_default(), graph.name_scope(""):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
            initializer=init_ops.Zeros(), trainable=False,
            aggregation=_variables.VariableAggregation.ONLY_FIRST_REPLICA,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step, created (int64, starting at 0) if missing."""
    graph = graph or get_default_graph()
    return get_global_step(graph) or create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The current value of the global step, as a Python int."""
    return int(sess.run(global_step_tensor))

