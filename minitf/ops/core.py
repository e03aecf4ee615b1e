"""Turning Python values into graph tensors, and the helper every op uses.

``convert_to_tensor(3.0)`` adds a ``Const`` op holding ``np.float32(3.0)``;
a Tensor passes through (after a dtype check); a Variable gives its value.
The dtype rules are TF's: Python floats become float32, Python ints int32
(int64 if too large), numpy values keep their own dtype, text becomes bytes.
"""

import contextlib

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import Operation, Tensor, get_default_graph
from minitf.framework.tensor_shape import TensorShape


def make_op(op_type, inputs, output_dtypes, output_shapes, name=None, attrs=None,
            graph=None):
    """Create an op in the inputs' graph (or the default graph) and return it."""
    if graph is None:
        graph = inputs[0].graph if inputs else get_default_graph()
    return graph.create_op(op_type, list(inputs), list(output_dtypes), list(output_shapes),
                           name=name, attrs=attrs)


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


def _python_to_numpy(value, dtype=None):
    """Convert a Python or numpy value to an ndarray following TF's rules."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype == dtypes.string:
            return _to_bytes_array(value)
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
            return _to_bytes_array(arr)
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
        return _to_bytes_array(value)
    raise TypeError("Failed to convert object of type %s to Tensor. Contents: %r. Consider "
                    "casting elements to a supported type." % (type(value), value))


def _to_bytes_array(value):
    arr = np.asarray(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, item in np.ndenumerate(arr):
        if isinstance(item, str):
            item = item.encode("utf-8")
        elif isinstance(item, np.bytes_):
            item = bytes(item)
        elif not isinstance(item, bytes):
            raise TypeError("Failed to convert elements of %r to Tensor: expected bytes or "
                            "str, got %s." % (value, type(item).__name__))
        out[idx] = item
    return out


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A ``Const`` op holding ``value`` (converted with TF's dtype rules).

    With ``shape``, a scalar is broadcast to it and a value with as many
    elements is reshaped to it, as in ``tf.constant([1, 2, 3, 4], shape=[2, 2])``.
    """
    arr = _python_to_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in (shape.as_list() if isinstance(shape, TensorShape) else shape)]
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
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
    op = make_op("Const", [], [dt], [TensorShape(arr.shape)], name=name,
                 attrs={"value": arr, "dtype": dt}, graph=get_default_graph())
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
    from minitf.ops.array_ops import stack
    if dtype is None:
        dtype = _first_tensor_dtype(value)
    with name_scope(name) as scope:
        elements = [convert_to_tensor(v, dtype=dtype, name=str(i)) if _holds_tensor(v)
                    else constant(v, dtype=dtype, name=str(i)) for i, v in enumerate(value)]
        return stack(elements, name=scope)


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
