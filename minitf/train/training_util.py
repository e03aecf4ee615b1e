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


GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def get_or_create_global_step_read(graph=None):
    """A tensor that *copies* the global step's value when it runs: ``global_step + 0``.

    Hooks fetch this, not the variable, alongside the training op. The copy
    depends on nothing but the variable, so it runs at the start of the step,
    before the optimizer's increment: the value a hook sees is the step count
    *before* this step (TF's hooks, and ours, add 1). Fetching the variable
    itself would give whatever the buffer holds when the step ends. One per
    graph, kept in a collection (as TF's ``_get_or_create_global_step_read``);
    None when the graph has no global step.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(found) > 1:
        raise RuntimeError("There are multiple items in collection %s. There should be only "
                           "one." % GLOBAL_STEP_READ_KEY)
    if found:
        return found[0]
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None), graph.name_scope(step.op.name + "/"):
        read = step + 0
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


def global_step(sess, global_step_tensor):
    """The current value of the global step, as a Python int."""
    return int(sess.run(global_step_tensor))

