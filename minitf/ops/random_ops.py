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

import numpy as np

from minitf.framework import dtypes, errors, graph_def
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.array_ops import _run_time_shape, _static_ints
from minitf.ops.core import EVERY_DEVICE, convert_to_tensor, make_op, name_scope

DEFAULT_GRAPH_SEED = 87654321


# -- the kernels -------------------------------------------------------------------------------
def _generator(op):
    """``generator(ctx)``: this op's random stream in this session (one per op
    and session: running the op again continues it; a new session restarts it)."""
    seed, seed2 = op._attrs["seed"], op._attrs["seed2"]
    key = ("random", op.name)

    def generator(ctx):
        gen = ctx.session_state.get(key)
        if gen is None:
            if seed == 0 and seed2 == 0:
                gen = np.random.Generator(np.random.Philox())
            else:
                gen = np.random.Generator(np.random.Philox(key=[seed, seed2]))
            ctx.session_state[key] = gen
        return gen
    return generator


def _shape_of(op):
    """``shape_of(inputs)``: the static shape, or the run-time one (a tf.shape(x) input)."""
    static_shape = op.outputs[0].shape.as_list() if not op.inputs else None
    return lambda inputs: static_shape if static_shape is not None else \
        [int(d) for d in inputs[0]]


def _uniform_kernel(op, backend):
    generator, shape_of = _generator(op), _shape_of(op)
    # A RandomUniform read from TF's GraphDef has no range: TF scales [0, 1) with ops.
    lo, hi = op._attrs.get("minval", 0.0), op._attrs.get("maxval", 1.0)
    dt = op._attrs["dtype"].np_dtype

    def compute(ctx, inputs):
        u = generator(ctx).random(shape_of(inputs), dtype=np.float64)
        return [(lo + (hi - lo) * u).astype(dt)]
    return compute


def _uniform_int_kernel(op, backend):
    generator, shape_of = _generator(op), _shape_of(op)
    lo, hi, dt = op._attrs["minval"], op._attrs["maxval"], op._attrs["dtype"].np_dtype

    def compute(ctx, inputs):
        if lo >= hi:
            raise errors.InvalidArgumentError(
                None, None, "Need minval < maxval, got %d >= %d" % (lo, hi))
        return [generator(ctx).integers(lo, hi, size=shape_of(inputs)).astype(dt)]
    return compute


def _normal_kernel(op, backend):
    generator, shape_of = _generator(op), _shape_of(op)
    mean, std = op._attrs.get("mean", 0.0), op._attrs.get("stddev", 1.0)   # (as above)
    dt = op._attrs["dtype"].np_dtype

    def compute(ctx, inputs):
        return [(mean + std * generator(ctx).standard_normal(shape_of(inputs))).astype(dt)]
    return compute


def _truncated_normal_kernel(op, backend):
    generator, shape_of = _generator(op), _shape_of(op)
    mean, std = op._attrs.get("mean", 0.0), op._attrs.get("stddev", 1.0)   # (as above)
    dt = op._attrs["dtype"].np_dtype

    def compute(ctx, inputs):
        gen = generator(ctx)
        z = gen.standard_normal(shape_of(inputs))
        bad = np.abs(z) > 2.0
        while bad.any():  # redraw samples outside two standard deviations
            z[bad] = gen.standard_normal(int(bad.sum()))
            bad = np.abs(z) > 2.0
        return [(mean + std * z).astype(dt)]
    return compute


def _shuffle_kernel(op, backend):
    generator = _generator(op)

    def compute(ctx, inputs):
        x = inputs[0]
        if x.ndim == 0:
            return [x]
        return [x[generator(ctx).permutation(x.shape[0])]]
    return compute


def _as_tf_nodes(op, nd):
    """The nodes TF builds for a float random op: the raw op on a shape tensor
    (values in [0, 1), or mean 0 and deviation 1), then ``Mul``/``AddV2`` to the
    range asked for; the last node keeps the op's name (GraphDefs, see
    minitf/framework/graph_def.py)."""
    name, dtype, kind = op.name, op._attrs["dtype"], op.type
    shape = op.outputs[0].shape
    nodes = []
    if op.inputs:
        shape_input = nd.input[0]
        index_type = op.inputs[0].dtype.base_dtype
    else:
        nodes.append(graph_def.const_node(nd, name + "/shape", shape.as_list(), dtypes.int32))
        shape_input, index_type = name + "/shape", dtypes.int32
    core = graph_def.new_node(nd, "%s/%s" % (name, kind), kind,
                              [shape_input] + [i for i in nd.input if i.startswith("^")],
                              {"seed": op._attrs["seed"], "seed2": op._attrs["seed2"],
                               "dtype": dtype, "T": index_type}, [shape])
    if kind == "RandomUniform":
        low, high = op._attrs.get("minval", 0.0), op._attrs.get("maxval", 1.0)
        nodes += [graph_def.const_node(nd, name + "/min", low, dtype),
                  graph_def.const_node(nd, name + "/max", high, dtype), core,
                  graph_def.new_node(nd, name + "/sub", "Sub", [name + "/max", name + "/min"],
                                     {"T": dtype}, [TensorShape([])])]
        scale, offset = name + "/sub", name + "/min"
    else:
        nodes += [graph_def.const_node(nd, name + "/mean", op._attrs.get("mean", 0.0), dtype),
                  graph_def.const_node(nd, name + "/stddev", op._attrs.get("stddev", 1.0),
                                       dtype), core]
        scale, offset = name + "/stddev", name + "/mean"
    nodes.append(graph_def.new_node(nd, name + "/mul", "Mul", [core.name, scale], {"T": dtype},
                                    [shape]))
    nodes.append(graph_def.new_node(nd, name, "AddV2", [name + "/mul", offset], {"T": dtype},
                                    [shape]))
    return nodes


def _random_row(name, kernel, parameters, to_tf=None):
    # Random ops are stateful: each run draws new numbers, so nothing may fold them.
    return declare(OpDef(name, inputs=("shape",),
                         attrs=("shape", "dtype", "T", "seed", "seed2") + parameters,
                         gradient=NOT_DIFFERENTIABLE, stateful=True, devices=EVERY_DEVICE,
                         kernel=kernel, to_tf=to_tf))


RANDOM_UNIFORM = _random_row("RandomUniform", _uniform_kernel, ("minval", "maxval"),
                             _as_tf_nodes)
RANDOM_UNIFORM_INT = _random_row("RandomUniformInt", _uniform_int_kernel, ("minval", "maxval"))
RANDOM_STANDARD_NORMAL = _random_row("RandomStandardNormal", _normal_kernel, ("mean", "stddev"),
                                     _as_tf_nodes)
TRUNCATED_NORMAL = _random_row("TruncatedNormal", _truncated_normal_kernel, ("mean", "stddev"),
                               _as_tf_nodes)
RANDOM_SHUFFLE = declare(OpDef(
    "RandomShuffle", inputs=("value",), attrs=("T", "seed", "seed2"),
    gradient=NOT_DIFFERENTIABLE, stateful=True, kernel=_shuffle_kernel))


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


def _random(row, shape, dtype, seed, name, attrs):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating and row is not RANDOM_UNIFORM_INT:
        raise ValueError("Invalid dtype %s for %s: a float type is needed."
                         % (dtype.name, row.name))
    with name_scope(name, row.name, []) as scope:
        # A shape computed in the graph (tf.shape(x)) becomes the op's input;
        # a static one is kept in the op's output shape.
        run_time = _run_time_shape(shape, "shape")
        inputs, out = ([run_time[0]], TensorShape(run_time[1])) if run_time is not None \
            else ([], TensorShape(_static_ints(shape, "shape")))
        seed1, seed2 = get_seed(seed)
        attrs = dict(attrs, dtype=dtype, T=dtype, seed=seed1 or 0, seed2=seed2 or 0)
        op = make_op(row, inputs, [dtype], [out], name=scope, attrs=attrs,
                     graph=get_default_graph())
    return op.outputs[0]


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        return _random(RANDOM_UNIFORM_INT, shape, dtype, seed, name or "random_uniform",
                       {"minval": int(minval), "maxval": int(maxval)})
    return _random(RANDOM_UNIFORM, shape, dtype, seed, name or "random_uniform",
                   {"minval": float(minval), "maxval": 1.0 if maxval is None else float(maxval)})


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    return _random(RANDOM_STANDARD_NORMAL, shape, dtype, seed, name or "random_normal",
                   {"mean": float(mean), "stddev": float(stddev)})


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    return _random(TRUNCATED_NORMAL, shape, dtype, seed, name or "truncated_normal",
                   {"mean": float(mean), "stddev": float(stddev)})


def random_shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted."""
    with name_scope(name, "RandomShuffle", []) as scope:
        value = convert_to_tensor(value, name="value")
        seed1, seed2 = get_seed(seed)
        return make_op(RANDOM_SHUFFLE, [value], [value.dtype.base_dtype], [value.shape],
                       name=scope, attrs={"seed": seed1 or 0, "seed2": seed2 or 0,
                                          "T": value.dtype.base_dtype}).outputs[0]
