"""TFRecord files: TF's container for a sequence of byte strings.

A TFRecord file is records one after another, each framed as::

    uint64 length          (little-endian)
    uint32 masked CRC-32C of the 8 length bytes
    byte   data[length]
    uint32 masked CRC-32C of the data

That is exactly the framing of TensorBoard's event files, so minitf neither
encodes nor checks it itself: the ``tensorboard`` package's ``RecordWriter``
writes every record and its ``PyRecordReader_New`` reads and checks it (it
computes the CRCs in plain Python, some 10 MB/s: fine for lessons, slow for a
real dataset). What this module adds is what TF adds around them:

* **compression**: ``"GZIP"`` or ``"ZLIB"`` compresses the whole stream of
  framed records (not each record), with zlib, deflating with TF's defaults
  (level -1, memory level 9, window 15 bits, +16 for a gzip header), so
  the file is byte for byte the one TF writes; ``flush()`` is a zlib partial
  flush, as in TF. Reading inflates the stream first and then frames it;
  concatenated gzip members read as one stream, as in TF.
* **TF's errors and offsets**: a record's key in ``TFRecordReader`` is
  ``file:offset``, the byte offset of its frame in the (uncompressed) stream.
  A damaged file fails with ``DataLossError`` saying where, in TF's words:
  ``corrupted record at N`` (a CRC does not match; N is the frame's offset for
  the length, the data's offset for the data), ``truncated record at N' failed
  with ...`` (the file ends inside a record's data). A file that ends inside
  a record's 12-byte header simply ends there, as TF's reader treats it.

The Python API (``tf.python_io`` / ``tf.io``): :class:`TFRecordWriter`,
:func:`tf_record_iterator`, :class:`TFRecordOptions`,
:class:`TFRecordCompressionType`. The reader op that reads these files in a
graph is ``tf.TFRecordReader`` (``minitf/ops/io_ops.py``), and
``tf.data.TFRecordDataset`` (``minitf/data/dataset_ops.py``); both read with
:class:`RecordFile`.
"""

import os
import re
import zlib

from minitf.framework import errors
from minitf.framework.protos import tensorboard_module

_HEADER_BYTES = 12      # uint64 length + uint32 CRC of the length
_CHUNK = 64 * 1024      # how much compressed input to inflate at a time


class TFRecordCompressionType:
    """The compression of a TFRecord file: ``NONE``, ``ZLIB`` or ``GZIP``."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """How a TFRecord file is compressed.

    ``compression_type`` is ``"GZIP"``, ``"ZLIB"``, ``""``/None (plain), or a
    :class:`TFRecordCompressionType`. The other fields tune zlib when writing
    (None means TF's default): ``compression_level`` (-1..9), ``mem_level``
    (1..9), ``window_bits`` (replaces the whole window-bits value, so
    ``window_bits=15`` with GZIP writes a zlib header, as in TF),
    ``compression_strategy``, ``compression_method``, and the buffer sizes
    ``input_buffer_size``/``output_buffer_size``. Readers use only the
    compression type."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.get_compression_type_string(compression_type)      # a bad name fails here
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for ``options`` (a TFRecordOptions,
        a compression type or its name, or None)."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if options in cls.compression_type_map.values():
            return options
        raise ValueError('Not a valid compression_type: "%s"' % (options,))


_ZLIB_FIELDS = ("flush_mode", "input_buffer_size", "output_buffer_size", "window_bits",
                "compression_level", "compression_method", "mem_level", "compression_strategy")


def _as_options(options):
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(options)


# -- reading -----------------------------------------------------------------------------
def _tensorboard_reader():
    return tensorboard_module("compat.tensorflow_stub.pywrap_tensorflow"), \
        tensorboard_module("compat.tensorflow_stub.errors")


class _Inflating:
    """A file-like ``read(n)`` over the inflated bytes of a zlib or gzip file.

    It pulls ``_CHUNK`` compressed bytes at a time and inflates them; when one
    compressed stream ends and more bytes follow, a new stream starts there
    (so concatenated gzip members read as one, and trailing garbage fails
    with zlib's "incorrect header check", as in TF)."""

    def __init__(self, raw, wbits):
        self._raw, self._wbits = raw, wbits
        self._z = zlib.decompressobj(wbits)
        self._out = b""
        self._pos = 0
        self._raw_done = False

    def _inflate(self, data):
        try:
            return self._z.decompress(data)
        except zlib.error as e:
            found = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(e))
            text = "inflate() failed with error %s: %s" % found.groups() if found else str(e)
            raise errors.DataLossError(None, None, text) from None

    def read(self, n):
        while len(self._out) - self._pos < n and not self._raw_done:
            if self._z.eof:
                rest = self._z.unused_data
                self._z = zlib.decompressobj(self._wbits)
            else:
                rest = b""
            data = rest or self._raw.read(_CHUNK)
            if not data:
                self._raw_done = True
                break
            self._out = self._out[self._pos:] + self._inflate(data)
            self._pos = 0
        got = self._out[self._pos:self._pos + n]
        self._pos += len(got)
        return got

    def close(self):
        self._raw.close()


class RecordFile:
    """The records of one TFRecord file, in order, with their offsets.

    ``next()`` returns ``(offset, data)`` for the next record, or None after
    the last one; a damaged file raises ``DataLossError`` (TF's message) and
    goes on raising it. A missing file fails here, when the file is opened,
    with ``NotFoundError``; a directory fails on the first read."""

    def __init__(self, path, compression_type=""):
        self.path = os.fspath(path)
        self.compression_type = TFRecordOptions.get_compression_type_string(compression_type)
        if not os.path.exists(self.path):
            raise errors.NotFoundError(None, None, "%s; No such file or directory" % self.path)
        self._reader = None
        self._error = None
        self.offset = 0             # of the next record's frame in the uncompressed stream
        if os.path.isdir(self.path):
            self._error = errors.FailedPreconditionError(None, None, "%s; Is a directory"
                                                         % self.path)
            return
        pywrap, _ = _tensorboard_reader()
        self._reader = pywrap.PyRecordReader_New(self.path)
        if self.compression_type:
            # tensorboard's reader frames whatever its file handle's read(n) returns: here,
            # the inflated stream (it has no compression of its own).
            wbits = zlib.MAX_WBITS + (16 if self.compression_type == "GZIP" else 0)
            self._reader.file_handle = _Inflating(self._reader.file_handle, wbits)

    def next(self):
        if self._error is not None:
            raise self._error
        if self._reader is None:
            return None
        _, tb_errors = _tensorboard_reader()
        try:
            self._reader.GetNext()
        except tb_errors.OutOfRangeError:
            return self._end()
        except tb_errors.DataLossError as e:
            self._error = self._translate(str(e))
            if self._error is None:
                return self._end()
            raise self._error from None
        except errors.DataLossError as e:     # from _Inflating
            self._error = e
            raise
        record = self._reader.record()
        offset = self.offset
        self.offset += _HEADER_BYTES + len(record) + 4
        return offset, record

    def _translate(self, message):
        """TF's DataLossError for tensorboard's message, or None where TF sees the end."""
        if message.endswith(("truncated record in header", "truncated record in header crc")):
            return None     # the file ends inside a 12-byte header: TF reads that as the end
        if message.endswith(("truncated record in data", "truncated record in data crc")):
            why = "EOF reached" if self.compression_type else "Read less bytes than requested"
            return errors.DataLossError(None, None, "truncated record at %d' failed with %s"
                                        % (self.offset, why))
        if message.endswith("failed header crc32 check"):
            hint = " (Is this even a TFRecord file?)" if self.offset == 0 else ""
            return errors.DataLossError(None, None, "corrupted record at %d%s"
                                        % (self.offset, hint))
        if message.endswith("failed event crc32 check"):
            return errors.DataLossError(None, None, "corrupted record at %d"
                                        % (self.offset + _HEADER_BYTES))
        return errors.DataLossError(None, None, message)

    def _end(self):
        self.close()
        return None

    def close(self):
        if self._reader is not None:
            self._reader.file_handle.close()
            self._reader = None


class _RecordIterator:
    """What :func:`tf_record_iterator` returns: the records' bytes, in order."""

    def __init__(self, path, compression_type):
        self._file = RecordFile(path, compression_type)

    def __iter__(self):
        return self

    def __next__(self):
        got = self._file.next()
        if got is None:
            raise StopIteration
        return got[1]


def tf_record_iterator(path, options=None):
    """An iterator over the records (bytes) of the TFRecord file ``path``.

    ``options`` (a TFRecordOptions or ``"GZIP"``/``"ZLIB"``) says how the
    file is compressed. A missing file fails at once (NotFoundError); a
    damaged one fails with DataLossError when the iteration reaches the damage."""
    return _RecordIterator(path, TFRecordOptions.get_compression_type_string(options))


# -- writing -----------------------------------------------------------------------------
class _Deflating:
    """The file-like object tensorboard's ``RecordWriter`` writes through for a
    compressed file: it deflates every framed record into one zlib stream.

    ``flush()`` is zlib's partial flush (what TF's writer does on flush), so
    the bytes so far can be inflated; ``close()`` ends the stream."""

    def __init__(self, raw, wbits, level, mem_level, strategy, method, input_buffer_size):
        self._raw = raw
        self._z = zlib.compressobj(level, method, wbits, mem_level, strategy)
        self._chunk = input_buffer_size

    def write(self, data):
        # Deflating without flushes gives the same bytes whatever the input chunks: the
        # input buffer size only bounds how much is handed to zlib at once, as in TF.
        step = self._chunk or len(data) or 1
        for start in range(0, len(data), step):
            self._raw.write(self._z.compress(data[start:start + step]))

    def flush(self):
        self._raw.write(self._z.flush(zlib.Z_PARTIAL_FLUSH))
        self._raw.flush()

    def close(self):
        self._raw.write(self._z.flush(zlib.Z_FINISH))
        self._raw.close()

    @property
    def closed(self):
        return self._raw.closed


def _open_for_writing(path, buffering):
    try:
        return open(path, "wb", buffering=buffering)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s; No such file or directory" % path) from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, "%s; Is a directory" % path) from None
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, "%s; Permission denied" % path) from None


class TFRecordWriter:
    """Write records (bytes or str) to a TFRecord file, plain or compressed.

    ``with tf.python_io.TFRecordWriter(path, options) as writer:
    writer.write(record)`` - every ``write`` appends one framed record;
    ``close()`` (or leaving the ``with``) finishes the file. The file
    is created (or emptied) at once."""

    def __init__(self, path, options=None):
        path = os.fspath(path)
        options = _as_options(options)
        compression = TFRecordOptions.get_compression_type_string(options)
        given = [f for f in _ZLIB_FIELDS if getattr(options, f) is not None]
        if given and not compression:
            raise ValueError("TFRecordOptions %s tune zlib compression; they do nothing without "
                             "compression_type 'GZIP' or 'ZLIB' (leave them None)"
                             % ", ".join(given))
        if options.flush_mode not in (None, zlib.Z_NO_FLUSH):
            raise errors.UnimplementedError(
                None, None, "minitf's TFRecordWriter deflates with flush_mode Z_NO_FLUSH (0), "
                "TF's default, only; got flush_mode=%r (leave it None)" % (options.flush_mode,))
        out_buffer = options.output_buffer_size
        raw = _open_for_writing(path, -1 if out_buffer is None else
                                out_buffer if out_buffer > 1 else 0)
        if compression:
            default_bits = zlib.MAX_WBITS + (16 if compression == "GZIP" else 0)
            stream = _Deflating(
                raw, default_bits if options.window_bits is None else options.window_bits,
                -1 if options.compression_level is None else options.compression_level,
                9 if options.mem_level is None else options.mem_level,
                0 if options.compression_strategy is None else options.compression_strategy,
                zlib.DEFLATED if options.compression_method is None
                else options.compression_method,
                options.input_buffer_size)
        else:
            stream = raw
        record_writer = tensorboard_module("summary.writer.record_writer")
        self._records = record_writer.RecordWriter(stream)
        self._closed = False

    def _check_open(self):
        if self._closed:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")

    def write(self, record):
        """Append one record: bytes (or bytearray), or a str written as UTF-8."""
        self._check_open()
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif isinstance(record, (bytes, bytearray)):
            record = bytes(record)
        else:
            raise TypeError("TFRecordWriter.write() takes one record as bytes or str, not %s"
                            % type(record).__name__)
        self._records.write(record)

    def flush(self):
        """Push what was written so far to the file (readable from there)."""
        self._check_open()
        self._records.flush()

    def close(self):
        """Finish the file (a compressed stream gets its end); closing twice is fine."""
        if not self._closed:
            self._closed = True
            self._records.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
