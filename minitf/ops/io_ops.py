"""Reading files in a graph: readers, ``decode_csv``, ``read_file``,
``string_to_number`` (TF1's ``tf.TextLineReader``, ``tf.FixedLengthRecordReader``,
``tf.TFRecordReader`` & co.).

A *reader* is a stateful resource, like a queue: the reader op
(``TextLineReaderV2``...) outputs a handle to an object kept by the device's
resource manager, and ``reader.read(filename_queue)`` adds a
``ReaderReadV2`` op that takes that handle and the filename queue's handle.
Each run of the read op produces one record ``(key, value)``:

* if the reader has no current file, it *dequeues a filename* from the queue
  (so the read op can block, and fails with OutOfRangeError once the
  filename queue is closed and empty);
* otherwise it returns the next record of the current file; at the end of
  the file it moves on to the next filename.

The position (current file, line number) lives in the resource, so it
survives between ``sess.run`` calls, and on a server it survives sessions.

``decode_csv`` turns text lines into typed columns; ``record_defaults``
gives each column's dtype and the value used when a field is empty (an
empty default makes the field required).

The reader resources themselves are in ``minitf/ops/readers.py``.
"""

import itertools
import re

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.framework.tf_record import TFRecordOptions
from minitf.ops import array_ops, readers
from minitf.ops.core import convert_to_tensor, make_op, name_scope

_private_ids = itertools.count()


# -- the reader ops ------------------------------------------------------------------------
def _text_line_reader(op):
    skip = op._attrs.get("skip_header_lines", 0)
    return lambda name: readers.TextLineReader(name, skip)


def _whole_file_reader(op):
    return readers.WholeFileReader


def _fixed_length_reader(op):
    a = op._attrs
    return lambda name: readers.FixedLengthRecordReader(
        name, a["record_bytes"], a["header_bytes"], a["footer_bytes"], a.get("hop_bytes", 0))


def _tf_record_reader(op):
    compression = op._attrs.get("compression_type", "")
    return lambda name: readers.TFRecordReader(name, compression)


def _reader_kernel(make_factory):
    """Find or create the reader: shared by name with ``shared_name``, else
    private to the session (``_N_opname``), like a queue."""
    def kernel(op, backend):
        return _reader_compute(op, make_factory(op))
    return kernel


def _reader_compute(op, factory):
    container = op._attrs.get("container", "")
    shared = op._attrs.get("shared_name", "")

    def compute(ctx, inputs):
        name = shared
        if not name:
            key = ("reader", op.name)
            name = ctx.session_state.get(key)
            if name is None:
                name = ctx.session_state[key] = "_%d_%s" % (next(_private_ids), op.name)
        return [ctx.resources.lookup_or_create(container, name, lambda: factory(name))]
    return compute


def _strings(items):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _read_kernel(op, backend):
    def compute(ctx, inputs):
        key, value = inputs[0].read(inputs[1], ctx.step)
        return [np.array(key, dtype=object), np.array(value, dtype=object)]
    return compute


def _read_up_to_kernel(op, backend):
    def compute(ctx, inputs):
        n = int(inputs[2])
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "num_records (%d) must be > 0" % n)
        keys, values = inputs[0].read_up_to(inputs[1], n, ctx.step)
        return [_strings(keys), _strings(values)]
    return compute


def _records_produced_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].num_records_produced, dtype=np.int64)]


def _work_units_completed_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].work_finished, dtype=np.int64)]


def _reader_reset_kernel(op, backend):
    def compute(ctx, inputs):
        inputs[0].reset()
        return []
    return compute


def _reader_row(name, kernel, attrs):
    return declare(OpDef(name, attrs=attrs + ("container", "shared_name"),
                         gradient=NOT_DIFFERENTIABLE, stateful=True, resource=True,
                         kernel=kernel))


TEXT_LINE_READER_V2 = _reader_row("TextLineReaderV2", _reader_kernel(_text_line_reader),
                                  ("skip_header_lines",))
WHOLE_FILE_READER_V2 = _reader_row("WholeFileReaderV2", _reader_kernel(_whole_file_reader), ())
FIXED_LENGTH_RECORD_READER_V2 = _reader_row(
    "FixedLengthRecordReaderV2", _reader_kernel(_fixed_length_reader),
    ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes", "encoding"))
TF_RECORD_READER_V2 = _reader_row("TFRecordReaderV2", _reader_kernel(_tf_record_reader),
                                  ("compression_type",))


def _reader_use_row(name, kernel, inputs=("reader_handle",), refs=(0,), blocking=False):
    return declare(OpDef(name, inputs=inputs, gradient=NOT_DIFFERENTIABLE, ref_inputs=refs,
                         stateful=True, blocking=blocking, kernel=kernel))


# A read may wait for a filename from the queue: blocking, and it takes both the
# reader and the queue by reference.
READER_READ_V2 = _reader_use_row("ReaderReadV2", _read_kernel,
                                 ("reader_handle", "queue_handle"), (0, 1), True)
READER_READ_UP_TO_V2 = _reader_use_row("ReaderReadUpToV2", _read_up_to_kernel,
                                       ("reader_handle", "queue_handle", "num_records"),
                                       (0, 1), True)
READER_NUM_RECORDS_PRODUCED_V2 = _reader_use_row("ReaderNumRecordsProducedV2",
                                                 _records_produced_kernel)
READER_NUM_WORK_UNITS_COMPLETED_V2 = _reader_use_row("ReaderNumWorkUnitsCompletedV2",
                                                     _work_units_completed_kernel)
READER_RESET_V2 = _reader_use_row("ReaderResetV2", _reader_reset_kernel)


# -- ReadFile, StringToNumber ------------------------------------------------------------
def _read_file_kernel(op, backend):
    def compute(ctx, inputs):
        name = inputs[0].item()
        name = name.decode() if isinstance(name, bytes) else str(name)
        return [np.array(readers.read_whole_file(name), dtype=object)]
    return compute


# What TF's safe_strto32/64 and safe_strtof/d accept (surrounding spaces allowed).
_INT_RE = re.compile(rb"^\s*[+-]?\d+\s*$")
_FLOAT_RE = re.compile(rb"^\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity|nan)\s*$",
                       re.IGNORECASE)
_INT_RANGE = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


def parse_number(text, dtype_name):
    """The number ``text`` (bytes) means as ``dtype_name``, or None if it is
    not a valid one."""
    if dtype_name in _INT_RANGE:
        if not _INT_RE.match(text):
            return None
        value = int(text)
        lo, hi = _INT_RANGE[dtype_name]
        return value if lo <= value <= hi else None
    if not _FLOAT_RE.match(text):
        return None
    return float(text)


_NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}


def _string_to_number_kernel(op, backend):
    dt = op.get_attr("out_type").base_dtype.name

    def compute(ctx, inputs):
        strings = inputs[0]
        flat = strings.reshape(-1)
        out = np.empty(flat.shape, dtype=_NP[dt])
        for i, s in enumerate(flat):
            s = s if isinstance(s, bytes) else str(s).encode()
            v = parse_number(s, dt)
            if v is None:
                raise errors.InvalidArgumentError(
                    None, None, "StringToNumberOp could not correctly convert string: %s"
                    % s.decode(errors="replace"))
            out[i] = v
        return [out.reshape(strings.shape)]
    return compute


# -- DecodeRaw --------------------------------------------------------------------------------
# TF's DecodeRaw out_types, and the word TF's messages use for each element size.
_RAW_TYPES = ("float16", "float32", "float64", "int32", "uint16", "uint8", "int16", "int8",
              "int64", "complex64", "complex128", "bool", "bfloat16")
_RAW_WORDS = {"float16": "Eigen::half", "float32": "float", "float64": "double",
              "int32": "int", "uint16": "unsigned short", "uint8": "unsigned char",
              "int16": "short", "int8": "signed char", "int64": "long",
              "complex64": "std::complex<float>", "complex128": "std::complex<double>",
              "bool": "bool", "bfloat16": "Eigen::bfloat16"}


def _decode_raw_kernel(op, backend):
    """Reinterpret each string's bytes as a vector of ``out_type``.

    Loop: every string of the input (all must have the same length, a
    multiple of the element size) becomes one row of ``len / size``
    elements; the output has the input's shape plus that one dimension.
    ``little_endian=False`` reads multi-byte elements big-endian."""
    dtype = op.get_attr("out_type").base_dtype
    little = bool(op._attrs.get("little_endian", True))
    np_type = np.dtype(dtype.as_numpy_dtype)
    stored = np_type.newbyteorder("<" if little else ">") if np_type.itemsize > 1 else np_type

    def compute(ctx, inputs):
        strings = inputs[0]
        flat = [v if isinstance(v, bytes) else str(v).encode() for v in strings.reshape(-1)]
        size = np_type.itemsize
        width = len(flat[0]) if flat else 0
        if width % size:
            raise errors.InvalidArgumentError(
                None, None, "Input to DecodeRaw has length %d that is not a multiple of %d, "
                "the size of %s" % (width, size, _RAW_WORDS[dtype.name]))
        for i, v in enumerate(flat):
            if len(v) != width:
                raise errors.InvalidArgumentError(
                    None, None, "DecodeRaw requires input strings to all be the same size, "
                    "but element %d has size %d != %d" % (i, width, len(v)))
        out = np.frombuffer(b"".join(flat), dtype=stored).astype(np_type, copy=True)
        return [out.reshape(strings.shape + (width // size,))]
    return compute


DECODE_RAW = declare(OpDef("DecodeRaw", inputs=("bytes",), attrs=("out_type", "little_endian"),
                           gradient=NOT_DIFFERENTIABLE, kernel=_decode_raw_kernel))


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """``tf.decode_raw``: the bytes of each string, read as numbers of
    ``out_type`` (TF1's way to parse binary records, e.g. from a
    ``FixedLengthRecordReader``). A scalar string gives a vector; a batch
    of strings (all of one length) gives one row per string."""
    if input_bytes is None:
        input_bytes = bytes
    if input_bytes is None or out_type is None:
        raise ValueError("decode_raw needs the input strings and an out_type")
    out_type = _dtypes.as_dtype(out_type).base_dtype
    if out_type.name not in _RAW_TYPES:
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list of "
                        "allowed values: %s" % (out_type.name, ", ".join(_RAW_TYPES)))
    with name_scope(name, "DecodeRaw", []) as scope:
        b = convert_to_tensor(input_bytes, dtype=_dtypes.string, name="bytes")
        shape = TensorShape(None) if b.shape.ndims is None else \
            TensorShape(b.shape.as_list() + [None])
        return make_op(DECODE_RAW, [b], [out_type], [shape], name=scope,
                       attrs={"out_type": out_type,
                              "little_endian": bool(little_endian)}).outputs[0]


# -- DecodeCSV ---------------------------------------------------------------------------------
def split_csv(record, delim, use_quote, keep=None):
    """The fields of one CSV record, exactly as TF's DecodeCSV splits them
    (RFC 4180 quotes when ``use_quote``: ``"a,b"`` is one field, ``""``
    inside quotes is one quote)."""
    fields = []
    i, n = 0, len(record)
    quote = ord('"')
    col = 0
    while i < n:
        c = record[i]
        if c in (10, 13):  # stray newlines between fields are skipped
            i += 1
            continue
        if use_quote and c == quote:
            i += 1
            field = bytearray()
            while i < n - 1 and (record[i] != quote or record[i + 1] != delim):
                if record[i] != quote:
                    field.append(record[i])
                    i += 1
                else:
                    if record[i + 1] != quote:
                        raise errors.InvalidArgumentError(
                            None, None, "Quote inside a string has to be escaped by another "
                            "quote")
                    field.append(quote)
                    i += 2
            if not (i < n and record[i] == quote and (i == n - 1 or record[i + 1] == delim)):
                raise errors.InvalidArgumentError(
                    None, None, "Quoted field has to end with quote followed by delim or end")
            i += 2
        else:
            start = i
            while i < n and record[i] != delim:
                if (use_quote and record[i] == quote) or record[i] in (10, 13):
                    raise errors.InvalidArgumentError(
                        None, None, "Unquoted fields cannot have quotes/CRLFs inside")
                i += 1
            field = record[start:i]
            i += 1
        if keep is None or col in keep:
            fields.append(bytes(field))
        col += 1
    if n and record[n - 1] == delim:
        if keep is None or col in keep:
            fields.append(b"")
    return fields


_TYPE_WORD = {"float32": "float", "float64": "double", "int32": "int32", "int64": "int64"}


def _decode_csv_kernel(op, backend):
    out_types = [t.base_dtype.name for t in op.get_attr("OUT_TYPE")]
    delim = ord(op.get_attr("field_delim"))
    use_quote = op.get_attr("use_quote_delim")
    na_value = op.get_attr("na_value").encode()
    select = op._attrs.get("select_cols") or []
    keep = set(select) if select else None

    def compute(ctx, inputs):
        records, defaults = inputs[0], inputs[1:]
        for f, d in enumerate(defaults):
            if d.size > 1:
                raise errors.InvalidArgumentError(
                    None, None, "There should only be 1 default per field but field %d has %d"
                    % (f, d.size))
        flat = records.reshape(-1)
        columns = [np.empty(flat.shape, dtype=object if t == "string" else _NP[t])
                   for t in out_types]
        for i, rec in enumerate(flat):
            rec = rec if isinstance(rec, bytes) else str(rec).encode()
            fields = split_csv(rec, delim, use_quote, keep)
            if len(fields) != len(out_types):
                raise errors.InvalidArgumentError(
                    None, None, "Expect %d fields but have %d in record %d"
                    % (len(out_types), len(fields), i))
            for f, (text, t) in enumerate(zip(fields, out_types)):
                if text == b"" or text == na_value:
                    if defaults[f].size != 1:
                        raise errors.InvalidArgumentError(
                            None, None, "Field %d is required but missing in record %d!"
                            % (f, i))
                    columns[f][i] = defaults[f].reshape(-1)[0]
                elif t == "string":
                    columns[f][i] = text
                else:
                    v = parse_number(text, t)
                    if v is None:
                        raise errors.InvalidArgumentError(
                            None, None, "Field %d in record %d is not a valid %s: %s"
                            % (f, i, _TYPE_WORD[t], text.decode(errors="replace")))
                    columns[f][i] = v
        return [c.reshape(records.shape) for c in columns]
    return compute


# ReadFile is stateful: the file may change between runs.
READ_FILE = declare(OpDef("ReadFile", inputs=("filename",), gradient=NOT_DIFFERENTIABLE,
                          stateful=True, kernel=_read_file_kernel))
STRING_TO_NUMBER = declare(OpDef("StringToNumber", inputs=("string_tensor",),
                                 attrs=("out_type",), gradient=NOT_DIFFERENTIABLE,
                                 kernel=_string_to_number_kernel))
DECODE_CSV = declare(OpDef("DecodeCSV", inputs=("records", "*record_defaults"),
                           attrs=("OUT_TYPE", "field_delim", "use_quote_delim", "na_value",
                                  "select_cols"),
                           gradient=NOT_DIFFERENTIABLE, kernel=_decode_csv_kernel))


# -- readers ------------------------------------------------------------------------------
_SCALAR = TensorShape([])
_VECTOR = TensorShape([None])


# -- readers ------------------------------------------------------------------------------
class ReaderBase:
    """What every reader shares: the handle op and the methods that use it."""

    _row = None    # the reader op (TextLineReaderV2...)

    def __init__(self, attrs, name=None, supports_serialize=False):
        attrs = dict(attrs, container="", shared_name="")
        op = make_op(self._row, [], [_dtypes.resource], [_SCALAR], name=name or
                     self._row.name, attrs=attrs, graph=get_default_graph())
        self._reader_ref = op.outputs[0]
        self._supports_serialize = supports_serialize

    reader_ref = property(lambda self: self._reader_ref)
    supports_serialize = property(lambda self: self._supports_serialize)

    @staticmethod
    def _queue_ref(queue):
        return queue if hasattr(queue, "op") and not hasattr(queue, "queue_ref") \
            else queue.queue_ref

    def read(self, queue, name=None):
        """``(key, value)``: the next record, taking a new file from ``queue``
        (a queue of filenames) whenever the current one is used up."""
        op = make_op(READER_READ_V2, [self._reader_ref, self._queue_ref(queue)],
                     [_dtypes.string, _dtypes.string], [_SCALAR, _SCALAR],
                     name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records, all from one file: fewer when that
        file ends first (the next call starts the next file)."""
        with name_scope(name, "ReaderReadUpToV2", []) as scope:
            n = convert_to_tensor(num_records, dtype=_dtypes.int64, name="num_records")
            op = make_op(READER_READ_UP_TO_V2, [self._reader_ref, self._queue_ref(queue), n],
                         [_dtypes.string, _dtypes.string], [_VECTOR, _VECTOR], name=scope)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        """How many records this reader has produced since it was made or reset."""
        return make_op(READER_NUM_RECORDS_PRODUCED_V2, [self._reader_ref], [_dtypes.int64],
                       [_SCALAR], name=name or "ReaderNumRecordsProducedV2").outputs[0]

    def num_work_units_completed(self, name=None):
        """How many files this reader has finished."""
        return make_op(READER_NUM_WORK_UNITS_COMPLETED_V2, [self._reader_ref], [_dtypes.int64],
                       [_SCALAR], name=name or "ReaderNumWorkUnitsCompletedV2").outputs[0]

    def reset(self, name=None):
        """Forget the current file and the counts: back to the fresh state."""
        return make_op(READER_RESET_V2, [self._reader_ref], [], [],
                       name=name or "ReaderResetV2")


class TextLineReader(ReaderBase):
    """One record per line (newline stripped); key ``b"file:line"`` with the
    line numbered from 1, counting skipped header lines."""

    _row = TEXT_LINE_READER_V2

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__({"skip_header_lines": int(skip_header_lines or 0)}, name)


class WholeFileReader(ReaderBase):
    """One record per file: key = the filename, value = its whole contents."""

    _row = WHOLE_FILE_READER_V2

    def __init__(self, name=None):
        super().__init__({}, name, supports_serialize=True)


class FixedLengthRecordReader(ReaderBase):
    """Records of ``record_bytes`` bytes, after ``header_bytes`` and before
    ``footer_bytes``; key ``b"file:index"`` with the record numbered from 0.
    With ``hop_bytes`` records start every ``hop_bytes`` bytes (overlapping)."""

    _row = FIXED_LENGTH_RECORD_READER_V2

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        if encoding:
            raise errors.UnimplementedError(None, None, "minitf's FixedLengthRecordReader reads "
                                     "plain files only (encoding=%r)" % encoding)
        super().__init__({"record_bytes": int(record_bytes),
                          "header_bytes": int(header_bytes or 0),
                          "footer_bytes": int(footer_bytes or 0),
                          "hop_bytes": int(hop_bytes or 0), "encoding": ""}, name)


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (written by ``tf.python_io.TFRecordWriter``):
    one record per run, key ``b"file:offset"`` with the byte offset of the
    record in the file. ``options`` (a ``TFRecordOptions``, or ``"GZIP"`` /
    ``"ZLIB"``) says how the files are compressed; a damaged file fails the read
    with DataLossError."""

    _row = TF_RECORD_READER_V2

    def __init__(self, name=None, options=None):
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__({"compression_type": compression}, name)


# -- parsing ------------------------------------------------------------------------------
_CSV_TYPES = ("float32", "float64", "int32", "int64", "string")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Split each CSV line of ``records`` into columns.

    ``record_defaults[i]`` fixes column i's dtype; when field i is empty (or
    equals ``na_value``) its one-element default is used, and with an empty
    default (``tf.constant([], tf.int32)``) the field is *required*. Each
    output has the shape of ``records``.
    """
    if select_cols is not None:
        if any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    with name_scope(name, "DecodeCSV", []) as scope:
        records_t = convert_to_tensor(records, dtype=_dtypes.string, name="records")
        defaults = []
        for i, d in enumerate(record_defaults):
            if isinstance(d, (list, tuple)) and any(hasattr(x, "op") for x in d):
                t = array_ops.stack(list(d), name="record_defaults_%d" % i)
            else:
                t = convert_to_tensor(d, name="record_defaults_%d" % i)
            if t.dtype.base_dtype.name not in _CSV_TYPES:
                raise TypeError("Value passed to parameter 'record_defaults' has DataType %s "
                                "not in list of allowed values: float32, float64, int32, "
                                "int64, string" % t.dtype.base_dtype.name)
            defaults.append(t)
        out_types = [t.dtype.base_dtype for t in defaults]
        node = "'{{node %s}} = DecodeCSV[...]'" % scope[:-1]
        for t in defaults:
            if t.shape.ndims is not None and t.shape.ndims > 1:
                raise ValueError("Shape must be at most rank 1 but is rank %d for %s"
                                 % (t.shape.ndims, node))
            if t.shape.ndims == 1 and (t.shape.as_list()[0] or 0) > 1:
                raise ValueError("Shape of a default must be a length-0 or length-1 vector, "
                                 "or a scalar. for %s" % node)
        if len(field_delim) != 1:
            raise ValueError("field_delim should be only 1 char")
        op = make_op(DECODE_CSV, [records_t] + defaults, out_types,
                     [records_t.shape] * len(out_types), name=scope,
                     attrs={"OUT_TYPE": out_types, "field_delim": field_delim,
                            "use_quote_delim": bool(use_quote_delim),
                            "na_value": na_value, "select_cols": list(select_cols or [])})
    return list(op.outputs)


def read_file(filename, name=None):
    """The whole contents of the file ``filename`` as one string."""
    with name_scope(name, "ReadFile", []) as scope:
        f = convert_to_tensor(filename, dtype=_dtypes.string, name="filename")
        return make_op(READ_FILE, [f], [_dtypes.string], [_SCALAR], name=scope).outputs[0]


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    """Parse each string as a number of ``out_type`` (float32 by default)."""
    out_type = _dtypes.as_dtype(out_type).base_dtype
    if out_type.name not in ("float32", "float64", "int32", "int64"):
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list "
                        "of allowed values: float32, float64, int32, int64" % out_type.name)
    with name_scope(name, "StringToNumber", []) as scope:
        s = convert_to_tensor(string_tensor, dtype=_dtypes.string, name="string_tensor")
        return make_op(STRING_TO_NUMBER, [s], [out_type], [s.shape], name=scope,
                       attrs={"out_type": out_type}).outputs[0]
