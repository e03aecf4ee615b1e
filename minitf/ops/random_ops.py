"""Random ops with TF1's seed rules.

Each random op has two seeds, derived as in TF's ``get_seed``:

* neither the graph seed (``tf.set_random_seed``) nor the op seed set:
  fresh randomness each time a session first runs the op;
* graph seed set, op seed not: the op seed counts the seedless random ops
  created so far in the graph (0, 1, 2...), so rebuilding the same program
  gives the same numbers, and adding other ops in between changes nothing
  (TF 2.x's ``tf.compat.v1`` rule; TF 1.x used the number of ops instead);
* op seed set: ``(graph seed or DEFAULT_GRAPH_SEED, op seed)``.

The pair ``(0, 0)`` means "no seed" to a kernel, so it becomes
``(0, 2**31 - 1)``, as in TF.

The kernel keeps one generator per (session, op): running the op again in the
same session continues the stream; a new session starts it over. minitf uses
numpy's Philox generator, so the *numbers* differ from TF's while the rules
above are the same.
"""

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.array_ops import _run_time_shape, _static_ints
from minitf.ops.core import make_op, name_scope

DEFAULT_GRAPH_SEED = 87654321


_MAXINT32 = 2**31 - 1


def get_seed(op_seed):
    """The (graph seed, op seed) pair of a new random op (see module docstring)."""
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph._random_seed_count
            graph._random_seed_count += 1
        seeds = global_seed, op_seed
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, op_seed
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def set_random_seed(seed):
    """Set the graph-level seed of the default graph."""
    get_default_graph().seed = seed


def _random(op_type, shape, dtype, seed, name, attrs):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating and op_type != "RandomUniformInt":
        raise ValueError("Invalid dtype %s for %s: a float type is needed."
                         % (dtype.name, op_type))
    with name_scope(name, op_type, []) as scope:
        # A shape computed in the graph (tf.shape(x)) becomes the op's input;
        # a static one is kept in the op's output shape.
        run_time = _run_time_shape(shape, "shape")
        inputs, out = ([run_time[0]], TensorShape(run_time[1])) if run_time is not None \
            else ([], TensorShape(_static_ints(shape, "shape")))
        seed1, seed2 = get_seed(seed)
        attrs = dict(attrs, dtype=dtype, T=dtype, seed=seed1 or 0, seed2=seed2 or 0)
        op = make_op(op_type, inputs, [dtype], [out], name=scope, attrs=attrs,
                     graph=get_default_graph())
    return op.outputs[0]


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        return _random("RandomUniformInt", shape, dtype, seed, name or "random_uniform",
                       {"minval": int(minval), "maxval": int(maxval)})
    return _random("RandomUniform", shape, dtype, seed, name or "random_uniform",
                   {"minval": float(minval), "maxval": 1.0 if maxval is None else float(maxval)})


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    return _random("RandomStandardNormal", shape, dtype, seed, name or "random_normal",
                   {"mean": float(mean), "stddev": float(stddev)})


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    return _random("TruncatedNormal", shape, dtype, seed, name or "truncated_normal",
                   {"mean": float(mean), "stddev": float(stddev)})
