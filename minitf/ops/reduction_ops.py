"""Reductions: ``tf.reduce_sum`` and friends, ``tf.argmax``/``tf.argmin``.

A reduction takes a tensor and a list of axes (a second *input*, usually a
constant, as in TF) and combines the elements along those axes. Each op type is
a row of the op table; all of them share one kernel, which checks the axes the
way TF does and calls ``backend.reduce(kind, x, axes, keepdims)``::

    Sum   -> "sum"     Mean -> "mean"    Prod -> "prod"
    Max   -> "max"     Min  -> "min"     All  -> "all"    Any -> "any"

On a GPU the axes stay in host memory (``host_memory_inputs``): the host reads
them to launch the kernel, so they are never copied to the card.
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.graph import Tensor
from minitf.framework.op_def import BACKEND, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, debug_ops, math_ops
from minitf.ops.core import (CONST, NUMBER_TYPES, check_dtype, constant, convert_to_tensor,
                             make_op, name_scope)
from minitf.ops.elementwise import BIG, FLOAT_NAMES, NUMBER_NAMES


# -- the kernels -------------------------------------------------------------------------------
def _reduce_kernel(kind):
    def kernel(op, backend):
        reduce_, keepdims = backend.reduce, op.get_attr("keep_dims")

        def compute(ctx, inputs):
            x, axes = inputs
            ndim = x.ndim
            norm = []
            for a in np.asarray(axes).reshape(-1).tolist():
                if not -max(ndim, 1) <= a < max(ndim, 1):
                    raise errors.InvalidArgumentError(
                        None, None, "Invalid reduction dimension (%d for input with %d "
                        "dimension(s)" % (a, ndim))
                norm.append(a % ndim if ndim else 0)
            return [reduce_(kind, x, tuple(sorted(set(norm))), keepdims)]
        return compute
    return kernel


def _arg_kernel(find_max):
    def kernel(op, backend):
        fn = backend.argmax if find_max else backend.argmin
        out = op.get_attr("output_type").np_dtype

        def compute(ctx, inputs):
            x, axis = inputs
            if x.shape[int(axis)] == 0:
                raise errors.InvalidArgumentError(
                    None, None, "Reduction axis %d is empty in shape %s"
                    % (int(axis), list(x.shape)))
            return [fn(x, int(axis), out)]
        return compute
    return kernel


# -- gradients ---------------------------------------------------------------------------------
def _static(shape):
    return shape.as_list() if shape.is_fully_defined() else None


def _reduced_axes(op):
    """A reduction's axes as non-negative ints (``axis=-1`` -> ``rank - 1``), or
    None unless the axes are a constant and the input's rank is known."""
    ndims = op.inputs[0].shape.ndims
    if op.inputs[1].op.op_def is not CONST or ndims is None:
        return None
    axes = np.asarray(op.inputs[1].op.get_attr("value")).reshape(-1)
    return sorted({int(a) % ndims if ndims else 0 for a in axes})


def _keepdims_grad(op, grad):
    """Reshape a reduction's output gradient so it broadcasts over the input."""
    x = op.inputs[0]
    if op.get_attr("keep_dims"):
        return grad
    axes = _reduced_axes(op)
    xd = x.shape.as_tuple_or_none()
    if axes is None or xd is None:
        raise LookupError("minitf needs static reduction axes and input rank to "
                          "differentiate %s" % op.name)
    kept = [1 if i in axes else (d if d is not None else -1) for i, d in enumerate(xd)]
    if kept.count(-1) > 1:
        raise LookupError("minitf cannot differentiate %s: more than one unknown "
                          "dimension survives the reduction" % op.name)
    return array_ops.reshape(grad, kept)


def _tiled_grad(op, grad):
    """The output gradient copied back over the reduced axes: TF's Reshape
    then Tile when the input's shape is known, else a broadcast multiply by
    ones of the input's run-time shape."""
    xd = _static(op.inputs[0].shape)
    axes = _reduced_axes(op)
    kept = _keepdims_grad(op, grad)
    if xd is None or axes is None:
        return kept * array_ops.ones_like(op.inputs[0])
    return array_ops.tile(kept, [d if i in axes else 1 for i, d in enumerate(xd)])


def _sum_grad(op, grad):
    return _tiled_grad(op, grad), None


def _mean_grad(op, grad):
    """TF's: the Sum gradient divided by how many elements each output averaged
    (a constant when the input's shape is known)."""
    x = op.inputs[0]
    xd = _static(x.shape)
    axes = _reduced_axes(op)
    tiled = _tiled_grad(op, grad)
    if xd is not None and axes is not None:
        count = float(np.prod([xd[a] for a in axes])) if axes else 1.0
        return math_ops.truediv(tiled, constant(max(count, 1.0),
                                                dtype=grad.dtype.base_dtype)), None
    scale = math_ops.cast(array_ops.size(op.outputs[0]), grad.dtype) / \
        math_ops.cast(array_ops.size(x), grad.dtype)
    return tiled * scale, None


def _min_or_max_grad(op, grad):
    """The gradient goes to the elements equal to the result, shared among ties."""
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        y = _keepdims_grad(op, y)
    mask = math_ops.cast(math_ops.equal(x, y), grad.dtype)
    count = make_op(SUM, [mask, op.inputs[1]], [grad.dtype.base_dtype], [y.shape],
                    name="Sum", attrs={"T": grad.dtype.base_dtype, "keep_dims": True,
                                       "Tidx": dtypes.int32}).outputs[0]
    return _keepdims_grad(op, grad) * mask / count, None


def _prod_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        y = _keepdims_grad(op, y)
    return _keepdims_grad(op, grad) * y / x, None


# -- the rows ----------------------------------------------------------------------------------
def _values(shape, dtype, k=0):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % (3 + k) != 0).reshape(shape)
    x = ((np.arange(n) * 7 + k) % 11 - 5).astype(np.float64) * 0.5
    if dtype in FLOAT_NAMES:
        return x.reshape(shape).astype(dtype)
    return np.floor(x).reshape(shape).astype(dtype)


def _reduce_examples(api):
    def examples(dtype):
        cases = []
        for axis, keep in ((0, False), (1, True), ([0, 1], False), (None, False)):
            cases.append(([_values((3, 4), dtype)],
                          lambda x, axis=axis, keep=keep: api(x, axis, keepdims=keep)))
        cases.append(([_values((2, BIG // 2), dtype)], lambda x: api(x, 1)))
        cases.append(([_values((BIG,), dtype)], lambda x: api(x)))
        return cases
    return examples


def _reduction_row(name, kind, gradient, api, cpu=NUMBER_NAMES, gpu=FLOAT_NAMES):
    devices = {"CPU": cpu}
    if gpu:
        devices["GPU"] = gpu
    return declare(OpDef(
        name, inputs=("input", "reduction_indices"), attrs=("T", "keep_dims", "Tidx"),
        gradient=gradient, devices=devices, kernel=_reduce_kernel(kind),
        kernel_reads=BACKEND, host_memory_inputs=(1,), examples=_reduce_examples(api)))


def _api(name):
    return lambda *args, **kwargs: globals()[name](*args, **kwargs)


SUM = _reduction_row("Sum", "sum", _sum_grad, _api("reduce_sum"))
MEAN = _reduction_row("Mean", "mean", _mean_grad, _api("reduce_mean"))
MAX = _reduction_row("Max", "max", _min_or_max_grad, _api("reduce_max"))
MIN = _reduction_row("Min", "min", _min_or_max_grad, _api("reduce_min"))
PROD = _reduction_row("Prod", "prod", _prod_grad, _api("reduce_prod"))
ALL = _reduction_row("All", "all", NOT_DIFFERENTIABLE, _api("reduce_all"), cpu=("bool",),
                     gpu=())
ANY = _reduction_row("Any", "any", NOT_DIFFERENTIABLE, _api("reduce_any"), cpu=("bool",),
                     gpu=())


def _arg_examples(api):
    def examples(dtype):
        return [([_values((3, 4), dtype)], lambda x: api(x, 0)),
                ([_values((3, 4), dtype, 1)], lambda x: api(x, 1)),
                ([_values((4, BIG // 4), dtype)], lambda x: api(x, 1))]
    return examples


def _arg_row(name, find_max, api):
    return declare(OpDef(
        name, inputs=("input", "dimension"), attrs=("T", "output_type", "axis"),
        gradient=NOT_DIFFERENTIABLE, devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES},
        kernel=_arg_kernel(find_max), kernel_reads=BACKEND, host_memory_inputs=(1,),
        examples=_arg_examples(api)))


ARG_MAX = _arg_row("ArgMax", True, _api("argmax"))
ARG_MIN = _arg_row("ArgMin", False, _api("argmin"))


# -- the tf.* functions ----------------------------------------------------------------------
def _normalize_axes(axis, ndims, op_name):
    """The reduced axes as a sorted tuple of non-negative ints, or None when
    they are not known while the graph is built (a computed axis tensor, or an
    input of unknown rank)."""
    if isinstance(axis, Tensor):
        if axis.op.op_def is not CONST:
            return None
        axis = axis.op.get_attr("value").tolist()
    axes = [int(a) for a in np.atleast_1d(np.asarray(axis)).tolist()]
    if ndims is None:
        return None
    out = []
    for a in axes:
        if not -ndims <= a < max(ndims, 1):
            raise ValueError("Invalid reduction dimension %d for input with %d dimensions. "
                             "for '{{node %s}}'" % (a, ndims, op_name))
        out.append(a % ndims if ndims else 0)
    return tuple(sorted(set(out)))


def _reduction_dims(x, axis):
    """The axes input of a reduction, made as TensorFlow makes it.

    ``axis=None`` means every axis: a Const ``[0, 1, ..., rank-1]`` named
    ``Const`` (created outside the op's name scope, as TF does), or, when the
    rank is unknown until run time (or 0), ``range(0, rank(x))``.
    """
    x = convert_to_tensor(x)
    if axis is not None:
        return x, axis
    if x.shape.ndims:
        return x, constant(np.arange(x.shape.ndims, dtype=np.int32))
    return x, array_ops.range_(0, array_ops.rank(x))


def _reduce(row, x, axis, keepdims, name, allowed=NUMBER_TYPES, keep_dims=None):
    if keep_dims is not None:
        keepdims = keep_dims
    keepdims = bool(keepdims)
    every_axis = axis is None
    x, axis = _reduction_dims(x, axis)
    with name_scope(name, row.name, [x]) as scope:
        check_dtype(x, allowed, arg="input")
        ndims = x.shape.ndims
        axes = _normalize_axes(axis, ndims, scope[:-1])
        if axes is None:
            if every_axis and not keepdims:
                shape = TensorShape([])           # TF: a full reduction is a scalar
            elif ndims is None or not keepdims:
                shape = TensorShape(None)
            else:
                shape = TensorShape([None] * ndims)
        else:
            dims = x.shape.as_list()
            shape = TensorShape([1 if i in axes else d for i, d in enumerate(dims)]
                                if keepdims else
                                [d for i, d in enumerate(dims) if i not in axes])
        axes_t = convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        op = make_op(row, [x, axes_t], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "keep_dims": keepdims,
                            "Tidx": axes_t.dtype.base_dtype})
    return op.outputs[0]


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce(SUM, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
                keep_dims=None):
    return _reduce(MEAN, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce(MAX, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce(MIN, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
                keep_dims=None):
    return _reduce(PROD, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce(ALL, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, (dtypes.bool,), keep_dims=keep_dims)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce(ANY, input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, (dtypes.bool,), keep_dims=keep_dims)


def _arg(row, x, axis, name, output_type):
    with name_scope(name, row.name, [x]) as scope:
        x = convert_to_tensor(x, name="input")
        check_dtype(x, NUMBER_TYPES, arg="input")
        ndims = x.shape.ndims
        axis = 0 if axis is None else int(axis)
        if ndims is not None:
            if not -ndims <= axis < ndims:
                raise ValueError("Dimension (%d) must be in the range [%d, %d), where %d is "
                                 "the number of dimensions in the input. for '{{node %s}}'"
                                 % (axis, -ndims, ndims, ndims, scope[:-1]))
            axis %= ndims
            dims = x.shape.as_list()
            shape = TensorShape(dims[:axis] + dims[axis + 1:])
        else:
            shape = TensorShape(None)
        dim = constant(np.int32(axis), name="dimension")
        out = dtypes.as_dtype(output_type)
        op = make_op(row, [x, dim], [out], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "output_type": out, "axis": axis})
    return op.outputs[0]


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    return _arg(ARG_MAX, input, axis if axis is not None else dimension, name, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    return _arg(ARG_MIN, input, axis if axis is not None else dimension, name, output_type)


# -- built from other ops, as TensorFlow builds them ------------------------------------------
def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None,
                     reduction_indices=None, keep_dims=None):
    """``log(sum(exp(x)))`` over ``axis``, computed as TF does so that it never
    overflows: the max is subtracted first and added back (and a row that is
    all ``-inf`` gives ``-inf``, not NaN)."""
    if keep_dims is not None:
        keepdims = keep_dims
    axis = axis if axis is not None else reduction_indices
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        raw_max = reduce_max(x, axis, keepdims=True)
        my_max = array_ops.stop_gradient(
            array_ops.where(debug_ops.is_finite(raw_max), raw_max, array_ops.zeros_like(raw_max)))
        result = math_ops.log(reduce_sum(math_ops.exp(math_ops.subtract(x, my_max)), axis,
                                         keepdims=keepdims))
        if not keepdims:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        return math_ops.add(result, my_max, name=scope)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """How many elements along ``axis`` are not zero (or not empty strings)."""
    input_tensor = input_tensor if input_tensor is not None else input
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axis = axis if axis is not None else reduction_indices
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        zero = constant("" if x.dtype.base_dtype == dtypes.string else 0, dtype=x.dtype)
        nonzero = math_ops.cast(math_ops.not_equal(x, zero), dtypes.int64)
        return math_ops.cast(reduce_sum(nonzero, axis, keepdims=keepdims), dtype)
