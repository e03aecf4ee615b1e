"""The gradient function of every differentiable op type.

Each function gets the forward ``op`` and the gradient ``grad`` of its
output (``dL/dz``) and returns the gradient of each input (``dL/dx``), built
from ordinary ops. Two rules recur:

* **the chain rule, one op at a time**: ``z = x * y`` gives
  ``dL/dx = dL/dz * y``;
* **undo broadcasting**: if ``x`` was broadcast to ``z``'s shape, every copy
  of ``x`` received a share of the gradient, so ``dL/dx`` sums ``dL/dz``
  over the broadcast axes (see :func:`unbroadcast`).
"""

import numpy as np

from minitf.framework import dtypes
from minitf.ops import array_ops, math_ops, nn_ops
from minitf.ops.core import constant, make_op
from minitf.ops.gradients import NotDifferentiable, RegisterGradient
from minitf.ops.op_def import register_op

for _t in ("Const", "Placeholder", "VariableV2", "Shape", "Size", "Rank", "ZerosLike",
           "OnesLike", "Fill", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
           "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "ArgMax", "ArgMin",
           "Where", "RandomUniform", "RandomStandardNormal", "TruncatedNormal",
           "RandomUniformInt", "StopGradient", "FloorDiv", "FloorMod", "Floor", "Ceil",
           "Round", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized", "NoOp",
           "All", "Any", "OneHot", "IsNan", "IsInf", "IsFinite", "RefSwitch"):
    NotDifferentiable(_t)

register_op("SumToShape")
register_op("StridedSliceGrad")


# -- helpers ------------------------------------------------------------------------------
def _static(shape):
    return shape.as_list() if shape.is_fully_defined() else None


def unbroadcast(grad, x):
    """Sum ``grad`` over the axes along which ``x`` was broadcast, so the
    result has ``x``'s shape."""
    if grad is None:
        return None
    xd, gd = _static(x.shape), grad.shape.as_tuple_or_none()
    if xd is not None and gd is not None:
        lead = len(gd) - len(xd)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(xd)
                                    if d == 1 and gd[lead + i] != 1]
        if not axes and list(gd) == xd:
            return grad
        reduced = math_ops.reduce_sum(grad, axes) if axes else grad
        if reduced.shape.as_tuple_or_none() == tuple(xd):
            return reduced
        return array_ops.reshape(reduced, xd)
    # Shapes only known at run time: a kernel sums to the runtime shape of x.
    return make_op("SumToShape", [grad, array_ops.shape(x)], [grad.dtype.base_dtype],
                   [x.shape], name="SumToShape", attrs={"T": grad.dtype.base_dtype}).outputs[0]


def _ones_like_x(op):
    return array_ops.ones_like(op.inputs[0])


def _reduced_axes(op):
    """A reduction's axes as non-negative ints (``axis=-1`` -> ``rank - 1``), or
    None unless the axes are a constant and the input's rank is known."""
    ndims = op.inputs[0].shape.ndims
    if op.inputs[1].op.type != "Const" or ndims is None:
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


# -- elementwise binary --------------------------------------------------------------------
@RegisterGradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad, y)


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(-grad, y)


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad * y, x), unbroadcast(x * grad, y)


@RegisterGradient("RealDiv")
def _div_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad / y, x), unbroadcast(-grad * x / (y * y), y)


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    dx = grad * y * math_ops.pow(x, y - 1.0)
    safe_log = array_ops.where(x > 0.0, math_ops.log(math_ops.maximum(x, 1e-30)),
                               array_ops.zeros_like(x))
    dy = grad * z * safe_log
    return unbroadcast(dx, x), unbroadcast(dy, y)


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    x, y = op.inputs
    mask = math_ops.cast(x >= y, grad.dtype)
    return unbroadcast(grad * mask, x), unbroadcast(grad * (1.0 - mask), y)


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    x, y = op.inputs
    mask = math_ops.cast(x <= y, grad.dtype)
    return unbroadcast(grad * mask, x), unbroadcast(grad * (1.0 - mask), y)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    d = grad * 2.0 * (x - y)
    return unbroadcast(d, x), unbroadcast(-d, y)


# -- elementwise unary ----------------------------------------------------------------------
@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return [-grad]


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return [grad * math_ops.sign(op.inputs[0])]


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    return [array_ops.zeros_like(op.inputs[0])]


@RegisterGradient("Square")
def _square_grad(op, grad):
    return [grad * (2.0 * op.inputs[0])]


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    return [grad * 0.5 / op.outputs[0]]


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return [grad * (-0.5) * y * y * y]


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    return [grad * op.outputs[0]]


@RegisterGradient("Log")
def _log_grad(op, grad):
    return [grad / op.inputs[0]]


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    y = op.outputs[0]
    return [-grad * y * y]


@RegisterGradient("Relu")
def _relu_grad(op, grad):
    x = op.inputs[0]
    return [array_ops.where(x > 0, grad, array_ops.zeros_like(grad))]


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    y = op.outputs[0]
    return [grad * y * (1.0 - y)]


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    y = op.outputs[0]
    return [grad * (1.0 - y * y)]


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src = op.get_attr("SrcT")
    return [math_ops.cast(grad, src) if src.is_floating else None]


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return [grad]


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@RegisterGradient("Select")
def _select_grad(op, grad):
    c, x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    if c.shape.ndims == 1 and x.shape.ndims not in (None, 1):
        c = array_ops.reshape(c, [-1] + [1] * (x.shape.ndims - 1))
        c = math_ops.logical_or(c, array_ops.zeros_like(x, dtype=dtypes.bool))
    return None, array_ops.where(c, grad, zeros), array_ops.where(c, zeros, grad)


# -- shapes -------------------------------------------------------------------------------------
@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    x = op.inputs[0]
    xd = _static(x.shape)
    if xd is not None:
        return array_ops.reshape(grad, xd), None
    return make_op("Reshape", [grad, array_ops.shape(x)], [grad.dtype.base_dtype], [x.shape],
                   name="Reshape", attrs={"T": grad.dtype.base_dtype}).outputs[0], None


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    perm = [int(p) for p in op.inputs[1].op.get_attr("value")]
    inverse = list(np.argsort(perm))
    return array_ops.transpose(grad, inverse), None


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return array_ops.unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    grads = [g if g is not None else array_ops.zeros_like(t)
             for g, t in zip(grads, op.outputs)]
    return [array_ops.stack(grads, axis=op.get_attr("axis"))]


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    """Each input element was copied into prod(multiples) places: sum them.

    ``grad`` has shape ``[m0*d0, m1*d1, ...]``; reshaped to ``[m0, d0, m1, d1,
    ...]`` the copies of one element lie along the ``m`` axes, summed away.
    """
    x = op.inputs[0]
    dims = _static(x.shape)
    if dims is None or None in dims:
        raise LookupError("minitf needs the static shape of %s to differentiate %s"
                          % (x.name, op.name))
    reps = [int(r) for r in np.asarray(op.inputs[1].op.get_attr("value")).reshape(-1)]
    interleaved = [v for pair in zip(reps, dims) for v in pair]
    split = array_ops.reshape(grad, interleaved)
    return math_ops.reduce_sum(split, list(range(0, 2 * len(dims), 2))), None


@RegisterGradient("RefMerge")
@RegisterGradient("Merge")
def _merge_grad(op, grad, _):
    """The gradient goes back to the branch that ran: ``Switch(grad, pred)``."""
    from minitf.ops.control_flow_ops import _switch
    g_false, g_true = _switch(grad, op._cond_pred)
    return [g_false, g_true]


@RegisterGradient("Switch")
def _switch_grad(op, g_false, g_true):
    """A value a branch read from outside: its gradient is the branch's, merged.

    The side that got no gradient (it did not use the value) contributes
    zeros that are alive exactly when that side ran, so the Merge always has
    one live input whichever way ``pred`` went.
    """
    from minitf.ops.control_flow_ops import merge
    if g_false is None and g_true is None:
        return None, None
    if g_false is None:
        g_false = array_ops.zeros_like(op.outputs[0])
    if g_true is None:
        g_true = array_ops.zeros_like(op.outputs[1])
    return merge([g_false, g_true], name="cond_grad")[0], None


@RegisterGradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return [grad]


@RegisterGradient("SplitV")
@RegisterGradient("Split")
def _split_grad(op, *grads):
    grads = [g if g is not None else array_ops.zeros_like(t)
             for g, t in zip(grads, op.outputs)]
    return [array_ops.concat(grads, op.get_attr("axis"))]


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    axis = op.get_attr("axis")
    values = op.inputs[:-1]
    out, start = [], 0
    for v in values:
        size = v.shape[axis].value if v.shape.ndims is not None else None
        if size is None:
            raise LookupError("minitf needs the static size of %s along axis %d to "
                              "differentiate %s" % (v.name, axis, op.name))
        key = tuple([slice(None)] * axis + [slice(start, start + size)])
        out.append(grad[key])
        start += size
    return out + [None]


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x = op.inputs[0]
    return [make_op("StridedSliceGrad", [array_ops.shape(x), grad], [grad.dtype.base_dtype],
                    [x.shape], name="StridedSliceGrad",
                    attrs={"T": grad.dtype.base_dtype, "spec": op.get_attr("spec")}
                    ).outputs[0]]


# -- matmul ---------------------------------------------------------------------------------------
@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    mm = math_ops.matmul
    if not ta and not tb:
        return mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)
    if not ta and tb:
        return mm(grad, b), mm(grad, a, transpose_a=True)
    if ta and not tb:
        return mm(b, grad, transpose_b=True), mm(a, grad)
    return mm(b, grad, transpose_a=True, transpose_b=True), \
        mm(grad, a, transpose_a=True, transpose_b=True)


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    da, db = _matmul_grad(op, grad)
    return unbroadcast(da, op.inputs[0]), unbroadcast(db, op.inputs[1])


# -- reductions -----------------------------------------------------------------------------------
@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return _keepdims_grad(op, grad) * _ones_like_x(op), None


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    x = op.inputs[0]
    xd = _static(x.shape)
    axes = _reduced_axes(op)
    if xd is not None and axes is not None:
        count = float(np.prod([xd[a] for a in axes])) if axes else 1.0
        scale = constant(1.0 / max(count, 1.0), dtype=grad.dtype.base_dtype)
    else:
        scale = math_ops.cast(array_ops.size(op.outputs[0]), grad.dtype) / \
            math_ops.cast(array_ops.size(x), grad.dtype)
    return _keepdims_grad(op, grad) * _ones_like_x(op) * scale, None


def _min_or_max_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        y = _keepdims_grad(op, y)
    mask = math_ops.cast(math_ops.equal(x, y), grad.dtype)
    count = make_op("Sum", [mask, op.inputs[1]], [grad.dtype.base_dtype], [y.shape],
                    name="Sum", attrs={"T": grad.dtype.base_dtype, "keep_dims": True,
                                       "Tidx": dtypes.int32}).outputs[0]
    return _keepdims_grad(op, grad) * mask / count, None


RegisterGradient("Max")(_min_or_max_grad)
RegisterGradient("Min")(_min_or_max_grad)


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        y = _keepdims_grad(op, y)
    return _keepdims_grad(op, grad) * y / x, None


# -- softmax and losses -----------------------------------------------------------------------
@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return [(grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y]


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return [grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(y)]


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, grad_backprop):
    logits, _labels = op.inputs
    backprop = op.outputs[1]
    g = array_ops.expand_dims(grad_loss, -1)
    return g * backprop, g * -nn_ops.log_softmax(logits)


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    backprop = op.outputs[1]
    return array_ops.expand_dims(grad_loss, -1) * backprop, None
