"""Reading files in a graph: readers, ``decode_csv``, ``read_file``,
``string_to_number`` (TF1's ``tf.TextLineReader`` & co.).

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

The helper ops the input producers need (``CountUpTo``, ``RandomShuffle``,
``Range``, ``GatherV2``) are built here too.
"""

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import convert_to_tensor, make_op, name_scope
from minitf.ops.op_def import register_op
from minitf.ops.random_ops import get_seed

for _t in ("TextLineReaderV2", "WholeFileReaderV2", "FixedLengthRecordReaderV2"):
    register_op(_t, stateful=True)
register_op("ReaderReadV2", ref_inputs=(0, 1), stateful=True, blocking=True)
register_op("ReaderReadUpToV2", ref_inputs=(0, 1), stateful=True, blocking=True)
for _t in ("ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2"):
    register_op(_t, ref_inputs=(0,), stateful=True)
register_op("ReadFile", stateful=True)  # the file may change between runs
register_op("RandomShuffle", stateful=True)

_SCALAR = TensorShape([])
_VECTOR = TensorShape([None])


# -- readers ------------------------------------------------------------------------------
class ReaderBase:
    """What every reader shares: the handle op and the methods that use it."""

    _op_type = None

    def __init__(self, attrs, name=None, supports_serialize=False):
        attrs = dict(attrs, container="", shared_name="")
        op = make_op(self._op_type, [], [_dtypes.resource], [_SCALAR], name=name or
                     self._op_type, attrs=attrs, graph=get_default_graph())
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
        op = make_op("ReaderReadV2", [self._reader_ref, self._queue_ref(queue)],
                     [_dtypes.string, _dtypes.string], [_SCALAR, _SCALAR],
                     name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records, all from one file: fewer when that
        file ends first (the next call starts the next file)."""
        with name_scope(name, "ReaderReadUpToV2", []) as scope:
            n = convert_to_tensor(num_records, dtype=_dtypes.int64, name="num_records")
            op = make_op("ReaderReadUpToV2", [self._reader_ref, self._queue_ref(queue), n],
                         [_dtypes.string, _dtypes.string], [_VECTOR, _VECTOR], name=scope)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        """How many records this reader has produced since it was made or reset."""
        return make_op("ReaderNumRecordsProducedV2", [self._reader_ref], [_dtypes.int64],
                       [_SCALAR], name=name or "ReaderNumRecordsProducedV2").outputs[0]

    def num_work_units_completed(self, name=None):
        """How many files this reader has finished."""
        return make_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], [_dtypes.int64],
                       [_SCALAR], name=name or "ReaderNumWorkUnitsCompletedV2").outputs[0]

    def reset(self, name=None):
        """Forget the current file and the counts: back to the fresh state."""
        return make_op("ReaderResetV2", [self._reader_ref], [], [],
                       name=name or "ReaderResetV2")


class TextLineReader(ReaderBase):
    """One record per line (newline stripped); key ``b"file:line"`` with the
    line numbered from 1, counting skipped header lines."""

    _op_type = "TextLineReaderV2"

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__({"skip_header_lines": int(skip_header_lines or 0)}, name)


class WholeFileReader(ReaderBase):
    """One record per file: key = the filename, value = its whole contents."""

    _op_type = "WholeFileReaderV2"

    def __init__(self, name=None):
        super().__init__({}, name, supports_serialize=True)


class FixedLengthRecordReader(ReaderBase):
    """Records of ``record_bytes`` bytes, after ``header_bytes`` and before
    ``footer_bytes``; key ``b"file:index"`` with the record numbered from 0.
    With ``hop_bytes`` records start every ``hop_bytes`` bytes (overlapping)."""

    _op_type = "FixedLengthRecordReaderV2"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        if encoding:
            from minitf.framework.errors import UnimplementedError
            raise UnimplementedError(None, None, "minitf's FixedLengthRecordReader reads "
                                     "plain files only (encoding=%r)" % encoding)
        super().__init__({"record_bytes": int(record_bytes),
                          "header_bytes": int(header_bytes or 0),
                          "footer_bytes": int(footer_bytes or 0),
                          "hop_bytes": int(hop_bytes or 0), "encoding": ""}, name)


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
                from minitf.ops.array_ops import stack
                t = stack(list(d), name="record_defaults_%d" % i)
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
        op = make_op("DecodeCSV", [records_t] + defaults, out_types,
                     [records_t.shape] * len(out_types), name=scope,
                     attrs={"OUT_TYPE": out_types, "field_delim": field_delim,
                            "use_quote_delim": bool(use_quote_delim),
                            "na_value": na_value, "select_cols": list(select_cols or [])})
    return list(op.outputs)


def read_file(filename, name=None):
    """The whole contents of the file ``filename`` as one string."""
    with name_scope(name, "ReadFile", []) as scope:
        f = convert_to_tensor(filename, dtype=_dtypes.string, name="filename")
        return make_op("ReadFile", [f], [_dtypes.string], [_SCALAR], name=scope).outputs[0]


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    """Parse each string as a number of ``out_type`` (float32 by default)."""
    out_type = _dtypes.as_dtype(out_type).base_dtype
    if out_type.name not in ("float32", "float64", "int32", "int64"):
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list "
                        "of allowed values: float32, float64, int32, int64" % out_type.name)
    with name_scope(name, "StringToNumber", []) as scope:
        s = convert_to_tensor(string_tensor, dtype=_dtypes.string, name="string_tensor")
        return make_op("StringToNumber", [s], [out_type], [s.shape], name=scope,
                       attrs={"out_type": out_type}).outputs[0]


# -- small ops the input producers use ------------------------------------------------------
def count_up_to(ref, limit, name=None):
    """Increment the int variable ``ref``; the result is its value *before*
    the increment. Once it reaches ``limit``: OutOfRangeError."""
    from minitf.ops.variables import Variable
    if isinstance(ref, Variable):
        ref = ref._ref()
    return make_op("CountUpTo", [ref], [ref.dtype.base_dtype], [ref.shape],
                   name=name or "CountUpTo",
                   attrs={"limit": int(limit), "T": ref.dtype.base_dtype}).outputs[0]


def random_shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted."""
    with name_scope(name, "RandomShuffle", []) as scope:
        value = convert_to_tensor(value, name="value")
        seed1, seed2 = get_seed(seed)
        return make_op("RandomShuffle", [value], [value.dtype.base_dtype], [value.shape],
                       name=scope, attrs={"seed": seed1 or 0, "seed2": seed2 or 0,
                                          "T": value.dtype.base_dtype}).outputs[0]


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """``[start, start+delta, ...)`` up to ``limit`` (``range(n)``: 0..n-1)."""
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", []) as scope:
        vals = [start, limit, delta]
        if dtype is None:
            kinds = [v.dtype.base_dtype if hasattr(v, "dtype") else None for v in vals]
            dt = _dtypes.int32
            for v, k in zip(vals, kinds):
                if (k is not None and k.is_floating) or isinstance(v, float):
                    dt = k if k is not None and k.is_floating else _dtypes.float32
                elif k is not None and k.name == "int64" and dt.name == "int32":
                    dt = k
        else:
            dt = _dtypes.as_dtype(dtype)
        ts = [convert_to_tensor(v, dtype=dt, name=n)
              for v, n in zip(vals, ("start", "limit", "delta"))]
        size = None
        if all(t.op.type == "Const" for t in ts):
            s, lim, d = (t.op.get_attr("value").item() for t in ts)
            if d != 0:
                size = max(0, int(np.ceil((lim - s) / d)))
        return make_op("Range", ts, [dt], [TensorShape([size])], name=scope,
                       attrs={"Tidx": dt}).outputs[0]


def gather(params, indices, axis=0, name=None):
    """The slices ``params[indices]`` along ``axis``."""
    with name_scope(name, "GatherV2", []) as scope:
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        axis_t = convert_to_tensor(axis, dtype=_dtypes.int32, name="axis")
        if params.shape.ndims is not None and indices.shape.ndims is not None:
            p = params.shape.as_list()
            shape = TensorShape(p[:axis] + indices.shape.as_list() + p[axis + 1:])
        else:
            shape = TensorShape(None)
        return make_op("GatherV2", [params, indices, axis_t], [params.dtype.base_dtype],
                       [shape], name=scope, attrs={"Tparams": params.dtype.base_dtype,
                                                   "Tindices": indices.dtype.base_dtype}
                       ).outputs[0]
