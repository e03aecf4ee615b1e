"""Kernels that move or hold data rather than compute: constants, feeds,
variables, reshapes, stacking, slicing, random numbers.

They are plain numpy: copying memory is what numpy already does at full
speed, so a Numba version would add compile time and nothing else. Every
kernel is ``compute(ctx, inputs) -> list of outputs`` and is built once per
op by a *builder* that reads the op's attributes.
"""

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register
from minitf.runtime.resource_manager import VariableResource

ALL_DEVICES = ("CPU", "GPU")
_GPU_NUMBERS = ("float16", "bfloat16", "float32", "float64")


def tf_type_name(dtype):
    """The C++ name TF uses in messages: float, double, int32, string..."""
    return {"float32": "float", "float64": "double", "float16": "half"}.get(
        dtype.base_dtype.name, dtype.base_dtype.name)


def shape_text(shape):
    if shape.ndims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


# -- sources ------------------------------------------------------------------------------
@register("Const", ALL_DEVICES)
def _const(op, device):
    value = op.get_attr("value")
    outputs = [value]
    return lambda ctx, inputs: outputs


@register("Placeholder", ALL_DEVICES)
def _placeholder(op, device):
    dt, shape = op.get_attr("dtype"), op.get_attr("shape")
    message = "You must feed a value for placeholder tensor '%s' with dtype %s" % (
        op.name, tf_type_name(dt))
    if shape.ndims is not None:
        message += " and shape %s" % shape_text(shape)

    def compute(ctx, inputs):
        raise errors.InvalidArgumentError(None, None, message)
    return compute


@register(("Identity", "StopGradient", "PlaceholderWithDefault"), ALL_DEVICES)
def _identity(op, device):
    return lambda ctx, inputs: [inputs[0]]


@register("NoOp", ALL_DEVICES)
def _no_op(op, device):
    return lambda ctx, inputs: []


# -- variables ------------------------------------------------------------------------------
@register("VariableV2", ("CPU",))
@register("VariableV2", ("GPU",), dtypes=_GPU_NUMBERS)
def _variable(op, device):
    container = op.get_attr("container")
    name = op.get_attr("shared_name") or op.name
    dt, shape = op.get_attr("dtype"), op.get_attr("shape")

    def compute(ctx, inputs):
        resource = ctx.resources.lookup_or_create(
            container, name, lambda: VariableResource(op.name, dt, shape))
        return [resource]
    return compute


def _check_initialized(resource):
    if resource.value is None:
        raise errors.FailedPreconditionError(
            None, None, "Attempting to use uninitialized value %s" % resource.name)


@register("Assign", ("CPU",))
@register("Assign", ("GPU",), dtypes=_GPU_NUMBERS)
def _assign(op, device):
    validate = op.get_attr("validate_shape")

    def compute(ctx, inputs):
        ref, value = inputs
        with ref.lock:
            if validate and ref.value is not None and ref.value.shape != value.shape:
                raise errors.InvalidArgumentError(
                    None, None, "Assign requires shapes of both tensors to match. lhs shape= "
                    "%s rhs shape= %s" % (list(ref.value.shape), list(value.shape)))
            if validate and ref.shape.ndims is not None and \
                    not ref.shape.is_compatible_with(value.shape):
                raise errors.InvalidArgumentError(
                    None, None, "Assign requires shapes of both tensors to match. lhs shape= "
                    "%s rhs shape= %s" % (shape_text(ref.shape), list(value.shape)))
            ref.write(value)
        return [ref]
    return compute


def _update(op_type):
    def builder(op, device):
        from minitf.kernels import cpu
        binary_op = "AddV2" if op_type == "AssignAdd" else "Sub"

        def compute(ctx, inputs):
            ref, delta = inputs
            with ref.lock:
                _check_initialized(ref)
                old = ref.value
                if old.shape != delta.shape:
                    raise errors.InvalidArgumentError(
                        None, None, "Must have the same shape: %s vs %s" % (
                            list(old.shape), list(delta.shape)))
                ref.write(cpu.binary(binary_op, old, delta))
            return [ref]
        return compute
    return builder


register("AssignAdd", ("CPU",))(_update("AssignAdd"))
register("AssignAdd", ("GPU",), dtypes=_GPU_NUMBERS)(_update("AssignAdd"))
register("AssignSub", ("CPU",))(_update("AssignSub"))
register("AssignSub", ("GPU",), dtypes=_GPU_NUMBERS)(_update("AssignSub"))


@register("IsVariableInitialized", ("CPU",))
@register("IsVariableInitialized", ("GPU",), dtypes=_GPU_NUMBERS)
def _is_initialized(op, device):
    return lambda ctx, inputs: [np.array(inputs[0].value is not None)]


@register("ReportUninitialized", ("CPU",))
def _report_uninitialized(op, device):
    names = op.get_attr("names")

    def compute(ctx, inputs):
        flags = np.asarray(inputs[0], dtype=bool)
        return [names[~flags]]
    return compute


# -- shapes and data movement ------------------------------------------------------------------
@register("Reshape", ALL_DEVICES)
def _reshape(op, device):
    def compute(ctx, inputs):
        x, shape = inputs
        shape = [int(d) for d in shape]
        known = int(np.prod([d for d in shape if d != -1])) if shape else 1
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


@register("Transpose", ALL_DEVICES)
def _transpose(op, device):
    def compute(ctx, inputs):
        x, perm = inputs
        out = np.empty([x.shape[p] for p in perm], dtype=x.dtype)
        out[...] = x.transpose([int(p) for p in perm])
        return [out]
    return compute


@register("Pack", ALL_DEVICES)
def _pack(op, device):
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


@register("Unpack", ALL_DEVICES)
def _unpack(op, device):
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


@register("ConcatV2", ALL_DEVICES)
def _concat(op, device):
    def compute(ctx, inputs):
        *values, axis = inputs
        try:
            return [np.concatenate(values, axis=int(axis))]
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, "ConcatOp : %s" % e) from None
    return compute


@register("Fill", ALL_DEVICES)
def _fill(op, device):
    def compute(ctx, inputs):
        dims, value = inputs
        return [np.full([int(d) for d in dims], value, dtype=value.dtype)]
    return compute


@register(("ZerosLike", "OnesLike"), ALL_DEVICES)
def _zeros_ones_like(op, device):
    dt = op.get_attr("dtype").np_dtype
    fill = 0 if op.type == "ZerosLike" else 1
    return lambda ctx, inputs: [np.full(inputs[0].shape, fill, dtype=dt)]


@register(("Shape", "Size", "Rank"), ALL_DEVICES)
def _shape_ops(op, device):
    if op.type == "Rank":
        return lambda ctx, inputs: [np.array(inputs[0].ndim, dtype=np.int32)]
    dt = op.get_attr("out_type").np_dtype
    if op.type == "Shape":
        return lambda ctx, inputs: [np.array(inputs[0].shape, dtype=dt)]
    return lambda ctx, inputs: [np.array(inputs[0].size, dtype=dt)]


@register("StridedSlice", ALL_DEVICES)
def _strided_slice(op, device):
    spec = op.get_attr("spec")
    key = tuple(slice(*s[1:]) if s[0] == "slice" else Ellipsis if s[0] == "ellipsis"
                else None if s[0] == "newaxis" else s[1] for s in spec)

    def compute(ctx, inputs):
        try:
            out = inputs[0][key]
        except IndexError as e:
            raise errors.InvalidArgumentError(None, None, "slice index out of bounds: %s"
                                              % e) from None
        return [np.array(out)]
    return compute


@register("Where", ("CPU",))
def _where(op, device):
    return lambda ctx, inputs: [np.argwhere(inputs[0]).astype(np.int64)]


# -- random numbers ---------------------------------------------------------------------------
@register(("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"),
          ALL_DEVICES)
def _random(op, device):
    attrs = op._attrs
    dt = attrs["dtype"].np_dtype
    static_shape = op.outputs[0].shape.as_list() if not op.inputs else None
    seed, seed2 = attrs["seed"], attrs["seed2"]
    key = ("random", op.name)

    def generator(ctx):
        gen = ctx.session_state.get(key)
        if gen is None:
            if seed == 0 and seed2 == 0:
                gen = np.random.Generator(np.random.Philox())
            else:
                gen = np.random.Generator(np.random.Philox(key=[seed, seed2]))
            ctx.session_state[key] = gen
        return gen

    def shape_of(inputs):
        """The static shape, or the run-time one (a tf.shape(x) input)."""
        return static_shape if static_shape is not None else [int(d) for d in inputs[0]]

    if op.type == "RandomUniform":
        lo, hi = attrs["minval"], attrs["maxval"]

        def compute(ctx, inputs):
            u = generator(ctx).random(shape_of(inputs), dtype=np.float64)
            return [(lo + (hi - lo) * u).astype(dt)]
    elif op.type == "RandomUniformInt":
        lo, hi = attrs["minval"], attrs["maxval"]

        def compute(ctx, inputs):
            if lo >= hi:
                raise errors.InvalidArgumentError(
                    None, None, "Need minval < maxval, got %d >= %d" % (lo, hi))
            return [generator(ctx).integers(lo, hi, size=shape_of(inputs)).astype(dt)]
    elif op.type == "RandomStandardNormal":
        mean, std = attrs["mean"], attrs["stddev"]

        def compute(ctx, inputs):
            return [(mean + std * generator(ctx).standard_normal(shape_of(inputs))).astype(dt)]
    else:
        mean, std = attrs["mean"], attrs["stddev"]

        def compute(ctx, inputs):
            gen = generator(ctx)
            z = gen.standard_normal(shape_of(inputs))
            bad = np.abs(z) > 2.0
            while bad.any():  # redraw samples outside two standard deviations
                z[bad] = gen.standard_normal(int(bad.sum()))
                bad = np.abs(z) > 2.0
            return [(mean + std * z).astype(dt)]
    return compute



@register("OneHot", ALL_DEVICES)
def _one_hot(op, device):
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


@register("Tile", ALL_DEVICES)
def _tile(op, device):
    def compute(ctx, inputs):
        x, reps = inputs
        reps = [int(r) for r in reps]
        if len(reps) != x.ndim:
            raise errors.InvalidArgumentError(
                None, None, "Expected multiples argument to be a vector of length %d but "
                "got length %d" % (x.ndim, len(reps)))
        return [np.tile(x, reps)]
    return compute


@register(("Split", "SplitV"), ALL_DEVICES)
def _split(op, device):
    axis, sizes, equal = op.get_attr("axis"), op.get_attr("sizes"), op.type == "Split"

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
