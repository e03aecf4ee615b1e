"""Reader resources: the state behind ``tf.TextLineReader`` & co. (their ops are in
``minitf/ops/io_ops.py``).

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
read goes on with the next filename, as in TF. A damaged TFRecord file fails
its reads with DataLossError (``minitf/framework/tf_record.py`` says where).
"""

import threading
import time

from minitf.framework import errors
from minitf.framework.tf_record import RecordFile

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


def read_whole_file(filename):
    """The bytes of ``filename``, or TF's error for a missing, unreadable or directory path."""
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
        element = queue.dequeue(None, step)
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
        data = read_whole_file(self.work)
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
        self._data = read_whole_file(self.work)

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
        data = read_whole_file(self.work)
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


class TFRecordReader(ReaderResource):
    """The records of TFRecord files; key ``b"file:offset"``, the byte offset of
    the record's frame in the file (in the inflated stream if compressed)."""

    type_name = "TFRecordReader"

    def __init__(self, name, compression_type):
        super().__init__(name)
        self.compression_type = compression_type
        self._file = None

    def on_work_started(self):
        self._file = RecordFile(self.work, self.compression_type)

    def read_one(self):
        got = self._file.next()
        if got is None:
            return None
        offset, data = got
        return ("%s:%d" % (self.work, offset)).encode(), data

    def on_work_finished(self):
        if self._file is not None:
            self._file.close()
        self._file = None

    def summary(self):
        s = super().summary()
        s["offset"] = self._file.offset if self._file is not None else 0
        return s
