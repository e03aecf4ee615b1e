"""CPU kernels for the math ops, registered against ``minitf.kernels.cpu``.

Each builder picks the Numba-compiled function for its op once, so a step
only pays for the call. The functions themselves (and their loop nests) are
in ``minitf/kernels/cpu/``; ``minitf/kernels/reference.py`` holds the numpy
versions they are tested against.
"""

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

UNARY = ("Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Relu", "Sigmoid", "Tanh",
         "Sign", "Reciprocal", "Floor", "Ceil", "Round", "LogicalNot")
BINARY = ("AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum",
          "Minimum", "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual",
          "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr")
REDUCE = ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any")

_NUMBERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "float16", "bfloat16",
            "float32", "float64")


def _dims(shape):
    """A shape as TF prints it in kernel messages: ``[1,3]``."""
    return "[%s]" % ",".join(str(d) for d in shape)


def _cpu():
    from minitf.kernels import cpu
    return cpu


@register(UNARY, ("CPU",), dtypes=_NUMBERS + ("bool",))
def _unary(op, device):
    unary, name = _cpu().unary, op.type
    return lambda ctx, inputs: [unary(name, inputs[0])]


def _broadcast_error(op, x, y):
    return errors.InvalidArgumentError(
        None, None, "Incompatible shapes: %s vs. %s" % (_dims(x.shape), _dims(y.shape)))


@register(BINARY, ("CPU",), dtypes=_NUMBERS + ("bool", "string"))
def _binary(op, device):
    binary, name = _cpu().binary, op.type
    if op.get_attr("T").name == "string":
        return _string_binary(op)

    def compute(ctx, inputs):
        x, y = inputs
        if x.shape != y.shape:
            try:
                np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                raise _broadcast_error(op, x, y) from None
        return [binary(name, x, y)]
    return compute


def _string_binary(op):
    """String ``+`` (concatenation) and ``==``/``!=`` on bytes arrays."""
    if op.type == "AddV2":
        return lambda ctx, inputs: [np.asarray(np.char.add(
            inputs[0].astype(bytes), inputs[1].astype(bytes)).astype(object))]
    if op.type in ("Equal", "NotEqual"):
        flip = op.type == "NotEqual"
        return lambda ctx, inputs: [np.asarray(
            (inputs[0] == inputs[1]) != flip, dtype=bool)]
    raise errors.UnimplementedError(None, None, "%s is not defined on strings" % op.type)


@register(REDUCE, ("CPU",), dtypes=_NUMBERS + ("bool",))
def _reduce(op, device):
    reduce_, name, keepdims = _cpu().reduce, op.type, op.get_attr("keep_dims")

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
        return [reduce_(name, x, tuple(sorted(set(norm))), keepdims)]
    return compute


@register(("MatMul", "BatchMatMulV2"), ("CPU",),
          dtypes=("int32", "int64", "float16", "bfloat16", "float32", "float64"))
def _matmul(op, device):
    matmul = _cpu().matmul
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")

    def compute(ctx, inputs):
        a, b = inputs
        ka = a.shape[-2] if ta else a.shape[-1]
        kb = b.shape[-1] if tb else b.shape[-2]
        if ka != kb:
            raise errors.InvalidArgumentError(
                None, None, "Matrix size-incompatible: In[0]: %s, In[1]: %s"
                % (_dims(a.shape), _dims(b.shape)))
        return [matmul(a, b, ta, tb)]
    return compute


@register("AddN", ("CPU",), dtypes=_NUMBERS)
def _add_n(op, device):
    add_n = _cpu().add_n
    return lambda ctx, inputs: [add_n(list(inputs))]


@register("Cast", ("CPU",))
def _cast(op, device):
    cast, dst = _cpu().cast, op.get_attr("DstT")
    if dst.name == "string" or op.get_attr("SrcT").name == "string":
        raise errors.UnimplementedError(None, None, "Cast string to %s is not supported"
                                        % dst.name)
    np_dst = dst.np_dtype
    return lambda ctx, inputs: [cast(inputs[0], np_dst)]


@register("Select", ("CPU",))
def _select(op, device):
    select = _cpu().select

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


@register(("ArgMax", "ArgMin"), ("CPU",), dtypes=_NUMBERS)
def _arg(op, device):
    fn = _cpu().argmax if op.type == "ArgMax" else _cpu().argmin
    out = op.get_attr("output_type").np_dtype

    def compute(ctx, inputs):
        x, axis = inputs
        if x.shape[int(axis)] == 0:
            raise errors.InvalidArgumentError(
                None, None, "Reduction axis %d is empty in shape %s" % (int(axis),
                                                                      list(x.shape)))
        return [fn(x, int(axis), out)]
    return compute


@register(("Softmax", "LogSoftmax"), ("CPU",),
          dtypes=("float16", "bfloat16", "float32", "float64"))
def _softmax(op, device):
    fn = _cpu().softmax if op.type == "Softmax" else _cpu().log_softmax
    return lambda ctx, inputs: [fn(inputs[0])]


@register("SoftmaxCrossEntropyWithLogits", ("CPU",),
          dtypes=("float16", "bfloat16", "float32", "float64"))
def _xent(op, device):
    fn = _cpu().softmax_xent

    def compute(ctx, inputs):
        logits, labels = inputs
        if logits.shape != labels.shape:
            raise errors.InvalidArgumentError(
                None, None, "logits and labels must be broadcastable: logits_size=%s "
                "labels_size=%s" % (list(logits.shape), list(labels.shape)))
        return list(fn(logits, labels))
    return compute


@register("SparseSoftmaxCrossEntropyWithLogits", ("CPU",),
          dtypes=("float16", "bfloat16", "float32", "float64"))
def _sparse_xent(op, device):
    fn = _cpu().sparse_softmax_xent
    return lambda ctx, inputs: list(fn(inputs[0], inputs[1]))
