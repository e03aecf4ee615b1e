"""Random ops: TF's ops, TF's seeds, TF's numbers.

``tf.random_uniform([2, 3], -1, 1, seed=7)`` builds the ops TF builds, with
the same names::

    random_uniform/shape          Const [2, 3]
    random_uniform/min, /max      Const -1.0, 1.0
    random_uniform/RandomUniform  floats in [0, 1)      (seed, seed2 attrs)
    random_uniform/sub, /mul      max - min, u * (max - min)
    random_uniform                AddV2: ... + min

Only the ``RandomUniform`` op is random; the scaling is ordinary float32
arithmetic, so it rounds exactly as TF's does. ``random_normal`` and
``truncated_normal`` are ``RandomStandardNormal`` / ``TruncatedNormal`` times
``stddev`` plus ``mean``.

**Seeds.** Each random op carries two int attributes, ``seed`` and ``seed2``,
made by :func:`minitf.framework.random_seed.get_seed` from the graph seed
(``tf.set_random_seed``) and the op's ``seed=`` argument. With neither, both
are 0 and the op draws from a random stream. With the graph seed only, the op
seed counts the calls made so far in the graph, which is why every API
function here asks for a seed exactly when, and as often as, TF's does.

**Streams.** A random op's kernel keeps one Philox stream per session (TF's
kernels live as long as their session): the first run in a session starts
the stream at ``(seed, seed2)``; every run reserves a stretch of it and moves
on, so a second ``sess.run`` gives TF's second draw and a new session starts
over. The stream lives in the session's state under the op's name (on a
server: the worker's state for that session), so the same program draws the
same numbers in a local session, on a server task, and on a (virtual) GPU.
What a run reserves and how words become samples is
:mod:`minitf.kernels.random_streams`; the kernels below only hand it the
op's seeds, its inputs and the device's backend.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import Tensor
from minitf.framework.op_def import ANY_DTYPE, BACKEND, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.random_seed import get_seed, seed_attrs, set_random_seed  # noqa: F401
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import math_ops
from minitf.ops.array_ops import _run_time_shape, _static_ints
from minitf.ops.core import (constant, convert_to_tensor, dt_enum_name, make_op, name_scope,
                             shape_str)

__all__ = ["random_uniform", "random_normal", "truncated_normal", "random_shuffle",
           "multinomial", "categorical", "get_seed", "set_random_seed"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int32", "int64")


# -- the kernels -------------------------------------------------------------------------------
def _stream_of(op, backend):
    """``stream(ctx)``: this op's Philox stream in the running session, made on
    its first run there from the op's ``seed`` and ``seed2``."""
    key = ("random", op.name)
    seed, seed2 = op._attrs["seed"], op._attrs["seed2"]

    def stream(ctx):
        state = ctx.session_state
        found = state.get(key)
        if found is None:   # setdefault: two steps starting at once share one stream
            found = state.setdefault(key, backend.random_stream(seed, seed2))
        return found
    return stream


def _fill_kernel(draw):
    """The kernel of RandomUniform/RandomStandardNormal/TruncatedNormal:
    ``backend.<draw>(stream, shape, dtype)``."""
    def kernel(op, backend):
        stream = _stream_of(op, backend)
        fill = getattr(backend, draw)
        dtype = op._attrs["dtype"].np_dtype

        def compute(ctx, inputs):
            return [fill(stream(ctx), inputs[0], dtype)]
        return compute
    return kernel


def _uniform_int_kernel(op, backend):
    stream = _stream_of(op, backend)

    def compute(ctx, inputs):
        shape, minval, maxval = inputs
        return [backend.random_uniform_int(stream(ctx), shape, minval, maxval)]
    return compute


def _shuffle_kernel(op, backend):
    stream = _stream_of(op, backend)

    def compute(ctx, inputs):
        return [backend.random_shuffle(stream(ctx), inputs[0])]
    return compute


def _multinomial_kernel(op, backend):
    stream = _stream_of(op, backend)
    out_dtype = op._attrs["output_dtype"].np_dtype

    def compute(ctx, inputs):
        logits, num_samples = inputs
        return [backend.multinomial(stream(ctx), logits, num_samples, out_dtype)]
    return compute


# Examples: the warm-up compiles them; the parity tests run them on every backend
# (TF's numbers themselves are tested against live TF in tests/unit/test_philox.py).
def _shape_examples(build):
    def examples(dtype):
        return [([np.array([3, 5], np.int32)], build(dtype)),
                ([np.array([70, 300], np.int32)], build(dtype))]
    return examples


def _raw(row, dtype):
    def build(shape):
        return make_op(row, [shape], [dtypes.as_dtype(dtype)], [TensorShape(None)],
                       attrs={"dtype": dtypes.as_dtype(dtype), "T": dtypes.int32,
                              "seed": 87654321, "seed2": 42}).outputs[0]
    return build


def _uniform_int_examples(dtype):
    def build(shape, lo, hi):
        return make_op(RANDOM_UNIFORM_INT, [shape, lo, hi], [dtypes.as_dtype(dtype)],
                       [TensorShape(None)], attrs={"Tout": dtypes.as_dtype(dtype),
                                                   "T": dtypes.int32, "seed": 1,
                                                   "seed2": 2}).outputs[0]
    lo, hi = np.array(-5, dtype), np.array(1000, dtype)
    return [([np.array([3, 5], np.int32), lo, hi], build),
            ([np.array([70, 300], np.int32), lo, hi], build)]


def _shuffle_examples(dtype):
    value = (np.arange(24) % 7).reshape(8, 3).astype(dtype if dtype != "string" else object)
    return [([value], lambda v: random_shuffle(v, seed=3))]


def _multinomial_examples(dtype):
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])).astype(dtype)
    return [([logits], lambda x: multinomial(x, 6, seed=5))]


def _random_row(name, kernel, examples, devices, dtype_attr="dtype"):
    # Random ops are stateful: each run draws new numbers, so nothing may fold them.
    return declare(OpDef(name, inputs=("shape",), attrs=("seed", "seed2", "dtype", "T"),
                         gradient=NOT_DIFFERENTIABLE, stateful=True, devices=devices,
                         dtype_attr=dtype_attr, kernel=kernel, kernel_reads=BACKEND,
                         host_memory_inputs=(0,), examples=examples))


_FLOAT_DEVICES = {"CPU": _FLOATS, "GPU": _FLOATS}

RANDOM_UNIFORM = _random_row("RandomUniform", _fill_kernel("random_uniform"),
                             _shape_examples(lambda dt: _raw(RANDOM_UNIFORM, dt)),
                             _FLOAT_DEVICES)
RANDOM_STANDARD_NORMAL = _random_row(
    "RandomStandardNormal", _fill_kernel("random_standard_normal"),
    _shape_examples(lambda dt: _raw(RANDOM_STANDARD_NORMAL, dt)), _FLOAT_DEVICES)
TRUNCATED_NORMAL = _random_row("TruncatedNormal", _fill_kernel("truncated_normal"),
                               _shape_examples(lambda dt: _raw(TRUNCATED_NORMAL, dt)),
                               _FLOAT_DEVICES)
RANDOM_UNIFORM_INT = declare(OpDef(
    "RandomUniformInt", inputs=("shape", "minval", "maxval"),
    attrs=("seed", "seed2", "Tout", "T"), gradient=NOT_DIFFERENTIABLE, stateful=True,
    devices={"CPU": _INTS, "GPU": _INTS}, dtype_attr="Tout", kernel=_uniform_int_kernel,
    kernel_reads=BACKEND, host_memory_inputs=(0, 1, 2), examples=_uniform_int_examples))
# TF has no GPU kernel for RandomShuffle; its GPU Multinomial draws other numbers
# (Gumbel noise), so minitf keeps both on the CPU, where their numbers are TF's.
RANDOM_SHUFFLE = declare(OpDef(
    "RandomShuffle", inputs=("value",), attrs=("seed", "seed2", "T"),
    gradient=NOT_DIFFERENTIABLE, stateful=True, kernel=_shuffle_kernel,
    kernel_reads=BACKEND, examples=_shuffle_examples, devices={"CPU": ANY_DTYPE}))
MULTINOMIAL = declare(OpDef(
    "Multinomial", inputs=("logits", "num_samples"),
    attrs=("seed", "seed2", "T", "output_dtype"), gradient=NOT_DIFFERENTIABLE,
    stateful=True, devices={"CPU": _FLOATS}, dtype_attr="T", kernel=_multinomial_kernel,
    kernel_reads=BACKEND, examples=_multinomial_examples))


# -- the tf.* functions ----------------------------------------------------------------------
def _shape_tensor(shape):
    """TF's ``shape_tensor``: ``(an int32 shape tensor named "shape", the static shape)``.

    A Python list or a TensorShape becomes a ``Const``; a tensor (``tf.shape(x)``,
    a placeholder) is used as it is, its known values giving the static shape.
    """
    run_time = _run_time_shape(shape, "shape")
    if run_time is not None:
        return run_time[0], TensorShape(run_time[1])
    if isinstance(shape, Tensor):
        return shape, TensorShape([d if d >= 0 else None for d in _static_ints(shape, "shape")])
    dims = _static_ints(shape, "shape")
    big = any(d > 2**31 - 1 for d in dims)
    # A negative size is the kernel's error at run time, as in TF.
    return (constant(np.array(dims, np.int64 if big else np.int32), name="shape"),
            TensorShape([d if d >= 0 else None for d in dims]))


def _seeds(seed):
    """The ``seed``/``seed2`` attributes of a new random op (one get_seed call)."""
    return seed_attrs(*get_seed(seed))


_UNIFORM_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                   dtypes.int32, dtypes.int64)


def _raw_random(row, shape_t, out_shape, dtype, seeds, name=None):
    return make_op(row, [shape_t], [dtype], [out_shape], name=name or row.name,
                   attrs={"seed": seeds[0], "seed2": seeds[1], "dtype": dtype,
                          "T": shape_t.dtype.base_dtype}).outputs[0]


def _check_float(dtype):
    """The generated op's check (after ``mean``/``stddev`` were converted, as in TF)."""
    if not dtype.is_floating:
        raise TypeError("Value passed to parameter 'dtype' has DataType %s not in list of "
                        "allowed values: float16, bfloat16, float32, float64" % dtype.name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform samples in ``[minval, maxval)`` (``maxval`` defaults to 1 for floats).

    Floats: ``RandomUniform`` gives ``[0, 1)``; unless ``minval`` is the int 0 and
    ``maxval`` the int 1 (the defaults), it is scaled as TF scales it:
    ``u * (max - min) + min`` (``u * max`` when ``minval`` is the int 0).
    Integers: one ``RandomUniformInt`` op, ``min + bits % (max - min)``.
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError("Argument `dtype` got invalid value %s. Accepted dtypes are %s."
                         % (dtype, "(%s)" % ", ".join(repr(d) for d in _UNIFORM_DTYPES)))
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t, out_shape = _shape_tensor(shape)
        minval_is_zero = isinstance(minval, int) and minval == 0
        maxval_is_one = isinstance(maxval, int) and maxval == 1
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = _seeds(seed)
        if dtype.is_integer:
            return make_op(RANDOM_UNIFORM_INT, [shape_t, minval, maxval], [dtype],
                           [out_shape], name=scope,
                           attrs={"seed": seeds[0], "seed2": seeds[1], "Tout": dtype,
                                  "T": shape_t.dtype.base_dtype}).outputs[0]
        result = _raw_random(RANDOM_UNIFORM, shape_t, out_shape, dtype, seeds)
        if minval_is_zero:
            if not maxval_is_one:
                result = math_ops.multiply(result, maxval)
        else:
            result = math_ops.add(result * (maxval - minval), minval, name=scope)
    return result


def _normal(row, default_name, shape, mean, stddev, dtype, seed, name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t, out_shape = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        _check_float(dtype)
        rnd = _raw_random(row, shape_t, out_shape, dtype, _seeds(seed))
        return math_ops.add(rnd * stddev_t, mean_t, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples: ``RandomStandardNormal * stddev + mean`` (Box-Muller, as TF)."""
    return _normal(RANDOM_STANDARD_NORMAL, "random_normal", shape, mean, stddev, dtype,
                   seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    return _normal(TRUNCATED_NORMAL, "truncated_normal", shape, mean, stddev, dtype, seed,
                   name)


def random_shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted (one ``RandomShuffle`` op)."""
    seeds = _seeds(seed)
    with name_scope(name, "RandomShuffle", []) as scope:
        value = convert_to_tensor(value, name="value")
        t = value.dtype.base_dtype
        return make_op(RANDOM_SHUFFLE, [value], [t], [value.shape], name=scope,
                       attrs={"seed": seeds[0], "seed2": seeds[1], "T": t}).outputs[0]


def _multinomial(logits, num_samples, output_dtype, seed):
    logits = convert_to_tensor(logits, name="logits")
    output_dtype = dtypes.as_dtype(output_dtype).base_dtype if output_dtype else dtypes.int64
    if output_dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError("Argument `dtype` got invalid value %s. Accepted dtypes are "
                         "(tf.int32, tf.int64)." % output_dtype)
    seeds = _seeds(seed)
    t = logits.dtype.base_dtype
    with name_scope(None, "Multinomial", []) as scope:
        samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        node = ("'{{node %s}} = Multinomial[T=%s, output_dtype=%s, seed=%d, seed2=%d]"
                "(%s, %s)' with input shapes: %s, %s" % (
                    scope[:-1], dt_enum_name(t), dt_enum_name(output_dtype), seeds[0],
                    seeds[1], logits.name[:-2], samples.name[:-2], shape_str(logits.shape),
                    shape_str(samples.shape)))
        rank = logits.shape.ndims
        if rank is not None and rank != 2:
            raise ValueError("Shape must be rank 2 but is rank %d for %s." % (rank, node))
        batch = logits.shape.as_list()[0] if rank == 2 else None
        known = int(samples.op.get_attr("value")) if samples.op.type == "Const" else None
        if known is not None and known < 0:
            raise ValueError("Dimension size, given by scalar input 1, must be non-negative "
                             "but is %d for %s and with computed input tensors: "
                             "input[1] = <%d>." % (known, node, known))
        shape = TensorShape([batch, known])
        return make_op(MULTINOMIAL, [logits, samples], [output_dtype], [shape], name=scope,
                       attrs={"seed": seeds[0], "seed2": seeds[1], "T": t,
                              "output_dtype": output_dtype}).outputs[0]


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """``[batch, num_samples]`` class indices drawn from unnormalized log-probabilities."""
    with name_scope(name, "multinomial", [logits]):
        return _multinomial(logits, num_samples, output_dtype, seed)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``tf.random.categorical``: the same draw as :func:`multinomial`."""
    with name_scope(name, "categorical", [logits]):
        return _multinomial(logits, num_samples, dtype, seed)
