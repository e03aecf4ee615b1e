"""Math ops: elementwise arithmetic, comparisons, casts, ``add_n`` and matmul.

Each op is declared here once, as a row of the op table (see
``minitf/framework/op_def.py``): what one element is, the dtypes each device
runs, the numpy reference, the fusion template, the gradient. The ``tf.*``
function next to the row checks dtypes and infers the output's static shape
*now*, at build time, so that ``tf.matmul`` of a [2, 3] and a [2, 3] matrix
fails on the line that wrote it (ValueError), not later inside ``sess.run``.

This module also gives :class:`Tensor` its Python operators: ``a + b`` is
``add`` in a name scope called ``add``, exactly as TF names it.

Reductions (``tf.reduce_sum``...) are in ``reduction_ops.py``.
"""

import math

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.graph import Tensor
from minitf.framework.op_def import BACKEND, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, reduction_ops
from minitf.ops.core import (FLOAT_TYPES, NUMBER_TYPES, binary_inputs, broadcast_static_shape,
                             check_dtype, convert_to_tensor, dt_enum_name, make_op,
                             name_scope, shape_str)
from minitf.ops.elementwise import (BIG, FLOAT_NAMES, NUMBER_NAMES, binary_kernel, binary_op,
                                    dims_text, unary_op)

_F = ("f",)


# -- gradient helpers ---------------------------------------------------------------------------
def _static(shape):
    return shape.as_list() if shape.is_fully_defined() else None


def unbroadcast(grad, x):
    """Sum ``grad`` over the axes along which ``x`` was broadcast, so the
    result has ``x``'s shape: every copy of ``x`` received a share of the
    gradient (``x + y`` with ``x`` of shape [3] and ``y`` of shape [2, 3] gives
    ``dL/dx = sum over axis 0 of dL/dz``)."""
    if grad is None:
        return None
    xd, gd = _static(x.shape), grad.shape.as_tuple_or_none()
    if xd is not None and gd is not None:
        lead = len(gd) - len(xd)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(xd)
                                    if d == 1 and gd[lead + i] != 1]
        if not axes and list(gd) == xd:
            return grad
        reduced = reduction_ops.reduce_sum(grad, axes) if axes else grad
        if reduced.shape.as_tuple_or_none() == tuple(xd):
            return reduced
        return array_ops.reshape(reduced, xd)
    # Shapes only known at run time: a kernel sums to the runtime shape of x.
    return array_ops.sum_to_shape(grad, array_ops.shape(x), x.shape)


# =================================================================== unary ops ===
# Each op: the scalar function(s) numba compiles, a CUDA-safe version where the
# simulator (which runs CUDA kernels as Python) would raise, the gradient, the row.

def _neg(x):
    return -x


def _neg_grad(op, grad):
    return [-grad]


NEG = unary_op("Neg", _neg, np.negative, fusion="-{x}", gradient=_neg_grad)


# (Not Python's ``abs``: in this module that name is ``tf.abs``, below.)
def _abs_int(x):
    return -x if x < 0 else x


def _abs_float(x):
    return math.fabs(x)


def _abs_grad(op, grad):
    return [grad * sign(op.inputs[0])]


ABS = unary_op("Abs", {"i": _abs_int, "f": _abs_float}, np.abs, fusion="abs({x})",
               gradient=_abs_grad)


def _square(x):
    return x * x


def _square_grad(op, grad):
    return [grad * (2.0 * op.inputs[0])]


SQUARE = unary_op("Square", _square, np.square, fusion="{x} * {x}", gradient=_square_grad)


def _sqrt(x):
    return math.sqrt(x)


def _sqrt_cuda(x):
    return math.sqrt(x) if x >= 0 else math.nan


def _sqrt_grad(op, grad):
    return [grad * 0.5 / op.outputs[0]]


SQRT = unary_op("Sqrt", {"f": _sqrt}, np.sqrt, cpu=FLOAT_NAMES, cuda=_sqrt_cuda,
                fusion="np.sqrt({x})", gradient=_sqrt_grad, domain=[(0.125, 10)])


def _rsqrt(x):
    return 1.0 / math.sqrt(x)


def _rsqrt_cuda(x):
    if x == 0:
        return math.copysign(math.inf, x)
    return 1.0 / math.sqrt(x) if x >= 0 else math.nan


def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return [grad * (-0.5) * y * y * y]


RSQRT = unary_op("Rsqrt", {"f": _rsqrt}, lambda x: np.reciprocal(np.sqrt(x)), cpu=FLOAT_NAMES,
                 cuda=_rsqrt_cuda, fusion="one / np.sqrt({x})", gradient=_rsqrt_grad,
                 domain=[(0.125, 10)])


# Exp, Log, Tanh and Sigmoid: on the CPU their float kernels are the
# vectorizable routines of minitf/kernels/cpu/vector_math.py (range reduction,
# a polynomial, the exponent written into the float's bits); the functions
# below are the definitions the CUDA kernels compile.

def _exp(x):
    if x > 709.0:
        return math.inf
    return math.exp(x)


def _exp_grad(op, grad):
    return [grad * op.outputs[0]]


EXP = unary_op("Exp", {"f": _exp}, np.exp, cpu=FLOAT_NAMES, vector_math="exp",
               fusion="exp_({x})", gradient=_exp_grad)


def _log(x):
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def _log_grad(op, grad):
    return [grad / op.inputs[0]]


LOG = unary_op("Log", {"f": _log}, np.log, cpu=FLOAT_NAMES, vector_math="log",
               fusion="log_({x})", gradient=_log_grad, domain=[(0.125, 10)])


def _sigmoid(x):
    if x < -700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def _sigmoid_reference(x):
    return np.reciprocal(1 + np.exp(-x))


def _sigmoid_grad(op, grad):
    y = op.outputs[0]
    return [grad * y * (1.0 - y)]


SIGMOID = unary_op("Sigmoid", {"f": _sigmoid}, _sigmoid_reference, cpu=FLOAT_NAMES,
                   vector_math="sigmoid", fusion="sigmoid_({x})", gradient=_sigmoid_grad)


def _tanh(x):
    return math.tanh(x)


def _tanh_grad(op, grad):
    y = op.outputs[0]
    return [grad * (1.0 - y * y)]


TANH = unary_op("Tanh", {"f": _tanh}, np.tanh, cpu=FLOAT_NAMES, vector_math="tanh",
                fusion="tanh_({x})", gradient=_tanh_grad)


def _sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return x  # 0, -0.0 or NaN


def _sign_cuda(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x


def _sign_grad(op, grad):
    return [array_ops.zeros_like(op.inputs[0])]


SIGN = unary_op("Sign", _sign, np.sign, cuda=_sign_cuda, gradient=_sign_grad)


def _reciprocal(x):
    return 1.0 / x


def _reciprocal_cuda(x):
    return 1.0 / x if x != 0 else math.copysign(math.inf, x)


def _reciprocal_grad(op, grad):
    y = op.outputs[0]
    return [-grad * y * y]


RECIPROCAL = unary_op("Reciprocal", {"f": _reciprocal}, np.reciprocal, cpu=FLOAT_NAMES,
                      cuda=_reciprocal_cuda, fusion="one / {x}", gradient=_reciprocal_grad,
                      domain=[(0.125, 10)])


def _floor(x):
    return np.floor(x)        # math.floor would return a Python int


def _floor_cuda(x):
    if x != x or math.isinf(x):   # (math.floor(inf) raises in the simulator)
        return x
    return math.floor(x)


FLOOR = unary_op("Floor", {"f": _floor}, np.floor, cpu=FLOAT_NAMES, cuda=_floor_cuda,
                 gradient=NOT_DIFFERENTIABLE)


def _ceil(x):
    return np.ceil(x)


def _ceil_cuda(x):
    if x != x or math.isinf(x):
        return x
    return math.ceil(x)


CEIL = unary_op("Ceil", {"f": _ceil}, np.ceil, cpu=FLOAT_NAMES, cuda=_ceil_cuda,
                gradient=NOT_DIFFERENTIABLE)


def _round(x):
    return np.rint(x)         # TF's Round is banker's rounding: 2.5 -> 2


def _round_cuda(x):
    if x != x or math.isinf(x):
        return x
    f = math.floor(x)
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 != 0):
        return f + 1
    return f


ROUND = unary_op("Round", {"f": _round}, np.rint, cpu=FLOAT_NAMES, cuda=_round_cuda,
                 gradient=NOT_DIFFERENTIABLE)


def _logical_not(x):
    return not x


LOGICAL_NOT = unary_op("LogicalNot", {"b": _logical_not}, np.logical_not, cpu=("bool",),
                       gpu=(), gradient=NOT_DIFFERENTIABLE)


# ================================================================== binary ops ===

def _add(x, y):
    return x + y


def _add_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad, y)


def _strings_or(kernel):
    """AddV2, Equal and NotEqual also take strings (concatenation, comparison)."""
    def string_aware(op, backend):
        if op.get_attr("T").name != "string":
            return kernel(op, backend)
        if op.type == ADD_V2.name:
            return lambda ctx, inputs: [np.asarray(np.char.add(
                inputs[0].astype(bytes), inputs[1].astype(bytes)).astype(object))]
        flip = op.type == NOT_EQUAL.name
        return lambda ctx, inputs: [np.asarray((inputs[0] == inputs[1]) != flip, dtype=bool)]
    return string_aware


ADD_V2 = binary_op("AddV2", _add, np.add, cpu=NUMBER_NAMES + ("string",),
                   kernel=_strings_or(binary_kernel()), fusion="{x} + {y}",
                   gradient=_add_grad)


def _sub(x, y):
    return x - y


def _sub_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(-grad, y)


SUB = binary_op("Sub", _sub, np.subtract, fusion="{x} - {y}", gradient=_sub_grad)


def _mul(x, y):
    return x * y


def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad * y, x), unbroadcast(x * grad, y)


MUL = binary_op("Mul", _mul, np.multiply, fusion="{x} * {y}", gradient=_mul_grad)


def _check_int_divisor(op, x, y):
    if x.dtype.kind in "iu" and not y.all():
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


def _trunc_div(x, y):
    """Integer division rounding toward zero (C, TF), from numpy's floor division."""
    q = np.floor_divide(x, y)
    return q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)


def _real_div(x, y):
    return x / y


def _truncate_div_int(x, y):
    # Integer RealDiv rounds toward zero, as C does. The kernel has already
    # rejected y == 0. y == -1 is special-cased: MIN_INT // -1 overflows.
    if y == -1:
        return -x
    q = x // y
    if q < 0 and q * y != x:
        q += 1
    return q


def _div_cuda(x, y):
    # Real CUDA divides by zero quietly (inf/NaN); spelled out so that the
    # simulator, which runs this in Python, gives the same answer.
    if y == 0:
        if x == 0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _div_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad / y, x), unbroadcast(-grad * x / (y * y), y)


REAL_DIV = binary_op(
    "RealDiv", {"f": _real_div, "i": _truncate_div_int},
    lambda x, y: np.true_divide(x, y) if x.dtype.kind == "f" else _trunc_div(x, y),
    cuda=_div_cuda, check=_check_int_divisor, fusion="{x} / {y}", gradient=_div_grad,
    domain=[(-10, 10), (1, 10)])


def _floor_div_float(x, y):
    return np.floor(x / y)     # TF: floor(x / y), so 1 // 0.1 == 10, not 9


def _floor_div_int(x, y):
    if y == -1:
        return -x
    return x // y


def _floor_div_cuda(x, y):
    q = _div_cuda(x, y)
    if q != q or math.isinf(q):
        return q
    return math.floor(q)


FLOOR_DIV = binary_op(
    "FloorDiv", {"f": _floor_div_float, "i": _floor_div_int},
    lambda x, y: np.floor(x / y) if x.dtype.kind == "f" else np.floor_divide(x, y),
    cuda=_floor_div_cuda, check=_check_int_divisor, gradient=NOT_DIFFERENTIABLE,
    domain=[(-10, 10), (1, 10)])


def _floor_mod_float(x, y):
    # TF: the remainder of truncated division, moved into the divisor's sign.
    r = np.fmod(x, y)
    if r != 0 and (r < 0) != (y < 0):
        r += y
    return r


def _floor_mod_int(x, y):
    if y == -1:
        return x * 0
    return x % y


def _floor_mod_cuda(x, y):
    if y == 0 or x != x or y != y or math.isinf(x):
        return math.nan
    r = math.fmod(x, y)
    if r != 0 and (r < 0) != (y < 0):
        r += y
    return r


def _tf_floor_mod(x, y):
    r = np.fmod(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


def _floor_mod_grad(op, grad):
    """``x mod y = x - floor(x / y) * y``: ``d/dx = 1``, ``d/dy = -floor(x / y)``."""
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad * negative(floordiv(x, y)), y)


FLOOR_MOD = binary_op(
    "FloorMod", {"f": _floor_mod_float, "i": _floor_mod_int},
    lambda x, y: _tf_floor_mod(x, y) if x.dtype.kind == "f" else np.remainder(x, y),
    cuda=_floor_mod_cuda, check=_check_int_divisor, gradient=_floor_mod_grad,
    domain=[(-10, 10), (1, 10)])


def _truncate_div_float(x, y):
    return np.trunc(x / y)


def _truncate_div_cuda(x, y):
    q = _div_cuda(x, y)
    if q != q or math.isinf(q):
        return q
    return math.floor(q) if q >= 0 else math.ceil(q)


def _check_truncate_divisor(op, x, y):
    # TF's TruncateDiv/TruncateMod kernels report an integer division by zero
    # as an InternalError with this text (FloorDiv/FloorMod: InvalidArgumentError).
    if x.dtype.kind in "iu" and not y.all():
        raise errors.InternalError(None, None, "Unexpected error in binary operator (only "
                                   "integer div and mod should have errors)")


#: Division that rounds toward zero (C's ``/``): -7 / 2 is -3, where FloorDiv gives -4.
TRUNCATE_DIV = binary_op(
    "TruncateDiv", {"f": _truncate_div_float, "i": _truncate_div_int},
    lambda x, y: np.trunc(x / y) if x.dtype.kind == "f" else _trunc_div(x, y),
    gpu=("float16", "float32", "float64"), cuda=_truncate_div_cuda,
    check=_check_truncate_divisor, gradient=NOT_DIFFERENTIABLE, domain=[(-10, 10), (1, 10)])


def _truncate_mod_float(x, y):
    return np.fmod(x, y)


def _truncate_mod_int(x, y):
    if y == -1:
        return x * 0
    r = x % y
    if r != 0 and (x < 0) != (y < 0):
        r -= y
    return r


def _truncate_mod_reference(x, y):
    return np.fmod(x, y)


#: The remainder of TruncateDiv: it has the sign of ``x`` (C's ``%``, ``fmod``).
#: TF has no gradient for it.
TRUNCATE_MOD = binary_op(
    "TruncateMod", {"f": _truncate_mod_float, "i": _truncate_mod_int},
    _truncate_mod_reference, cpu=("int32", "int64", "float32", "float64"), gpu=(),
    check=_check_truncate_divisor, domain=[(-10, 10), (1, 10)])


def _div_no_nan(x, y):
    if y == 0:
        return x * 0.0
    return x / y


def _div_no_nan_reference(x, y):
    with np.errstate(all="ignore"):
        return np.where(y == 0, np.zeros((), x.dtype), np.true_divide(x, y))


def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    return (unbroadcast(div_no_nan(grad, y), x),
            unbroadcast(grad * div_no_nan(div_no_nan(-x, y), y), y))


#: ``x / y``, but 0 where ``y`` is 0 (even when ``x`` is 0 or NaN): the
#: safe division that metrics use for "correct / total" before any example.
DIV_NO_NAN = binary_op("DivNoNan", {"f": _div_no_nan}, _div_no_nan_reference,
                       cpu=FLOAT_NAMES, gradient=_div_no_nan_grad, domain=[(-10, 10), (0, 3)])


def _pow(x, y):
    return x ** y


def _pow_cuda(x, y):
    if x == 0 and y < 0:
        return math.inf
    if x < 0 and y != math.floor(y):
        return math.nan
    return x ** y


def _check_int_exponent(op, x, y):
    if x.dtype.kind in "iu" and y.size and y.min() < 0:
        raise errors.InvalidArgumentError(
            None, None, "Integers to negative integer powers are not allowed")


def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    dx = grad * y * pow(x, y - 1.0)
    safe_log = array_ops.where(x > 0.0, log(maximum(x, 1e-30)), array_ops.zeros_like(x))
    dy = grad * z * safe_log
    return unbroadcast(dx, x), unbroadcast(dy, y)


POW = binary_op("Pow", _pow, np.power, cuda=_pow_cuda, check=_check_int_exponent,
                gradient=_pow_grad, domain=[(0, 5), (0, 4)])


def _maximum(x, y):
    if x != x:          # NaN wins, like np.maximum
        return x
    if y != y:
        return y
    return x if x >= y else y


def _maximum_grad(op, grad):
    x, y = op.inputs
    mask = cast(x >= y, grad.dtype)
    return unbroadcast(grad * mask, x), unbroadcast(grad * (1.0 - mask), y)


MAXIMUM = binary_op("Maximum", _maximum, np.maximum,
                    fusion="{x} if ({x} != {x} or {x} >= {y}) else {y}",
                    gradient=_maximum_grad)


def _minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


def _minimum_grad(op, grad):
    x, y = op.inputs
    mask = cast(x <= y, grad.dtype)
    return unbroadcast(grad * mask, x), unbroadcast(grad * (1.0 - mask), y)


MINIMUM = binary_op("Minimum", _minimum, np.minimum,
                    fusion="{x} if ({x} != {x} or {x} <= {y}) else {y}",
                    gradient=_minimum_grad)


def _squared_difference(x, y):
    d = x - y
    return d * d


def _squared_difference_grad(op, grad):
    x, y = op.inputs
    d = grad * 2.0 * (x - y)
    return unbroadcast(d, x), unbroadcast(-d, y)


SQUARED_DIFFERENCE = binary_op("SquaredDifference", _squared_difference,
                               lambda x, y: np.square(x - y),
                               fusion="({x} - {y}) * ({x} - {y})",
                               gradient=_squared_difference_grad)


# -- comparisons and logic: bool results ----------------------------------------------------------
def _equal(x, y):
    return x == y


def _not_equal(x, y):
    return x != y


def _less(x, y):
    return x < y


def _less_equal(x, y):
    return x <= y


def _greater(x, y):
    return x > y


def _greater_equal(x, y):
    return x >= y


def _logical_and(x, y):
    return x and y


def _logical_or(x, y):
    return x or y


_ALL_KINDS = NUMBER_NAMES + ("bool",)
EQUAL = binary_op("Equal", _equal, np.equal, cpu=_ALL_KINDS + ("string",),
                  kernel=_strings_or(binary_kernel()), bool_output=True,
                  gradient=NOT_DIFFERENTIABLE)
NOT_EQUAL = binary_op("NotEqual", _not_equal, np.not_equal, cpu=_ALL_KINDS + ("string",),
                      kernel=_strings_or(binary_kernel()), bool_output=True,
                      gradient=NOT_DIFFERENTIABLE)
LESS = binary_op("Less", _less, np.less, bool_output=True, gradient=NOT_DIFFERENTIABLE)
LESS_EQUAL = binary_op("LessEqual", _less_equal, np.less_equal, bool_output=True,
                       gradient=NOT_DIFFERENTIABLE)
GREATER = binary_op("Greater", _greater, np.greater, bool_output=True,
                    gradient=NOT_DIFFERENTIABLE)
GREATER_EQUAL = binary_op("GreaterEqual", _greater_equal, np.greater_equal, bool_output=True,
                          gradient=NOT_DIFFERENTIABLE)
LOGICAL_AND = binary_op("LogicalAnd", {"b": _logical_and}, np.logical_and, cpu=("bool",),
                        gpu=(), bool_output=True, gradient=NOT_DIFFERENTIABLE)
LOGICAL_OR = binary_op("LogicalOr", {"b": _logical_or}, np.logical_or, cpu=("bool",), gpu=(),
                       bool_output=True, gradient=NOT_DIFFERENTIABLE)


# ======================================================================= Cast ===
def _cast_kernel(op, backend):
    dst = op.get_attr("DstT")
    if dst.name == "string" or op.get_attr("SrcT").name == "string":
        raise errors.UnimplementedError(None, None, "Cast string to %s is not supported"
                                        % dst.name)
    cast_, np_dst = backend.cast, dst.np_dtype
    return lambda ctx, inputs: [cast_(inputs[0], np_dst)]


def _cast_grad(op, grad):
    src = op.get_attr("SrcT")
    return [cast(grad, src) if src.is_floating else None]


def _cast_examples(dtype):
    x = (np.arange(7) - 3).astype(np.float64) * 1.75
    src = x.astype(dtype) if dtype != "bfloat16" else x.astype(np.float32)
    return [([src], lambda t, d=d: cast(t, d)) for d in ("int32", "float64", "bool")
            if d != dtype]


CAST = declare(OpDef(
    "Cast", inputs=("x",), attrs=("SrcT", "DstT", "Truncate"), gradient=_cast_grad,
    devices={"CPU": NUMBER_NAMES + ("bool",)}, dtype_attr="SrcT", kernel=_cast_kernel,
    kernel_reads=BACKEND, examples=_cast_examples))


# ======================================================================= AddN ===
def _add_n_kernel(op, backend):
    add_n_ = backend.add_n
    return lambda ctx, inputs: [add_n_(list(inputs))]


def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def _add_n_examples(dtype):
    return [([(np.arange(n) % 50 + k).astype(dtype) for k in range(3)],
             lambda *xs: add_n(list(xs))) for n in (4, BIG)]


ADD_N = declare(OpDef(
    "AddN", inputs=("*inputs",), attrs=("T", "N"), gradient=_add_n_grad,
    devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES}, kernel=_add_n_kernel,
    kernel_reads=BACKEND, examples=_add_n_examples))


# ===================================================================== matmul ===
def _transposes(op):
    """(transpose a, transpose b): MatMul says transpose_a/b, BatchMatMulV2 adj_x/y."""
    if op.type == MAT_MUL.name:
        return op.get_attr("transpose_a"), op.get_attr("transpose_b")
    return op.get_attr("adj_x"), op.get_attr("adj_y")


def _matmul_kernel(op, backend):
    matmul_ = backend.matmul
    ta, tb = _transposes(op)

    def compute(ctx, inputs):
        a, b = inputs
        ka = a.shape[-2] if ta else a.shape[-1]
        kb = b.shape[-1] if tb else b.shape[-2]
        if ka != kb:
            raise errors.InvalidArgumentError(
                None, None, "Matrix size-incompatible: In[0]: %s, In[1]: %s"
                % (dims_text(a.shape), dims_text(b.shape)))
        return [matmul_(a, b, ta, tb)]
    return compute


def fused_matmul_kernel(op, backend):
    """``compute(ctx, a, b, bias, relu) -> y``: MatMul ``op`` with a bias added to
    each row of its product (and, with ``relu``, a Relu), TF's ``_FusedMatMul``.
    minitf/runtime/remapper.py builds it where a graph has the ops in a row
    (``tf.matmul(x, w) + b``, a dense layer); the bias and the ReLU are applied
    in place, while the product is still in the cache."""
    product = _matmul_kernel(op, backend)

    def compute(ctx, a, b, bias, relu):
        return backend.bias_relu(product(ctx, [a, b])[0], bias, relu)
    return compute


def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = _transposes(op)
    if not ta and not tb:
        return matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)
    if not ta and tb:
        return matmul(grad, b), matmul(grad, a, transpose_a=True)
    if ta and not tb:
        return matmul(b, grad, transpose_b=True), matmul(a, grad)
    return matmul(b, grad, transpose_a=True, transpose_b=True), \
        matmul(grad, a, transpose_a=True, transpose_b=True)


def _batch_matmul_grad(op, grad):
    da, db = _matmul_grad(op, grad)
    return unbroadcast(da, op.inputs[0]), unbroadcast(db, op.inputs[1])


def _matrix(rows, cols, dtype, k=0):
    return ((np.arange(rows * cols) * 3 + k) % 7 - 3).reshape(rows, cols).astype(dtype)


def _matmul_examples(dtype):
    return [([_matrix(2, 3, dtype), _matrix(3, 4, dtype, 1)], lambda a, b: matmul(a, b)),
            ([_matrix(3, 2, dtype), _matrix(4, 3, dtype, 1)],
             lambda a, b: matmul(a, b, transpose_a=True, transpose_b=True)),
            ([_matrix(64, 80, dtype), _matrix(80, 48, dtype, 2)], lambda a, b: matmul(a, b))]


def _batch_matmul_examples(dtype):
    a = np.stack([_matrix(2, 3, dtype, k) for k in range(3)])
    return [([a, _matrix(3, 4, dtype)], lambda a, b: matmul(a, b)),
            ([a, np.stack([_matrix(2, 3, dtype, k) for k in range(3)])],
             lambda a, b: matmul(a, b, transpose_b=True))]


_MATMUL_CPU = ("int32", "int64") + FLOAT_NAMES
MAT_MUL = declare(OpDef(
    "MatMul", inputs=("a", "b"), attrs=("T", "transpose_a", "transpose_b"),
    gradient=_matmul_grad, devices={"CPU": _MATMUL_CPU, "GPU": FLOAT_NAMES},
    kernel=_matmul_kernel, kernel_reads=BACKEND, examples=_matmul_examples,
    expensive=True))
BATCH_MAT_MUL_V2 = declare(OpDef(
    "BatchMatMulV2", inputs=("x", "y"), attrs=("T", "adj_x", "adj_y"),
    gradient=_batch_matmul_grad, devices={"CPU": _MATMUL_CPU, "GPU": FLOAT_NAMES},
    kernel=_matmul_kernel, kernel_reads=BACKEND, examples=_batch_matmul_examples,
    expensive=True))


# ============================================================ the tf.* functions ===
def _binary(row, x, y, name, allowed=NUMBER_TYPES, out_dtype=None):
    with name_scope(name, row.name, [x, y]) as scope:
        x, y = binary_inputs(row.name, x, y)
        check_dtype(x, allowed)
        dt = x.dtype.base_dtype
        shape = broadcast_static_shape(x.shape, y.shape, scope[:-1])
        op = make_op(row, [x, y], [out_dtype or dt], [shape], name=scope, attrs={"T": dt})
    return op.outputs[0]


def _unary(row, x, name, allowed=NUMBER_TYPES, out_dtype=None):
    with name_scope(name, row.name, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, allowed)
        dt = x.dtype.base_dtype
        op = make_op(row, [x], [out_dtype or dt], [x.shape], name=scope, attrs={"T": dt})
    return op.outputs[0]


# -- elementwise binary ------------------------------------------------------------------
def add(x, y, name=None):
    return _binary(ADD_V2, x, y, name or "Add", NUMBER_TYPES + (dtypes.string,))


def subtract(x, y, name=None):
    return _binary(SUB, x, y, name or "Sub")


def multiply(x, y, name=None):
    return _binary(MUL, x, y, name or "Mul")


def realdiv(x, y, name=None):
    return _binary(REAL_DIV, x, y, name or "RealDiv")


def truediv(x, y, name=None):
    """``x / y``: float division. Integers are cast to float64 first (int32,
    int64) or float32 (int8/16, uint8/16), as in TF."""
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = binary_inputs(REAL_DIV.name, x, y)
        dt = x.dtype.base_dtype
        if dt.is_integer:
            target = dtypes.float64 if dt in (dtypes.int32, dtypes.int64) else dtypes.float32
            x = cast(x, target)
            y = cast(y, target)
        return realdiv(x, y, name=scope)


divide = truediv


def div(x, y, name=None):
    """TF1's division, as Python 2's ``/``: floats divide (``RealDiv``), integers
    floor-divide (``FloorDiv``, so ``div(-7, 2)`` is -4). Deprecated in TF in
    favour of ``truediv`` and ``floordiv``, but TF1 code is full of it."""
    with name_scope(name, "div", [x, y]) as scope:
        x, y = binary_inputs(REAL_DIV.name, x, y)
        if x.dtype.base_dtype.is_floating:
            return realdiv(x, y, name=scope)
        return floordiv(x, y, name=scope)


def truncatediv(x, y, name=None):
    return _binary(TRUNCATE_DIV, x, y, name or "TruncateDiv")


def truncatemod(x, y, name=None):
    return _binary(TRUNCATE_MOD, x, y, name or "TruncateMod",
                   (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64))


def div_no_nan(x, y, name=None):
    """``x / y``, and 0 wherever ``y`` is 0."""
    with name_scope(name, "div_no_nan", [x, y]) as scope:
        return _binary(DIV_NO_NAN, x, y, scope, FLOAT_TYPES)


def floordiv(x, y, name=None):
    return _binary(FLOOR_DIV, x, y, name or "FloorDiv")


def floormod(x, y, name=None):
    return _binary(FLOOR_MOD, x, y, name or "FloorMod")


mod = floormod


def pow(x, y, name=None):  # noqa: A001  (tf.pow)
    return _binary(POW, x, y, name or "Pow")


def maximum(x, y, name=None):
    return _binary(MAXIMUM, x, y, name or "Maximum")


def minimum(x, y, name=None):
    return _binary(MINIMUM, x, y, name or "Minimum")


def squared_difference(x, y, name=None):
    return _binary(SQUARED_DIFFERENCE, x, y, name or "SquaredDifference")


def _compare(row, x, y, name, allowed=NUMBER_TYPES):
    return _binary(row, x, y, name or row.name, allowed, out_dtype=dtypes.bool)


def equal(x, y, name=None):
    return _compare(EQUAL, x, y, name, NUMBER_TYPES + (dtypes.bool, dtypes.string))


def not_equal(x, y, name=None):
    return _compare(NOT_EQUAL, x, y, name, NUMBER_TYPES + (dtypes.bool, dtypes.string))


def less(x, y, name=None):
    return _compare(LESS, x, y, name)


def less_equal(x, y, name=None):
    return _compare(LESS_EQUAL, x, y, name)


def greater(x, y, name=None):
    return _compare(GREATER, x, y, name)


def greater_equal(x, y, name=None):
    return _compare(GREATER_EQUAL, x, y, name)


def logical_and(x, y, name=None):
    return _binary(LOGICAL_AND, x, y, name or "LogicalAnd", (dtypes.bool,))


def logical_or(x, y, name=None):
    return _binary(LOGICAL_OR, x, y, name or "LogicalOr", (dtypes.bool,))


def logical_not(x, name=None):
    return _unary(LOGICAL_NOT, x, name or "LogicalNot", (dtypes.bool,))


# -- elementwise unary --------------------------------------------------------------------
def negative(x, name=None):
    return _unary(NEG, x, name or "Neg")


def abs(x, name=None):  # noqa: A001  (tf.abs)
    return _unary(ABS, x, name or "Abs")


def square(x, name=None):
    return _unary(SQUARE, x, name or "Square")


def sign(x, name=None):
    return _unary(SIGN, x, name or "Sign")


def _float_unary(row):
    def op(x, name=None):
        return _unary(row, x, name or row.name, FLOAT_TYPES)
    op.__name__ = row.name.lower()
    op.__doc__ = "Elementwise ``%s`` (float dtypes only)." % row.name
    return op


sqrt = _float_unary(SQRT)
rsqrt = _float_unary(RSQRT)
exp = _float_unary(EXP)
log = _float_unary(LOG)
tanh = _float_unary(TANH)
sigmoid = _float_unary(SIGMOID)
reciprocal = _float_unary(RECIPROCAL)
floor = _float_unary(FLOOR)
ceil = _float_unary(CEIL)
round = _float_unary(ROUND)  # noqa: A001


def cast(x, dtype, name=None):
    """Convert ``x`` to ``dtype`` (a no-op that returns ``x`` if it already is)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype == dtype:
        return x
    with name_scope(name, "Cast", [x]) as scope:
        op = make_op(CAST, [x], [dtype], [x.shape], name=scope,
                     attrs={"SrcT": x.dtype.base_dtype, "DstT": dtype, "Truncate": False})
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
        return array_ops.identity(inputs[0], name=name)
    op = make_op(ADD_N, inputs, [dt], [shape], name=name or "AddN",
                 attrs={"T": dt, "N": len(inputs)})
    return op.outputs[0]


# -- matmul -------------------------------------------------------------------------------
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product. Rank 2 gives ``MatMul``; higher ranks ``BatchMatMulV2``
    (leading dimensions broadcast)."""
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    with name_scope(name, "MatMul", [a, b]) as scope:
        a, b = binary_inputs(MAT_MUL.name, a, b, ("a", "b"))
        check_dtype(a, (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                        dtypes.int32, dtypes.int64), arg="a")
        sa, sb = a.shape, b.shape
        ra, rb = sa.ndims, sb.ndims
        if (ra is not None and ra < 2) or (rb is not None and rb < 2):
            bad, r = (sa, ra) if ra is not None and ra < 2 else (sb, rb)
            raise ValueError("Shape must be rank 2 but is rank %d for '{{node %s}} = %s"
                             "[T=%s, transpose_a=%s, transpose_b=%s]' with input shapes: "
                             "%s, %s." % (r, scope[:-1], MAT_MUL.name, dt_enum_name(a.dtype),
                                          str(transpose_a).lower(), str(transpose_b).lower(),
                                          shape_str(sa), shape_str(sb)))
        batched = (ra or 2) > 2 or (rb or 2) > 2
        row = BATCH_MAT_MUL_V2 if batched else MAT_MUL
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
                                     k1, k2, scope[:-1], row.name,
                                     dt_enum_name(a.dtype), str(transpose_a).lower(),
                                     str(transpose_b).lower(), shape_str(sa), shape_str(sb)))
            batch = broadcast_static_shape(TensorShape(da[:-2]), TensorShape(db[:-2]),
                                           scope[:-1])
            shape = batch.concatenate([m, n])
        attrs = {"T": a.dtype.base_dtype}
        if batched:
            attrs.update(adj_x=bool(transpose_a), adj_y=bool(transpose_b))
        else:
            attrs.update(transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))
        op = make_op(row, [a, b], [a.dtype.base_dtype], [shape], name=scope, attrs=attrs)
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
