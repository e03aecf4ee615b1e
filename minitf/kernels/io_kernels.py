"""Kernels of the reader and parsing ops (see ``minitf/ops/io_ops.py``).

A reader resource follows TF's ``ReaderBase``:

* ``work`` is the current filename; ``work_started``/``work_finished``
  count files, so "is there work in progress?" is ``finished < started``;
* ``read`` loops: no work -> dequeue a filename (this is where a read
  blocks, honouring the step's deadline and cancellation through the queue)
  and open it; then ask the file for one record; at the end of the file
  finish the work and go round again;
* the reader's lock is held for the whole read, so two threads reading one
  reader get distinct records; a waiter for the lock also watches the step.

A missing file fails that read with NotFoundError naming the file; the next
read goes on with the next filename, as in TF.
"""

import itertools
import re
import threading
import time

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

_private_ids = itertools.count()
_POLL = 0.05


def _acquire(lock, step):
    """Take ``lock``, giving up on the step's deadline or cancellation."""
    while not lock.acquire(timeout=_POLL):
        if step is not None:
            if step.cancelled.is_set():
                raise errors.CancelledError(None, None, "Read operation was cancelled")
            if step.deadline is not None and time.monotonic() > step.deadline:
                raise errors.DeadlineExceededError(None, None,
                                                   "Timed out waiting for notification")


def _open(filename):
    try:
        with open(filename, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s; No such file or directory"
                                   % filename) from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, "%s; Is a directory"
                                             % filename) from None
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, "%s; Permission denied"
                                           % filename) from None


class ReaderResource:
    """State of one reader: current file, position, counts."""

    kind = "Reader"
    type_name = "Reader"

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.work = None
        self.work_started = 0
        self.work_finished = 0
        self.num_records_produced = 0

    # -- what each reader type defines ----------------------------------------------------
    def on_work_started(self):
        """Open ``self.work`` (the filename)."""

    def read_one(self):
        """``(key, value)`` of the next record, or None at the end of the file."""
        raise NotImplementedError

    def on_work_finished(self):
        """Release the current file."""

    # -- TF's ReaderBase loop -----------------------------------------------------------
    def _next_work(self, queue, step):
        element = queue.dequeue(None, step)[0]
        value = element[0]
        if value.ndim != 0 or len(element) != 1:
            raise errors.InvalidArgumentError(
                None, None, "Expected to dequeue a one-element string tensor, but got %s"
                % [list(a.shape) for a in element])
        value = value.item()
        return value.decode() if isinstance(value, bytes) else str(value)

    def _start(self, queue, step):
        self.work = self._next_work(queue, step)
        self.on_work_started()          # a missing file raises here; work stays "not started"
        self.work_started += 1

    def _finish(self):
        self.on_work_finished()
        self.work_finished = self.work_started

    def read(self, queue, step):
        _acquire(self.lock, step)
        try:
            while True:
                if self.work_finished >= self.work_started:
                    self._start(queue, step)
                record = self.read_one()
                if record is None:
                    self._finish()
                    continue
                self.num_records_produced += 1
                return record
        finally:
            self.lock.release()

    def read_up_to(self, queue, n, step):
        """Up to ``n`` records, never crossing the end of a file once some
        records were produced (TF's ``ReadUpTo``)."""
        keys, values = [], []
        _acquire(self.lock, step)
        try:
            while len(keys) < n:
                if self.work_finished >= self.work_started:
                    self._start(queue, step)
                record = self.read_one()
                if record is None:
                    self._finish()
                    if keys:
                        break
                    continue
                keys.append(record[0])
                values.append(record[1])
                self.num_records_produced += 1
            return keys, values
        finally:
            self.lock.release()

    def reset(self):
        with self.lock:
            if self.work_finished < self.work_started:
                self.on_work_finished()
            self.work = None
            self.work_started = self.work_finished = 0
            self.num_records_produced = 0

    def summary(self):
        return {"kind": self.kind, "type": self.type_name, "name": self.name,
                "current_file": self.work if self.work_finished < self.work_started else None,
                "records_produced": self.num_records_produced,
                "files_finished": self.work_finished, "initialized": True}

    def nbytes(self):
        return 0


class TextLineReader(ReaderResource):
    type_name = "TextLineReader"

    def __init__(self, name, skip_header_lines):
        super().__init__(name)
        self.skip_header_lines = skip_header_lines
        self._lines = []
        self._pos = 0
        self.line_number = 0

    def on_work_started(self):
        data = _open(self.work)
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # a final newline ends the last line; it does not start a new one
        self._lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        self.line_number = min(self.skip_header_lines, len(self._lines))
        self._pos = self.line_number
        if self.skip_header_lines > len(self._lines):
            self.line_number = self.skip_header_lines

    def read_one(self):
        self.line_number += 1
        if self._pos >= len(self._lines):
            return None
        line = self._lines[self._pos]
        self._pos += 1
        return ("%s:%d" % (self.work, self.line_number)).encode(), line

    def on_work_finished(self):
        self._lines, self._pos = [], 0

    def summary(self):
        s = super().summary()
        s["line"] = self.line_number
        return s


class WholeFileReader(ReaderResource):
    type_name = "WholeFileReader"

    def on_work_started(self):
        self._data = _open(self.work)

    def read_one(self):
        if self._data is None:
            return None
        data, self._data = self._data, None
        return self.work.encode(), data


class FixedLengthRecordReader(ReaderResource):
    type_name = "FixedLengthRecordReader"

    def __init__(self, name, record_bytes, header_bytes, footer_bytes, hop_bytes):
        super().__init__(name)
        self.record_bytes, self.header_bytes = record_bytes, header_bytes
        self.footer_bytes, self.hop_bytes = footer_bytes, hop_bytes

    def on_work_started(self):
        data = _open(self.work)
        self._body = data[self.header_bytes:max(self.header_bytes,
                                                 len(data) - self.footer_bytes)]
        self._offset = 0
        self._index = 0

    def read_one(self):
        if self._offset + self.record_bytes > len(self._body):
            return None
        value = self._body[self._offset:self._offset + self.record_bytes]
        self._offset += self.hop_bytes or self.record_bytes
        key = ("%s:%d" % (self.work, self._index)).encode()
        self._index += 1
        return key, value


def _reader_factory(op):
    a = op._attrs
    if op.type == "TextLineReaderV2":
        return lambda name: TextLineReader(name, a.get("skip_header_lines", 0))
    if op.type == "WholeFileReaderV2":
        return WholeFileReader
    return lambda name: FixedLengthRecordReader(name, a["record_bytes"], a["header_bytes"],
                                                a["footer_bytes"], a.get("hop_bytes", 0))


@register(("TextLineReaderV2", "WholeFileReaderV2", "FixedLengthRecordReaderV2"), ("CPU",))
def _reader_op(op, device):
    """Find or create the reader: shared by name with ``shared_name``, else
    private to the session (``_N_opname``), like a queue."""
    container = op._attrs.get("container", "")
    shared = op._attrs.get("shared_name", "")
    factory = _reader_factory(op)

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


@register("ReaderReadV2", ("CPU",))
def _read(op, device):
    def compute(ctx, inputs):
        key, value = inputs[0].read(inputs[1], ctx.step)
        return [np.array(key, dtype=object), np.array(value, dtype=object)]
    return compute


@register("ReaderReadUpToV2", ("CPU",))
def _read_up_to(op, device):
    def compute(ctx, inputs):
        n = int(inputs[2])
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "num_records (%d) must be > 0" % n)
        keys, values = inputs[0].read_up_to(inputs[1], n, ctx.step)
        return [_strings(keys), _strings(values)]
    return compute


@register(("ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"), ("CPU",))
def _reader_counts(op, device):
    if op.type == "ReaderNumRecordsProducedV2":
        return lambda ctx, inputs: [np.array(inputs[0].num_records_produced, dtype=np.int64)]
    return lambda ctx, inputs: [np.array(inputs[0].work_finished, dtype=np.int64)]


@register("ReaderResetV2", ("CPU",))
def _reader_reset(op, device):
    def compute(ctx, inputs):
        inputs[0].reset()
        return []
    return compute


# -- ReadFile, StringToNumber ------------------------------------------------------------
@register("ReadFile", ("CPU",))
def _read_file(op, device):
    def compute(ctx, inputs):
        name = inputs[0].item()
        name = name.decode() if isinstance(name, bytes) else str(name)
        return [np.array(_open(name), dtype=object)]
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


@register("StringToNumber", ("CPU",))
def _string_to_number(op, device):
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


@register("DecodeCSV", ("CPU",))
def _decode_csv(op, device):
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


# -- helpers of the input producers ------------------------------------------------------------
@register("CountUpTo", ("CPU",))
def _count_up_to(op, device):
    limit = op.get_attr("limit")

    def compute(ctx, inputs):
        ref = inputs[0]
        with ref.lock:
            value = ref.read()
            if value >= limit:
                raise errors.OutOfRangeError(None, None, "Reached limit of %d" % limit)
            before = value.copy()
            ref.write(value + np.ones((), dtype=value.dtype))
        return [before]
    return compute


@register("RandomShuffle", ("CPU",))
def _random_shuffle(op, device):
    seed, seed2 = op._attrs.get("seed", 0), op._attrs.get("seed2", 0)
    key = ("random", op.name)

    def compute(ctx, inputs):
        gen = ctx.session_state.get(key)
        if gen is None:
            gen = np.random.Generator(np.random.Philox() if seed == 0 and seed2 == 0
                                      else np.random.Philox(key=[seed, seed2]))
            ctx.session_state[key] = gen
        x = inputs[0]
        if x.ndim == 0:
            return [x]
        return [x[gen.permutation(x.shape[0])]]
    return compute


@register("Range", ("CPU",))
def _range(op, device):
    dt = op.get_attr("Tidx").np_dtype

    def compute(ctx, inputs):
        start, limit, delta = (x.item() for x in inputs)
        if delta == 0:
            raise errors.InvalidArgumentError(None, None, "Requires delta != 0: 0")
        if (delta > 0 and start > limit) or (delta < 0 and start < limit):
            raise errors.InvalidArgumentError(
                None, None, "Requires start <= limit when delta > 0: %s/%s"
                % (start, limit) if delta > 0 else
                "Requires start >= limit when delta < 0: %s/%s" % (start, limit))
        return [np.arange(start, limit, delta).astype(dt)]
    return compute


@register("GatherV2", ("CPU",))
def _gather(op, device):
    def compute(ctx, inputs):
        params, indices, axis = inputs
        axis = int(axis)
        size = params.shape[axis]
        bad = (indices < 0) | (indices >= size)
        if np.any(bad):
            idx = np.argwhere(bad)[0]
            raise errors.InvalidArgumentError(
                None, None, "indices%s = %d is not in [0, %d)"
                % (list(idx), int(indices[tuple(idx)]), size))
        return [np.take(params, indices, axis=axis)]
    return compute
