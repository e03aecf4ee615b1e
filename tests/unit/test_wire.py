"""The wire: frames round-trip exactly, malformed input raises the right error
(never hangs, never crashes the server), deadlines are kept."""

import socket
import struct
import threading
import time

import ml_dtypes
import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitf.framework import errors
from minitf.distributed import wire
from minitf.distributed.wire import ConnectionClosed, ProtocolError

from background import Background


# ---------------------------------------------------------------- helpers

@pytest.fixture
def pair():
    a, b = socket.socketpair()
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def roundtrip(pair, header, tensors, **kw):
    a, b = pair
    sender = Background(wire.send_frame, a, header, tensors)
    kw.setdefault("deadline", time.monotonic() + 30)
    try:
        got = wire.recv_frame(b, **kw)
    except errors.DeadlineExceededError:
        sender.result()  # show the sender's error, if that is why
        raise
    sender.result()
    return got


def raw_frame(header_bytes, payload=b"", magic=wire.MAGIC, version=wire.VERSION,
              hlen=None, plen=None):
    return wire.PREFIX.pack(magic, version,
                            len(header_bytes) if hlen is None else hlen,
                            len(payload) if plen is None else plen) + header_bytes + payload


def recv_after(pair, data, close=True, **kw):
    a, b = pair
    a.sendall(data)
    if close:
        a.shutdown(socket.SHUT_WR)
    return wire.recv_frame(b, deadline=time.monotonic() + 5, **kw)


def packed(obj):
    return msgpack.packb(obj, use_bin_type=True)


# ---------------------------------------------------------------- round trips

SAMPLES = {
    "float16": np.array([1.5, -0.0, np.inf, 65504], np.float16),
    "bfloat16": np.array([1.0, -2.5, 3.0e38, 1e-3], ml_dtypes.bfloat16),
    "float32": np.array([[1.5, np.nan], [-np.inf, 3.4e38]], np.float32),
    "float64": np.array([np.pi, -1e308, 5e-324], np.float64),
    "int8": np.array([-128, 0, 127], np.int8),
    "int16": np.array([-32768, 32767], np.int16),
    "int32": np.arange(-5, 7, dtype=np.int32).reshape(3, 2, 2),
    "int64": np.array([-2 ** 63, 2 ** 63 - 1], np.int64),
    "uint8": np.array([0, 255], np.uint8),
    "uint16": np.array([0, 65535], np.uint16),
    "bool": np.array([[True, False, True]]),
}


def assert_same(x, y):
    x = np.asarray(x)
    assert y.shape == x.shape
    if x.dtype.kind in "OSU":
        assert y.dtype == object
        expect = [v.encode() if isinstance(v, str) else bytes(v) for v in x.reshape(-1).tolist()]
        assert y.reshape(-1).tolist() == expect
        return
    assert y.dtype == x.dtype.newbyteorder("=")
    np.testing.assert_array_equal(y, x)
    assert np.ascontiguousarray(x, dtype=y.dtype).tobytes() == y.tobytes()  # bit-exact


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_roundtrip_every_dtype(pair, name):
    x = SAMPLES[name]
    scalar = x.reshape(-1)[:1].reshape(())
    empty = x.reshape(-1)[:0].reshape(0, 3)
    header, ts = roundtrip(pair, {"op": "t"}, [x, scalar, empty])
    assert header == {"op": "t"}
    for sent, got in zip([x, scalar, empty], ts):
        assert_same(sent, got)
        assert got.flags.writeable
        if got.nbytes:
            assert got.ctypes.data % 8 == 0 or got.itemsize < 8


def test_results_are_writable_views_of_one_buffer(pair):
    x, y = np.arange(10, dtype=np.float64), np.arange(3, dtype=np.int8)
    _, (gx, gy) = roundtrip(pair, {}, [y, x])
    gx[0] = 42  # writable, no copy needed
    assert gx.ctypes.data % 8 == 0
    assert gx.base is not None and gy.base is not None
    assert np.shares_memory(gx.base, gy.base) or gx.base is gy.base


def test_non_contiguous_and_big_endian_inputs(pair):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    xs = [base.T, base[::2, 1::3], np.arange(6, dtype=">i4"), np.asfortranarray(base)]
    _, ts = roundtrip(pair, {}, xs)
    for x, t in zip(xs, ts):
        np.testing.assert_array_equal(t, x)
        assert t.flags.c_contiguous
        assert t.dtype.isnative


def test_strings(pair):
    xs = [
        np.array([b"a\x00b", b"", b"\x00\x00", "h\u00e9llo", b"\xff" * 1000],
                 dtype=object),
        np.array(b"scalar\x00"),                      # 0-d 'S'
        np.array([["x", "yy"], ["zzz", ""]]),         # 'U' array -> utf-8 bytes
        np.zeros((0, 2), dtype=object),               # empty string tensor
        np.array([b"ab", b"c"], dtype="S2"),          # fixed-width bytes
    ]
    _, ts = roundtrip(pair, {}, xs)
    for x, t in zip(xs, ts):
        assert_same(x, t)
    assert ts[0][0] == b"a\x00b" and ts[0][3] == "h\u00e9llo".encode()
    assert ts[1].shape == () and ts[1].item() == b"scalar"  # numpy 'S' strips trailing NULs


def test_string_with_non_bytes_element_is_a_type_error(pair):
    with pytest.raises(wire.UnsendableTensor, match="tensor 0 .*it holds a int, which is not "
                       "data") as info:
        wire.send_frame(pair[0], {}, [np.array([b"a", 3], dtype=object)])
    assert isinstance(info.value, TypeError) and info.value.index == 0


def test_bfloat16_values(pair):
    x = np.array([0.1, 1 / 3, -7.75, 1e30], dtype=np.float32).astype(ml_dtypes.bfloat16)
    _, (t,) = roundtrip(pair, {}, [x])
    assert t.dtype == ml_dtypes.bfloat16
    assert t.view(np.uint16).tolist() == x.view(np.uint16).tolist()


def test_64_mib_tensor(pair):
    x = np.random.default_rng(1).standard_normal(16 << 20).astype(np.float32)  # 64 MiB
    assert x.nbytes == 64 << 20
    header, (t,) = roundtrip(pair, {"op": "big"}, [x])
    assert header == {"op": "big"}
    assert np.array_equal(t, x)


def test_send_does_not_copy_contiguous_tensors():
    x = np.arange(1000, dtype=np.float32)
    meta, bufs = wire.encode_tensor(x)
    assert meta == {"dtype": "float32", "shape": [1000], "nbytes": 4000}
    assert len(bufs) == 1 and np.shares_memory(np.asarray(bufs[0]), x)
    assert wire.encode_tensor_meta(np.array(b"ab\x00", dtype=object)) == \
        {"dtype": "string", "shape": [], "nbytes": 8 + 3}


def test_unsupported_dtype_is_a_type_error(pair):
    with pytest.raises(TypeError):
        wire.send_frame(pair[0], {}, [np.zeros(2, np.complex64)])


def test_header_round_trip_and_rules(pair):
    h = {"op": "RunStep", "id": 2 ** 40, "names": ["a:0", "b:0"], "blob": b"\x00\x01",
         "nested": {"tasks": {0: "host:1", 3: "host:2"}}, "f": 1.5, "none": None,
         "uni": "\u00fc"}
    assert roundtrip(pair, h, []) == (h, [])
    with pytest.raises(ValueError, match="reserved"):
        wire.send_frame(pair[0], {"tensors": []})
    with pytest.raises(TypeError):
        wire.send_frame(pair[0], {"x": object()})  # msgpack cannot: no pickle fallback
    with pytest.raises(TypeError):
        wire.send_frame(pair[0], ["not", "a", "dict"])
    with pytest.raises(ValueError, match="limit"):
        wire.send_frame(pair[0], {"x": b"\x00" * (wire.MAX_HEADER + 1)})


def test_several_frames_in_a_row(pair):
    a, b = pair
    for i in range(5):
        wire.send_frame(a, {"i": i}, [np.full(i, i, np.int32)])
    for i in range(5):
        h, (t,) = wire.recv_frame(b)
        assert h == {"i": i} and t.tolist() == [i] * i


def test_frame_layout_is_as_documented(pair):
    a, b = pair
    wire.send_frame(a, {"op": "x"}, [np.array([1, 2, 3], np.int8), np.array([7], np.int64)])
    a.close()
    data = b""
    while True:
        chunk = b.recv(65536)
        if not chunk:
            break
        data += chunk
    magic, version, hlen, plen = wire.PREFIX.unpack(data[:20])
    assert (magic, version, wire.PREFIX.size) == (b"MTF1", 1, 20)
    header = msgpack.unpackb(data[20:20 + hlen], raw=False)
    assert header["tensors"] == [{"dtype": "int8", "shape": [3], "nbytes": 3},
                                 {"dtype": "int64", "shape": [1], "nbytes": 8}]
    payload = data[20 + hlen:]
    assert plen == len(payload) == 16
    assert payload == b"\x01\x02\x03" + b"\x00" * 5 + struct.pack("<q", 7)


def test_decode_tensors_read_only_for_bytes_payload():
    (t,) = wire.decode_tensors([{"dtype": "int32", "shape": [2], "nbytes": 8}],
                               struct.pack("<ii", 5, 6))
    assert t.tolist() == [5, 6] and not t.flags.writeable
    (t,) = wire.decode_tensors([{"dtype": "int32", "shape": [2], "nbytes": 8}],
                               bytearray(struct.pack("<ii", 5, 6)))
    assert t.flags.writeable


# ---------------------------------------------------------------- malformed input

def test_clean_eof_is_connection_closed(pair):
    with pytest.raises(ConnectionClosed) as info:
        recv_after(pair, b"")
    assert isinstance(info.value, ConnectionError)
    assert isinstance(info.value, wire.WireError)


@pytest.mark.parametrize("data,match", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "bad magic"),
    (raw_frame(packed({}), magic=b"MTF2"), "bad magic"),
    (raw_frame(packed({}), version=2), "unsupported minitf wire version 2"),
    (raw_frame(b"", hlen=wire.MAX_HEADER + 1), "header of 1048577 bytes is over"),
    (raw_frame(packed({}))[:10], "closed mid-frame .* of its prefix"),
    (raw_frame(packed({"a": 1}))[:-1], "closed mid-frame .* of its body"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [4], "nbytes": 16}]}),
               b"\x00" * 16)[:-3], "closed mid-frame"),
    (raw_frame(packed([1, 2])), "not a map"),
    (raw_frame(packed("str")), "not a map"),
    (raw_frame(b"\xc1"), "undecodable"),                    # never-used msgpack byte
    (raw_frame(b""), "undecodable"),                        # empty header
    (raw_frame(packed({}) + b"\x00"), "undecodable"),       # trailing bytes
    (raw_frame(b"\x81\xa1a\xa2\xff\xfe"), "undecodable"),   # invalid utf-8 str
    (raw_frame(msgpack.packb({"a": msgpack.ExtType(5, b"x")})), "undecodable"),
    (raw_frame(packed({}), b"junk"), "payload has 4 bytes but the tensor metas describe 0"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [4], "nbytes": 16}]}),
               b"\x00" * 8), "payload has only 8"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [1], "nbytes": 4}]}),
               b"\x00" * 12), "payload has 12 bytes but the tensor metas describe 4"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [4], "nbytes": 12}]}),
               b"\x00" * 12), "needs 16 bytes, meta says 12"),
    (raw_frame(packed({"tensors": [{"dtype": "complex64", "shape": [1], "nbytes": 8}]}),
               b"\x00" * 8), "unknown dtype 'complex64'"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [-1], "nbytes": 4}]}),
               b"\x00" * 4), "bad shape"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [1], "nbytes": -4}]})),
     "bad nbytes"),
    (raw_frame(packed({"tensors": [{"dtype": "string", "shape": [2], "nbytes": 8}]}),
               b"\x00" * 8), "cannot hold 2 lengths"),
    (raw_frame(packed({"tensors": [{"dtype": "string", "shape": [1], "nbytes": 10}]}),
               struct.pack("<Q", 5) + b"ab"), "lengths do not add up"),
    (raw_frame(packed({"tensors": [{"dtype": "string", "shape": [2], "nbytes": 18}]}),
               struct.pack("<QQ", 2 ** 64 - 1, 3) + b"ab"), "lengths do not add up"),
    (raw_frame(packed({"tensors": "nope"})), "must be a list"),
    (raw_frame(packed({"tensors": [7]})), "not a map"),
])
def test_malformed_frames(pair, data, match):
    with pytest.raises(ProtocolError, match=match):
        recv_after(pair, data)


_CONTENT_ERRORS = [
    (raw_frame(packed([1, 2])), "not a map"),
    (raw_frame(b"\xc1"), "undecodable"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [1] * 70, "nbytes": 4}]}),
               b"\x00" * 4), "tensor 0 has 70 dimensions; minitf tensors .* at most 64"),
    (raw_frame(packed({"tensors": [{"dtype": "complex64", "shape": [1], "nbytes": 8}]}),
               b"\x00" * 8), "unknown dtype"),
    (raw_frame(packed({"tensors": [{"dtype": "float32", "shape": [4], "nbytes": 12}]}),
               b"\x00" * 12), "needs 16 bytes"),
]


@pytest.mark.parametrize("data,match", _CONTENT_ERRORS)
def test_a_whole_but_malformed_frame_leaves_the_stream_in_step(pair, data, match):
    a, b = pair
    a.sendall(data + raw_frame(packed({"op": "next"})))
    with pytest.raises(wire.MalformedFrame, match=match):
        wire.recv_frame(b, deadline=time.monotonic() + 5)
    assert wire.recv_frame(b, deadline=time.monotonic() + 5) == ({"op": "next"}, [])


@pytest.mark.parametrize("data", [
    b"GET / HTTP/1.1\r\n\r\n", raw_frame(packed({}), version=2),
    raw_frame(b"", hlen=wire.MAX_HEADER + 1), raw_frame(packed({"a": 1}))[:-1]])
def test_framing_errors_are_not_malformed_content(pair, data):
    with pytest.raises(ProtocolError) as info:
        recv_after(pair, data)
    assert not isinstance(info.value, wire.MalformedFrame)


def _vm_data_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmData in /proc/self/status")


def test_an_announced_payload_is_not_reserved_before_it_arrives(pair):
    a, b = pair
    before = _vm_data_bytes()
    a.sendall(raw_frame(packed({}), b"x" * 1000, plen=8 << 30))  # says 8 GiB, sends 1000 bytes
    receiver = Background(wire.recv_frame, b)
    time.sleep(0.3)                            # the receiver waits for the rest
    grown = _vm_data_bytes() - before
    a.shutdown(socket.SHUT_WR)
    receiver.join()
    assert isinstance(receiver.error, ProtocolError)
    assert "closed mid-frame while reading a frame: got 1001 of 8589934593 bytes of its " \
        "body" in str(receiver.error)
    assert grown < wire.RESERVE_AHEAD + (16 << 20), grown


def test_a_big_frame_arrives_whole_through_a_growing_buffer(pair, monkeypatch):
    monkeypatch.setattr(wire, "RESERVE_AHEAD", 1 << 16)   # grow many times
    x = np.random.default_rng(2).standard_normal(3_000_001).astype(np.float32)
    y = np.arange(7, dtype=np.int64)
    header, (tx, ty) = roundtrip(pair, {"op": "big"}, [x, y])
    assert np.array_equal(tx, x) and np.array_equal(ty, y)
    assert tx.base is not None and np.shares_memory(tx, ty) is False
    assert ty.ctypes.data % 8 == 0


def test_stall_timeout_ends_a_half_sent_frame(pair):
    a, b = pair
    frame = raw_frame(packed({"op": "x"}), b"y" * 64, plen=64)
    a.sendall(frame[:30])                      # the prefix and part of the header
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError,
                       match="sent nothing for 0.3 s in the middle of a frame"):
        wire.recv_frame(b, stall_timeout=0.3)
    assert 0.25 < time.monotonic() - start < 2.0


def test_stall_timeout_does_not_limit_an_idle_connection(pair):
    a, b = pair
    got = Background(wire.recv_frame, b, wire.MAX_HEADER, wire.DEFAULT_MAX_PAYLOAD, None,
                     "a frame", 0.2)
    time.sleep(0.6)                            # idle between frames: fine
    wire.send_frame(a, {"op": "late"}, [np.ones(3, np.float32)])
    header, (t,) = got.result()
    assert header == {"op": "late"} and t.tolist() == [1.0, 1.0, 1.0]


def test_oversized_payload_is_refused_before_reading(pair):
    a, b = pair
    a.sendall(raw_frame(packed({}), plen=2 ** 40))  # claims 1 TiB; nothing follows
    with pytest.raises(ProtocolError, match="payload of 1099511627776 bytes is over"):
        wire.recv_frame(b, deadline=time.monotonic() + 5)
    # the stream is now out of step (documented: close it); use a fresh one
    a2, b2 = socket.socketpair()
    with a2, b2:
        a2.sendall(raw_frame(packed({}), b"x" * 100))
        with pytest.raises(ProtocolError, match="over the 99-byte limit"):
            wire.recv_frame(b2, max_payload=99, deadline=time.monotonic() + 5)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_crash_or_hang(data):
    a, b = socket.socketpair()
    try:
        a.sendall(data)
        a.shutdown(socket.SHUT_WR)
        try:
            wire.recv_frame(b, deadline=time.monotonic() + 5)
        except (ProtocolError, ConnectionClosed):
            pass
    finally:
        a.close()
        b.close()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=100), st.binary(max_size=64))
def test_random_header_and_payload_after_valid_prefix(header, payload):
    a, b = socket.socketpair()
    try:
        a.sendall(raw_frame(header, payload))
        a.shutdown(socket.SHUT_WR)
        try:
            h, ts = wire.recv_frame(b, deadline=time.monotonic() + 5)
        except ProtocolError:
            return
        assert isinstance(h, dict) and isinstance(ts, list)
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------- a server survives garbage

def test_server_closes_only_the_bad_connection():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    stop = threading.Event()
    events = []
    handlers = []

    def handle(conn):
        with conn:
            while True:
                try:
                    header, tensors = wire.recv_frame(conn, deadline=time.monotonic() + 10)
                except ConnectionClosed:
                    events.append("closed")
                    return
                except ProtocolError as e:
                    events.append("protocol error: %s" % e)
                    return  # drop this connection only
                wire.send_frame(conn, {"echo": header}, [t * 2 for t in tensors])

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            t = threading.Thread(target=handle, args=(conn,), daemon=True)
            handlers.append(t)
            t.start()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    bad = socket.create_connection(listener.getsockname())
    good = wire.connect("127.0.0.1:%d" % listener.getsockname()[1],
                        deadline=time.monotonic() + 5)
    try:
        bad.sendall(b"\x16\x03\x01 this is a TLS hello, not minitf" + b"\x00" * 64)
        bad.settimeout(5)
        try:  # the server hung up on it: EOF, or RST as it left bytes unread
            assert bad.recv(100) == b""
        except ConnectionResetError:
            pass
        for i in range(3):
            wire.send_frame(good, {"i": i}, [np.arange(4, dtype=np.float32)])
            h, (t,) = wire.recv_frame(good, deadline=time.monotonic() + 5)
            assert h == {"echo": {"i": i}} and t.tolist() == [0, 2, 4, 6]
    finally:
        bad.close()
        good.close()
        stop.set()
        server.join(5)
        for t in handlers:
            t.join(5)
        listener.close()
    assert not server.is_alive() and not any(t.is_alive() for t in handlers)
    assert events[0].startswith("protocol error: bad magic") and events[1] == "closed"


# ---------------------------------------------------------------- deadlines

def test_recv_deadline(pair):
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError,
                       match="waiting for the reply to RunStep: got 0 of 20 bytes of its prefix"):
        wire.recv_frame(pair[1], deadline=t0 + 0.3, what="the reply to RunStep")
    assert 0.25 <= time.monotonic() - t0 < 2


def test_recv_deadline_mid_frame(pair):
    a, b = pair
    a.sendall(raw_frame(packed({}), b"12345678")[:-3])
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="got 6 of 9 bytes of its body"):
        wire.recv_frame(b, deadline=t0 + 0.2)
    assert time.monotonic() - t0 < 2


def test_expired_deadline_fails_at_once(pair):
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError):
        wire.recv_frame(pair[1], deadline=t0 - 1)
    with pytest.raises(errors.DeadlineExceededError):
        wire.send_frame(pair[0], {}, deadline=t0 - 1)
    assert time.monotonic() - t0 < 0.5


def test_send_deadline_when_peer_does_not_read(pair):
    x = np.zeros(16 << 20, np.float32)  # far more than the socket buffers hold
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="sending the big one: .* bytes sent"):
        wire.send_frame(pair[0], {}, [x], deadline=t0 + 0.3, what="the big one")
    assert 0.25 <= time.monotonic() - t0 < 2


def test_no_deadline_means_blocking(pair):
    a, b = pair
    b.settimeout(0.01)  # recv_frame owns the timeout: None = wait
    Background(lambda: (time.sleep(0.1), wire.send_frame(a, {"late": True}))).result()
    assert wire.recv_frame(b) == ({"late": True}, [])


# ---------------------------------------------------------------- errors on the wire

@pytest.mark.parametrize("cls", [errors.UnavailableError, errors.InvalidArgumentError,
                                 errors.OutOfRangeError, errors.UnauthenticatedError,
                                 errors.FailedPreconditionError, errors.CancelledError])
def test_op_errors_cross_the_wire(pair, cls):
    a, b = pair
    wire.send_error(a, cls(None, None, "boom \u00e9"), request=7)
    header, _ = wire.recv_frame(b)
    assert header == {"error": {"code": errors.error_code_from_exception_type(cls),
                                "message": "boom \u00e9"}, "request": 7}
    with pytest.raises(cls, match="boom") as info:
        wire.raise_if_error(header)
    assert type(info.value) is cls and info.value.message == "boom \u00e9"


@pytest.mark.parametrize("exc,cls,msg", [
    (ValueError("v"), errors.InvalidArgumentError, "ValueError: v"),
    (TypeError("t"), errors.InvalidArgumentError, "TypeError: t"),
    (NotImplementedError("n"), errors.UnimplementedError, "NotImplementedError: n"),
    (ConnectionResetError("c"), errors.UnavailableError, "ConnectionResetError: c"),
    (RuntimeError("r"), errors.UnknownError, "RuntimeError: r"),
])
def test_python_errors_get_canonical_codes(exc, cls, msg):
    header = wire.error_header(exc)
    with pytest.raises(cls) as info:
        wire.raise_if_error(header)
    assert type(info.value) is cls and info.value.message == msg


def test_raise_if_error_passes_normal_headers_and_rejects_bad_errors():
    assert wire.raise_if_error({"op": "x"}) == {"op": "x"}
    for bad in ({"error": "x"}, {"error": {"code": "3", "message": "m"}},
                {"error": {"code": 3}}):
        with pytest.raises(ProtocolError):
            wire.raise_if_error(bad)


def test_no_pickle_in_the_distributed_package():
    import pathlib
    import minitf.distributed as pkg
    for path in pathlib.Path(pkg.__file__).parent.glob("*.py"):
        src = path.read_text()
        assert "import pickle" not in src and "cPickle" not in src, path


# ---------------------------------------------------------------- addresses

@pytest.mark.parametrize("addr,expect", [
    ("localhost:2222", ("localhost", 2222)),
    ("grpc://10.0.0.1:80", ("10.0.0.1", 80)),
    (b"h:1", ("h", 1)),
    ("[::1]:5", ("::1", 5)),
])
def test_parse_address(addr, expect):
    assert wire.parse_address(addr) == expect


@pytest.mark.parametrize("addr", ["localhost", ":22", "h:x", "h:"])
def test_parse_address_rejects(addr):
    with pytest.raises(ValueError):
        wire.parse_address(addr)


def test_connect_to_nothing_is_unavailable():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(errors.UnavailableError, match="Cannot connect to 127.0.0.1:%d" % port):
        wire.connect("127.0.0.1:%d" % port, deadline=time.monotonic() + 5)


def test_empty_string_tensor_does_not_stall_the_sender():
    """An empty string tensor has zero-length buffers; the sender must finish
    the frame, and the next frame must follow on the same connection."""
    a, b = socket.socketpair()
    try:
        done = []

        def send_two():
            wire.send_frame(a, {"n": 1}, [np.array([], dtype=object)])
            wire.send_frame(a, {"n": 2})
            done.append(True)
        t = threading.Thread(target=send_two)
        t.start()
        h1, t1 = wire.recv_frame(b, deadline=time.monotonic() + 5)
        h2, _ = wire.recv_frame(b, deadline=time.monotonic() + 5)
        t.join(5)
        assert (h1["n"], h2["n"], t1[0].shape, done) == (1, 2, (0,), [True])
    finally:
        a.close()
        b.close()
