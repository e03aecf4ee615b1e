"""Ops that create, reshape and combine tensors without arithmetic.

They only move data, so their kernels are plain numpy (copying memory is what
numpy already does at full speed) and they run on every device type: on a real
GPU the runtime hands them host copies of their inputs (``kernel_reads`` is
HOST). Shapes, permutations and multiples are host-memory inputs of a GPU
kernel (``host_memory_inputs``), as in TF.

Each op is a row of the op table (``minitf/framework/op_def.py``) next to the
``tf.*`` function that builds it and checks its static shape.
"""

import math

import numpy as np

from minitf.framework import dtypes, errors, graph_def
from minitf.framework.graph import Tensor, get_default_graph
from minitf.framework.op_def import (ANY_DTYPE, BACKEND, NOT_DIFFERENTIABLE, OpDef,
                                     declare)
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import math_ops, reduction_ops
from minitf.ops.core import (CONST, EVERY_DEVICE, _holds_tensor, binary_inputs, constant,
                             convert_to_tensor, dt_enum_name, make_op, name_scope, shape_str)
from minitf.ops.elementwise import FLOAT_NAMES, NUMBER_NAMES


def tf_type_name(dtype):
    """The C++ name TF uses in messages: float, double, int32, string..."""
    return {"float32": "float", "float64": "double", "float16": "half"}.get(
        dtype.base_dtype.name, dtype.base_dtype.name)


def shape_text(shape):
    """A static shape as TF's kernels print it: ``[2,?]``, ``<unknown>``."""
    if shape.ndims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


def _static(shape):
    return shape.as_list() if shape.is_fully_defined() else None


def _identity_grad(op, grad):
    return [grad]


# =============================================================== feeds and names ===
def _placeholder_kernel(op, backend):
    dt, shape = op.get_attr("dtype"), op.get_attr("shape")
    message = "You must feed a value for placeholder tensor '%s' with dtype %s" % (
        op.name, tf_type_name(dt))
    if shape.ndims is not None:
        message += " and shape %s" % shape_text(shape)

    def compute(ctx, inputs):
        raise errors.InvalidArgumentError(None, None, message)
    return compute


#: A tensor whose value must be fed; running it unfed is TF's error.
PLACEHOLDER = declare(OpDef("Placeholder", attrs=("dtype", "shape"),
                            gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                            kernel=_placeholder_kernel))


def _identity_kernel(op, backend):
    return lambda ctx, inputs: [inputs[0]]


IDENTITY = declare(OpDef("Identity", inputs=("input",), attrs=("T",), gradient=_identity_grad,
                         devices=EVERY_DEVICE, kernel=_identity_kernel))
STOP_GRADIENT = declare(OpDef("StopGradient", inputs=("input",), attrs=("T",),
                              gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                              kernel=_identity_kernel))
PLACEHOLDER_WITH_DEFAULT = declare(OpDef(
    "PlaceholderWithDefault", inputs=("input",), attrs=("dtype", "shape"),
    gradient=_identity_grad, devices=EVERY_DEVICE, kernel=_identity_kernel))


# ================================================================ shapes and sizes ===
def _shape_kernel(op, backend):
    dt = op.get_attr("out_type").np_dtype
    return lambda ctx, inputs: [np.array(inputs[0].shape, dtype=dt)]


def _size_kernel(op, backend):
    dt = op.get_attr("out_type").np_dtype
    return lambda ctx, inputs: [np.array(inputs[0].size, dtype=dt)]


def _rank_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].ndim, dtype=np.int32)]


# The outputs of these stay in host memory on a GPU (TF's HostMemory): they
# describe a tensor, and the host reads them.
SHAPE = declare(OpDef("Shape", inputs=("input",), attrs=("T", "out_type"),
                      gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE, dtype_attr="out_type",
                      kernel=_shape_kernel, host_memory_outputs=True))
SIZE = declare(OpDef("Size", inputs=("input",), attrs=("T", "out_type"),
                     gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE, dtype_attr="out_type",
                     kernel=_size_kernel, host_memory_outputs=True))
RANK = declare(OpDef("Rank", inputs=("input",), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                     devices=EVERY_DEVICE, kernel=_rank_kernel, host_memory_outputs=True))


# ========================================================================= Reshape ===
def _reshape_kernel(op, backend):
    def compute(ctx, inputs):
        x, shape = inputs
        shape = np.asarray(shape).reshape(-1).tolist()    # Python ints, quickly
        known = math.prod(d for d in shape if d != -1)
        if -1 in shape and (known == 0 or x.size % known):
            raise errors.InvalidArgumentError(
                None, None, "Input to reshape is a tensor with %d values, but the requested "
                "shape requires a multiple of %d" % (x.size, known))
        if -1 not in shape and known != x.size:
            raise errors.InvalidArgumentError(
                None, None, "Input to reshape is a tensor with %d values, but the requested "
                "shape has %d" % (x.size, known))
        return [x.reshape(shape)]
    return compute


def _reshape_grad(op, grad):
    x = op.inputs[0]
    xd = _static(x.shape)
    if xd is not None:
        return reshape(grad, xd), None
    return make_op(RESHAPE, [grad, shape(x)], [grad.dtype.base_dtype], [x.shape],
                   name="Reshape", attrs={"T": grad.dtype.base_dtype}).outputs[0], None


RESHAPE = declare(OpDef("Reshape", inputs=("tensor", "shape"), attrs=("T", "Tshape"),
                        gradient=_reshape_grad, devices=EVERY_DEVICE, kernel=_reshape_kernel,
                        host_memory_inputs=(1,)))


# ======================================================================= Transpose ===
def _transpose_kernel(op, backend):
    def compute(ctx, inputs):
        x, perm = inputs
        out = np.empty([x.shape[p] for p in perm], dtype=x.dtype)
        out[...] = x.transpose([int(p) for p in perm])
        return [out]
    return compute


def _transpose_grad(op, grad):
    perm = [int(p) for p in op.inputs[1].op.get_attr("value")]
    return transpose(grad, list(np.argsort(perm))), None


TRANSPOSE = declare(OpDef("Transpose", inputs=("x", "perm"), attrs=("T", "Tperm"),
                          gradient=_transpose_grad, devices=EVERY_DEVICE,
                          kernel=_transpose_kernel, host_memory_inputs=(1,)))


# ================================================================== Pack / Unpack ===
def _pack_kernel(op, backend):
    axis = op.get_attr("axis")

    def compute(ctx, inputs):
        shapes = {x.shape for x in inputs}
        if len(shapes) > 1:
            a, b = inputs[0].shape, next(x.shape for x in inputs if x.shape != inputs[0].shape)
            raise errors.InvalidArgumentError(
                None, None, "Shapes of all inputs must match: values[0].shape = %s != "
                "values[1].shape = %s" % (list(a), list(b)))
        return [np.stack(inputs, axis=axis)]
    return compute


def _pack_grad(op, grad):
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


PACK = declare(OpDef("Pack", inputs=("*values",), attrs=("T", "N", "axis"),
                     gradient=_pack_grad, devices=EVERY_DEVICE, kernel=_pack_kernel))


def _unpack_kernel(op, backend):
    axis, num = op.get_attr("axis"), op.get_attr("num")

    def compute(ctx, inputs):
        x = inputs[0]
        if x.shape[axis] != num:
            raise errors.InvalidArgumentError(
                None, None, "Input shape axis %d must equal %d, got shape %s"
                % (axis, num, list(x.shape)))
        return [np.ascontiguousarray(np.take(x, i, axis=axis)) if x.ndim > 1
                else x[i].copy() for i in range(num)]
    return compute


def _unpack_grad(op, *grads):
    grads = [g if g is not None else zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [stack(grads, axis=op.get_attr("axis"))]


UNPACK = declare(OpDef("Unpack", inputs=("value",), attrs=("T", "num", "axis"),
                       gradient=_unpack_grad, devices=EVERY_DEVICE, kernel=_unpack_kernel))


# ======================================================================== ConcatV2 ===
def _concat_kernel(op, backend):
    def compute(ctx, inputs):
        *values, axis = inputs
        try:
            return [np.concatenate(values, axis=int(axis))]
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, "ConcatOp : %s" % e) from None
    return compute


def _concat_grad(op, grad):
    axis = op.get_attr("axis")
    values = op.inputs[:-1]
    out, start = [], 0
    for v in values:
        size_ = v.shape[axis].value if v.shape.ndims is not None else None
        if size_ is None:
            raise LookupError("minitf needs the static size of %s along axis %d to "
                              "differentiate %s" % (v.name, axis, op.name))
        key = tuple([slice(None)] * axis + [slice(start, start + size_)])
        out.append(grad[key])
        start += size_
    return out + [None]


CONCAT_V2 = declare(OpDef("ConcatV2", inputs=("*values", "axis"), attrs=("T", "N", "Tidx"),
                          gradient=_concat_grad, devices=EVERY_DEVICE, kernel=_concat_kernel,
                          host_memory_inputs=(-1,)))


# ================================================================ Fill, *_like ===
def _fill_kernel(op, backend):
    def compute(ctx, inputs):
        dims, value = inputs
        return [np.full([int(d) for d in dims], value, dtype=value.dtype)]
    return compute


FILL = declare(OpDef("Fill", inputs=("dims", "value"), attrs=("T", "index_type"),
                     gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE, kernel=_fill_kernel,
                     host_memory_inputs=(0,)))


def _zeros_ones_like_kernel(fill_value):
    def kernel(op, backend):
        dt = op.get_attr("dtype").np_dtype
        return lambda ctx, inputs: [np.full(inputs[0].shape, fill_value, dtype=dt)]
    return kernel


ZEROS_LIKE = declare(OpDef("ZerosLike", inputs=("x",), attrs=("T",),
                           gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                           kernel=_zeros_ones_like_kernel(0)))
ONES_LIKE = declare(OpDef("OnesLike", inputs=("x",), attrs=("T",),
                          gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                          kernel=_zeros_ones_like_kernel(1)))


# ==================================================================== StridedSlice ===
def _numpy_key(spec):
    """A StridedSlice's ``spec`` attr as the numpy index it stands for."""
    return tuple(slice(*s[1:]) if s[0] == "slice" else Ellipsis if s[0] == "ellipsis"
                 else None if s[0] == "newaxis" else s[1] for s in spec)


def _strided_slice_kernel(op, backend):
    key = _numpy_key(op.get_attr("spec"))

    def compute(ctx, inputs):
        try:
            out = inputs[0][key]
        except IndexError as e:
            raise errors.InvalidArgumentError(None, None, "slice index out of bounds: %s"
                                              % e) from None
        return [np.array(out)]
    return compute


def _strided_slice_grad(op, grad):
    x = op.inputs[0]
    return [make_op(STRIDED_SLICE_GRAD, [shape(x), grad], [grad.dtype.base_dtype],
                    [x.shape], name="StridedSliceGrad",
                    attrs={"T": grad.dtype.base_dtype, "spec": op.get_attr("spec")}
                    ).outputs[0]]


STRIDED_SLICE = declare(OpDef("StridedSlice", inputs=("input",), attrs=("T", "spec"),
                              gradient=_strided_slice_grad, devices=EVERY_DEVICE,
                              kernel=_strided_slice_kernel))


def _strided_slice_grad_kernel(op, backend):
    """Zeros of the sliced input's shape with the slice's gradient put back."""
    key = _numpy_key(op.get_attr("spec"))

    def compute(ctx, inputs):
        shape_, grad = inputs
        out = np.zeros([int(d) for d in shape_], dtype=grad.dtype)
        view = out[tuple(k for k in key if k is not None)]
        view[...] = grad.reshape(view.shape)
        return [out]
    return compute


STRIDED_SLICE_GRAD = declare(OpDef(
    "StridedSliceGrad", inputs=("shape", "dy"), attrs=("T", "spec"), devices=EVERY_DEVICE,
    kernel=_strided_slice_grad_kernel, host_memory_inputs=(0,)))


# ====================================================================== SumToShape ===
def _sum_to_shape_kernel(op, backend):
    """``grad`` summed down to ``shape`` (the inverse of numpy broadcasting)."""
    def compute(ctx, inputs):
        grad, shape_ = inputs
        shape_ = tuple(int(d) for d in shape_)
        lead = grad.ndim - len(shape_)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape_)
                                          if d == 1 and grad.shape[lead + i] != 1)
        out = grad.sum(axis=axes, dtype=grad.dtype) if axes else grad
        return [np.ascontiguousarray(out.reshape(shape_))]
    return compute


def _sum_to_shape_as_tf(op, nd):
    """TF's way to write it: sum ``grad`` over the axes BroadcastGradientArgs
    finds between ``shape`` and ``grad``'s shape, then reshape to ``shape``."""
    name, dt = op.name, op._attrs["T"]
    grad, shape_in = nd.input[0], nd.input[1]
    controls = [i for i in nd.input if i.startswith("^")]
    out = op.outputs[0].shape
    return [
        graph_def.new_node(nd, name + "/Shape", "Shape", [grad] + controls,
                           {"T": dt, "out_type": dtypes.int32}, [TensorShape([None])]),
        graph_def.new_node(nd, name + "/BroadcastGradientArgs", "BroadcastGradientArgs",
                           [shape_in, name + "/Shape"], {"T": dtypes.int32},
                           [TensorShape([None]), TensorShape([None])]),
        graph_def.new_node(nd, name + "/Sum", "Sum", [grad, name + "/BroadcastGradientArgs"],
                           {"T": dt, "Tidx": dtypes.int32, "keep_dims": False},
                           [TensorShape(None)]),
        graph_def.new_node(nd, name, "Reshape", [name + "/Sum", shape_in],
                           {"T": dt, "Tshape": dtypes.int32}, [out]),
    ]


#: A minitf op that gradients use when shapes are only known at run time: the
#: gradient of a broadcast input is summed back to that input's run-time shape.
#: (TF builds Shape, BroadcastGradientArgs, Sum and Reshape; GraphDefs get those.)
def _sum_to_shape_grad(op, grad):
    """Summing down is undone by broadcasting back up: ``grad`` (of the
    summed shape) added onto zeros of the input's shape. (A second-order
    gradient through a broadcasting op comes here.)"""
    return [zeros_like(op.inputs[0]) + grad, None]


SUM_TO_SHAPE = declare(OpDef("SumToShape", inputs=("grad", "shape"), attrs=("T",),
                             devices=EVERY_DEVICE, kernel=_sum_to_shape_kernel,
                             gradient=_sum_to_shape_grad, host_memory_inputs=(1,),
                             to_tf=_sum_to_shape_as_tf))


def sum_to_shape(grad, shape_tensor, static_shape):
    """``grad`` summed over the axes broadcasting added, to the run-time shape
    ``shape_tensor`` (``static_shape``: what is known of it now)."""
    return make_op(SUM_TO_SHAPE, [grad, shape_tensor], [grad.dtype.base_dtype],
                   [static_shape], name="SumToShape",
                   attrs={"T": grad.dtype.base_dtype}).outputs[0]



# ============================================================= BroadcastGradientArgs ===
def _broadcast_gradient_args_kernel(op, backend):
    """The axes to sum each input's gradient over, for two shapes that
    broadcast together. Shapes are aligned on the right; an input is reduced
    along every axis where it has size 1 (or no axis at all). Equal shapes
    need no reduction. This is how TF's gradients undo broadcasting when the
    shapes are only known at run time (minitf's own gradients use SumToShape)."""
    def compute(ctx, inputs):
        s0, s1 = (np.asarray(s).reshape(-1).astype(np.int64) for s in inputs)
        dt = inputs[0].dtype
        if s0.tolist() == s1.tolist():
            return [np.zeros(0, dt), np.zeros(0, dt)]
        rank = max(len(s0), len(s1))
        p0 = [1] * (rank - len(s0)) + s0.tolist()
        p1 = [1] * (rank - len(s1)) + s1.tolist()
        for a, b in zip(p0, p1):
            if a != b and a != 1 and b != 1:
                raise errors.InvalidArgumentError(
                    None, None, "Incompatible shapes: [%s] vs. [%s]"
                    % (",".join(map(str, s0)), ",".join(map(str, s1))))
        return [np.array([j for j, d in enumerate(p) if d == 1], dtype=dt) for p in (p0, p1)]
    return compute


BROADCAST_GRADIENT_ARGS = declare(OpDef(
    "BroadcastGradientArgs", inputs=("s0", "s1"), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
    devices=EVERY_DEVICE, kernel=_broadcast_gradient_args_kernel, host_memory_inputs=(0, 1),
    host_memory_outputs=True))


# ================================================================== Where / Select ===
def _where_kernel(op, backend):
    return lambda ctx, inputs: [np.argwhere(inputs[0]).astype(np.int64)]


WHERE = declare(OpDef("Where", inputs=("input",), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                      kernel=_where_kernel))


def _select_kernel(op, backend):
    select = backend.select

    def compute(ctx, inputs):
        c, x, y = inputs
        if c.ndim == 1 and x.ndim > 1 and c.shape[0] == x.shape[0]:
            c = c.reshape((-1,) + (1,) * (x.ndim - 1))  # TF1: a vector picks rows
        elif c.shape != x.shape and c.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, "'then' and 'else' must have the same size.  but received: %s "
                "vs. %s" % (list(x.shape), list(y.shape)) if x.shape != y.shape else
                "'condition' and 'then' must have the same size.  but received: %s vs. %s"
                % (list(c.shape), list(x.shape)))
        return [select(c, x, y)]
    return compute


def _select_grad(op, grad):
    c, x, y = op.inputs
    zeros = zeros_like(grad)
    if c.shape.ndims == 1 and x.shape.ndims not in (None, 1):
        c = reshape(c, [-1] + [1] * (x.shape.ndims - 1))
        c = math_ops.logical_or(c, zeros_like(x, dtype=dtypes.bool))
    return None, where(c, grad, zeros), where(c, zeros, grad)


def _select_examples(dtype):
    def values(k):
        x = (np.arange(6) * (k + 2) % 5 - 2).reshape(2, 3)
        return x.astype(np.float32).astype(dtype) if dtype != "bool" else x > 0
    cond = np.array([[True, False, True], [False, False, True]])
    return [([cond, values(0), values(1)], lambda c, x, y: where(c, x, y)),
            ([np.array([True, False]), values(0), values(1)],
             lambda c, x, y: where(c, x, y))]


SELECT = declare(OpDef(
    "Select", inputs=("condition", "t", "e"), attrs=("T",), gradient=_select_grad,
    devices={"CPU": ANY_DTYPE, "GPU": FLOAT_NAMES}, kernel=_select_kernel,
    kernel_reads=BACKEND, examples=_select_examples))


def _select_v2_kernel(op, backend):
    select = backend.select

    def compute(ctx, inputs):
        c, x, y = (np.asarray(v) for v in inputs)
        try:
            shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, "condition [%s], then [%s], and else [%s] must be broadcastable"
                % tuple(",".join(map(str, v.shape)) for v in (c, x, y))) from None
        return [select(np.broadcast_to(c, shape), np.broadcast_to(x, shape),
                       np.broadcast_to(y, shape))]
    return compute


def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    zeros = constant(np.zeros((), grad.dtype.base_dtype.np_dtype), name="zeros")
    return (None, math_ops.unbroadcast(where_v2(c, grad, zeros), x),
            math_ops.unbroadcast(where_v2(c, zeros, grad), y))


#: TF2's ``where``: condition, then and else broadcast against each other.
SELECT_V2 = declare(OpDef(
    "SelectV2", inputs=("condition", "t", "e"), attrs=("T",), gradient=_select_v2_grad,
    devices={"CPU": ANY_DTYPE, "GPU": FLOAT_NAMES}, kernel=_select_v2_kernel))


def where_v2(condition, x=None, y=None, name=None):
    """``tf.where_v2(cond, x, y)``: ``x`` where ``cond`` else ``y``, all three
    broadcast together (``SelectV2``); with only ``cond``, the true indices."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "SelectV2", [condition, x, y]) as scope:
        c = convert_to_tensor(condition, name="condition")
        if c.dtype.base_dtype != dtypes.bool:
            raise TypeError("Input 'condition' of 'SelectV2' Op has type %s that does not "
                            "match expected type of bool." % c.dtype.name)
        x, y = binary_inputs(SELECT_V2.name, x, y)
        shape = TensorShape(None)
        if None not in (c.shape.ndims, x.shape.ndims, y.shape.ndims):
            try:
                shape = TensorShape(np.broadcast_shapes(
                    *[tuple(1 if d is None else d for d in t.shape.as_list())
                      for t in (c, x, y)]))
            except ValueError:
                raise ValueError("Dimensions must be equal, but are incompatible for "
                                 "'{{node %s}}' with input shapes: %s, %s, %s."
                                 % (scope[:-1], c.shape, x.shape, y.shape)) from None
            if any(d is None for t in (c, x, y) for d in t.shape.as_list()):
                shape = TensorShape([None] * len(shape))
        op = make_op(SELECT_V2, [c, x, y], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


# ========================================================================== OneHot ===
def _one_hot_kernel(op, backend):
    axis = op.get_attr("axis")

    def compute(ctx, inputs):
        indices, depth, on, off = inputs
        depth = int(depth)
        if depth < 0:
            raise errors.InvalidArgumentError(
                None, None, "depth must be non-negative, got: %d" % depth)
        idx = np.asarray(indices).astype(np.int64)
        hot = idx[..., None] == np.arange(depth)        # out-of-range: all off
        out = np.where(hot, on, off).astype(np.asarray(on).dtype)
        return [out if axis == -1 else np.moveaxis(out, -1, axis)]
    return compute


ONE_HOT = declare(OpDef("OneHot", inputs=("indices", "depth", "on_value", "off_value"),
                        attrs=("T", "TI", "axis"), gradient=NOT_DIFFERENTIABLE,
                        devices=EVERY_DEVICE, kernel=_one_hot_kernel,
                        host_memory_inputs=(1,)))


# ============================================================================ Tile ===
def _tile_kernel(op, backend):
    def compute(ctx, inputs):
        x, reps = inputs
        reps = [int(r) for r in reps]
        if len(reps) != x.ndim:
            raise errors.InvalidArgumentError(
                None, None, "Expected multiples argument to be a vector of length %d but "
                "got length %d" % (x.ndim, len(reps)))
        return [np.tile(x, reps)]
    return compute


def _tile_grad(op, grad):
    """Each input element was copied into prod(multiples) places: sum them.

    ``grad`` has shape ``[m0*d0, m1*d1, ...]``; reshaped to ``[m0, d0, m1, d1,
    ...]`` the copies of one element lie along the ``m`` axes, summed away.
    """
    x = op.inputs[0]
    dims = _static(x.shape)
    if dims is None or None in dims or op.inputs[1].op.op_def is not CONST:
        raise LookupError("minitf needs the static shape of %s and constant multiples to "
                          "differentiate %s" % (x.name, op.name))
    reps = [int(r) for r in np.asarray(op.inputs[1].op.get_attr("value")).reshape(-1)]
    interleaved = [v for pair in zip(reps, dims) for v in pair]
    split_ = reshape(grad, interleaved)
    return reduction_ops.reduce_sum(split_, list(range(0, 2 * len(dims), 2))), None


TILE = declare(OpDef("Tile", inputs=("input", "multiples"), attrs=("T", "Tmultiples"),
                     gradient=_tile_grad, devices=EVERY_DEVICE, kernel=_tile_kernel,
                     host_memory_inputs=(1,)))


# ==================================================================== Split/SplitV ===
def _split_kernel(op, backend):
    axis, sizes, equal = op.get_attr("axis"), op.get_attr("sizes"), op.type == SPLIT.name

    def compute(ctx, inputs):
        x = inputs[0]
        n = x.shape[axis]
        if equal:
            if n % len(sizes):
                raise errors.InvalidArgumentError(
                    None, None, "Number of ways to split should evenly divide the split "
                    "dimension, but got split_dim %d (size = %d) and num_split %d"
                    % (axis, n, len(sizes)))
            bounds = [n // len(sizes) * i for i in range(1, len(sizes))]
        else:
            known = [s for s in sizes if s != -1]
            resolved = [s if s != -1 else n - sum(known) for s in sizes]
            if sum(resolved) != n or min(resolved) < 0:
                raise errors.InvalidArgumentError(
                    None, None, "Determined shape must either match input shape along "
                    "split_dim exactly if fully specified, or be less than the size of the "
                    "input along split_dim if not fully specified.  Got: %d" % sum(known))
            bounds = np.cumsum(resolved)[:-1].tolist()
        return [np.ascontiguousarray(p) for p in np.split(x, bounds, axis=axis)]
    return compute


def _split_grad(op, *grads):
    grads = [g if g is not None else zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [concat(grads, op.get_attr("axis"))]


SPLIT = declare(OpDef("Split", inputs=("value",), attrs=("T", "axis", "sizes", "num_split"),
                      gradient=_split_grad, devices=EVERY_DEVICE, kernel=_split_kernel))
SPLIT_V = declare(OpDef("SplitV", inputs=("value",),
                        attrs=("T", "axis", "sizes", "num_split"), gradient=_split_grad,
                        devices=EVERY_DEVICE, kernel=_split_kernel))


# ==================================================================== GatherV2 ===
def _gather_kernel(op, backend):
    def compute(ctx, inputs):
        params, indices, axis = inputs
        axis = int(axis)
        size_ = params.shape[axis]
        bad = (indices < 0) | (indices >= size_)
        if np.any(bad):
            idx = np.argwhere(bad)[0]
            raise errors.InvalidArgumentError(
                None, None, "indices%s = %d is not in [0, %d)"
                % (list(idx), int(indices[tuple(idx)]), size_))
        return [np.take(params, indices, axis=axis)]
    return compute


def _gather_grad(op, grad):
    """Each gathered slice's gradient goes back to the row it came from, summed
    where an index repeats. TF returns this as IndexedSlices (only the touched
    rows); minitf has no sparse tensors, so it is a dense tensor of params'
    shape: SGD gives the same update, optimizers with slots (momentum...)
    also decay the untouched rows' slots."""
    params, indices, axis_t = op.inputs
    if axis_t.op.op_def is not CONST or params.shape.ndims is None \
            or indices.shape.ndims is None:
        raise LookupError("minitf differentiates %s only with a constant axis and inputs of "
                          "known rank" % op.name)
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    axis = int(axis_t.op.get_attr("value")) % p_rank
    static = _static(params.shape)
    p_shape = constant(np.array(static, np.int32)) if static is not None else shape(params)
    flat = reshape(indices, [-1])
    others = [d for d in range(p_rank) if d != axis]
    if axis:        # bring the gathered axes to the front, scatter, and move them back
        grad = transpose(grad, list(range(axis, axis + i_rank)) + list(range(axis)) +
                         list(range(axis + i_rank, i_rank + p_rank - 1)))
        p_shape = gather(p_shape, [axis] + others) if static is None else constant(
            np.array([static[axis]] + [static[d] for d in others], np.int32))
    rest = p_shape[1:]
    values = reshape(grad, concat([constant(np.array([-1], np.int32)), rest], 0)) \
        if static is None else reshape(grad, [-1] + [static[d] for d in others])
    if indices.dtype.base_dtype != dtypes.int32:
        p_shape = math_ops.cast(p_shape, indices.dtype.base_dtype)
    dense = scatter_nd(expand_dims(flat, -1), values, p_shape)
    if axis:
        dense = transpose(dense, list(range(1, axis + 1)) + [0] + list(range(axis + 1, p_rank)))
    return dense, None, None


GATHER_V2 = declare(OpDef("GatherV2", inputs=("params", "indices", "axis"),
                          attrs=("Tparams", "Tindices", "Taxis"), dtype_attr="Tparams",
                          gradient=_gather_grad, kernel=_gather_kernel))


# ========================================================== GatherNd / ScatterNd ===
def _index_text(batch_shape, i):
    """TF's position of the ``i``-th index row in a batch of index rows: ``[1,0]``."""
    return "[%s]" % ",".join(str(c) for c in np.unravel_index(i, batch_shape)) \
        if batch_shape else "[]"


def _gather_nd_kernel(op, backend):
    """``out[i...] = params[indices[i..., 0], ..., indices[i..., r - 1]]``: each
    row of ``indices`` picks an element (or a slice) of ``params``."""
    def compute(ctx, inputs):
        params, indices = inputs
        r = indices.shape[-1] if indices.ndim else 0
        if indices.ndim < 1 or r > params.ndim:
            raise errors.InvalidArgumentError(
                None, None, "index innermost dimension length must be <= params rank; saw: "
                "%d vs. %d" % (r, params.ndim))
        flat = indices.reshape(-1, r)
        bad = np.nonzero(((flat < 0) | (flat >= np.array(params.shape[:r]))).any(axis=1))[0]
        if bad.size:
            i = int(bad[0])
            raise errors.InvalidArgumentError(
                None, None, "indices%s = [%s] does not index into param shape %s"
                % (_index_text(indices.shape[:-1], i), ", ".join(str(int(v)) for v in flat[i]),
                   "[%s]" % ",".join(str(d) for d in params.shape)))
        picked = params[tuple(flat.T)] if r else np.broadcast_to(params, (flat.shape[0],) +
                                                                 params.shape)
        return [np.ascontiguousarray(picked.reshape(indices.shape[:-1] + params.shape[r:]))]
    return compute


def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    static = _static(params.shape)
    return scatter_nd(indices, grad, static if static is not None else shape(params)), None


GATHER_ND = declare(OpDef(
    "GatherNd", inputs=("params", "indices"), attrs=("Tparams", "Tindices"),
    dtype_attr="Tparams", gradient=_gather_nd_grad,
    devices={"CPU": ANY_DTYPE, "GPU": FLOAT_NAMES + ("int32", "int64")},
    kernel=_gather_nd_kernel))


def _scatter_nd_kernel(op, backend):
    """A zero tensor of ``shape`` with each row of ``updates`` added at the place
    its row of ``indices`` names (repeated indices add up)."""
    def compute(ctx, inputs):
        indices, updates, shape_ = inputs
        dims = tuple(int(d) for d in shape_)
        r = indices.shape[-1] if indices.ndim else 0
        batch = indices.shape[:-1]
        if indices.ndim < 1 or r > len(dims):
            raise errors.InvalidArgumentError(
                None, None, "Output must have rank at least %d (the innermost dimension of "
                "indices), got shape %s" % (r, list(dims)))
        if updates.shape != batch + dims[r:]:
            raise errors.InvalidArgumentError(
                None, None, "updates must have shape indices.shape[:-1] + shape[%d:] = %s, "
                "got %s" % (r, list(batch + dims[r:]), list(updates.shape)))
        flat = indices.reshape(-1, r)
        bad = np.nonzero(((flat < 0) | (flat >= np.array(dims[:r]))).any(axis=1))[0]
        if bad.size:
            i = int(bad[0])
            raise errors.InvalidArgumentError(
                None, None, "indices%s = [%s] does not index into shape %s"
                % (_index_text(batch, i), ", ".join(str(int(v)) for v in flat[i]),
                   "[%s]" % ",".join(str(d) for d in dims)))
        out = np.zeros(dims, dtype=updates.dtype)
        rows = updates.reshape((-1,) + dims[r:])
        if out.dtype.kind in "biuf":
            np.add.at(out, tuple(flat.T), rows)
        else:
            out[tuple(flat.T)] = rows
        return [out]
    return compute


def _scatter_nd_grad(op, grad):
    return None, gather_nd(grad, op.inputs[0]), None


SCATTER_ND = declare(OpDef(
    "ScatterNd", inputs=("indices", "updates", "shape"), attrs=("T", "Tindices"),
    gradient=_scatter_nd_grad, devices={"CPU": ANY_DTYPE, "GPU": NUMBER_NAMES},
    kernel=_scatter_nd_kernel, host_memory_inputs=(2,)))


# ======================================================================= Range ===
def _range_kernel(op, backend):
    dt = op.get_attr("Tidx").np_dtype

    def compute(ctx, inputs):
        start, limit, delta = (x.item() for x in inputs)
        if delta == 0:
            raise errors.InvalidArgumentError(None, None, "Requires delta != 0: 0")
        if (delta > 0 and start > limit) or (delta < 0 and start < limit):
            raise errors.InvalidArgumentError(
                None, None, "Requires start <= limit when delta > 0: %s/%s"
                % (start, limit) if delta > 0 else
                "Requires start >= limit when delta < 0: %s/%s" % (start, limit))
        return [np.arange(start, limit, delta).astype(dt)]
    return compute


RANGE = declare(OpDef("Range", inputs=("start", "limit", "delta"), attrs=("Tidx",),
                      gradient=NOT_DIFFERENTIABLE, dtype_attr="Tidx", kernel=_range_kernel))


# ============================================================== the tf.* functions ===
def _static_ints(value, what):
    """A shape/axis/perm argument as a list of ints, known at build time."""
    if isinstance(value, Tensor):
        if value.op.op_def is not CONST:
            raise TypeError("minitf needs `%s` known when the graph is built (a Python list "
                            "or a constant), got the tensor %s." % (what, value.name))
        value = value.op.get_attr("value")
    if isinstance(value, TensorShape):
        value = value.as_list()
    return [int(v) for v in np.asarray(value).reshape(-1).tolist()]


def _run_time_shape(value, name):
    """A shape argument computed in the graph, e.g. ``tf.shape(x)`` or
    ``[tf.shape(x)[0], -1]``: ``(int32 tensor, what is known of its value now)``.

    The known value is a list with ``None`` where a size is only known at run
    time (``[None, -1]`` for the example when ``x`` has shape ``[?, 784]``), or
    None if not even its length is known. Returns None for a plain list or a
    constant: those take the static path.
    """
    if not _holds_tensor(value) or (isinstance(value, Tensor) and value.op.op_def is CONST):
        return None
    t = convert_to_tensor(value, dtype=dtypes.int32, name=name)
    op = t.op
    if op.op_def is SHAPE:
        known = op.inputs[0].shape
        return t, (known.as_list() if known.ndims is not None else None)
    if op.op_def is PACK and t.shape.ndims == 1:
        return t, [_known_size(e) for e in op.inputs]
    if t.shape.ndims == 1 and t.shape.dims[0].value is not None:
        return t, [None] * t.shape.dims[0].value
    return t, None


def _known_size(t):
    """One element of a packed shape, if known now: a constant, or ``tf.shape(x)[i]``
    of a known dimension."""
    op = t.op
    if op.op_def is CONST:
        return int(op.get_attr("value"))
    if op.op_def is STRIDED_SLICE and op.inputs[0].op.op_def is SHAPE:
        spec = op.get_attr("spec")
        dims = op.inputs[0].op.inputs[0].shape
        if len(spec) == 1 and spec[0][0] == "index" and dims.ndims is not None:
            return dims.as_list()[spec[0][1]]
    return None


def placeholder(dtype, shape=None, name=None):
    """A tensor whose value must be fed: ``sess.run(y, {x: value})``."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    shape = as_shape(shape)
    op = make_op(PLACEHOLDER, [], [dtype], [shape], name=name or "Placeholder",
                 attrs={"dtype": dtype, "shape": shape}, graph=get_default_graph())
    return op.outputs[0]


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    with name_scope(name, "PlaceholderWithDefault", [input]) as scope:
        x = convert_to_tensor(input)
        op = make_op(PLACEHOLDER_WITH_DEFAULT, [x], [x.dtype.base_dtype], [as_shape(shape)],
                     name=scope, attrs={"dtype": x.dtype.base_dtype, "shape": as_shape(shape)})
    return op.outputs[0]


def identity(input, name=None):  # noqa: A002
    """The same value under a new name (and, if pinned, on another device)."""
    x = convert_to_tensor(input)
    op = make_op(IDENTITY, [x], [x.dtype.base_dtype], [x.shape], name=name or "Identity",
                 attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def stop_gradient(input, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    op = make_op(STOP_GRADIENT, [x], [x.dtype.base_dtype], [x.shape],
                 name=name or "StopGradient", attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def reshape(tensor, shape, name=None):
    with name_scope(name, "Reshape", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        run_time = _run_time_shape(shape, "shape")
        if run_time is not None:
            shape_t, known = run_time
            out = TensorShape(None) if known is None else TensorShape(
                _infer_minus_one(known, x.shape.num_elements()))
            return make_op(RESHAPE, [x, shape_t], [x.dtype.base_dtype], [out], name=scope,
                           attrs={"T": x.dtype.base_dtype}).outputs[0]
        dims = _static_ints(shape, "shape")
        if dims.count(-1) > 1:
            raise ValueError("Cannot infer multiple unknown dimensions in shape %s" % dims)
        n = x.shape.num_elements()
        out = list(dims)
        known = int(np.prod([d for d in dims if d != -1])) if dims else 1
        if -1 in dims:
            if n is not None:
                if known == 0 or n % known:
                    raise ValueError("Dimension size must be evenly divisible by %d but is %d "
                                     "for '{{node %s}} = Reshape[T=%s, Tshape=DT_INT32]'"
                                     % (known, n, scope[:-1], dt_enum_name(x.dtype)))
                out[dims.index(-1)] = n // known
            else:
                out[dims.index(-1)] = None
        elif n is not None and n != known:
            raise ValueError("Cannot reshape a tensor with %d elements to shape [%s] (%d "
                             "elements) for '{{node %s}} = Reshape[T=%s, Tshape=DT_INT32]"
                             "'" % (n, ",".join(map(str, dims)), known, scope[:-1],
                                    dt_enum_name(x.dtype)))
        shape_t = constant(np.array(dims, dtype=np.int32), name="shape")
        op = make_op(RESHAPE, [x, shape_t], [x.dtype.base_dtype], [TensorShape(out)],
                     name=scope, attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def _infer_minus_one(known, n):
    """Static output dims of a reshape to ``known`` (None: unknown; -1: inferred)."""
    out = [None if d == -1 else d for d in known]
    if known.count(-1) == 1 and n is not None and None not in out[:known.index(-1)] + \
            out[known.index(-1) + 1:]:
        rest = int(np.prod([d for d in known if d != -1]))
        if rest and n % rest == 0:
            out[known.index(-1)] = n // rest
    return out


def transpose(a, perm=None, name="transpose"):
    with name_scope(name, "transpose", [a]) as scope:
        x = convert_to_tensor(a, name="a")
        rank = x.shape.ndims
        if perm is None:
            if rank is None:
                raise ValueError("minitf needs the rank of %s to transpose it." % x.name)
            perm = list(range(rank))[::-1]
        perm = _static_ints(perm, "perm")
        if rank is not None:
            if sorted(perm) != list(range(rank)):
                raise ValueError("Dimension must be %d but is %d for '{{node %s}}'"
                                 % (rank, len(perm), scope[:-1]))
            dims = x.shape.as_list()
            shape = TensorShape([dims[p] for p in perm])
        else:
            shape = TensorShape([None] * len(perm))
        perm_t = constant(np.array(perm, dtype=np.int32), name="perm")
        op = make_op(TRANSPOSE, [x, perm_t], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def stack(values, axis=0, name="stack"):
    """Join same-shape tensors along a new axis (TF's ``Pack``)."""
    with name_scope(name, "stack", values) as scope:
        values = [convert_to_tensor(v) for v in values]
        if not values:
            raise ValueError("stack needs at least one tensor.")
        dt = values[0].dtype.base_dtype
        shape = values[0].shape
        for v in values[1:]:
            if v.dtype.base_dtype != dt:
                raise TypeError("Tensors in list passed to 'values' of 'Pack' Op have types "
                                "[%s] that don't all match."
                                % ", ".join(x.dtype.name for x in values))
            if not shape.is_compatible_with(v.shape):
                if shape.ndims != v.shape.ndims:
                    raise ValueError("Shapes must be equal rank, but are %d and %d\n\tFrom "
                                     "merging shape %d with other shapes. for '{{node %s}}'"
                                     % (shape.ndims, v.shape.ndims, values.index(v) - 1,
                                        scope[:-1]))
                i = next(i for i, (a, b) in enumerate(zip(shape.as_list(), v.shape.as_list()))
                         if a is not None and b is not None and a != b)
                raise ValueError("Dimension %d in both shapes must be equal, but are %d and "
                                 "%d. Shapes are %s and %s.\n\tFrom merging shape %d with "
                                 "other shapes. for '{{node %s}}'" % (
                                     i, shape[i].value, v.shape[i].value, shape_str(shape),
                                     shape_str(v.shape), values.index(v) - 1, scope[:-1]))
            shape = shape.merge_with(v.shape)
        if shape.ndims is None:
            out = TensorShape(None)
        else:
            dims = shape.as_list()
            rank = len(dims) + 1
            if not -rank <= axis < rank:
                raise ValueError("axis = %d not in [%d, %d)" % (axis, -rank, rank))
            axis %= rank
            out = TensorShape(dims[:axis] + [len(values)] + dims[axis:])
        op = make_op(PACK, values, [dt], [out], name=scope,
                     attrs={"T": dt, "N": len(values), "axis": axis})
    return op.outputs[0]


def unstack(value, num=None, axis=0, name="unstack"):
    """Split a tensor into a list along ``axis`` (TF's ``Unpack``)."""
    with name_scope(name, "unstack", [value]) as scope:
        x = convert_to_tensor(value)
        if x.shape.ndims is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % x.shape)
        dims = x.shape.as_list()
        rank = len(dims)
        if not -rank <= axis < rank:
            raise ValueError("axis = %d not in [%d, %d)" % (axis, -rank, rank))
        axis %= rank
        if num is None:
            num = dims[axis]
            if num is None:
                raise ValueError("Cannot infer argument `num` from shape %s" % x.shape)
        out = TensorShape(dims[:axis] + dims[axis + 1:])
        op = make_op(UNPACK, [x], [x.dtype.base_dtype] * num, [out] * num, name=scope,
                     attrs={"T": x.dtype.base_dtype, "num": num, "axis": axis})
    return op.outputs


def concat(values, axis, name="concat"):
    with name_scope(name, "concat", values) as scope:
        values = [convert_to_tensor(v) for v in values]
        if len(values) == 1:
            return identity(values[0], name=scope)
        dt = values[0].dtype.base_dtype
        for v in values:
            if v.dtype.base_dtype != dt:
                raise TypeError("Tensors in list passed to 'values' of 'ConcatV2' Op have "
                                "types [%s] that don't all match."
                                % ", ".join(x.dtype.name for x in values))
        axis = _static_ints(axis, "axis")[0]
        ranks = {v.shape.ndims for v in values} - {None}
        if len(ranks) > 1:
            raise ValueError("Shape must be rank %d but is rank %d for '{{node %s}}'"
                             % (min(ranks), max(ranks), scope[:-1]))
        if ranks:
            rank = ranks.pop()
            if not -rank <= axis < rank:
                raise ValueError("Shape must be at least rank %d but is rank %d for '{{node "
                                 "%s}}'" % (axis + 1, rank, scope[:-1]))
            axis %= rank
            out = None
            for v in values:
                dims = v.shape.as_list() if v.shape.ndims is not None else [None] * rank
                if out is None:
                    out = list(dims)
                    continue
                for i in range(rank):
                    if i == axis:
                        out[i] = None if out[i] is None or dims[i] is None else out[i] + dims[i]
                    elif out[i] is not None and dims[i] is not None and out[i] != dims[i]:
                        # TF compares the shapes without the concat axis.
                        j = i if i < axis else i - 1
                        raise ValueError("Dimension %d in both shapes must be equal, but are "
                                         "%d and %d. Shapes are [%s] and [%s]. for '{{node "
                                         "%s}}'" % (
                                             j, out[i], dims[i],
                                             ",".join("?" if d is None else str(d) for k, d
                                                      in enumerate(out) if k != axis),
                                             ",".join("?" if d is None else str(d) for k, d
                                                      in enumerate(dims) if k != axis),
                                             scope[:-1]))
                    elif out[i] is None:
                        out[i] = dims[i]
            shape = TensorShape(out)
        else:
            shape = TensorShape(None)
        axis_t = constant(np.int32(axis), name="axis")
        op = make_op(CONCAT_V2, values + [axis_t], [dt], [shape], name=scope,
                     attrs={"T": dt, "N": len(values), "axis": axis})
    return op.outputs[0]


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value``; ``dims`` may be computed
    in the graph (``tf.fill(tf.shape(x), 1.0)``)."""
    with name_scope(name, "Fill", [value]) as scope:
        run_time = _run_time_shape(dims, "dims")
        if run_time is not None:
            dims_t, known = run_time
            shape = TensorShape(known)
        else:
            static = _static_ints(dims, "dims")
            # A constant tensor is its own dims input, as in TF.
            dims_t = dims if isinstance(dims, Tensor) else constant(
                np.array(static, dtype=np.int32), name="dims")
            shape = TensorShape(static)
        v = convert_to_tensor(value, name="value")
        op = make_op(FILL, [dims_t, v], [v.dtype.base_dtype], [shape],
                     name=scope, attrs={"T": v.dtype.base_dtype})
    return op.outputs[0]


def _filled(kind, shape, dtype, name):
    """``zeros``/``ones``: a constant when the shape is static, else a Fill (as TF)."""
    dtype = dtypes.as_dtype(dtype)
    value = 0 if kind == "zeros" else 1
    with name_scope(name, kind, []) as scope:
        run_time = _run_time_shape(shape, "shape")
        if run_time is not None:
            zero_or_one = constant(value if dtype != dtypes.string else b"", dtype=dtype)
            return fill(run_time[0], zero_or_one, name=scope)
        dims = _static_ints(shape, "shape")
        if dtype == dtypes.string:
            return constant(b"", dtype=dtype, shape=dims, name=scope)
        return constant(value, dtype=dtype, shape=dims, name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    return _filled("zeros", shape, dtype, name)


def ones(shape, dtype=dtypes.float32, name=None):
    return _filled("ones", shape, dtype, name)


def _like(row, tensor, dtype, name):
    x = convert_to_tensor(tensor)
    dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else x.dtype.base_dtype
    with name_scope(name, row.name.replace("Like", "s_like").lower(), [x]) as scope:
        op = make_op(row, [x], [dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "dtype": dtype})
    return op.outputs[0]


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    return _like(ZEROS_LIKE, tensor, dtype, name)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    return _like(ONES_LIKE, tensor, dtype, name)


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    rank = x.shape.ndims
    op = make_op(SHAPE, [x], [out_type], [TensorShape([rank])], name=name or "Shape",
                 attrs={"T": x.dtype.base_dtype, "out_type": out_type})
    return op.outputs[0]


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    op = make_op(SIZE, [x], [out_type], [TensorShape([])], name=name or "Size",
                 attrs={"T": x.dtype.base_dtype, "out_type": out_type})
    return op.outputs[0]


def rank(input, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    op = make_op(RANK, [x], [dtypes.int32], [TensorShape([])], name=name or "Rank",
                 attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = axis if axis is not None else dim
    x = convert_to_tensor(input)
    if x.shape.ndims is None:
        raise ValueError("minitf needs the rank of %s for expand_dims." % x.name)
    dims = x.shape.as_list()
    axis = int(axis)
    if axis < 0:
        axis += len(dims) + 1
    return reshape(x, [(-1 if d is None else d) for d in dims[:axis]] + [1] +
                   [(-1 if d is None else d) for d in dims[axis:]], name=name or "ExpandDims")


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = axis if axis is not None else squeeze_dims
    x = convert_to_tensor(input)
    dims = x.shape.as_list()
    if axis is None:
        keep = [d for d in dims if d != 1]
    else:
        axes = {a % len(dims) for a in np.atleast_1d(axis).tolist()}
        for a in axes:
            if dims[a] != 1:
                raise ValueError("Can not squeeze dim[%d], expected a dimension of 1, got %s"
                                 % (a, dims[a]))
        keep = [d for i, d in enumerate(dims) if i not in axes]
    return reshape(x, [(-1 if d is None else d) for d in keep], name=name or "Squeeze")


def where(condition, x=None, y=None, name=None):
    """``tf.where(cond, x, y)``: elementwise choice (TF1 ``Select``)."""
    if x is None and y is None:
        c = convert_to_tensor(condition, name="condition")
        rank_ = c.shape.ndims
        op = make_op(WHERE, [c], [dtypes.int64], [TensorShape([None, rank_])],
                     name=name or "Where", attrs={"T": c.dtype.base_dtype})
        return op.outputs[0]
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "Select", [condition, x, y]) as scope:
        c = convert_to_tensor(condition, name="condition")
        if c.dtype.base_dtype != dtypes.bool:
            raise TypeError("Input 'condition' of 'Select' Op has type %s that does not "
                            "match expected type of bool." % c.dtype.name)
        x, y = binary_inputs(SELECT.name, x, y)
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (x.shape, y.shape))
        shape = x.shape.merge_with(y.shape)
        if c.shape.ndims not in (None, 0) and shape.ndims is not None and \
                c.shape.ndims != 1 and not c.shape.is_compatible_with(shape):
            raise ValueError("Shapes must be equal rank, but are %s and %s for '{{node %s}}'"
                             % (c.shape.ndims, shape.ndims, scope[:-1]))
        op = make_op(SELECT, [c, x, y], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def _slice_spec(key):
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _getitem(tensor, key):
    """``t[1]``, ``t[:, 0]``, ``t[1:3]``: basic indexing with ints, slices,
    ``None`` (new axis) and ``...``; computed by a ``StridedSlice`` op."""
    spec = []
    for k in _slice_spec(key):
        if isinstance(k, slice):
            spec.append(("slice", k.start, k.stop, k.step))
        elif k is Ellipsis:
            spec.append(("ellipsis",))
        elif k is None:
            spec.append(("newaxis",))
        elif isinstance(k, (int, np.integer)):
            spec.append(("index", int(k)))
        else:
            raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis "
                            "(`None`) are valid indices in minitf, got %r" % (k,))
    x = tensor
    if x.shape.ndims is None:
        raise ValueError("minitf needs the rank of %s to index it." % x.name)
    # Work out the static output shape with a dummy array of that shape.
    dims = [d if d is not None else 2 for d in x.shape.as_list()]
    probe = np.empty(dims, dtype=np.int8)
    np_key = tuple(slice(*s[1:]) if s[0] == "slice" else Ellipsis if s[0] == "ellipsis"
                   else None if s[0] == "newaxis" else s[1] for s in spec)
    try:
        out_shape = probe[np_key].shape
    except IndexError as e:
        raise ValueError("slice index out of bounds for %s: %s" % (x.name, e)) from None
    if None in x.shape.as_list():
        out_shape = [None] * len(out_shape)  # conservative when inputs are partly unknown
    with name_scope(None, "strided_slice", [x]) as scope:
        op = make_op(STRIDED_SLICE, [x], [x.dtype.base_dtype], [TensorShape(out_shape)],
                     name=scope, attrs={"T": x.dtype.base_dtype, "spec": spec})
    return op.outputs[0]


Tensor.__getitem__ = _getitem


def _iterate(tensor):
    """``a, b = t``: the slices of ``t`` along its first dimension (an Unpack)."""
    shape = tensor.shape
    if shape.ndims is None or shape[0].value is None:
        raise TypeError("Tensor objects are only iterable when the first dimension "
                        "is known: %s" % tensor)
    return iter(unstack(tensor))


Tensor.__iter__ = _iterate


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``indices`` as one-hot vectors of length ``depth`` along a new last axis
    (or ``axis``): ``one_hot([2, 0], 3)`` is ``[[0, 0, 1], [1, 0, 0]]``. An index
    outside ``[0, depth)`` gives an all-``off_value`` vector, as in TF."""
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        indices = convert_to_tensor(indices, name="indices")
        if indices.dtype.base_dtype not in (dtypes.uint8, dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'indices' has DataType %s not in list "
                            "of allowed values: uint8, int32, int64" % indices.dtype.name)
        given = [v for v in (on_value, off_value) if v is not None]
        dt = dtypes.as_dtype(dtype).base_dtype if dtype is not None else (
            convert_to_tensor(given[0]).dtype.base_dtype if given else dtypes.float32)
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=dt, name="on_value")
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=dt,
                                name="off_value")
        depth_t = convert_to_tensor(depth, dtype=dtypes.int32, name="depth")
        d = int(depth_t.op.get_attr("value")) if depth_t.op.op_def is CONST else None
        axis = -1 if axis is None else int(axis)
        if indices.shape.ndims is not None:
            dims = indices.shape.as_list()
            if not -1 <= axis <= len(dims):
                raise ValueError("Expected axis to be -1 or between [0, %d).  But received: "
                                 "%d for '{{node %s}}'" % (len(dims) + 1, axis, scope[:-1]))
            dims.insert(len(dims) if axis == -1 else axis, d)
            shape = TensorShape(dims)
        else:
            shape = TensorShape(None)
        op = make_op(ONE_HOT, [indices, depth_t, on, off], [dt], [shape], name=scope,
                     attrs={"T": dt, "TI": indices.dtype.base_dtype, "axis": axis})
    return op.outputs[0]


def tile(input, multiples, name=None):  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along each axis ``i``."""
    with name_scope(name, "Tile", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        run_time = _run_time_shape(multiples, "multiples")
        if run_time is not None:      # multiples computed in the graph
            reps_t, known = run_time
            shape = TensorShape(None) if known is None or x.shape.ndims is None else \
                TensorShape([None if d is None or r is None else d * r
                             for d, r in zip(x.shape.as_list(), known)])
            return make_op(TILE, [x, reps_t], [x.dtype.base_dtype], [shape], name=scope,
                           attrs={"T": x.dtype.base_dtype}).outputs[0]
        reps = _static_ints(multiples, "multiples")
        if x.shape.ndims is not None and len(reps) != x.shape.ndims:
            raise ValueError("Shape must be rank %d but is rank %d for '{{node %s}} = Tile["
                             "T=%s, Tmultiples=DT_INT32]' with input shapes: %s, [%d]."
                             % (x.shape.ndims, len(reps), scope[:-1], dt_enum_name(x.dtype),
                                shape_str(x.shape), len(reps)))
        if any(r < 0 for r in reps):
            raise ValueError("Expected multiples[i] >= 0, but got %s" % reps)
        shape = TensorShape(None) if x.shape.ndims is None else TensorShape(
            [None if d is None else d * r for d, r in zip(x.shape.as_list(), reps)])
        reps_t = constant(np.array(reps, dtype=np.int32), name="multiples")
        op = make_op(TILE, [x, reps_t], [x.dtype.base_dtype], [shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """``value`` cut along ``axis`` into ``num_or_size_splits`` equal parts, or
    into parts of the listed sizes (one size may be -1: the rest)."""
    with name_scope(name, "split", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        axis = _static_ints(axis, "axis")[0]
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("minitf's split needs the rank of %s" % x.name)
        if not -rank <= axis < rank:
            raise ValueError("axis = %d not in [%d, %d)" % (axis, -rank, rank))
        axis %= rank
        n = x.shape[axis].value
        if isinstance(num_or_size_splits, int):
            parts = num_or_size_splits
            if n is not None and (parts <= 0 or n % parts):
                raise ValueError("Dimension size must be evenly divisible by %d but is %d\n"
                                 "\tNumber of ways to split should evenly divide the split "
                                 "dimension for '{{node %s}}'" % (parts, n, scope[:-1]))
            sizes = [None if n is None else n // parts] * parts
        else:
            sizes = _static_ints(num_or_size_splits, "num_or_size_splits")
            if sizes.count(-1) > 1:
                raise ValueError("Cannot infer more than one split size")
            if -1 in sizes and n is not None:
                sizes[sizes.index(-1)] = n - sum(s for s in sizes if s != -1)
            if n is not None and (sum(sizes) != n or min(sizes) < 0):
                raise ValueError("can't split axis of size %d into pieces of size [%s] for "
                                 "'{{node %s}}'" % (n, ",".join(str(v) for v in
                                                              _static_ints(num_or_size_splits,
                                                                           "sizes")),
                                                    scope[:-1]))
        dims = x.shape.as_list()
        shapes = [TensorShape(dims[:axis] + [None if s in (None, -1) else s]
                              + dims[axis + 1:]) for s in sizes]
        equal = isinstance(num_or_size_splits, int)
        op = make_op(SPLIT if equal else SPLIT_V, [x], [x.dtype.base_dtype] * len(sizes),
                     shapes, name=scope,
                     attrs={"T": x.dtype.base_dtype, "axis": axis,
                            "sizes": [-1 if s is None else s for s in sizes],
                            "num_split": len(sizes)})
    return list(op.outputs)


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """``[start, start+delta, ...)`` up to ``limit`` (``range(n)``: 0..n-1)."""
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", []) as scope:
        vals = [start, limit, delta]
        if dtype is None:
            kinds = [v.dtype.base_dtype if hasattr(v, "dtype") else None for v in vals]
            dt = dtypes.int32
            for v, k in zip(vals, kinds):
                if (k is not None and k.is_floating) or isinstance(v, float):
                    dt = k if k is not None and k.is_floating else dtypes.float32
                elif k is not None and k.name == "int64" and dt.name == "int32":
                    dt = k
        else:
            dt = dtypes.as_dtype(dtype)
        ts = [convert_to_tensor(v, dtype=dt, name=n)
              for v, n in zip(vals, ("start", "limit", "delta"))]
        size = None
        if all(t.op.op_def is CONST for t in ts):
            s, lim, d = (t.op.get_attr("value").item() for t in ts)
            if d != 0:
                size = max(0, int(np.ceil((lim - s) / d)))
        return make_op(RANGE, ts, [dt], [TensorShape([size])], name=scope,
                       attrs={"Tidx": dt}).outputs[0]


def gather(params, indices, axis=0, name=None):
    """The slices ``params[indices]`` along ``axis``."""
    with name_scope(name, "GatherV2", []) as scope:
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        axis_t = convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
        if params.shape.ndims is not None and indices.shape.ndims is not None:
            p = params.shape.as_list()
            shape = TensorShape(p[:axis] + indices.shape.as_list() + p[axis + 1:])
        else:
            shape = TensorShape(None)
        return make_op(GATHER_V2, [params, indices, axis_t], [params.dtype.base_dtype],
                       [shape], name=scope, attrs={"Tparams": params.dtype.base_dtype,
                                                   "Tindices": indices.dtype.base_dtype}
                       ).outputs[0]


# ======================================================= ReverseV2 / ReverseSequence ===
def _reverse_kernel(op, backend):
    def compute(ctx, inputs):
        x, axes = inputs
        axes = [int(a) % max(x.ndim, 1) for a in np.asarray(axes).reshape(-1)]
        return [np.ascontiguousarray(np.flip(x, axis=tuple(axes))) if axes else x]
    return compute


def _reverse_grad(op, grad):
    return reverse(grad, op.inputs[1]), None


REVERSE_V2 = declare(OpDef("ReverseV2", inputs=("tensor", "axis"), attrs=("T", "Tidx"),
                           gradient=_reverse_grad, devices=EVERY_DEVICE,
                           kernel=_reverse_kernel, host_memory_inputs=(1,)))


def reverse(tensor, axis, name=None):
    """``tensor`` with the order of its elements along each of ``axis`` reversed."""
    x = convert_to_tensor(tensor, name="tensor")
    axis = convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
    return make_op(REVERSE_V2, [x, axis], [x.dtype.base_dtype], [x.shape],
                   name=name or "ReverseV2",
                   attrs={"T": x.dtype.base_dtype, "Tidx": axis.dtype.base_dtype}).outputs[0]


def _reverse_sequence_kernel(op, backend):
    seq_dim, batch_dim = op.get_attr("seq_dim"), op.get_attr("batch_dim")

    def compute(ctx, inputs):
        x, lengths = inputs[0], np.asarray(inputs[1])
        if lengths.shape != (x.shape[batch_dim],):
            raise errors.InvalidArgumentError(
                None, None, "Length of seq_lengths != input.dims(%d), (%d vs. %d)"
                % (batch_dim, lengths.size, x.shape[batch_dim]))
        if (lengths > x.shape[seq_dim]).any():
            raise errors.InvalidArgumentError(
                None, None, "seq_lens(%d) > input.dims(%d)" % (int(lengths.max()), seq_dim))
        out = x.copy()
        for b, n in enumerate(lengths):
            src = [slice(None)] * x.ndim
            src[batch_dim], src[seq_dim] = b, slice(int(n) - 1, None, -1) if n else slice(0, 0)
            dst = [slice(None)] * x.ndim
            dst[batch_dim], dst[seq_dim] = b, slice(0, int(n))
            out[tuple(dst)] = x[tuple(src)]
        return [out]
    return compute


def _reverse_sequence_grad(op, grad):
    return (reverse_sequence(grad, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                             batch_axis=op.get_attr("batch_dim")), None)


REVERSE_SEQUENCE = declare(OpDef(
    "ReverseSequence", inputs=("input", "seq_lengths"),
    attrs=("seq_dim", "batch_dim", "T", "Tlen"), gradient=_reverse_sequence_grad,
    kernel=_reverse_sequence_kernel))


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """Reverse the first ``seq_lengths[b]`` elements along ``seq_axis`` of each
    batch entry ``b`` (the rest stays in place): a padded batch of sequences,
    each read backwards (``bidirectional_dynamic_rnn``'s backward direction)."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    x = convert_to_tensor(input, name="input")
    lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
    return make_op(REVERSE_SEQUENCE, [x, lengths], [x.dtype.base_dtype], [x.shape],
                   name=name or "ReverseSequence",
                   attrs={"seq_dim": int(seq_axis), "batch_dim": int(batch_axis),
                          "T": x.dtype.base_dtype, "Tlen": lengths.dtype.base_dtype}
                   ).outputs[0]


def gather_nd(params, indices, name=None, batch_dims=0):
    """``params`` indexed by each row of ``indices``: ``gather_nd(x, [[0, 1]])`` is
    ``[x[0, 1]]``; a row shorter than x's rank picks a slice."""
    if batch_dims:
        raise errors.UnimplementedError(None, None, "minitf's gather_nd supports batch_dims=0 "
                                        "only (got %d)" % batch_dims)
    with name_scope(name, "GatherNd", [params, indices]) as scope:
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        if indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'indices' has DataType %s not in list "
                            "of allowed values: int32, int64" % indices.dtype.name)
        ishape, pshape = indices.shape, params.shape
        shape_ = TensorShape(None)
        if ishape.ndims is not None and ishape.ndims >= 1 and ishape[-1].value is not None \
                and pshape.ndims is not None:
            r = ishape[-1].value
            if r > pshape.ndims:
                raise ValueError("indices.shape[-1] must be <= params.rank, but saw indices "
                                 "shape: %s  and params shape: %s for '{{node %s}}'"
                                 % (shape_str(ishape), shape_str(pshape), scope[:-1]))
            shape_ = TensorShape(ishape.as_list()[:-1] + pshape.as_list()[r:])
        op = make_op(GATHER_ND, [params, indices], [params.dtype.base_dtype], [shape_],
                     name=scope, attrs={"Tparams": params.dtype.base_dtype,
                                        "Tindices": indices.dtype.base_dtype})
    return op.outputs[0]


def scatter_nd(indices, updates, shape, name=None):  # noqa: A002  (TF's argument name)
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (the
    inverse of ``gather_nd``; repeated indices add up)."""
    with name_scope(name, "ScatterNd", [indices, updates]) as scope:
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, name="updates")
        if indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'indices' has DataType %s not in list "
                            "of allowed values: int32, int64" % indices.dtype.name)
        shape_t = convert_to_tensor(shape, dtype=indices.dtype.base_dtype, name="shape")
        out = TensorShape(None)
        if shape_t.op.op_def is CONST:
            out = TensorShape([int(d) for d in np.asarray(shape_t.op.get_attr("value"))])
        elif shape_t.shape.ndims == 1 and shape_t.shape[0].value is not None:
            out = TensorShape([None] * shape_t.shape[0].value)
        op = make_op(SCATTER_ND, [indices, updates, shape_t], [updates.dtype.base_dtype], [out],
                     name=scope, attrs={"T": updates.dtype.base_dtype,
                                        "Tindices": indices.dtype.base_dtype})
    return op.outputs[0]


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries (rows, slices) of ``tensor`` where ``mask`` is True; ``mask``
    covers dimensions ``axis .. axis + mask.rank`` of ``tensor``, which become one
    dimension of unknown size. As TF builds it: a reshape, ``Where`` on the mask,
    and a gather."""
    with name_scope(name, "boolean_mask", [tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        m = mask.shape.ndims
        if m == 0:
            raise ValueError("mask cannot be scalar.")
        if m is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        axis = 0 if axis is None else int(axis)
        if tensor.shape.ndims is None:
            raise ValueError("minitf's boolean_mask needs the rank of %s" % tensor.name)
        dims = tensor.shape.as_list()
        covered = TensorShape(dims[axis:axis + m])
        if not covered.is_compatible_with(mask.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (covered, mask.shape))
        if None not in dims[:axis] + dims[axis + m:]:
            lead = covered.num_elements()
            tensor = reshape(tensor, dims[:axis] + [-1 if lead is None else lead] +
                             dims[axis + m:])
        else:
            full = shape(tensor)
            lead = reduction_ops.reduce_prod(full[axis:axis + m], keepdims=True)
            tensor = reshape(tensor, concat([full[:axis], lead, full[axis + m:]], 0))
        indices = reshape(where(reshape(mask, [-1])), [-1])
        return gather(tensor, indices, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """``mask[i, j] = j < lengths[i]``: which of ``maxlen`` steps each sequence has
    (``maxlen`` defaults to the longest length)."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = reduction_ops.reduce_max(lengths)
            maxlen = math_ops.maximum(constant(0, dtype=maxlen.dtype.base_dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen, name="maxlen")
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("maxlen must be scalar for sequence_mask")
        dt = maxlen.dtype.base_dtype
        row = range_(constant(0, dtype=dt), maxlen, constant(1, dtype=dt))
        matrix = math_ops.cast(expand_dims(lengths, -1), dt)
        result = math_ops.less(row, matrix)
        dtype = dtypes.as_dtype(dtype)
        return result if dtype == dtypes.bool else math_ops.cast(result, dtype)
