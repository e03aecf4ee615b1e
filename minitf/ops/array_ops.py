"""Ops that create, reshape and combine tensors without arithmetic."""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import Tensor, get_default_graph
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops.core import (_holds_tensor, constant, convert_to_tensor, dt_enum_name, make_op,
                             name_scope, shape_str)


def _static_ints(value, what):
    """A shape/axis/perm argument as a list of ints, known at build time."""
    if isinstance(value, Tensor):
        if value.op.type != "Const":
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
    if not _holds_tensor(value) or (isinstance(value, Tensor) and value.op.type == "Const"):
        return None
    t = convert_to_tensor(value, dtype=dtypes.int32, name=name)
    op = t.op
    if op.type == "Shape":
        known = op.inputs[0].shape
        return t, (known.as_list() if known.ndims is not None else None)
    if op.type == "Pack" and t.shape.ndims == 1:
        return t, [_known_size(e) for e in op.inputs]
    if t.shape.ndims == 1 and t.shape.dims[0].value is not None:
        return t, [None] * t.shape.dims[0].value
    return t, None


def _known_size(t):
    """One element of a packed shape, if known now: a constant, or ``tf.shape(x)[i]``
    of a known dimension."""
    op = t.op
    if op.type == "Const":
        return int(op.get_attr("value"))
    if op.type == "StridedSlice" and op.inputs[0].op.type == "Shape":
        spec = op.get_attr("spec")
        dims = op.inputs[0].op.inputs[0].shape
        if len(spec) == 1 and spec[0][0] == "index" and dims.ndims is not None:
            return dims.as_list()[spec[0][1]]
    return None


def placeholder(dtype, shape=None, name=None):
    """A tensor whose value must be fed: ``sess.run(y, {x: value})``."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    shape = as_shape(shape)
    op = make_op("Placeholder", [], [dtype], [shape], name=name or "Placeholder",
                 attrs={"dtype": dtype, "shape": shape}, graph=get_default_graph())
    return op.outputs[0]


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    with name_scope(name, "PlaceholderWithDefault", [input]) as scope:
        x = convert_to_tensor(input)
        op = make_op("PlaceholderWithDefault", [x], [x.dtype.base_dtype], [as_shape(shape)],
                     name=scope, attrs={"dtype": x.dtype.base_dtype, "shape": as_shape(shape)})
    return op.outputs[0]


def identity(input, name=None):  # noqa: A002
    """The same value under a new name (and, if pinned, on another device)."""
    x = convert_to_tensor(input)
    op = make_op("Identity", [x], [x.dtype.base_dtype], [x.shape], name=name or "Identity",
                 attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def stop_gradient(input, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    op = make_op("StopGradient", [x], [x.dtype.base_dtype], [x.shape],
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
            return make_op("Reshape", [x, shape_t], [x.dtype.base_dtype], [out], name=scope,
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
        op = make_op("Reshape", [x, shape_t], [x.dtype.base_dtype], [TensorShape(out)],
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
        op = make_op("Transpose", [x, perm_t], [x.dtype.base_dtype], [shape], name=scope,
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
        op = make_op("Pack", values, [dt], [out], name=scope,
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
        op = make_op("Unpack", [x], [x.dtype.base_dtype] * num, [out] * num, name=scope,
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
        op = make_op("ConcatV2", values + [axis_t], [dt], [shape], name=scope,
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
            dims_t, shape = constant(np.array(static, dtype=np.int32), name="dims"), \
                TensorShape(static)
        v = convert_to_tensor(value, name="value")
        op = make_op("Fill", [dims_t, v], [v.dtype.base_dtype], [shape],
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
            return constant(np.full(dims, b"", dtype=object), dtype=dtype, name=scope)
        return constant(np.full(dims, value, dtype=dtype.np_dtype), dtype=dtype, name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    return _filled("zeros", shape, dtype, name)


def ones(shape, dtype=dtypes.float32, name=None):
    return _filled("ones", shape, dtype, name)


def _like(op_type, tensor, dtype, name):
    x = convert_to_tensor(tensor)
    dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else x.dtype.base_dtype
    with name_scope(name, op_type.replace("Like", "s_like").lower(), [x]) as scope:
        op = make_op(op_type, [x], [dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "dtype": dtype})
    return op.outputs[0]


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    return _like("ZerosLike", tensor, dtype, name)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    return _like("OnesLike", tensor, dtype, name)


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    rank = x.shape.ndims
    op = make_op("Shape", [x], [out_type], [TensorShape([rank])], name=name or "Shape",
                 attrs={"T": x.dtype.base_dtype, "out_type": out_type})
    return op.outputs[0]


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    op = make_op("Size", [x], [out_type], [TensorShape([])], name=name or "Size",
                 attrs={"T": x.dtype.base_dtype, "out_type": out_type})
    return op.outputs[0]


def rank(input, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    op = make_op("Rank", [x], [dtypes.int32], [TensorShape([])], name=name or "Rank",
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
        op = make_op("Where", [c], [dtypes.int64], [TensorShape([None, rank_])],
                     name=name or "Where", attrs={"T": c.dtype.base_dtype})
        return op.outputs[0]
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "Select", [condition, x, y]) as scope:
        c = convert_to_tensor(condition, name="condition")
        if c.dtype.base_dtype != dtypes.bool:
            raise TypeError("Input 'condition' of 'Select' Op has type %s that does not "
                            "match expected type of bool." % c.dtype.name)
        from minitf.ops.math_ops import _binary_inputs
        x, y = _binary_inputs("Select", x, y)
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (x.shape, y.shape))
        shape = x.shape.merge_with(y.shape)
        if c.shape.ndims not in (None, 0) and shape.ndims is not None and \
                c.shape.ndims != 1 and not c.shape.is_compatible_with(shape):
            raise ValueError("Shapes must be equal rank, but are %s and %s for '{{node %s}}'"
                             % (c.shape.ndims, shape.ndims, scope[:-1]))
        op = make_op("Select", [c, x, y], [x.dtype.base_dtype], [shape], name=scope,
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
        op = make_op("StridedSlice", [x], [x.dtype.base_dtype], [TensorShape(out_shape)],
                     name=scope, attrs={"T": x.dtype.base_dtype, "spec": spec})
    return op.outputs[0]


Tensor.__getitem__ = _getitem


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
        d = int(depth_t.op.get_attr("value")) if depth_t.op.type == "Const" else None
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
        op = make_op("OneHot", [indices, depth_t, on, off], [dt], [shape], name=scope,
                     attrs={"T": dt, "TI": indices.dtype.base_dtype, "axis": axis})
    return op.outputs[0]


def tile(input, multiples, name=None):  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along each axis ``i``."""
    with name_scope(name, "Tile", [input]) as scope:
        x = convert_to_tensor(input, name="input")
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
        op = make_op("Tile", [x, reps_t], [x.dtype.base_dtype], [shape], name=scope,
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
        op = make_op("Split" if equal else "SplitV", [x], [x.dtype.base_dtype] * len(sizes),
                     shapes, name=scope,
                     attrs={"T": x.dtype.base_dtype, "axis": axis,
                            "sizes": [-1 if s is None else s for s in sizes],
                            "num_split": len(sizes)})
    return list(op.outputs)
