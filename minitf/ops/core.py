"""Turning Python values into graph tensors, and the helpers every op family uses.

``convert_to_tensor(3.0)`` adds a ``Const`` op holding ``np.float32(3.0)``;
a Tensor passes through (after a dtype check); a Variable gives its value.
The dtype rules are TF's: Python floats become float32, Python ints int32
(int64 if too large), numpy values keep their own dtype, text becomes bytes.

:func:`make_op` is how every op family adds a node: it takes the op's row of
the op table (an :class:`~minitf.framework.op_def.OpDef`) and creates the
:class:`~minitf.framework.graph.Operation` in the inputs' graph.
"""

import contextlib

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.dtypes import to_string_array
from minitf.framework.graph import Operation, Tensor, get_default_graph
from minitf.framework.op_def import ANY_DTYPE, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape

#: The dtypes TF's float-only ops accept, and every number type.
FLOAT_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
NUMBER_TYPES = FLOAT_TYPES + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                              dtypes.uint8, dtypes.uint16)

#: ``OpDef.devices`` for ops that only move data: any device, any dtype.
EVERY_DEVICE = {"CPU": ANY_DTYPE, "GPU": ANY_DTYPE}


def make_op(op_def, inputs, output_dtypes, output_shapes, name=None, attrs=None,
            graph=None):
    """Create an op of type ``op_def`` (a row of the op table) in the inputs'
    graph (or the default graph) and return it."""
    if not isinstance(op_def, OpDef):
        raise TypeError("make_op takes the op's OpDef row, got %r" % (op_def,))
    if graph is None:
        graph = inputs[0].graph if inputs else get_default_graph()
    return graph.create_op(op_def.name, list(inputs), list(output_dtypes),
                           list(output_shapes), name=name, attrs=attrs)


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """TF1's ``tf.name_scope(name, default_name, values)``.

    Yields the scope string (``"add/"``); an op created with exactly that name
    takes the scope's name (``add``) without a new suffix.
    """
    graph = get_default_graph()
    if values:
        for v in values:
            if isinstance(v, Tensor):
                graph = v.graph
                break
    if name is None:
        name = default_name
    with graph.as_default(), graph.name_scope(name) as scope:
        yield scope


def check_dtype(t, allowed, arg="x"):
    """TF's TypeError when ``t``'s dtype is not one an op's ``arg`` accepts."""
    if t.dtype.base_dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of "
                        "allowed values: %s" % (arg, t.dtype.base_dtype.name,
                                                ", ".join(d.name for d in allowed)))


def binary_inputs(op_type, x, y, arg_names=("x", "y")):
    """Convert both operands of a two-input op; the first tensor's dtype guides
    Python numbers. ``arg_names`` are the op's parameter names, for TF's
    mismatch message."""
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


def _python_to_numpy(value, dtype=None):
    """Convert a Python or numpy value to an ndarray following TF's rules."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype == dtypes.string:
            return to_string_array(value)
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "SUO":
            raise TypeError("Expected %s, but got %r of type '%s'."
                            % (dtype.name, value, type(value).__name__))
        arr = np.asarray(value)
        if arr.dtype.kind in "SUO":
            raise TypeError("Expected %s, but got %r of type '%s'."
                            % (dtype.name, value, type(value).__name__))
        if (dtype.is_integer or dtype.is_bool) and arr.dtype.kind == "f" and arr.size:
            raise TypeError("Expected %s, but got %r of type '%s'."
                            % (dtype.name, value, type(value).__name__))
        if dtype.is_bool and arr.dtype.kind in "iu" and not isinstance(value, np.ndarray):
            raise TypeError("Expected bool, but got %r of type '%s'."
                            % (value, type(value).__name__))
        out = arr.astype(dtype.np_dtype)
        if dtype.is_integer and arr.dtype.kind in "iu" and arr.size and \
                not np.array_equal(out.astype(np.int64), arr.astype(np.int64)):
            raise TypeError("Value out of range for %s: %r" % (dtype.name, value))
        return out
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "SUO":
            return to_string_array(arr)
        if arr.dtype == np.float16 or arr.dtype.kind in "fib" or arr.dtype.kind == "u":
            return arr
        dtypes.dtype_of_numpy(arr)  # raises TypeError for unsupported dtypes
        return arr
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind == "f":
        return arr.astype(np.float32)
    if kind in "iu":
        if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -2**31):
            return arr.astype(np.int64)
        return arr.astype(np.int32)
    if kind == "b":
        return arr
    if kind in "SUO":
        return to_string_array(value)
    raise TypeError("Failed to convert object of type %s to Tensor. Contents: %r. Consider "
                    "casting elements to a supported type." % (type(value), value))


# -- Const ---------------------------------------------------------------------------------
def _const_kernel(op, backend):
    value = op.get_attr("value")
    _check_const_value(op, value)
    outputs = [value]
    return lambda ctx, inputs: outputs


def _check_const_value(op, value):
    """A Const built by ``tf.constant`` always holds a value of its dtype; one
    that arrived from elsewhere (a graph shipped over the wire) may not. TF's
    ConstOp refuses such a node when its kernel is made; so does minitf."""
    want = op._outputs[0].dtype.base_dtype
    have = getattr(value, "dtype", None)
    if not isinstance(value, (np.ndarray, np.generic)):
        raise errors.InvalidArgumentError(
            op.node_def, op, "Const node %s holds a %s, not an array of %s"
            % (op.name, type(value).__name__, want.name))
    got = dtypes.dtype_of_numpy(value) if have.kind in "OSU" else None
    if (got is not None and got != want) or (got is None and have != want.np_dtype):
        raise errors.InvalidArgumentError(
            op.node_def, op, "Type mismatch between value (%s) and dtype (%s) of Const node "
            "%s" % (got.name if got is not None else have.name, want.name, op.name))
    if not op._outputs[0].shape.is_compatible_with(value.shape):
        raise errors.InvalidArgumentError(
            op.node_def, op, "Const node %s declares shape %s but its value has shape %s"
            % (op.name, op._outputs[0].shape, list(value.shape)))


#: A value fixed when the graph is built. Its kernel hands out the array the op
#: holds (read-only: fetches copy it). An int32 constant placed on a GPU stays in
#: host memory, as TF's HostConstantOp: such constants are axes and shapes,
#: which the host reads to launch a kernel.
CONST = declare(OpDef(
    "Const", attrs=("value", "dtype"), gradient=NOT_DIFFERENTIABLE,
    devices=EVERY_DEVICE, kernel=_const_kernel, host_memory_outputs=("int32",)))


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A ``Const`` op holding ``value`` (converted with TF's dtype rules).

    With ``shape``, a scalar is broadcast to it and a value with as many
    elements is reshaped to it, as in ``tf.constant([1, 2, 3, 4], shape=[2, 2])``.
    """
    arr = _python_to_numpy(value, dtype)
    splat = False
    if shape is not None:
        shape = [int(d) for d in (shape.as_list() if isinstance(shape, TensorShape) else shape)]
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
            splat = True
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError("Eager execution of tf.constant with unsupported shape. Tensor "
                            "%r (converted from %r) has %d elements, but got `shape` %s with "
                            "%d elements)." % (name, value, arr.size, tuple(shape),
                                               int(np.prod(shape))))
    if not arr.flags.c_contiguous or arr.base is not None or arr is value:
        arr = arr.copy()  # own the buffer: the caller may change theirs later
    arr.flags.writeable = False  # the graph owns it; fetches copy it
    dt = dtypes.dtype_of_numpy(arr)
    op = make_op(CONST, [], [dt], [TensorShape(arr.shape)], name=name,
                 attrs={"value": arr, "dtype": dt}, graph=get_default_graph())
    # One value broadcast to a shape (tf.zeros): a GraphDef holds just that
    # value, as TF writes it (minitf/framework/graph_def.py).
    op._splat = splat
    return op.outputs[0]


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None,
                      as_ref=False):
    """Return ``value`` as a Tensor of the default graph (see module docstring)."""
    preferred_dtype = preferred_dtype or dtype_hint
    if hasattr(value, "_as_tensor"):  # a Variable: its value, or its ref for assign ops
        value = value._ref() if as_ref else value._as_tensor()
    if isinstance(value, Tensor):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: "
                             "%r" % (dtypes.as_dtype(dtype).name, value.dtype.name, value))
        return value
    if isinstance(value, Operation):
        raise TypeError("Can't convert Operation '%s' to Tensor (target dtype=%s, name=%s, "
                        "as_ref=%s)" % (value.name, dtype, name, as_ref))
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        return _autopack(value, dtype, name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _holds_tensor(value):
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_tensor(v) for v in value)


def _autopack(value, dtype, name):
    """A list that mixes tensors and numbers, such as ``[tf.shape(x)[0], -1]``,
    becomes one tensor as in TF: the numbers become constants of the tensors'
    dtype (named by their position) and a ``Pack`` op stacks the elements."""
    if dtype is None:
        dtype = _first_tensor_dtype(value)
    with name_scope(name) as scope:
        elements = [convert_to_tensor(v, dtype=dtype, name=str(i)) if _holds_tensor(v)
                    else constant(v, dtype=dtype, name=str(i)) for i, v in enumerate(value)]
        return array_ops.stack(elements, name=scope)


def _first_tensor_dtype(value):
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        return convert_to_tensor(value).dtype.base_dtype
    for v in value if isinstance(value, (list, tuple)) else ():
        if _holds_tensor(v):
            return _first_tensor_dtype(v)
    return None


def convert_n_to_tensor(values, dtype=None):
    return [convert_to_tensor(v, dtype=dtype) for v in values]


def is_tensor(x):
    return isinstance(x, Tensor)


def broadcast_static_shape(a, b, op_name="op"):
    """The broadcast of two static shapes (numpy rules; unknown dims stay unknown)."""
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x is None or y is None:
            if x == 1:
                out.append(y)
            elif y == 1:
                out.append(x)
            else:
                out.append(x if x is not None else y)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError("Dimensions must be equal, but are %d and %d for '{{node %s}}' "
                             "with input shapes: %s, %s." % (x, y, op_name,
                                                             _shape_str(a), _shape_str(b)))
    return TensorShape(out)


def _shape_str(shape):
    """TF's shape-function notation: ``[2,3]``, ``[?,3]``, ``[]``, ``?``."""
    if shape.ndims is None:
        return "?"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


shape_str = _shape_str

# The names TF's messages use for dtypes ("T=DT_FLOAT"): the DataType enum.
_TF_ENUM_NAMES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}


def dt_enum_name(dtype):
    """``DT_FLOAT`` for float32, ``DT_INT32`` for int32, as TF prints them."""
    name = dtype.base_dtype.name
    return "DT_" + _TF_ENUM_NAMES.get(name, name.upper())


# At the end, not the top: array_ops imports this module's names (Const, make_op...),
# so it can only be imported once they exist. ``_autopack`` uses its ``stack``.
from minitf.ops import array_ops  # noqa: E402
