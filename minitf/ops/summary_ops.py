"""Summary ops: ``tf.summary.scalar``, ``histogram``, ``image``, ``text``, ``merge``.

A summary is a graph op like any other. Running it returns one string: a
serialized ``Summary`` protocol buffer (TF's, from ``tensorboard.compat.proto``)
holding one tagged value - a number, a histogram, PNG images, a text tensor -
which a ``tf.summary.FileWriter`` appends to an event file for TensorBoard::

    mse_summary = tf.summary.scalar("MSE", mse)        # op "MSE", tag "MSE"
    summary_str = sess.run(mse_summary, feed_dict)      # b'\\n\\x0b\\n\\x03MSE\\x15...'
    file_writer.add_summary(summary_str, step)

Because the op runs wherever it is placed, the value is summarised on the
task that computes it, and only the few bytes of the Summary travel to the
client that writes the file.

Every summary op is built inside a *summary scope* (TF's ``summary_scope``):
the name, cleaned of characters TensorBoard does not allow, opens a name
scope; the op takes the scope's name and the tag is that name, made unique
like any op name (a second ``scalar("loss", ...)`` is tagged ``loss_1``).
The op is added to the graph collections given (``GraphKeys.SUMMARIES`` by
default), which is what ``merge_all`` merges.

The kernels compute exactly what TF's do (``summary_op.cc``, ``summary_image_op.cc``,
``lib/histogram/histogram.cc``), so the bytes are TF's bytes - except the PNG
inside an image summary, whose compressed bytes depend on the zlib settings
(the pixels are TF's).
"""

import re
import struct
import sys
import zlib

import numpy as np

from minitf.framework import tf_logging as logging
from minitf.framework import dtypes, errors
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.graph_def import tensor_to_proto
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import convert_to_tensor, make_op, name_scope


def _summary_pb2():
    return proto("summary_pb2")


# ===================================================================== ScalarSummary ===
def _scalar_kernel(op, backend):
    """``tags`` and ``values`` of the same shape: one ``simple_value`` per pair."""
    def compute(ctx, inputs):
        tags, values = inputs
        tags = np.asarray(tags, dtype=object)
        values = np.asarray(values)
        if tags.shape != values.shape:
            raise errors.InvalidArgumentError(
                None, None, "tags and values are not the same shape: %s != %s (tag '%s')"
                % (_dims(tags.shape), _dims(values.shape),
                   _text(tags.reshape(-1)[0]) if tags.size else ""))
        summary = _summary_pb2().Summary()
        for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
            summary.value.add(tag=_text(tag), simple_value=float(value))
        return [np.array(summary.SerializeToString(), dtype=object)]
    return compute


def _dims(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def _text(tag):
    return tag.decode("utf-8", "replace") if isinstance(tag, bytes) else str(tag)


_REAL = ("float32", "float64", "int32", "uint8", "int16", "int8", "int64", "bfloat16",
         "uint16", "float16")

SCALAR_SUMMARY = declare(OpDef(
    "ScalarSummary", inputs=("tags", "values"), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
    devices={"CPU": _REAL}, kernel=_scalar_kernel))


# ================================================================== HistogramSummary ===
def _bucket_limits():
    """TF's default histogram buckets: +-1e-12 * 1.1**k up to 1e20, then +-DBL_MAX,
    and 0 between the negative and the positive ones (774 limits)."""
    positive = []
    v = 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    positive.append(sys.float_info.max)
    return np.array([-p for p in reversed(positive)] + [0.0] + positive)


_LIMITS = _bucket_limits()


def histogram_proto(values):
    """A ``HistogramProto`` of ``values`` (float64), as TF's Histogram class
    encodes it: value ``v`` counts in bucket ``i`` when
    ``limit[i-1] <= v < limit[i]``; runs of empty buckets are written as one
    bucket (the run's last limit, count 0); sums are added up in order."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    counts = np.bincount(np.searchsorted(_LIMITS, flat, side="right"),
                         minlength=len(_LIMITS)).astype(np.float64)
    histo = _summary_pb2().HistogramProto()
    if flat.size:
        histo.min = float(flat.min())
        histo.max = float(flat.max())
        histo.sum = float(np.cumsum(flat)[-1])              # sequential, as TF adds
        histo.sum_squares = float(np.cumsum(flat * flat)[-1])
    else:
        histo.min, histo.max = sys.float_info.max, -sys.float_info.max
    histo.num = float(flat.size)
    i, n = 0, len(counts)
    while i < n:
        end, count, j = _LIMITS[i], counts[i], i + 1
        while count <= 0 and j < n and counts[j] <= 0:
            end, count, j = _LIMITS[j], counts[j], j + 1
        histo.bucket_limit.append(float(end))
        histo.bucket.append(float(count))
        i = j
    return histo


def _histogram_kernel(op, backend):
    def compute(ctx, inputs):
        tag, values = inputs
        tag = _text(np.asarray(tag, dtype=object).reshape(-1)[0])
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        bad = ~np.isfinite(flat)
        if bad.any():
            what = "Nan in summary histogram" if np.isnan(flat[bad][0]) else \
                "Infinity in Histogram"          # (TF's two messages differ so)
            raise errors.InvalidArgumentError(None, None, "%s for: %s" % (what, tag))
        summary = _summary_pb2().Summary()
        summary.value.add(tag=tag).histo.CopyFrom(histogram_proto(flat))
        return [np.array(summary.SerializeToString(), dtype=object)]
    return compute


HISTOGRAM_SUMMARY = declare(OpDef(
    "HistogramSummary", inputs=("tag", "values"), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
    devices={"CPU": _REAL}, kernel=_histogram_kernel))


# ====================================================================== ImageSummary ===
def _png(image):
    """``image`` (height x width x channels, uint8) as PNG bytes: 8-bit
    grayscale, gray+alpha, RGB or RGBA, each row with filter type 0."""
    height, width, channels = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + image[r].tobytes() for r in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _to_uint8(image, bad_color):
    """TF's NormalizeFloatImage: all-positive images scale by 255/max, others
    by 127/max|v| around 128; pixels with a non-finite channel get ``bad_color``."""
    hw = image.reshape(-1, image.shape[-1]).astype(np.float32)
    finite = np.isfinite(hw).all(axis=1)
    good = hw[finite]
    lo = float(good.min()) if good.size else float("inf")
    hi = float(good.max()) if good.size else float("-inf")
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = np.float32(0.0 if top < 1e-6 else 127.0 / top), np.float32(128.0)
    else:
        scale, offset = np.float32(0.0 if hi < 1e-6 else 255.0 / hi), np.float32(0.0)
    out = np.zeros(hw.shape, dtype=np.uint8)
    out[finite] = (good * scale + offset).astype(np.uint8)
    depth = hw.shape[1]
    colour = np.zeros(depth, dtype=np.uint8)
    colour[:min(depth, bad_color.size)] = bad_color[:depth]
    out[~finite] = colour
    return out.reshape(image.shape)


def _image_kernel(op, backend):
    max_images = op.get_attr("max_images")
    bad_color = np.asarray(op._attrs.get("bad_color", np.array([255, 0, 0, 255], np.uint8)),
                           dtype=np.uint8).reshape(-1)

    def compute(ctx, inputs):
        tag, tensor = inputs
        tag = _text(np.asarray(tag, dtype=object).reshape(-1)[0])
        tensor = np.asarray(tensor)
        if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
            raise errors.InvalidArgumentError(
                None, None, "Tensor must be 4-D with last dim 1, 3, or 4, not %s"
                % _dims(tensor.shape))
        summary = _summary_pb2().Summary()
        for i in range(min(max_images, tensor.shape[0])):
            image = tensor[i] if tensor.dtype == np.uint8 else _to_uint8(tensor[i], bad_color)
            value = summary.value.add(
                tag="%s/image/%d" % (tag, i) if max_images > 1 else "%s/image" % tag)
            value.image.height, value.image.width = image.shape[0], image.shape[1]
            value.image.colorspace = image.shape[2]
            value.image.encoded_image_string = _png(np.ascontiguousarray(image))
        return [np.array(summary.SerializeToString(), dtype=object)]
    return compute


IMAGE_SUMMARY = declare(OpDef(
    "ImageSummary", inputs=("tag", "tensor"), attrs=("max_images", "T", "bad_color"),
    gradient=NOT_DIFFERENTIABLE, devices={"CPU": ("uint8", "float32", "float16", "float64")},
    kernel=_image_kernel))


# ================================================================== TensorSummaryV2 ===
def _tensor_summary_kernel(op, backend):
    """A whole tensor in the Summary, with the plugin's metadata (``tf.summary.text``
    writes a string tensor for the text plugin). Numbers are packed into
    ``tensor_content`` whatever their size, as TF's AsProtoTensorContent does."""
    def compute(ctx, inputs):
        tag, tensor, metadata = inputs
        summary = _summary_pb2().Summary()
        value = summary.value.add(tag=_text(np.asarray(tag, dtype=object).reshape(-1)[0]))
        value.metadata.ParseFromString(np.asarray(metadata, dtype=object).reshape(-1)[0])
        arr = np.asarray(tensor)
        dt = op.get_attr("T")
        pb = tensor_to_proto(arr, dt)
        if dt != dtypes.string and arr.size <= 1:
            pb.ClearField(_typed_field(pb))
            pb.tensor_content = np.ascontiguousarray(arr.astype(dt.np_dtype)).tobytes()
        value.tensor.CopyFrom(pb)
        return [np.array(summary.SerializeToString(), dtype=object)]
    return compute


def _typed_field(pb):
    for name in ("float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val"):
        if len(getattr(pb, name)):
            return name
    return "float_val"


TENSOR_SUMMARY_V2 = declare(OpDef(
    "TensorSummaryV2", inputs=("tag", "tensor", "serialized_summary_metadata"), attrs=("T",),
    gradient=NOT_DIFFERENTIABLE, kernel=_tensor_summary_kernel))


# ====================================================================== MergeSummary ===
def _merge_kernel(op, backend):
    """Every value of every input Summary, in input order; a tag seen twice is an error."""
    def compute(ctx, inputs):
        merged = _summary_pb2().Summary()
        seen = set()
        for tensor in inputs:
            for blob in np.asarray(tensor, dtype=object).reshape(-1):
                part = _summary_pb2().Summary()
                try:
                    part.ParseFromString(bytes(blob))
                except Exception:
                    raise errors.InvalidArgumentError(
                        None, None, "Could not parse one of the summary inputs") from None
                for value in part.value:
                    if value.tag in seen:
                        raise errors.InvalidArgumentError(
                            None, None, "Duplicate tag %s found in summary inputs " % value.tag)
                    seen.add(value.tag)
                    merged.value.add().CopyFrom(value)
        return [np.array(merged.SerializeToString(), dtype=object)]
    return compute


MERGE_SUMMARY = declare(OpDef(
    "MergeSummary", inputs=("*inputs",), attrs=("N",), gradient=NOT_DIFFERENTIABLE,
    kernel=_merge_kernel))


# ========================================================================== the API ===
_ILLEGAL = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """A tag TensorBoard accepts: characters other than letters, digits, ``_ - . /``
    become ``_`` and leading slashes go (TF logs the change, as here)."""
    if name is None:
        return None
    cleaned = _ILLEGAL.sub("_", name).lstrip("/")
    if cleaned != name:
        logging.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


class _SummaryScope:
    """TF's ``summary_scope``: a name scope named after the summary (under its
    ``family``); yields ``(tag, scope)``."""

    def __init__(self, name, family=None, default_name=None, values=None):
        self._name = clean_tag(name)
        self._family = clean_tag(family)
        self._default = default_name
        self._values = values
        self._scope = None

    def __enter__(self):
        base = self._name if self._family is None else "%s/%s" % (self._family, self._name)
        self._scope = name_scope(base, self._default, self._values)
        scope = self._scope.__enter__()
        tag = scope.rstrip("/")
        if self._family is not None:
            tag = "%s/%s" % (self._family, tag)
        return tag, scope

    def __exit__(self, *exc):
        return self._scope.__exit__(*exc)


def summary_scope(name, family=None, default_name=None, values=None):
    return _SummaryScope(name, family, default_name, values)


def _collect(tensor, collections, default):
    graph = tensor.graph
    for key in (default if collections is None else collections):
        graph.add_to_collection(key, tensor)


def _string_const(value, name):
    return convert_to_tensor(np.array(value, dtype=object), dtype=dtypes.string, name=name)


def scalar(name, tensor, collections=None, family=None):
    """A summary op whose value is ``tensor``, a real number (``simple_value``)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tags = _string_const(tag, "tags")
        tensor = convert_to_tensor(tensor, name="values")
        _check_real(tensor, "values", "ScalarSummary")
        op = make_op(SCALAR_SUMMARY, [tags, tensor], [dtypes.string], [TensorShape([])],
                     name=scope, attrs={"T": tensor.dtype.base_dtype})
    _collect(op.outputs[0], collections, [GraphKeys.SUMMARIES])
    return op.outputs[0]


def _check_real(tensor, arg, op_type):
    if tensor.dtype.base_dtype.name not in _REAL:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s" % (arg, tensor.dtype.base_dtype.name, ", ".join(_REAL)))


def histogram(name, values, collections=None, family=None):
    """A summary op holding a histogram of ``values`` (TensorBoard's
    histograms and distributions dashboards)."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        tag_t = _string_const(tag, "tag")
        values = convert_to_tensor(values, name="values")
        _check_real(values, "values", "HistogramSummary")
        op = make_op(HISTOGRAM_SUMMARY, [tag_t, values], [dtypes.string], [TensorShape([])],
                     name=scope, attrs={"T": values.dtype.base_dtype})
    _collect(op.outputs[0], collections, [GraphKeys.SUMMARIES])
    return op.outputs[0]


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A summary op holding up to ``max_outputs`` images of ``tensor``
    ([batch, height, width, 1|3|4]; floats are rescaled to 0..255 as TF does)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tag_t = _string_const(tag, "tag")
        tensor = convert_to_tensor(tensor, name="tensor")
        allowed = ("uint8", "float32", "float16", "float64")
        if tensor.dtype.base_dtype.name not in allowed:
            raise TypeError("Value passed to parameter 'tensor' has DataType %s not in list of "
                            "allowed values: %s" % (tensor.dtype.base_dtype.name,
                                                    ", ".join(allowed)))
        op = make_op(IMAGE_SUMMARY, [tag_t, tensor], [dtypes.string], [TensorShape([])],
                     name=scope, attrs={"max_images": int(max_outputs),
                                        "T": tensor.dtype.base_dtype,
                                        "bad_color": _BAD_COLOR})
    _collect(op.outputs[0], collections, [GraphKeys.SUMMARIES])
    return op.outputs[0]


_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)
_BAD_COLOR.flags.writeable = False


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A summary op holding the whole ``tensor`` and a ``SummaryMetadata``."""
    metadata = _summary_pb2().SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        tag_t = _string_const(tag, "tag")
        meta_t = _string_const(metadata.SerializeToString(), "serialized_summary_metadata")
        op = make_op(TENSOR_SUMMARY_V2, [tag_t, tensor, meta_t], [dtypes.string],
                     [TensorShape([])], name=scope, attrs={"T": tensor.dtype.base_dtype})
    _collect(op.outputs[0], collections, [GraphKeys.SUMMARIES])
    return op.outputs[0]


def text(name, tensor, collections=None):
    """A summary op holding a string tensor for TensorBoard's text dashboard
    (Markdown)."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != dtypes.string:
        raise ValueError("Expected tensor %s to have dtype string, got %s"
                         % (tensor.name, tensor.dtype))
    metadata = _summary_pb2().SummaryMetadata()
    metadata.plugin_data.plugin_name = "text"
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """One summary op whose value holds every value of ``inputs`` (summary
    tensors); running it runs them all. A tag twice is an error at run time."""
    graph = get_default_graph()
    with name_scope(name, "Merge", inputs):
        tensors = [convert_to_tensor(t) for t in inputs]
        for t in tensors:
            if t.dtype.base_dtype != dtypes.string:
                raise TypeError("Input 'inputs' of 'MergeSummary' Op has type %s that does "
                                "not match expected type of string." % t.dtype.base_dtype.name)
        op = make_op(MERGE_SUMMARY, tensors, [dtypes.string], [TensorShape([])],
                     name=name or "MergeSummary", attrs={"N": len(tensors)},
                     graph=tensors[0].graph if tensors else graph)
    _collect(op.outputs[0], collections, [])
    return op.outputs[0]


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """``merge`` of every summary in collection ``key`` (None if there is none)."""
    summaries = get_default_graph().get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)
