"""The wire: how two minitf processes exchange messages over TCP.

Every message is one *frame*. A frame is a fixed 20-byte prefix, a small
msgpack header, and a payload made of raw tensor bytes::

     0       4   5       8          12                  20
     +-------+---+-------+----------+-------------------+
     | "MTF1"| v | 0 0 0 | hdr_len  |    payload_len    |   prefix, network
     +-------+---+-------+----------+-------------------+   byte order
     | header: msgpack map, hdr_len bytes (<= 1 MiB)     |   {"op": "RunStep",
     |   ..., "tensors": [meta0, meta1, ...]}            |    ...}
     +---------------------------------------------------+
     | tensor 0 bytes | pad to 8 | tensor 1 bytes | ...  |   payload_len bytes
     +---------------------------------------------------+

* ``v`` is the frame-format version (1). A peer that is not minitf (an HTTP
  client, a port scanner) fails the magic check at once.
* The header is a msgpack map, free-form for the services built on top (they
  put an ``"op"``, a request id, names...). ``str`` travels as msgpack str,
  ``bytes`` as msgpack bin; integer map keys are allowed. msgpack can only
  encode plain data (None, bool, int, float, str, bytes, list, dict): there
  is no pickle anywhere, so a frame can never make the receiver run code.
* The key ``"tensors"`` is reserved: :func:`send_frame` writes one *meta* per
  tensor there, ``{"dtype": "float32", "shape": [2, 3], "nbytes": 24}``, and
  :func:`recv_frame` takes it out again and returns the arrays separately.
* The payload is the tensors' bytes, back to back, each non-empty one
  starting at an offset that is a multiple of 8 (zero bytes pad the gaps;
  empty tensors take no room; nothing follows the last tensor). Numbers are little-endian, C order. The alignment lets the
  receiver *view* the bytes as float64/int64 arrays in place.
* ``string`` tensors (numpy ``object`` arrays of ``bytes``; ``str`` elements
  are sent as their UTF-8 bytes) are laid out in the payload as ``n``
  little-endian uint64 lengths followed by the ``n`` byte strings
  concatenated. So strings may contain any byte, NUL included, and may be as
  large as numeric tensors (the header stays small). They come back as
  ``bytes`` elements, as from TensorFlow's ``sess.run``.
* ``bfloat16`` travels as its 2-byte storage (``ml_dtypes.bfloat16``).

Why this shape: the receiver learns every length before it reads the bytes,
so it reads the whole frame with a few ``recv_into`` calls into *one*
preallocated buffer and then makes numpy arrays that are views of that
buffer -- no decoder walks the tensor bytes and nothing is copied after the
kernel copied the bytes in. The sender hands the kernel the arrays' own
memory (``socket.sendmsg`` with one buffer per tensor), so large tensors are
not copied in Python either.

Deadlines: every blocking call takes an absolute ``time.monotonic()``
deadline (``None``: wait forever). A peer that stops talking costs a
:class:`~minitf.framework.errors.DeadlineExceededError` that says what was
awaited, never a hang. These functions own the socket's timeout setting.

Memory: a frame announces its size before its bytes. The receiver does not
trust the announcement: it reserves room for at most :data:`RESERVE_AHEAD`
bytes more than have arrived, growing one buffer as bytes come (a memory
map resized with ``mremap``, which moves pages instead of copying them), so a
peer that announces 8 GiB and sends nothing holds 16 MiB, not 8 GiB. A server also gives a
frame that has started a *stall timeout*: no byte for that long in the middle
of a frame is an error, so a half-sent frame cannot hold a thread for ever.

After a :class:`ProtocolError` or a deadline error in the middle of a frame the
byte stream is out of step: close the connection. A :class:`MalformedFrame`
(read whole, but its header or tensor metas are invalid) leaves the stream in
step: answer it with an error frame. Errors of the *remote* side travel as
ordinary frames, see :func:`error_header` / :func:`raise_if_error`.
"""

import math
import mmap
import os
import socket
import struct
import time

import msgpack
import numpy as np

from minitf.framework import dtypes
from minitf.framework import errors

__all__ = [
    "MAGIC", "VERSION", "PREFIX", "MAX_HEADER", "DEFAULT_MAX_PAYLOAD", "ALIGN",
    "RESERVE_AHEAD", "MAX_DIMS",
    "WireError", "ProtocolError", "MalformedFrame", "ConnectionClosed", "UnsendableTensor",
    "encode_tensor", "encode_tensor_meta", "decode_tensors",
    "send_frame", "recv_frame", "send_error", "error_header", "raise_if_error",
    "parse_address", "connect", "configure_socket", "peer_name",
]

MAGIC = b"MTF1"
VERSION = 1
PREFIX = struct.Struct("!4sB3xIQ")  # magic, version, pad, header len, payload len
MAX_HEADER = 1 << 20                # 1 MiB: headers are metadata, not data
DEFAULT_MAX_PAYLOAD = 8 << 30       # 8 GiB
ALIGN = 8                           # every tensor starts at a multiple of this
RESERVE_AHEAD = 16 << 20            # bytes reserved beyond what has arrived
MAX_DIMS = 64                       # numpy's limit on an array's rank

# The dtypes that may cross the wire, by the name used in a meta.
_WIRE_DTYPES = {name: dtypes.as_dtype(name) for name in (
    "float16", "bfloat16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint8", "uint16",
    "bool", "string")}
_STRING = dtypes.as_dtype("string")
_LENGTHS = np.dtype("<u8")
_ZEROS = bytes(ALIGN)
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)
try:
    _IOV_MAX = max(16, min(os.sysconf("SC_IOV_MAX"), 1024))
except (AttributeError, ValueError, OSError):
    _IOV_MAX = 16


class WireError(Exception):
    """Base class of the errors of this module."""


class ProtocolError(WireError):
    """The bytes received are not a well-formed minitf frame (bad magic or
    version, a length over the limit, a frame cut short, a header that is not
    a msgpack map, tensor metas that do not match the payload...). The
    connection is unusable afterwards: close it."""


class MalformedFrame(ProtocolError):
    """The frame arrived whole, but what it says is invalid: an undecodable
    header, tensor metas that do not describe the payload, a shape numpy
    cannot hold. Every byte of the frame was consumed, so the stream is still
    in step: a server answers with an error frame and keeps the connection."""


class UnsendableTensor(TypeError):
    """A value handed to :func:`send_frame` cannot travel (a dtype minitf lacks,
    a Python object that is not data, such as a queue handle). Raised before
    any byte is sent, so the connection is still usable. ``index`` is the
    position of the value in the ``tensors`` argument."""

    def __init__(self, index, message):
        super().__init__(message)
        self.index = index


class ConnectionClosed(WireError, ConnectionError):
    """The peer closed the connection cleanly *between* frames (EOF before the
    first byte of a frame): the normal end of a conversation."""


def _align(n):
    return (n + ALIGN - 1) & ~(ALIGN - 1)


# --------------------------------------------------------------------------
# Tensors <-> (meta, bytes)
# --------------------------------------------------------------------------

def _string_item(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    raise TypeError("it holds a %s, which is not data: only numbers and strings travel "
                    "between processes (a queue, reader or variable handle lives in its "
                    "server; run the ops that use it there instead of fetching it)"
                    % type(x).__name__)


def encode_tensor(arr):
    """``(meta, buffers)`` for one tensor: the header entry describing it and
    the list of buffers (memoryviews; no copy for numeric arrays that are
    already C-contiguous little-endian) whose concatenation is its payload
    segment. Non-contiguous or big-endian input is made contiguous first
    (one copy). Raises TypeError for a dtype minitf does not have."""
    arr = np.asarray(arr)
    if not arr.dtype.isnative:  # e.g. '>i4' read from a big-endian file
        arr = arr.astype(arr.dtype.newbyteorder("="))
    dt = dtypes.dtype_of_numpy(arr)  # TypeError for e.g. complex64
    shape = [int(d) for d in arr.shape]
    if dt == _STRING:
        items = [_string_item(x) for x in arr.reshape(-1).tolist()]
        lengths = np.fromiter((len(b) for b in items), dtype=_LENGTHS, count=len(items))
        blob = b"".join(items)
        nbytes = lengths.nbytes + len(blob)
        meta = {"dtype": "string", "shape": shape, "nbytes": nbytes}
        return meta, [memoryview(lengths.view(np.uint8)), memoryview(blob)]
    wire_np = dt.np_dtype.newbyteorder("<") if dt.np_dtype.byteorder not in "|" else dt.np_dtype
    arr = np.ascontiguousarray(arr, dtype=wire_np)
    meta = {"dtype": dt.name, "shape": shape, "nbytes": int(arr.nbytes)}
    if arr.nbytes == 0:
        return meta, []
    return meta, [memoryview(arr.reshape(-1).view(np.uint8))]


def encode_tensor_meta(arr):
    """The header entry (``{"dtype", "shape", "nbytes"}``) describing ``arr``."""
    return encode_tensor(arr)[0]


def _bad(msg, *args):
    return ProtocolError(msg % args if args else msg)


def _malformed(msg, *args):
    return MalformedFrame(msg % args if args else msg)


def _check_meta(i, meta):
    if not isinstance(meta, dict):
        raise _malformed("tensor meta %d is %r, not a map", i, type(meta).__name__)
    name, shape, nbytes = meta.get("dtype"), meta.get("shape"), meta.get("nbytes")
    if not isinstance(name, str) or name not in _WIRE_DTYPES:
        raise _malformed("tensor %d has unknown dtype %r", i, name)
    if not isinstance(shape, list) or not all(
            type(d) is int and d >= 0 for d in shape):
        raise _malformed("tensor %d has a bad shape %r", i, shape)
    if len(shape) > MAX_DIMS:
        raise _malformed("tensor %d has %d dimensions; minitf tensors (numpy arrays) have at "
                         "most %d", i, len(shape), MAX_DIMS)
    if type(nbytes) is not int or nbytes < 0:
        raise _malformed("tensor %d has a bad nbytes %r", i, nbytes)
    dt = _WIRE_DTYPES[name]
    count = math.prod(shape)
    if dt == _STRING:
        if nbytes < 8 * count:
            raise _malformed("string tensor %d: %d bytes cannot hold %d lengths", i, nbytes, count)
    elif nbytes != count * dt.np_dtype.itemsize:
        raise _malformed("tensor %d: shape %r of %s needs %d bytes, meta says %d",
                   i, shape, name, count * dt.np_dtype.itemsize, nbytes)
    return dt, shape, nbytes, count


def decode_tensors(metas, payload):
    """Turn a payload back into numpy arrays, following ``metas``.

    ``payload`` is any buffer (bytes, bytearray, memoryview, uint8 ndarray).
    Numeric arrays are *views* of it, not copies: they are writable when the
    payload buffer is writable (as in :func:`recv_frame`, which reads into a
    fresh buffer) and read-only otherwise (e.g. ``bytes``), and they keep the
    whole payload buffer alive. String tensors are new ``object`` arrays of
    ``bytes``. Raises :class:`ProtocolError` if the metas do not describe the
    payload exactly.
    """
    if isinstance(payload, np.ndarray):
        buf = payload.reshape(-1).view(np.uint8)
    else:
        buf = np.frombuffer(payload, dtype=np.uint8)
    if not isinstance(metas, list):
        raise _malformed("'tensors' must be a list of metas, got %r", type(metas).__name__)
    size = buf.shape[0]
    out = []
    off = 0
    for i, meta in enumerate(metas):
        dt, shape, nbytes, count = _check_meta(i, meta)
        if nbytes:
            off = _align(off)
        if off + nbytes > size:
            raise _malformed("tensor %d needs bytes %d..%d but the payload has only %d",
                       i, off, off + nbytes, size)
        seg = buf[off:off + nbytes]
        off += nbytes
        if dt == _STRING:
            out.append(_decode_strings(i, seg, shape, count))
        else:
            np_dt = dt.np_dtype
            if np_dt.byteorder not in "|":
                np_dt = np_dt.newbyteorder("<")
            try:
                out.append(seg.view(np_dt).reshape(shape))
            except ValueError as e:  # e.g. a shape whose product overflows
                raise _malformed("tensor %d: cannot view its bytes as shape %r (%s)",
                                 i, shape, e) from None
    if off != size:
        raise _malformed("the payload has %d bytes but the tensor metas describe %d",
                   size, off)
    return out


def _decode_strings(i, seg, shape, count):
    lengths = seg[:8 * count].view(_LENGTHS).tolist()
    data = seg[8 * count:]
    if sum(lengths) != data.shape[0]:  # Python ints: no overflow
        raise _malformed("string tensor %d: element lengths do not add up to its %d data bytes",
                   i, data.shape[0])
    blob = data.tobytes()
    result = np.empty(count, dtype=object)
    pos = 0
    for j, n in enumerate(lengths):
        result[j] = blob[pos:pos + n]
        pos += n
    return result.reshape(shape)


# --------------------------------------------------------------------------
# Sockets, deadlines
# --------------------------------------------------------------------------

def peer_name(sock):
    """``"host:port"`` of the peer, or ``"<unconnected>"``."""
    try:
        addr = sock.getpeername()
    except OSError:
        return "<unconnected>"
    if isinstance(addr, tuple):
        return "%s:%s" % addr[:2]
    return str(addr) or "<unnamed peer>"


def _blocking(sock):
    # settimeout() costs a syscall even when nothing changes; skip it.
    if sock.gettimeout() is not None:
        sock.settimeout(None)


def _set_timeout(sock, deadline, doing):
    """Point the socket's timeout at what is left before ``deadline``."""
    if deadline is None:
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise _deadline_error(sock, deadline, doing)
    sock.settimeout(left)


def _deadline_error(sock, deadline, doing):
    return errors.DeadlineExceededError(
        None, None, "Deadline exceeded %s (peer %s)" % (doing(), peer_name(sock)))


def _recv_exact(sock, view, deadline, what, part, frame_start, stall_timeout=None,
                before=0, part_size=None):
    """Fill ``view`` from the socket.

    With a ``deadline`` every recv waits at most until then. Without one the
    first byte of a frame (``frame_start``) may take as long as it takes (an
    idle pooled connection is idle), but with ``stall_timeout`` every later
    byte must follow within that many seconds. ``before`` bytes of the
    ``part_size``-byte part were read already (for the messages).
    """
    got = 0
    need = len(view)
    if part_size is None:
        part_size = need

    def doing():
        return "waiting for %s: got %d of %d bytes of its %s" % (
            what, before + got, part_size, part)

    while got < need:
        try:
            if deadline is not None:
                _set_timeout(sock, deadline, doing)
                n = sock.recv_into(view[got:])
            elif stall_timeout is None or (frame_start and got == 0):
                n = sock.recv_into(view[got:])
            else:
                n = _recv_within(sock, view[got:], stall_timeout, doing)
        except socket.timeout:
            raise _deadline_error(sock, deadline, doing) from None
        if n == 0:
            if frame_start and got == 0:
                raise ConnectionClosed("%s closed the connection" % peer_name(sock))
            raise _bad("connection closed mid-frame while reading %s: got %d of %d "
                       "bytes of its %s", what, before + got, part_size, part)
        got += n


def _recv_within(sock, view, seconds, doing):
    """One ``recv_into`` that waits at most ``seconds`` for a byte. On a
    blocking socket it first asks without waiting (the bytes are usually
    there already), so a frame that arrives whole costs no timeout syscalls."""
    if sock.gettimeout() is None and _DONTWAIT:
        try:
            return sock.recv_into(view, 0, _DONTWAIT)
        except BlockingIOError:
            pass
    if sock.gettimeout() != seconds:
        sock.settimeout(seconds)
    try:
        return sock.recv_into(view)
    except socket.timeout:
        raise errors.DeadlineExceededError(
            None, None, "The peer %s sent nothing for %g s in the middle of a frame (%s); "
            "a frame that has started must keep arriving" % (peer_name(sock), seconds, doing())
        ) from None


def _recv_body(sock, pad, size, deadline, what, stall_timeout):
    """The frame's header and payload (``size`` bytes) read into one buffer
    with ``pad`` spare bytes in front.

    A body up to :data:`RESERVE_AHEAD` bytes is read into one ``np.empty``
    buffer. A larger one goes into an anonymous memory map that holds at
    most RESERVE_AHEAD bytes (or as many as arrived, if more) beyond what has
    arrived, and grows as bytes come: ``mmap.resize`` (``mremap``) moves the
    pages instead of copying them, so the tensors still end up as views of
    one buffer, without trusting the announced size up front."""
    total = pad + size
    if total <= RESERVE_AHEAD:
        body = np.empty(total, dtype=np.uint8)  # np.empty: no zero-fill
        view = memoryview(body)[pad:]
        _recv_exact(sock, view, deadline, what, "body", False, stall_timeout)
        return body
    reserved = pad + RESERVE_AHEAD
    buf = _map(reserved)
    got = pad
    while True:
        view = memoryview(buf)[got:reserved]
        try:
            _recv_exact(sock, view, deadline, what, "body", False, stall_timeout,
                        before=got - pad, part_size=size)
        finally:
            view.release()  # resize() needs no views of the buffer alive
        got = reserved
        if got == total:
            return np.frombuffer(buf, dtype=np.uint8)
        reserved = min(total, got + max(got - pad, RESERVE_AHEAD))
        buf.resize(reserved)
        _huge_pages(buf)


def _map(size):
    """Anonymous memory, private (so that it can grow), in huge pages where
    the system has them: as numpy does for large arrays, since faulting in
    4 KiB pages one by one would cost more than the copy that was saved."""
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    _huge_pages(buf)
    return buf


def _huge_pages(buf):
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        try:
            buf.madvise(advice)
        except OSError:
            pass


def _send_views(sock, views, deadline, what):
    # Empty buffers (an empty string tensor) would make sendmsg return 0 for
    # ever once only they are left: drop them.
    views = [v for v in views if v.nbytes]
    total = sum(v.nbytes for v in views)
    sent = 0
    k = 0  # index of the first view not fully sent
    has_sendmsg = hasattr(sock, "sendmsg")

    def doing():
        return "sending %s: %d of %d bytes sent" % (what, sent, total)

    while k < len(views):
        _set_timeout(sock, deadline, doing)
        try:
            if has_sendmsg:
                n = sock.sendmsg(views[k:k + _IOV_MAX])
            else:  # pragma: no cover  (Windows)
                n = sock.send(views[k])
        except socket.timeout:
            raise _deadline_error(sock, deadline, doing) from None
        sent += n
        while n:
            first = views[k]
            if n >= first.nbytes:
                n -= first.nbytes
                k += 1
            else:
                views[k] = first[n:]
                n = 0


def send_frame(sock, header, tensors=(), deadline=None, what="a frame"):
    """Send one frame: ``header`` (a dict of plain data, key ``"tensors"``
    reserved) and ``tensors`` (numpy arrays, or anything ``np.asarray``
    accepts). Blocks until the kernel took every byte or ``deadline``
    (absolute ``time.monotonic()``) passes: then DeadlineExceededError.

    Everything is encoded before the first byte is sent, so the errors below
    leave the connection usable (a server answers them with an error frame):
    :class:`UnsendableTensor` (a TypeError) if a tensor cannot travel (a dtype
    minitf lacks, an object that is not data), TypeError if the header holds
    something msgpack cannot encode, ValueError if the header is too large.
    """
    if not isinstance(header, dict):
        raise TypeError("a frame header must be a dict, got %r" % type(header).__name__)
    if "tensors" in header:
        raise ValueError("the header key 'tensors' is reserved for the wire; pass "
                         "arrays in the tensors argument")
    views = [None]  # slot 0: prefix + header, filled below
    metas = []
    offset = 0
    for i, t in enumerate(tensors):
        try:
            meta, bufs = encode_tensor(t)
        except (TypeError, ValueError) as e:
            raise UnsendableTensor(i, "tensor %d (%s) cannot be sent: %s"
                                   % (i, type(t).__name__, e)) from None
        pad = _align(offset) - offset
        if pad and meta["nbytes"]:
            views.append(memoryview(_ZEROS)[:pad])
        if meta["nbytes"]:
            offset += pad
        offset += meta["nbytes"]
        metas.append(meta)
        views.extend(bufs)
    if metas:
        header = dict(header)
        header["tensors"] = metas
    hbytes = msgpack.packb(header, use_bin_type=True)
    if len(hbytes) > MAX_HEADER:
        raise ValueError("frame header of %d bytes is over the %d-byte limit; send "
                         "bulk data as tensors" % (len(hbytes), MAX_HEADER))
    head = PREFIX.pack(MAGIC, VERSION, len(hbytes), offset) + hbytes
    if deadline is None:
        _blocking(sock)
        if len(views) == 1:  # fast path: a small message without tensors
            sock.sendall(head)
            return
    views[0] = memoryview(head)
    _send_views(sock, views, deadline, what)


def recv_frame(sock, max_header=MAX_HEADER, max_payload=DEFAULT_MAX_PAYLOAD,
               deadline=None, what="a frame", stall_timeout=None):
    """Receive one frame; returns ``(header, tensors)``.

    ``header`` is the sender's dict (without ``"tensors"``); ``tensors`` is a
    list of numpy arrays, writable views of one fresh buffer holding the
    frame. ``what`` names the awaited message in deadline errors
    (``"the reply to RunStep"``). Without a ``deadline``, ``stall_timeout``
    (seconds) bounds the wait for each byte after the frame's first (a
    server's protection against half-sent frames).

    Raises:
      ConnectionClosed: the peer closed the connection before the first byte
        of a frame.
      MalformedFrame: the frame arrived whole but its header or tensor metas
        are invalid (the stream is still in step).
      ProtocolError: anything else malformed, or a frame cut short by EOF
        (the stream is out of step: close the connection).
      DeadlineExceededError: ``deadline`` passed first, or a frame stalled
        for ``stall_timeout``.
      OSError: what the socket raised (e.g. ConnectionResetError).
    """
    if deadline is None:
        _blocking(sock)
    prefix = bytearray(PREFIX.size)
    _recv_exact(sock, memoryview(prefix), deadline, what, "prefix", True, stall_timeout)
    magic, version, hlen, plen = PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise _bad("bad magic %r from %s: the peer does not speak the minitf wire "
                   "protocol", bytes(magic), peer_name(sock))
    if version != VERSION:
        raise _bad("unsupported minitf wire version %d (this side speaks %d)",
                   version, VERSION)
    if hlen > max_header:
        raise _bad("frame header of %d bytes is over the %d-byte limit", hlen, max_header)
    if plen > max_payload:
        raise _bad("frame payload of %d bytes is over the %d-byte limit", plen, max_payload)
    # One buffer for header + payload, with `pad` spare bytes in front so that
    # the payload starts ALIGN-aligned.
    pad = (-hlen) % ALIGN
    body = _recv_body(sock, pad, hlen + plen, deadline, what, stall_timeout)
    try:
        header = msgpack.unpackb(memoryview(body)[pad:pad + hlen], raw=False,
                                 strict_map_key=False, use_list=True, ext_hook=_no_ext)
    except Exception as e:  # msgpack raises many types for bad input
        raise _malformed("undecodable frame header (%s: %s)", type(e).__name__, e) from None
    if not isinstance(header, dict):
        raise _malformed("frame header is a %s, not a map", type(header).__name__)
    metas = header.pop("tensors", None)
    if metas is None and plen == 0:
        return header, []
    return header, decode_tensors(metas if metas is not None else [], body[pad + hlen:])


def _no_ext(code, data):
    raise ValueError("msgpack extension type %d is not used by minitf" % code)


# --------------------------------------------------------------------------
# Errors on the wire
# --------------------------------------------------------------------------

_CODE_OF_BUILTIN = [
    (TimeoutError, errors.DEADLINE_EXCEEDED),
    (ConnectionError, errors.UNAVAILABLE),
    (ProtocolError, errors.INVALID_ARGUMENT),
    (NotImplementedError, errors.UNIMPLEMENTED),
    (MemoryError, errors.RESOURCE_EXHAUSTED),
    ((ValueError, TypeError, KeyError, IndexError), errors.INVALID_ARGUMENT),
]


def error_header(exc):
    """The header that carries ``exc`` to the peer: ``{"error": {"code": int,
    "message": str}}``. An OpError keeps its code and message; other
    exceptions get the closest canonical code (ValueError -> INVALID_ARGUMENT,
    ..., else UNKNOWN) and their class name in the message. Add more keys
    (a request id) to the returned dict as you like."""
    if isinstance(exc, errors.OpError):
        code, message = exc.error_code, exc.message
    else:
        code = errors.UNKNOWN
        for types, c in _CODE_OF_BUILTIN:
            if isinstance(exc, types):
                code = c
                break
        message = "%s: %s" % (type(exc).__name__, exc)
    return {"error": {"code": int(code), "message": str(message)}}


def raise_if_error(header):
    """If ``header`` carries an error, raise it as the right ``tf.errors``
    class (``errors.from_code``); else return ``header``."""
    err = header.get("error") if isinstance(header, dict) else None
    if err is None:
        return header
    if not isinstance(err, dict) or type(err.get("code")) is not int \
            or not isinstance(err.get("message"), str):
        raise _bad("malformed error in frame header: %r", err)
    raise errors.from_code(err["code"], err["message"])


def send_error(sock, exc, deadline=None, **extra):
    """Send ``exc`` as an error frame (``error_header(exc)`` plus ``extra``)."""
    header = error_header(exc)
    header.update(extra)
    send_frame(sock, header, deadline=deadline, what="an error reply")


# --------------------------------------------------------------------------
# Connecting
# --------------------------------------------------------------------------

def parse_address(address):
    """``"host:port"`` -> ``(host, port)``; ``"[::1]:2222"`` works too.
    ``grpc://`` prefixes (TF session targets) are stripped."""
    if isinstance(address, bytes):
        address = address.decode("utf-8")
    for scheme in ("grpc://", "minitf://"):
        if address.startswith(scheme):
            address = address[len(scheme):]
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError("bad address %r: expected 'host:port'" % (address,))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def configure_socket(sock):
    """TCP_NODELAY (small request/reply frames must not wait for Nagle's
    algorithm) and keepalive on a TCP socket."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    except OSError:
        pass  # e.g. an AF_UNIX socketpair in tests


def connect(address, deadline=None):
    """Open a TCP connection to ``"host:port"`` before ``deadline``.

    Raises UnavailableError if nothing listens there (refused, unreachable,
    unresolvable) and DeadlineExceededError if the deadline passes first.
    The caller then runs ``auth.client_handshake`` on the socket.
    """
    host, port = parse_address(address)
    timeout = None
    if deadline is not None:
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            raise errors.DeadlineExceededError(
                None, None, "Deadline exceeded before connecting to %s" % address)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except socket.timeout:
        raise errors.DeadlineExceededError(
            None, None, "Deadline exceeded connecting to %s" % address) from None
    except OSError as e:
        raise errors.UnavailableError(
            None, None, "Cannot connect to %s: %s" % (address, e.strerror or e)) from None
    configure_socket(sock)
    return sock

