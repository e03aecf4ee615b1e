"""Convolutions and pooling: ``tf.nn.conv2d``, ``max_pool``, ``avg_pool``, their gradients.

All of them slide a small *window* over the two spatial axes of a batch of
images ``x[N, H, W, C]`` (``NHWC``; ``NCHW`` puts the channels second):

* ``Conv2D`` multiplies each window by a filter ``w[KH, KW, C, O]`` and sums,
  for each of the ``O`` output channels::

      y[n, p, q, o] = sum_{i, j, c} x[n, p*sh + i*dh - top, q*sw + j*dw - left, c] * w[i, j, c, o]

  (``sh, sw``: strides; ``dh, dw``: dilations; elements outside the image
  read as 0). A unit of ``y`` sees only a ``KH x KW`` patch of ``x``, and all
  units share the same weights: that is why a convolutional layer has few
  parameters and why a network of them splits across devices cheaply.
* ``MaxPool``/``AvgPool`` take the largest value or the mean of each window,
  channel by channel.

The window geometry comes from the ``padding`` attr: ``VALID`` uses only
windows that fit inside the image (``out = ceil((in - k_eff + 1) / stride)``),
``SAME`` pads so that ``out = ceil(in / stride)``, putting the extra row or
column at the bottom/right when the padding is odd, and ``EXPLICIT`` (conv2d
only) takes the paddings given. :func:`window_geometry` works it out once, in
this module, for every backend: a backend's kernel receives the paddings as
four numbers ``(top, bottom, left, right)``.

The gradients are ops of their own, as in TF: ``Conv2DBackpropInput`` (also
``tf.nn.conv2d_transpose``), ``Conv2DBackpropFilter``, ``MaxPoolGrad`` (each
window's gradient goes to the element that won it) and ``AvgPoolGrad`` (shared
out over the window). TF's CPU kernels take only ``NHWC``; the GPU ones take
both layouts, and so do minitf's (a virtual GPU too). The backends' loop nests:
``minitf/kernels/cpu/conv.py`` (im2col + BLAS), ``minitf/kernels/cuda/conv.py``
and ``minitf/kernels/reference.py``.
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops
from minitf.ops.core import (FLOAT_TYPES, NUMBER_TYPES, check_dtype, convert_to_tensor,
                             dt_enum_name, make_op, name_scope, shape_str)
from minitf.ops.elementwise import FLOAT_NAMES, NUMBER_NAMES

__all__ = ["conv2d", "conv2d_transpose", "conv2d_backprop_input", "conv2d_backprop_filter",
           "max_pool", "max_pool2d", "avg_pool", "avg_pool2d", "window_geometry"]

_FORMATS = ("NHWC", "NCHW")


# -- the geometry of a window ------------------------------------------------------------------
def window_geometry(size, k, stride, dilation, padding, explicit=(0, 0)):
    """``(out, before, after)``: the output length along one spatial axis of length
    ``size`` for a window of ``k`` taps ``dilation`` apart moved ``stride`` at a
    time, and the padding added before and after. ``out`` may be <= 0 (too big
    a window for VALID); the caller reports that."""
    effective = (k - 1) * dilation + 1
    if padding == "VALID":
        return (size - effective + stride) // stride, 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit
    return (size + before + after - effective) // stride + 1, before, after


def _spatial(fmt):
    """The axes of height, width and channels in a layout."""
    return (2, 3, 1) if fmt == "NCHW" else (1, 2, 3)


def _pair(values, fmt):
    """The (height, width) entries of a 4-list of ``strides``/``ksize``/``dilations``."""
    h, w, _ = _spatial(fmt)
    return int(values[h]), int(values[w])


def _nhwc_dims(shape, fmt):
    """``(N, H, W, C)`` of an array shape in layout ``fmt``."""
    n = shape[0]
    h, w, c = _spatial(fmt)
    return int(n), int(shape[h]), int(shape[w]), int(shape[c])


def _layout(n, h, w, c, fmt):
    return [n, c, h, w] if fmt == "NCHW" else [n, h, w, c]


def _explicit_pairs(flat, fmt):
    """``((top, bottom), (left, right))`` from the 8-list of ``explicit_paddings``."""
    if not flat:
        return (0, 0), (0, 0)
    h, w, _ = _spatial(fmt)
    return (flat[2 * h], flat[2 * h + 1]), (flat[2 * w], flat[2 * w + 1])


def _check_on_device(ctx, op, fmt, exc, message):
    """TF's CPU kernels take NHWC only: refuse NCHW on a CPU device (a GPU,
    virtual or real, computes either layout)."""
    if fmt == "NCHW" and ctx is not None and getattr(ctx.device, "device_type", None) == "CPU":
        raise exc(None, None, message)


def _attr_text(value):
    if isinstance(value, dtypes.DType):
        return dt_enum_name(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"%s"' % value
    if isinstance(value, (list, tuple)):
        return "[%s]" % ", ".join(_attr_text(v) for v in value)
    return str(value)


def _node_text(scope, row, attrs, inputs):
    """``{{node Conv2D}} = Conv2D[T=DT_FLOAT, ...](Conv2D/input, Conv2D/filter)``, the node
    as TF prints it in shape errors."""
    names = [t.name[:-2] if t.name.endswith(":0") else t.name for t in inputs]
    return "{{node %s}} = %s[%s](%s)" % (scope[:-1], row.name, ", ".join(
        "%s=%s" % (k, _attr_text(attrs[k])) for k in sorted(attrs)), ", ".join(names))


def _shape_error(text, scope, row, attrs, inputs):
    return ValueError("%s for '%s' with input shapes: %s." % (
        text, _node_text(scope, row, attrs, inputs), ", ".join(shape_str(t.shape)
                                                                for t in inputs)))


def _static_out(size, k, stride, dilation, padding, explicit, scope, row, attrs, inputs):
    """One static output length (None if unknown); TF's error for a window too big."""
    if size is None or k is None:
        return None
    out, _, _ = window_geometry(size, k, stride, dilation, padding, explicit)
    if out <= 0 or (padding == "VALID" and size < (k - 1) * dilation + 1):
        raise _shape_error("Negative dimension size caused by subtracting %d from %d"
                           % ((k - 1) * dilation + 1, size), scope, row, attrs, inputs)
    return out


def _runtime_out(size, k, stride, dilation, padding, explicit):
    out, before, after = window_geometry(size, k, stride, dilation, padding, explicit)
    if out <= 0:
        raise errors.InvalidArgumentError(
            None, None, "Computed output size would be negative: %d [input_size: %d, "
            "effective_filter_size: %d, stride: %d]" % (out, size, (k - 1) * dilation + 1,
                                                        stride))
    return out, before, after


# -- the arguments the tf.nn functions take -----------------------------------------------------
def _sequence(value, name, fmt, what="strides"):
    """TF's ``_get_sequence``: an int, or a list of 1, 2 or 4 ints, as the 4-list of
    the op's attr (1 on the batch and channel axes)."""
    if value is None:
        return [1, 1, 1, 1]
    if isinstance(value, (int, np.integer)):
        value = [int(value)]
    value = [int(v) for v in value]
    h, w, _ = _spatial(fmt)
    if len(value) == 1:
        value = value * 2
    if len(value) == 2:
        out = [1, 1, 1, 1]
        out[h], out[w] = value
        return out
    if len(value) == 4:
        return value
    raise ValueError("%s should be of length 1, 2 or 4. Received: %s=%s of length %d"
                     % (what, what, value, len(value)))


def _data_format(data_format, op_name):
    fmt = "NHWC" if data_format is None else data_format
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt not in _FORMATS:
        raise ValueError("minitf's %s takes data_format 'NHWC' or 'NCHW', not %r "
                         "(TF's other layouts, such as NCHW_VECT_C, are GPU-only int8 "
                         "formats minitf does not have)." % (op_name, data_format))
    return fmt


def _padding(padding, fmt, op_name, explicit_allowed=True):
    """``(padding attr, explicit_paddings attr)`` from a string or a list of pairs."""
    if isinstance(padding, (list, tuple)):
        if not explicit_allowed:
            raise errors.UnimplementedError(
                None, None, "minitf's %s takes padding 'SAME' or 'VALID'; explicit paddings "
                "are only supported by conv2d. Pad the input with tf.pad first." % op_name)
        pairs = [[int(a), int(b)] for a, b in padding]
        if len(pairs) != 4:
            raise ValueError("When padding is explicit, it must be a list of size 4. Got: %r"
                             % (padding,))
        _, _, c = _spatial(fmt)
        if pairs[0] != [0, 0] or pairs[c] != [0, 0]:
            raise ValueError("The padding for the batch and channel dimensions must be zero.")
        return "EXPLICIT", [v for pair in pairs for v in pair]
    if isinstance(padding, bytes):
        padding = padding.decode()
    allowed = ('"SAME", "VALID", "EXPLICIT"' if explicit_allowed else '"SAME", "VALID"')
    if padding not in ("SAME", "VALID"):
        raise ValueError("Attr 'padding' of '%s' Op passed string '%s' not in: %s."
                         % (op_name, padding, allowed))
    return padding, []


# ========================================================================= Conv2D ===
def _conv_attrs(op):
    fmt = op.get_attr("data_format")
    return (fmt, _pair(op.get_attr("strides"), fmt), _pair(op.get_attr("dilations"), fmt),
            op.get_attr("padding"), _explicit_pairs(list(op.get_attr("explicit_paddings")), fmt))


def _check_conv_strides(op):
    fmt = op.get_attr("data_format")
    _, _, c = _spatial(fmt)
    strides, dilations = op.get_attr("strides"), op.get_attr("dilations")
    if strides[0] != 1 or strides[c] != 1:
        raise errors.UnimplementedError(
            None, None, "Current implementation does not yet support strides in the batch "
            "and depth dimensions.")
    if dilations[0] != 1 or dilations[c] != 1:
        raise errors.UnimplementedError(
            None, None, "Current implementation does not yet support dilations in the batch "
            "and depth dimensions.")


def _conv_geometry(op, input_shape, filter_shape):
    """``(strides, dilations, pads, (out_h, out_w))`` for an input and filter shape."""
    fmt, strides, dilations, padding, (eh, ew) = _conv_attrs(op)
    _, h, w, _ = _nhwc_dims(input_shape, fmt)
    oh, pt, pb = _runtime_out(h, int(filter_shape[0]), strides[0], dilations[0], padding, eh)
    ow, pl, pr = _runtime_out(w, int(filter_shape[1]), strides[1], dilations[1], padding, ew)
    return strides, dilations, (pt, pb, pl, pr), (oh, ow)


def _check_depths(input_shape, filter_shape, fmt):
    if len(input_shape) != 4:
        raise errors.InvalidArgumentError(None, None, "input must be 4-dimensional%s"
                                          % list(input_shape))
    if len(filter_shape) != 4:
        raise errors.InvalidArgumentError(None, None, "filter must be 4-dimensional: %s"
                                          % list(filter_shape))
    depth = _nhwc_dims(input_shape, fmt)[3]
    if depth != int(filter_shape[2]):
        raise errors.InvalidArgumentError(
            None, None, "input depth must be evenly divisible by filter depth: %d vs %d"
            % (depth, int(filter_shape[2])))


def _conv2d_kernel(op, backend):
    conv = backend.conv2d
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        x, w = inputs
        return [conv(x, w, *_checked_conv2d(ctx, op, fmt, x, w))]
    return compute


def _checked_conv2d(ctx, op, fmt, x, w):
    """Conv2D's checks of its inputs; its ``(strides, dilations, pads, fmt)``."""
    _check_on_device(ctx, op, fmt, errors.UnimplementedError,
                     "The Conv2D op currently only supports the NHWC tensor format on the "
                     "CPU. The op was given the format: NCHW")
    _check_conv_strides(op)
    _check_depths(x.shape, w.shape, fmt)
    strides, dilations, pads, _ = _conv_geometry(op, x.shape, w.shape)
    return strides, dilations, pads, fmt


def fused_conv2d_kernel(op, backend):
    """``compute(ctx, x, w, bias, relu) -> y``: Conv2D ``op`` with a BiasAdd (and,
    with ``relu``, a Relu) applied to its output as it is computed, TF's
    ``_FusedConv2D``. minitf/runtime/remapper.py builds it where a graph has
    the three ops in a row; the CPU backend's ``conv2d`` takes the epilogue."""
    conv = backend.conv2d
    fmt = op.get_attr("data_format")

    def compute(ctx, x, w, bias, relu):
        return conv(x, w, *_checked_conv2d(ctx, op, fmt, x, w), bias=bias, relu=relu)
    return compute


def _conv_grad_attrs(op):
    return {k: op.get_attr(k) for k in ("strides", "padding", "explicit_paddings",
                                        "data_format", "dilations", "use_cudnn_on_gpu")}


def _conv2d_grad(op, grad):
    x, w = op.inputs
    attrs = _conv_grad_attrs(op)
    return [conv2d_backprop_input(array_ops.shape(x), w, grad, **attrs),
            conv2d_backprop_filter(x, array_ops.shape(w), grad, **attrs)]


def _images(n, h, w, c, dtype, k=0, fmt="NHWC"):
    v = ((np.arange(n * h * w * c) * 7 + k) % 11 - 5).reshape(n, h, w, c) / 4.0
    if fmt == "NCHW":
        v = v.transpose(0, 3, 1, 2)
    v = np.ascontiguousarray(v)
    return v.astype(np.float32).astype(dtype) if dtype != "float64" else v


def _filters(kh, kw, c, o, dtype, k=0):
    v = ((np.arange(kh * kw * c * o) * 5 + k) % 9 - 4).reshape(kh, kw, c, o) / 8.0
    return v.astype(np.float32).astype(dtype) if dtype != "float64" else v


#: (input NHWC dims, filter dims, conv2d keyword arguments) of the parity examples:
#: SAME and VALID, strides 1 and 2, a dilation, NCHW, explicit padding, one
#: large enough for the threaded kernels, and one-channel inputs.
_CONV_CASES = [
    ((2, 5, 5, 3), (3, 3, 3, 4), dict(strides=[1, 1, 1, 1], padding="SAME")),
    ((1, 6, 7, 2), (3, 2, 2, 3), dict(strides=[1, 2, 2, 1], padding="VALID")),
    ((2, 7, 6, 2), (2, 3, 2, 2), dict(strides=[1, 2, 1, 1], padding="SAME",
                                      dilations=[1, 2, 1, 1])),
    ((1, 5, 4, 2), (3, 3, 2, 2), dict(strides=[1, 1, 2, 1],
                                      padding=[[0, 0], [1, 2], [0, 1], [0, 0]])),
    ((2, 5, 6, 3), (3, 3, 3, 2), dict(strides=[1, 1, 2, 2], padding="SAME",
                                      data_format="NCHW")),
    ((8, 28, 28, 4), (5, 5, 4, 16), dict(strides=[1, 1, 1, 1], padding="SAME")),
    # one input channel (its columns are built transposed): a row stride, a column
    # dilation, explicit padding, and one large enough for the chunk threads
    ((2, 6, 7, 1), (3, 4, 1, 3), dict(strides=[1, 2, 1, 1], padding="SAME",
                                      dilations=[1, 1, 2, 1])),
    ((3, 9, 8, 1), (5, 5, 1, 4), dict(strides=[1, 1, 1, 1],
                                      padding=[[0, 0], [2, 1], [0, 3], [0, 0]])),
    ((32, 28, 28, 1), (5, 5, 1, 32), dict(strides=[1, 1, 1, 1], padding="SAME")),
]


def _conv_example_arrays(dtype, xdims, fdims, kw):
    fmt = kw.get("data_format", "NHWC")
    return _images(*xdims, dtype, fmt=fmt), _filters(*fdims, dtype)


def _conv2d_examples(dtype):
    out = []
    for xdims, fdims, kw in _CONV_CASES:
        x, w = _conv_example_arrays(dtype, xdims, fdims, kw)
        out.append(([x, w], lambda x, w, kw=kw: conv2d(x, w, **kw)))
    return out


def _dy_for(dtype, xdims, fdims, kw):
    """An output gradient of the right shape for one of the _CONV_CASES."""
    fmt = kw.get("data_format", "NHWC")
    strides = _sequence(kw["strides"], "strides", fmt)
    dil = _sequence(kw.get("dilations"), "dilations", fmt, "dilations")
    padding, explicit = _padding(kw["padding"], fmt, "Conv2D")
    h, w, _ = _spatial(fmt)
    pairs = [(explicit[2 * a], explicit[2 * a + 1]) if explicit else (0, 0) for a in (h, w)]
    oh = window_geometry(xdims[1], fdims[0], strides[h], dil[h], padding, pairs[0])[0]
    ow = window_geometry(xdims[2], fdims[1], strides[w], dil[w], padding, pairs[1])[0]
    return _images(xdims[0], oh, ow, fdims[3], dtype, k=3, fmt=fmt)


def _input_sizes(xdims, fmt):
    return np.array(_layout(*xdims, fmt), np.int32)


def _backprop_input_examples(dtype):
    out = []
    for xdims, fdims, kw in _CONV_CASES:
        fmt = kw.get("data_format", "NHWC")
        _, w = _conv_example_arrays(dtype, xdims, fdims, kw)
        dy = _dy_for(dtype, xdims, fdims, kw)
        sizes = _input_sizes(xdims, fmt)
        out.append(([w, dy], lambda w, dy, kw=kw, sizes=sizes: conv2d_backprop_input(
            sizes, w, dy, **_grad_kwargs(kw))))
    return out


def _backprop_filter_examples(dtype):
    out = []
    for xdims, fdims, kw in _CONV_CASES:
        x, _ = _conv_example_arrays(dtype, xdims, fdims, kw)
        dy = _dy_for(dtype, xdims, fdims, kw)
        sizes = np.array(fdims, np.int32)
        out.append(([x, dy], lambda x, dy, kw=kw, sizes=sizes: conv2d_backprop_filter(
            x, sizes, dy, **_grad_kwargs(kw))))
    return out


def _grad_kwargs(kw):
    """conv2d's keyword arguments as the backprop ops' attrs."""
    fmt = kw.get("data_format", "NHWC")
    padding, explicit = _padding(kw["padding"], fmt, "Conv2D")
    return dict(strides=_sequence(kw["strides"], "strides", fmt), padding=padding,
                explicit_paddings=explicit, data_format=fmt,
                dilations=_sequence(kw.get("dilations"), "dilations", fmt, "dilations"))


_CONV_INT = ("int32",) + FLOAT_NAMES
CONV2D = declare(OpDef(
    "Conv2D", inputs=("input", "filter"),
    attrs=("T", "strides", "use_cudnn_on_gpu", "padding", "explicit_paddings", "data_format",
           "dilations"),
    gradient=_conv2d_grad, devices={"CPU": _CONV_INT, "GPU": FLOAT_NAMES},
    kernel=_conv2d_kernel, kernel_reads=BACKEND, examples=_conv2d_examples,
    expensive=True))


# ============================================================ Conv2DBackpropInput ===
def _check_backprop_sizes(op, input_shape, filter_shape, dy_shape, which):
    fmt = op.get_attr("data_format")
    strides, dilations, _, (oh, ow) = _conv_geometry(op, input_shape, filter_shape)
    _, h, w, _ = _nhwc_dims(input_shape, fmt)
    _, dh, dw, do = _nhwc_dims(dy_shape, fmt)
    for axis, (actual, computed, size, k) in enumerate(
            ((dh, oh, h, filter_shape[0]), (dw, ow, w, filter_shape[1]))):
        if actual != computed:
            raise errors.InvalidArgumentError(
                None, None, "%s: Size of out_backprop doesn't match computed: actual = %d, "
                "computed = %d spatial_dim: %d input: %d filter: %d output: %d stride: %d "
                "dilation: %d" % (which, actual, computed, _spatial(fmt)[axis], size, int(k),
                                  actual, strides[axis], dilations[axis]))
    if do != int(filter_shape[3]):
        raise errors.InvalidArgumentError(
            None, None, "%s: Size of out_backprop doesn't match computed: actual = %d, "
            "computed = %d" % (which, do, int(filter_shape[3])))


def _backprop_input_kernel(op, backend):
    backprop = backend.conv2d_backprop_input
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        sizes, w, dy = inputs
        _check_on_device(ctx, op, fmt, errors.InvalidArgumentError,
                         "Conv2DCustomBackpropInputOp only supports NHWC.")
        _check_conv_strides(op)
        input_shape = tuple(int(d) for d in np.asarray(sizes).reshape(-1))
        _check_depths(input_shape, w.shape, fmt)
        _check_backprop_sizes(op, input_shape, w.shape, dy.shape, "Conv2DCustomBackpropInput")
        strides, dilations, pads, _ = _conv_geometry(op, input_shape, w.shape)
        return [backprop(input_shape, w, dy, strides, dilations, pads, fmt)]
    return compute


def _backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _conv_grad_attrs(op)
    return [None, conv2d_backprop_filter(grad, array_ops.shape(w), dy, **attrs),
            conv2d(grad, w, name="Conv2D", **_as_conv_kwargs(attrs))]


CONV2D_BACKPROP_INPUT = declare(OpDef(
    "Conv2DBackpropInput", inputs=("input_sizes", "filter", "out_backprop"),
    attrs=("T", "strides", "use_cudnn_on_gpu", "padding", "explicit_paddings", "data_format",
           "dilations"),
    gradient=_backprop_input_grad, devices={"CPU": _CONV_INT, "GPU": FLOAT_NAMES},
    kernel=_backprop_input_kernel, kernel_reads=BACKEND, host_memory_inputs=(0,),
    examples=_backprop_input_examples, expensive=True))


# =========================================================== Conv2DBackpropFilter ===
def _backprop_filter_kernel(op, backend):
    backprop = backend.conv2d_backprop_filter
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        x, sizes, dy = inputs
        _check_on_device(ctx, op, fmt, errors.InvalidArgumentError,
                         "Conv2DCustomBackpropFilterOp only supports NHWC.")
        _check_conv_strides(op)
        filter_shape = tuple(int(d) for d in np.asarray(sizes).reshape(-1))
        _check_depths(x.shape, filter_shape, fmt)
        _check_backprop_sizes(op, x.shape, filter_shape, dy.shape,
                              "Conv2DCustomBackpropFilter")
        strides, dilations, pads, _ = _conv_geometry(op, x.shape, filter_shape)
        return [backprop(x, filter_shape, dy, strides, dilations, pads, fmt)]
    return compute


def _backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _conv_grad_attrs(op)
    return [conv2d_backprop_input(array_ops.shape(x), grad, dy, **attrs), None,
            conv2d(x, grad, name="Conv2D", **_as_conv_kwargs(attrs))]


CONV2D_BACKPROP_FILTER = declare(OpDef(
    "Conv2DBackpropFilter", inputs=("input", "filter_sizes", "out_backprop"),
    attrs=("T", "strides", "use_cudnn_on_gpu", "padding", "explicit_paddings", "data_format",
           "dilations"),
    gradient=_backprop_filter_grad, devices={"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES},
    kernel=_backprop_filter_kernel, kernel_reads=BACKEND, host_memory_inputs=(1,),
    examples=_backprop_filter_examples, expensive=True))


# ====================================================================== pooling ===
def _pool_attrs(op):
    fmt = op.get_attr("data_format")
    return fmt, _pair(op.get_attr("ksize"), fmt), _pair(op.get_attr("strides"), fmt), \
        op.get_attr("padding")


def _check_pool_window(op):
    fmt = op.get_attr("data_format")
    _, _, c = _spatial(fmt)
    ksize, strides = op.get_attr("ksize"), op.get_attr("strides")
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(None, None, "Pooling is not yet supported on the "
                                        "batch dimension.")
    if ksize[c] != 1 or strides[c] != 1:
        raise errors.UnimplementedError(
            None, None, "minitf's %s pools over height and width only; ksize and strides "
            "must be 1 on the depth axis (depthwise pooling is not supported)." % op.type)


def _pool_geometry(op, input_shape):
    fmt, ksize, strides, padding = _pool_attrs(op)
    _, h, w, _ = _nhwc_dims(input_shape, fmt)
    oh, pt, pb = _runtime_out(h, ksize[0], strides[0], 1, padding, (0, 0))
    ow, pl, pr = _runtime_out(w, ksize[1], strides[1], 1, padding, (0, 0))
    return ksize, strides, (pt, pb, pl, pr), (oh, ow)


def _check_pool_input(shape, what="input"):
    if len(shape) != 4:
        raise errors.InvalidArgumentError(None, None, "%s must be 4-dimensional" % what)


def _pool_kernel(op, backend):
    pool = backend.max_pool if op.type == MAX_POOL.name else backend.avg_pool
    fmt = op.get_attr("data_format")
    name = "MaxPoolingOp" if op.type == MAX_POOL.name else "AvgPoolingOp"

    def compute(ctx, inputs):
        x, = inputs
        _check_on_device(ctx, op, fmt, errors.InvalidArgumentError,
                         "Default %s only supports NHWC on device type CPU" % name)
        _check_pool_window(op)
        _check_pool_input(x.shape)
        ksize, strides, pads, _ = _pool_geometry(op, x.shape)
        return [pool(x, ksize, strides, pads, fmt)]
    return compute


def _pool_grad_attrs(op):
    return {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


def _max_pool_grad(op, grad):
    return [max_pool_grad(op.inputs[0], op.outputs[0], grad, **_pool_grad_attrs(op))]


def _avg_pool_grad(op, grad):
    return [avg_pool_grad(array_ops.shape(op.inputs[0]), grad, **_pool_grad_attrs(op))]


#: (input NHWC dims, ksize, strides, padding, data_format) of the pooling examples.
_POOL_CASES = [
    ((2, 4, 4, 3), 2, 2, "VALID", "NHWC"),
    ((1, 5, 5, 2), 3, 2, "SAME", "NHWC"),
    ((2, 5, 4, 2), [3, 2], [1, 2], "SAME", "NHWC"),
    ((1, 6, 5, 2), 2, 1, "VALID", "NCHW"),
    ((16, 28, 28, 8), 2, 2, "SAME", "NHWC"),
    ((11, 28, 28, 128), 3, 2, "SAME", "NHWC"),      # large: its images split over threads
]


def _pool_values(dims, dtype, fmt, k=0):
    """Small integers with ties (exact in every dtype, so the winners are the same)."""
    n, h, w, c = dims
    v = ((np.arange(n * h * w * c) * 5 + k) % 7 - 3).reshape(n, h, w, c).astype(np.float64)
    if fmt == "NCHW":
        v = v.transpose(0, 3, 1, 2)
    v = np.ascontiguousarray(v)
    return v.astype(dtypes.as_dtype(dtype).np_dtype)


def _pool_examples(api):
    def examples(dtype):
        return [([_pool_values(dims, dtype, fmt)],
                 lambda x, k=k, s=s, p=p, f=fmt: api(x, k, s, p, data_format=f))
                for dims, k, s, p, fmt in _POOL_CASES]
    return examples


def _pool_out_dims(dims, k, s, padding, fmt):
    ks, ss = _sequence(k, "ksize", "NHWC", "ksize"), _sequence(s, "strides", "NHWC")
    oh = window_geometry(dims[1], ks[1], ss[1], 1, padding)[0]
    ow = window_geometry(dims[2], ks[2], ss[2], 1, padding)[0]
    return (dims[0], oh, ow, dims[3])


def _grad_pool_kwargs(k, s, padding, fmt):
    return dict(ksize=_sequence(k, "ksize", fmt, "ksize"), strides=_sequence(s, "strides", fmt),
                padding=padding, data_format=fmt)


def _max_pool_grad_examples(dtype):
    """``orig_output`` is only checked for its shape: the kernels find each window's
    winner again from ``orig_input``, as TF's CPU kernel does."""
    out = []
    for dims, k, s, p, fmt in _POOL_CASES:
        x = _pool_values(dims, dtype, fmt)
        odims = _pool_out_dims(dims, k, s, p, fmt)
        y = np.zeros(_layout(*odims, fmt), x.dtype)
        dy = _pool_values(odims, dtype, fmt, k=2)
        out.append(([x, y, dy], lambda x, y, dy, kw=_grad_pool_kwargs(k, s, p, fmt):
                    max_pool_grad(x, y, dy, **kw)))
    return out


def _avg_pool_grad_examples(dtype):
    out = []
    for dims, k, s, p, fmt in _POOL_CASES:
        odims = _pool_out_dims(dims, k, s, p, fmt)
        dy = _pool_values(odims, dtype, fmt, k=2)
        sizes = np.array(_layout(*dims, fmt), np.int32)
        out.append(([dy], lambda dy, sizes=sizes, kw=_grad_pool_kwargs(k, s, p, fmt):
                    avg_pool_grad(sizes, dy, **kw)))
    return out


_POOL_ATTRS = ("T", "ksize", "strides", "padding", "data_format")
MAX_POOL = declare(OpDef(
    "MaxPool", inputs=("input",), attrs=_POOL_ATTRS + ("explicit_paddings",),
    gradient=_max_pool_grad, devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES},
    kernel=_pool_kernel, kernel_reads=BACKEND,
    examples=_pool_examples(lambda x, k, s, p, data_format: max_pool(x, k, s, p, data_format)),
    expensive=True))
AVG_POOL = declare(OpDef(
    "AvgPool", inputs=("value",), attrs=_POOL_ATTRS, gradient=_avg_pool_grad,
    devices={"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES}, kernel=_pool_kernel,
    kernel_reads=BACKEND,
    examples=_pool_examples(lambda x, k, s, p, data_format: avg_pool(x, k, s, p, data_format)),
    expensive=True))


def _max_pool_grad_kernel(op, backend):
    grad = backend.max_pool_grad
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        x, y, dy = inputs
        _check_on_device(ctx, op, fmt, errors.InvalidArgumentError,
                         "Default MaxPoolingGradOp only supports NHWC on device type CPU")
        _check_pool_window(op)
        _check_pool_input(x.shape, "orig_input")
        ksize, strides, pads, (oh, ow) = _pool_geometry(op, x.shape)
        expected = tuple(_layout(x.shape[0], oh, ow, _nhwc_dims(x.shape, fmt)[3], fmt))
        if tuple(dy.shape) != expected or tuple(y.shape) != expected:
            raise errors.InvalidArgumentError(
                None, None, "Expected grad shape to be %s, but got %s"
                % (list(expected), list(dy.shape)))
        return [grad(x, y, dy, ksize, strides, pads, fmt)]
    return compute


def _avg_pool_grad_kernel(op, backend):
    grad = backend.avg_pool_grad
    fmt = op.get_attr("data_format")

    def compute(ctx, inputs):
        sizes, dy = inputs
        _check_on_device(ctx, op, fmt, errors.InvalidArgumentError,
                         "Default AvgPoolingGradOp only supports NHWC on device type CPU")
        _check_pool_window(op)
        shape = tuple(int(d) for d in np.asarray(sizes).reshape(-1))
        if len(shape) != 4:
            raise errors.InvalidArgumentError(
                None, None, "orig_input_shape must be 1-dimensional and 4 elements")
        ksize, strides, pads, (oh, ow) = _pool_geometry(op, shape)
        expected = tuple(_layout(shape[0], oh, ow, _nhwc_dims(shape, fmt)[3], fmt))
        if tuple(dy.shape) != expected:
            raise errors.InvalidArgumentError(
                None, None, "Expected grad shape to be %s, but got %s"
                % (list(expected), list(dy.shape)))
        return [grad(shape, dy, ksize, strides, pads, fmt)]
    return compute


def _avg_pool_grad_grad(op, grad):
    attrs = _pool_grad_attrs(op)
    return [None, avg_pool(grad, attrs["ksize"], attrs["strides"], attrs["padding"],
                           data_format=attrs["data_format"])]


MAX_POOL_GRAD = declare(OpDef(
    "MaxPoolGrad", inputs=("orig_input", "orig_output", "grad"),
    attrs=_POOL_ATTRS + ("explicit_paddings",),
    devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES}, kernel=_max_pool_grad_kernel,
    kernel_reads=BACKEND, examples=_max_pool_grad_examples, expensive=True))
AVG_POOL_GRAD = declare(OpDef(
    "AvgPoolGrad", inputs=("orig_input_shape", "grad"), attrs=_POOL_ATTRS,
    gradient=_avg_pool_grad_grad, devices={"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES},
    kernel=_avg_pool_grad_kernel, kernel_reads=BACKEND, host_memory_inputs=(0,),
    examples=_avg_pool_grad_examples, expensive=True))


# ============================================================= the tf.nn functions ===
def _as_conv_kwargs(attrs):
    """Backprop attrs -> conv2d keyword arguments (the explicit pairs rebuilt)."""
    padding = attrs["padding"]
    if padding == "EXPLICIT":
        flat = list(attrs["explicit_paddings"])
        padding = [flat[i:i + 2] for i in range(0, 8, 2)]
    return dict(strides=attrs["strides"], padding=padding, data_format=attrs["data_format"],
                dilations=attrs["dilations"], use_cudnn_on_gpu=attrs["use_cudnn_on_gpu"])


def _conv_attr_dict(dt, strides, padding, explicit, fmt, dilations, use_cudnn_on_gpu):
    return {"T": dt, "strides": strides, "use_cudnn_on_gpu": bool(use_cudnn_on_gpu),
            "padding": padding, "explicit_paddings": explicit, "data_format": fmt,
            "dilations": dilations}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=None, name=None, filters=None):
    """A 2-D convolution of ``input`` ``[N, H, W, C]`` with ``filter`` ``[KH, KW, C, O]``
    (see the module docstring): ``[N, OH, OW, O]``.

    ``strides`` and ``dilations``: an int or a list of 1, 2 or 4 ints (1 on the
    batch and channel axes); ``padding``: ``"SAME"``, ``"VALID"`` or explicit
    ``[[0, 0], [top, bottom], [left, right], [0, 0]]``; ``data_format``:
    ``"NHWC"`` or ``"NCHW"`` (NCHW runs on GPUs only, as in TF).
    ``use_cudnn_on_gpu`` is recorded as TF does; minitf never uses cuDNN.
    """
    filter = filters if filter is None else filter
    if filter is None:
        raise ValueError("conv2d needs a filter: pass filter= (or filters=).")
    if padding is None:
        raise ValueError("conv2d needs padding: 'SAME', 'VALID' or a list of pairs.")
    fmt = _data_format(data_format, "conv2d")
    strides = _sequence(strides, "strides", fmt)
    dilations = _sequence(dilations, "dilations", fmt, "dilations")
    with name_scope(name, "Conv2D", [input, filter]) as scope:
        padding, explicit = _padding(padding, fmt, "Conv2D")   # (TF takes the name first)
        x = convert_to_tensor(input, name="input")
        w = convert_to_tensor(filter, dtype_hint=x.dtype.base_dtype, name="filter")
        check_dtype(x, FLOAT_TYPES + (dtypes.int32,), arg="input")
        if w.dtype.base_dtype != x.dtype.base_dtype:
            raise TypeError("Input 'filter' of 'Conv2D' Op has type %s that does not match "
                            "type %s of argument 'input'." % (w.dtype.base_dtype.name,
                                                              x.dtype.base_dtype.name))
        dt = x.dtype.base_dtype
        attrs = _conv_attr_dict(dt, strides, padding, explicit, fmt, dilations,
                                use_cudnn_on_gpu)
        shape = _conv_shape(x, w, attrs, scope, CONV2D)
        op = make_op(CONV2D, [x, w], [dt], [shape], name=scope, attrs=attrs)
    return op.outputs[0]


def _conv_shape(x, w, attrs, scope, row):
    """The static shape of a Conv2D (TF's shape function and its errors)."""
    inputs = [x, w]
    for t in inputs:
        if t.shape.ndims is not None and t.shape.ndims != 4:
            raise _shape_error("Shape must be rank 4 but is rank %d" % t.shape.ndims, scope,
                               row, attrs, inputs)
    fmt = attrs["data_format"]
    if x.shape.ndims is None:
        dims = [None] * 4
    else:
        hi, wi, ci = _spatial(fmt)
        xd = x.shape.as_list()
        dims = [xd[0], xd[hi], xd[wi], xd[ci]]
    fd = w.shape.as_list() if w.shape.ndims is not None else [None] * 4
    if dims[3] is not None and fd[2] is not None:
        if dims[3] % fd[2]:
            raise _shape_error("Depth of input (%d) is not a multiple of input depth of filter "
                               "(%d)" % (dims[3], fd[2]), scope, row, attrs, inputs)
        if dims[3] != fd[2]:
            raise errors.UnimplementedError(
                None, None, "minitf's conv2d does not support grouped convolutions: the input "
                "has %d channels and the filter takes %d; give the filter [KH, KW, %d, O]."
                % (dims[3], fd[2], dims[3]))
    strides = _pair(attrs["strides"], fmt)
    dil = _pair(attrs["dilations"], fmt)
    eh, ew = _explicit_pairs(attrs["explicit_paddings"], fmt)
    padding = attrs["padding"]
    oh = _static_out(dims[1], fd[0], strides[0], dil[0], padding, eh, scope, row, attrs, inputs)
    ow = _static_out(dims[2], fd[1], strides[1], dil[1], padding, ew, scope, row, attrs, inputs)
    return TensorShape(_layout(dims[0], oh, ow, fd[3], fmt))


def _sizes_tensor(sizes, name):
    t = convert_to_tensor(sizes, dtype_hint=dtypes.int32, name=name)
    if t.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("%s must be int32 or int64, got %s" % (name, t.dtype.name))
    return t, _constant_value(t)


def _constant_value(t):
    """The value of a tensor known now (a Const, or tf.shape of a fully known shape)."""
    if t.op.type == "Const":
        return [int(v) for v in np.asarray(t.op.get_attr("value")).reshape(-1)]
    if t.op.type == "Shape" and t.op.inputs[0].shape.is_fully_defined():
        return t.op.inputs[0].shape.as_list()
    return None


def _backprop_attrs(dt, strides, padding, explicit_paddings, data_format, dilations,
                    use_cudnn_on_gpu):
    fmt = _data_format(data_format, "conv2d")
    if isinstance(padding, (list, tuple)) and padding and isinstance(padding[0], (list, tuple)):
        padding, explicit_paddings = _padding(padding, fmt, "Conv2D")
    else:
        padding = padding.decode() if isinstance(padding, bytes) else padding
        if padding not in ("SAME", "VALID", "EXPLICIT"):
            raise ValueError("Attr 'padding' of 'Conv2D' Op passed string '%s' not in: "
                             '"SAME", "VALID", "EXPLICIT".' % padding)
    return _conv_attr_dict(dt, _sequence(strides, "strides", fmt), padding,
                           list(explicit_paddings or []), fmt,
                           _sequence(dilations, "dilations", fmt, "dilations"),
                           use_cudnn_on_gpu)


def conv2d_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                          padding, use_cudnn_on_gpu=True, explicit_paddings=(),
                          data_format="NHWC", dilations=None, name=None):
    """The gradient of conv2d with respect to its input (``tf.nn.conv2d_backprop_input``):
    ``out_backprop`` ``[N, OH, OW, O]`` spread back through ``filter`` onto an
    input of shape ``input_sizes``."""
    with name_scope(name, "Conv2DBackpropInput", [input_sizes, filter, out_backprop]) as scope:
        sizes, static = _sizes_tensor(input_sizes, "input_sizes")
        w = convert_to_tensor(filter, name="filter")
        dy = convert_to_tensor(out_backprop, dtype=w.dtype.base_dtype, name="out_backprop")
        check_dtype(w, FLOAT_TYPES + (dtypes.int32,), arg="filter")
        dt = w.dtype.base_dtype
        attrs = _backprop_attrs(dt, strides, padding, explicit_paddings, data_format,
                                dilations, use_cudnn_on_gpu)
        shape = TensorShape(static) if static is not None else TensorShape([None] * 4)
        op = make_op(CONV2D_BACKPROP_INPUT, [sizes, w, dy], [dt], [shape], name=scope,
                     attrs=attrs)
    return op.outputs[0]


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                           padding, use_cudnn_on_gpu=True, explicit_paddings=(),
                           data_format="NHWC", dilations=None, name=None):
    """The gradient of conv2d with respect to its filter: ``[KH, KW, C, O]`` of shape
    ``filter_sizes``, from ``input`` and ``out_backprop``."""
    with name_scope(name, "Conv2DBackpropFilter", [input, filter_sizes, out_backprop]) as scope:
        x = convert_to_tensor(input, name="input")
        sizes, static = _sizes_tensor(filter_sizes, "filter_sizes")
        dy = convert_to_tensor(out_backprop, dtype=x.dtype.base_dtype, name="out_backprop")
        check_dtype(x, FLOAT_TYPES, arg="input")
        dt = x.dtype.base_dtype
        attrs = _backprop_attrs(dt, strides, padding, explicit_paddings, data_format,
                                dilations, use_cudnn_on_gpu)
        shape = TensorShape(static) if static is not None else TensorShape([None] * 4)
        op = make_op(CONV2D_BACKPROP_FILTER, [x, sizes, dy], [dt], [shape], name=scope,
                     attrs=attrs)
    return op.outputs[0]


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """The transpose of conv2d ("deconvolution"): ``value`` ``[N, H, W, C_in]`` spread
    through ``filter`` ``[KH, KW, C_out, C_in]`` onto ``output_shape`` - the
    gradient conv2d would send back to its input, built as TF builds it, from
    a ``Conv2DBackpropInput`` op."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    fmt = _data_format(data_format, "conv2d_transpose")
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        dy = convert_to_tensor(value, name="value")
        w = convert_to_tensor(filter, dtype=dy.dtype.base_dtype, name="filter")
        sizes, static = _sizes_tensor(output_shape, "input_sizes")
        _, _, ci = _spatial(fmt)
        if dy.shape.ndims == 4 and w.shape.ndims == 4:
            cin, fin = dy.shape[ci].value, w.shape[3].value
            if cin is not None and fin is not None and cin != fin:
                raise ValueError("input channels does not match filter's input channels, "
                                 "{} != {}".format(cin, fin))
        if static is not None and w.shape.ndims == 4:
            cout, fout = static[ci], w.shape[2].value
            if fout is not None and cout != fout:
                raise ValueError("output_shape does not match filter's output channels, "
                                 "{} != {}".format(cout, fout))
        padding_attr, explicit = _padding(padding, fmt, "Conv2DBackpropInput")
        attrs = _conv_attr_dict(dy.dtype.base_dtype, _sequence(strides, "strides", fmt),
                                padding_attr, explicit, fmt,
                                _sequence(dilations, "dilations", fmt, "dilations"), True)
        shape = TensorShape(static) if static is not None else TensorShape([None] * 4)
        op = make_op(CONV2D_BACKPROP_INPUT, [sizes, w, dy], [dy.dtype.base_dtype], [shape],
                     name=scope, attrs=attrs)
    return op.outputs[0]


def _pool(row, value, ksize, strides, padding, data_format, name, default_name, arg):
    fmt = _data_format(data_format, default_name)
    ksize = _sequence(ksize, "ksize", fmt, "ksize")
    strides = _sequence(strides, "strides", fmt)
    if any(k == 0 for k in ksize):
        raise ValueError("`ksize` cannot be zero. Received %s" % ksize)
    padding, _ = _padding(padding, fmt, row.name, explicit_allowed=False)
    with name_scope(name, default_name, [value]) as scope:
        x = convert_to_tensor(value, name=arg)
        check_dtype(x, NUMBER_TYPES if row is MAX_POOL else FLOAT_TYPES, arg=arg)
        dt = x.dtype.base_dtype
        attrs = {"T": dt, "ksize": ksize, "strides": strides, "padding": padding,
                 "data_format": fmt}
        if row is MAX_POOL:
            attrs["explicit_paddings"] = []
        shape = _pool_shape(x, attrs, scope, row)
        op = make_op(row, [x], [dt], [shape], name=scope, attrs=attrs)
    return op.outputs[0]


def _pool_shape(x, attrs, scope, row):
    if x.shape.ndims is None:
        return TensorShape([None] * 4)
    if x.shape.ndims != 4:
        raise _shape_error("Shape must be rank 4 but is rank %d" % x.shape.ndims, scope, row,
                           attrs, [x])
    fmt = attrs["data_format"]
    hi, wi, ci = _spatial(fmt)
    xd = x.shape.as_list()
    ks, ss = _pair(attrs["ksize"], fmt), _pair(attrs["strides"], fmt)
    oh = _static_out(xd[hi], ks[0], ss[0], 1, attrs["padding"], (0, 0), scope, row, attrs, [x])
    ow = _static_out(xd[wi], ks[1], ss[1], 1, attrs["padding"], (0, 0), scope, row, attrs, [x])
    return TensorShape(_layout(xd[0], oh, ow, xd[ci], fmt))


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """The largest value of each ``ksize`` window (TF1's ``tf.nn.max_pool``):
    ``ksize``/``strides`` an int or a list of 1, 2 or 4 ints, ``padding``
    ``"SAME"`` or ``"VALID"``. NaN never wins a window (TF's CPU rule)."""
    value = input if value is None else value
    return _pool(MAX_POOL, value, ksize, strides, padding, data_format, name, "MaxPool",
                 "input")


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: :func:`max_pool` under its TF2 name."""
    return _pool(MAX_POOL, input, ksize, strides, padding, data_format, name, "MaxPool2d",
                 "input")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """The mean of each ``ksize`` window (TF1's ``tf.nn.avg_pool``); with ``"SAME"``
    padding a window at the border averages only the elements inside the image."""
    value = input if value is None else value
    return _pool(AVG_POOL, value, ksize, strides, padding, data_format, name, "AvgPool",
                 "value")


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: :func:`avg_pool` under its TF2 name."""
    return _pool(AVG_POOL, input, ksize, strides, padding, data_format, name, "AvgPool",
                 "value")


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding,
                  data_format="NHWC", name=None):
    """``MaxPoolGrad``: each window's gradient to the element that won the window."""
    with name_scope(name, "MaxPoolGrad", [orig_input, orig_output, grad]) as scope:
        x = convert_to_tensor(orig_input, name="orig_input")
        y = convert_to_tensor(orig_output, dtype=x.dtype.base_dtype, name="orig_output")
        g = convert_to_tensor(grad, dtype=x.dtype.base_dtype, name="grad")
        dt = x.dtype.base_dtype
        op = make_op(MAX_POOL_GRAD, [x, y, g], [dt], [x.shape], name=scope,
                     attrs={"T": dt, "ksize": list(ksize), "strides": list(strides),
                            "padding": padding, "data_format": data_format,
                            "explicit_paddings": []})
    return op.outputs[0]


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NHWC",
                  name=None):
    """``AvgPoolGrad``: each window's gradient shared out over its real elements."""
    with name_scope(name, "AvgPoolGrad", [orig_input_shape, grad]) as scope:
        sizes, static = _sizes_tensor(orig_input_shape, "orig_input_shape")
        g = convert_to_tensor(grad, name="grad")
        dt = g.dtype.base_dtype
        shape = TensorShape(static) if static is not None else TensorShape([None] * 4)
        op = make_op(AVG_POOL_GRAD, [sizes, g], [dt], [shape], name=scope,
                     attrs={"T": dt, "ksize": list(ksize), "strides": list(strides),
                            "padding": padding, "data_format": data_format})
    return op.outputs[0]
