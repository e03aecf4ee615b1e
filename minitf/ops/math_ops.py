"""Math ops: elementwise arithmetic, comparisons, reductions, matmul.

Each function checks dtypes and infers the output's static shape *now*, at
build time, so that ``tf.matmul`` of a [2, 3] and a [2, 3] matrix fails on the
line that wrote it (ValueError), not later inside ``sess.run``. The numbers
are computed later by a kernel (``minitf.kernels``).

This module also gives :class:`Tensor` its Python operators: ``a + b`` is
``add`` in a name scope called ``add``, exactly as TF names it.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import Tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import (broadcast_static_shape, convert_to_tensor, dt_enum_name,
                             make_op, name_scope, shape_str)

_FLOAT_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_NUMBER_TYPES = _FLOAT_TYPES + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                                dtypes.uint8, dtypes.uint16)


def _check_dtype(op_type, t, allowed, arg="x"):
    if t.dtype.base_dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of "
                        "allowed values: %s" % (arg, t.dtype.base_dtype.name,
                                                ", ".join(d.name for d in allowed)))


def _binary_inputs(op_type, x, y, arg_names=("x", "y")):
    """Convert both operands; the first tensor's dtype guides Python numbers.
    ``arg_names`` are the op's parameter names, for TF's mismatch message."""
    if isinstance(x, Tensor) or not isinstance(y, Tensor):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
    else:
        y = convert_to_tensor(y, name="y")
        x = convert_to_tensor(x, dtype_hint=y.dtype.base_dtype, name="x")
    if x.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError("Input '%s' of '%s' Op has type %s that does not match type %s of "
                        "argument '%s'." % (arg_names[1], op_type, y.dtype.base_dtype.name,
                                            x.dtype.base_dtype.name, arg_names[0]))
    return x, y


def _binary(op_type, x, y, name, allowed=_NUMBER_TYPES, out_dtype=None):
    with name_scope(name, op_type, [x, y]) as scope:
        x, y = _binary_inputs(op_type, x, y)
        _check_dtype(op_type, x, allowed)
        dt = x.dtype.base_dtype
        shape = broadcast_static_shape(x.shape, y.shape, scope[:-1])
        op = make_op(op_type, [x, y], [out_dtype or dt], [shape], name=scope,
                     attrs={"T": dt})
    return op.outputs[0]


def _unary(op_type, x, name, allowed=_NUMBER_TYPES, out_dtype=None):
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        _check_dtype(op_type, x, allowed)
        dt = x.dtype.base_dtype
        op = make_op(op_type, [x], [out_dtype or dt], [x.shape], name=scope,
                     attrs={"T": dt})
    return op.outputs[0]


# -- elementwise binary ------------------------------------------------------------------
def add(x, y, name=None):
    return _binary("AddV2", x, y, name or "Add", _NUMBER_TYPES + (dtypes.string,))


def subtract(x, y, name=None):
    return _binary("Sub", x, y, name or "Sub")


def multiply(x, y, name=None):
    return _binary("Mul", x, y, name or "Mul")


def realdiv(x, y, name=None):
    return _binary("RealDiv", x, y, name or "RealDiv")


def truediv(x, y, name=None):
    """``x / y``: float division. Integers are cast to float64 first (int32,
    int64) or float32 (int8/16, uint8/16), as in TF."""
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = _binary_inputs("RealDiv", x, y)
        dt = x.dtype.base_dtype
        if dt.is_integer:
            target = dtypes.float64 if dt in (dtypes.int32, dtypes.int64) else dtypes.float32
            x = cast(x, target)
            y = cast(y, target)
        return realdiv(x, y, name=scope)


divide = truediv


def floordiv(x, y, name=None):
    return _binary("FloorDiv", x, y, name or "FloorDiv")


def floormod(x, y, name=None):
    return _binary("FloorMod", x, y, name or "FloorMod")


mod = floormod


def pow(x, y, name=None):  # noqa: A001  (tf.pow)
    return _binary("Pow", x, y, name or "Pow")


def maximum(x, y, name=None):
    return _binary("Maximum", x, y, name or "Maximum")


def minimum(x, y, name=None):
    return _binary("Minimum", x, y, name or "Minimum")


def squared_difference(x, y, name=None):
    return _binary("SquaredDifference", x, y, name or "SquaredDifference")


def _compare(op_type, x, y, name, allowed=_NUMBER_TYPES):
    return _binary(op_type, x, y, name or op_type, allowed, out_dtype=dtypes.bool)


def equal(x, y, name=None):
    return _compare("Equal", x, y, name, _NUMBER_TYPES + (dtypes.bool, dtypes.string))


def not_equal(x, y, name=None):
    return _compare("NotEqual", x, y, name, _NUMBER_TYPES + (dtypes.bool, dtypes.string))


def less(x, y, name=None):
    return _compare("Less", x, y, name)


def less_equal(x, y, name=None):
    return _compare("LessEqual", x, y, name)


def greater(x, y, name=None):
    return _compare("Greater", x, y, name)


def greater_equal(x, y, name=None):
    return _compare("GreaterEqual", x, y, name)


def logical_and(x, y, name=None):
    return _binary("LogicalAnd", x, y, name or "LogicalAnd", (dtypes.bool,))


def logical_or(x, y, name=None):
    return _binary("LogicalOr", x, y, name or "LogicalOr", (dtypes.bool,))


def logical_not(x, name=None):
    return _unary("LogicalNot", x, name or "LogicalNot", (dtypes.bool,))


# -- elementwise unary --------------------------------------------------------------------
def negative(x, name=None):
    return _unary("Neg", x, name or "Neg")


def abs(x, name=None):  # noqa: A001  (tf.abs)
    return _unary("Abs", x, name or "Abs")


def square(x, name=None):
    return _unary("Square", x, name or "Square")


def sign(x, name=None):
    return _unary("Sign", x, name or "Sign")


def _float_unary(op_type):
    def op(x, name=None):
        return _unary(op_type, x, name or op_type, _FLOAT_TYPES)
    op.__name__ = op_type.lower()
    op.__doc__ = "Elementwise ``%s`` (float dtypes only)." % op_type
    return op


sqrt = _float_unary("Sqrt")
rsqrt = _float_unary("Rsqrt")
exp = _float_unary("Exp")
log = _float_unary("Log")
tanh = _float_unary("Tanh")
sigmoid = _float_unary("Sigmoid")
reciprocal = _float_unary("Reciprocal")
floor = _float_unary("Floor")
ceil = _float_unary("Ceil")
round = _float_unary("Round")  # noqa: A001


def cast(x, dtype, name=None):
    """Convert ``x`` to ``dtype`` (a no-op that returns ``x`` if it already is)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype == dtype:
        return x
    with name_scope(name, "Cast", [x]) as scope:
        op = make_op("Cast", [x], [dtype], [x.shape], name=scope,
                     attrs={"SrcT": x.dtype.base_dtype, "DstT": dtype,
                            "T": x.dtype.base_dtype})
    return op.outputs[0]


to_float = lambda x, name="ToFloat": cast(x, dtypes.float32, name=name)  # noqa: E731
to_int32 = lambda x, name="ToInt32": cast(x, dtypes.int32, name=name)  # noqa: E731
to_int64 = lambda x, name="ToInt64": cast(x, dtypes.int64, name=name)  # noqa: E731


# -- n-ary ------------------------------------------------------------------------------------
def add_n(inputs, name=None):
    """Sum a list of same-shape, same-dtype tensors in one op."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape.")
    inputs = [convert_to_tensor(t) for t in inputs]
    dt = inputs[0].dtype.base_dtype
    shape = inputs[0].shape
    for t in inputs[1:]:
        if t.dtype.base_dtype != dt:
            raise TypeError("Inputs to add_n must have the same dtype: %s vs %s"
                            % (dt.name, t.dtype.base_dtype.name))
        shape = shape.merge_with(t.shape) if shape.is_compatible_with(t.shape) else None
        if shape is None:
            raise ValueError("Inputs to add_n must have the same shape: %s"
                             % ", ".join(str(i.shape) for i in inputs))
    if len(inputs) == 1:
        from minitf.ops.array_ops import identity
        return identity(inputs[0], name=name)
    op = make_op("AddN", inputs, [dt], [shape], name=name or "AddN",
                 attrs={"T": dt, "N": len(inputs)})
    return op.outputs[0]


# -- reductions ----------------------------------------------------------------------------
def _normalize_axes(axis, ndims, op_name):
    """The reduced axes as a sorted tuple of non-negative ints, or None when
    they are not known while the graph is built (a computed axis tensor, or an
    input of unknown rank)."""
    if isinstance(axis, Tensor):
        if axis.op.type != "Const":
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
    from minitf.ops.array_ops import rank
    from minitf.ops.core import constant
    from minitf.ops.io_ops import range_
    x = convert_to_tensor(x)
    if axis is not None:
        return x, axis
    if x.shape.ndims:
        return x, constant(np.arange(x.shape.ndims, dtype=np.int32))
    return x, range_(0, rank(x))


def _reduce(op_type, x, axis, keepdims, name, allowed=_NUMBER_TYPES, keep_dims=None):
    if keep_dims is not None:
        keepdims = keep_dims
    keepdims = bool(keepdims)
    every_axis = axis is None
    x, axis = _reduction_dims(x, axis)
    with name_scope(name, op_type, [x]) as scope:
        _check_dtype(op_type, x, allowed, arg="input")
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
        op = make_op(op_type, [x, axes_t], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "keep_dims": keepdims,
                            "Tidx": axes_t.dtype.base_dtype})
    return op.outputs[0]


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce("Sum", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
                keep_dims=None):
    return _reduce("Mean", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce("Max", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce("Min", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
                keep_dims=None):
    return _reduce("Prod", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, keep_dims=keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce("All", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, (dtypes.bool,), keep_dims=keep_dims)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None,
               keep_dims=None):
    return _reduce("Any", input_tensor, axis if axis is not None else reduction_indices,
                   keepdims, name, (dtypes.bool,), keep_dims=keep_dims)


def _arg(op_type, x, axis, name, output_type):
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="input")
        _check_dtype(op_type, x, _NUMBER_TYPES, arg="input")
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
        from minitf.ops.core import constant
        dim = constant(np.int32(axis), name="dimension")
        out = dtypes.as_dtype(output_type)
        op = make_op(op_type, [x, dim], [out], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "output_type": out, "axis": axis})
    return op.outputs[0]


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    return _arg("ArgMax", input, axis if axis is not None else dimension, name, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    return _arg("ArgMin", input, axis if axis is not None else dimension, name, output_type)


# -- matmul -------------------------------------------------------------------------------
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product. Rank 2 gives ``MatMul``; higher ranks ``BatchMatMulV2``
    (leading dimensions broadcast)."""
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    with name_scope(name, "MatMul", [a, b]) as scope:
        a, b = _binary_inputs("MatMul", a, b, ("a", "b"))
        _check_dtype("MatMul", a, (dtypes.float16, dtypes.bfloat16, dtypes.float32,
                                   dtypes.float64, dtypes.int32, dtypes.int64), arg="a")
        sa, sb = a.shape, b.shape
        ra, rb = sa.ndims, sb.ndims
        if (ra is not None and ra < 2) or (rb is not None and rb < 2):
            bad, r = (sa, ra) if ra is not None and ra < 2 else (sb, rb)
            raise ValueError("Shape must be rank 2 but is rank %d for '{{node %s}} = MatMul"
                             "[T=%s, transpose_a=%s, transpose_b=%s]' with input shapes: "
                             "%s, %s." % (r, scope[:-1], dt_enum_name(a.dtype),
                                          str(transpose_a).lower(), str(transpose_b).lower(),
                                          shape_str(sa), shape_str(sb)))
        batched = (ra or 2) > 2 or (rb or 2) > 2
        if ra is None or rb is None:
            shape = TensorShape(None)
        else:
            da, db = sa.as_list(), sb.as_list()
            m, k1 = (da[-1], da[-2]) if transpose_a else (da[-2], da[-1])
            k2, n = (db[-1], db[-2]) if transpose_b else (db[-2], db[-1])
            if k1 is not None and k2 is not None and k1 != k2:
                raise ValueError("Dimensions must be equal, but are %d and %d for '{{node "
                                 "%s}} = %s[T=%s, transpose_a=%s, transpose_b=%s]' with "
                                 "input shapes: %s, %s." % (
                                     k1, k2, scope[:-1],
                                     "BatchMatMulV2" if batched else "MatMul",
                                     dt_enum_name(a.dtype), str(transpose_a).lower(),
                                     str(transpose_b).lower(), shape_str(sa), shape_str(sb)))
            batch = broadcast_static_shape(TensorShape(da[:-2]), TensorShape(db[:-2]),
                                           scope[:-1])
            shape = batch.concatenate([m, n])
        op = make_op("BatchMatMulV2" if batched else "MatMul", [a, b],
                     [a.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": a.dtype.base_dtype, "transpose_a": bool(transpose_a),
                            "transpose_b": bool(transpose_b)})
    return op.outputs[0]


# -- operators on Tensor -------------------------------------------------------------------
def _binary_operator(func, scope_name):
    def forward(x, y):
        with name_scope(None, scope_name, [x, y]) as scope:
            return func(x, y, name=scope)

    def reverse(y, x):
        with name_scope(None, scope_name, [x, y]) as scope:
            x = convert_to_tensor(x, dtype_hint=y.dtype.base_dtype, name="x")
            return func(x, y, name=scope)
    return forward, reverse


def _matmul_operator(x, y, name=None):
    return matmul(x, y, name=name)


for _dunder, _func, _scope in (("add", add, "add"), ("sub", subtract, "sub"),
                               ("mul", multiply, "mul"), ("truediv", truediv, "truediv"),
                               ("floordiv", floordiv, "floordiv"), ("mod", floormod, "mod"),
                               ("pow", pow, "pow"), ("matmul", _matmul_operator, "matmul"),
                               ("and", logical_and, "and"), ("or", logical_or, "or")):
    _fwd, _rev = _binary_operator(_func, _scope)
    setattr(Tensor, "__%s__" % _dunder, _fwd)
    setattr(Tensor, "__r%s__" % _dunder, _rev)

Tensor.__neg__ = lambda self: negative(self)
Tensor.__abs__ = lambda self: abs(self)
Tensor.__invert__ = lambda self: logical_not(self)
Tensor.__lt__ = lambda self, other: less(self, other)
Tensor.__le__ = lambda self, other: less_equal(self, other)
Tensor.__gt__ = lambda self, other: greater(self, other)
Tensor.__ge__ = lambda self, other: greater_equal(self, other)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None,
                     reduction_indices=None, keep_dims=None):
    """``log(sum(exp(x)))`` over ``axis``, computed as TF does so that it never
    overflows: the max is subtracted first and added back (and a row that is
    all ``-inf`` gives ``-inf``, not NaN)."""
    from minitf.ops import array_ops
    from minitf.ops.debug_ops import is_finite
    if keep_dims is not None:
        keepdims = keep_dims
    axis = axis if axis is not None else reduction_indices
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        raw_max = reduce_max(x, axis, keepdims=True)
        my_max = array_ops.stop_gradient(
            array_ops.where(is_finite(raw_max), raw_max, array_ops.zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, my_max)), axis, keepdims=keepdims))
        if not keepdims:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        return add(result, my_max, name=scope)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """How many elements along ``axis`` are not zero (or not empty strings)."""
    input_tensor = input_tensor if input_tensor is not None else input
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axis = axis if axis is not None else reduction_indices
    from minitf.ops.core import constant
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        zero = constant("" if x.dtype.base_dtype == dtypes.string else 0, dtype=x.dtype)
        nonzero = cast(not_equal(x, zero), dtypes.int64)
        return cast(reduce_sum(nonzero, axis, keepdims=keepdims), dtype)
