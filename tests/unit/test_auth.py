"""The cluster secret and the mutual HMAC handshake."""

import multiprocessing as mp
import os
import socket
import stat
import time

import pytest

from minitf.framework import errors
from minitf.distributed import auth, wire

from background import Background


@pytest.fixture
def pair():
    a, b = socket.socketpair()  # a: server end, b: client end
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def soon(seconds=5.0):
    return time.monotonic() + seconds


# ---------------------------------------------------------------- handshake

def test_same_secret_both_sides_succeed_and_the_socket_stays_usable(pair):
    a, b = pair
    server = Background(auth.server_handshake, a, b"s3cret", soon())
    auth.client_handshake(b, b"s3cret", soon())
    server.join()
    assert server.error is None
    wire.send_frame(b, {"op": "hello"})  # requests flow after the handshake
    assert wire.recv_frame(a, deadline=soon()) == ({"op": "hello"}, [])


def test_str_secret_equals_its_utf8_bytes(pair):
    a, b = pair
    server = Background(auth.server_handshake, a, "k\u00e9y".encode(), soon())
    auth.client_handshake(b, "k\u00e9y", soon())
    server.join()
    assert server.error is None


def test_different_secrets(pair):
    a, b = pair
    server = Background(auth.server_handshake, a, b"server-secret", soon())
    with pytest.raises(errors.UnauthenticatedError) as info:
        auth.client_handshake(b, b"client-secret", soon())
    assert info.value.message == auth.BAD_SECRET_MESSAGE
    assert "MINITF_SECRET or ~/.minitf/secret differ" in info.value.message
    server.join()
    assert isinstance(server.error, errors.UnauthenticatedError)
    assert "rejected connection" in server.error.message
    assert a.fileno() == -1 and b.fileno() == -1  # both ends hung up


def test_impostor_server_is_detected(pair):
    """A server that speaks the protocol but lacks the secret cannot prove itself."""
    a, b = pair

    def impostor():
        wire.send_frame(a, {"auth": "challenge", "v": 1, "nonce": os.urandom(32)})
        wire.recv_frame(a, deadline=soon())
        wire.send_frame(a, {"auth": "ok", "mac": os.urandom(32)})  # a guess

    fake = Background(impostor)
    with pytest.raises(errors.UnauthenticatedError, match="did not prove it holds"):
        auth.client_handshake(b, b"secret", soon())
    fake.join()


def test_reflected_client_proof_is_not_a_server_proof(pair):
    """The impostor replays the client's own MAC as its proof: labels differ."""
    a, b = pair

    def reflector():
        wire.send_frame(a, {"auth": "challenge", "v": 1, "nonce": os.urandom(32)})
        reply, _ = wire.recv_frame(a, deadline=soon())
        wire.send_frame(a, {"auth": "ok", "mac": reply["mac"]})

    fake = Background(reflector)
    with pytest.raises(errors.UnauthenticatedError):
        auth.client_handshake(b, b"secret", soon())
    fake.join()


def test_client_meets_something_that_is_not_minitf(pair):
    a, b = pair
    a.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + b"\x00" * 40)
    with pytest.raises(errors.UnavailableError, match="is it a minitf server"):
        auth.client_handshake(b, b"secret", soon())
    assert b.fileno() == -1


def test_client_meets_a_peer_that_hangs_up(pair):
    a, b = pair
    a.close()
    with pytest.raises(errors.UnavailableError, match="ConnectionClosed"):
        auth.client_handshake(b, b"secret", soon())


def test_server_meets_garbage(pair):
    a, b = pair
    server = Background(auth.server_handshake, a, b"secret", soon())
    wire.recv_frame(b, deadline=soon())  # the challenge
    b.sendall(b"GET / HTTP/1.1\r\n\r\n" + b"\x00" * 20)
    server.join()
    assert isinstance(server.error, wire.ProtocolError)
    assert a.fileno() == -1


@pytest.mark.parametrize("response", [
    {"auth": "response"},                                            # nothing
    {"auth": "response", "nonce": b"short", "mac": b"\x00" * 32},    # bad nonce
    {"auth": "response", "nonce": b"\x00" * 32, "mac": "text"},      # bad mac type
    {"auth": "hello", "nonce": b"\x00" * 32, "mac": b"\x00" * 32},   # wrong step
])
def test_server_refuses_malformed_responses(pair, response):
    a, b = pair
    server = Background(auth.server_handshake, a, b"secret", soon())
    wire.recv_frame(b, deadline=soon())
    wire.send_frame(b, response)
    header, _ = wire.recv_frame(b, deadline=soon())
    assert header["error"]["code"] == errors.UNAUTHENTICATED
    server.join()
    assert isinstance(server.error, errors.UnauthenticatedError)


def test_client_deadline_when_server_says_nothing(pair):
    a, b = pair
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="auth challenge"):
        auth.client_handshake(b, b"secret", t0 + 0.3)
    assert 0.25 <= time.monotonic() - t0 < 2


def test_server_deadline_when_client_says_nothing(pair):
    a, b = pair
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="auth response"):
        auth.server_handshake(a, b"secret", t0 + 0.3)
    assert 0.25 <= time.monotonic() - t0 < 2
    assert a.fileno() == -1


def test_handshake_over_tcp_loopback():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        def serve():
            conn, _ = listener.accept()
            with conn:
                auth.server_handshake(conn, b"k", soon())
                header, _ = wire.recv_frame(conn, deadline=soon())
                wire.send_frame(conn, {"pong": header["ping"]})
        server = Background(serve)
        sock = wire.connect("127.0.0.1:%d" % listener.getsockname()[1], soon())
        with sock:
            auth.client_handshake(sock, b"k", soon())
            wire.send_frame(sock, {"ping": 1})
            assert wire.recv_frame(sock, deadline=soon())[0] == {"pong": 1}
        server.join()
        assert server.error is None
    finally:
        listener.close()


def test_bad_secret_argument():
    with pytest.raises(TypeError):
        auth.client_handshake(None, b"", soon())
    with pytest.raises(TypeError):
        auth.server_handshake(None, None, soon())


# ---------------------------------------------------------------- the secret

@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MINITF_SECRET", raising=False)
    return tmp_path


def test_secret_file_created_on_first_use(home):
    key = auth.load_secret()
    path = home / ".minitf" / "secret"
    assert auth.secret_path() == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / ".minitf").stat().st_mode) == 0o700
    text = path.read_text()
    assert text.endswith("\n") and len(text.strip()) == 64
    int(text, 16)  # hex
    assert key == text.strip().encode()
    assert auth.load_secret() == key  # stable
    assert os.listdir(home / ".minitf") == ["secret"]  # no temp files left


def test_env_var_overrides_file(home, monkeypatch):
    file_key = auth.load_secret()
    monkeypatch.setenv("MINITF_SECRET", "p\u00e4ss")
    assert auth.load_secret() == "p\u00e4ss".encode("utf-8")
    # copying the file's text into MINITF_SECRET on another host gives the same key
    monkeypatch.setenv("MINITF_SECRET", (home / ".minitf" / "secret").read_text().strip())
    assert auth.load_secret() == file_key


def test_env_var_used_without_touching_home(home, monkeypatch):
    monkeypatch.setenv("MINITF_SECRET", "x")
    assert auth.load_secret() == b"x"
    assert not (home / ".minitf").exists()
    assert auth.load_secret({"MINITF_SECRET": "y"}) == b"y"


def test_empty_env_var_is_refused(home, monkeypatch):
    monkeypatch.setenv("MINITF_SECRET", "")
    with pytest.raises(ValueError, match="MINITF_SECRET is set but empty"):
        auth.load_secret()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
def test_loose_permissions_are_refused(home, mode):
    auth.load_secret()
    path = home / ".minitf" / "secret"
    path.chmod(mode)
    with pytest.raises(PermissionError, match="chmod 600"):
        auth.load_secret()


def test_empty_secret_file_is_refused(home):
    d = home / ".minitf"
    d.mkdir(mode=0o700)
    (d / "secret").write_text("")
    (d / "secret").chmod(0o600)
    with pytest.raises(PermissionError, match="empty"):
        auth.load_secret()


def test_existing_file_is_used_as_is(home):
    d = home / ".minitf"
    d.mkdir(mode=0o700)
    (d / "secret").write_text("my shared cluster key\n")
    (d / "secret").chmod(0o600)
    assert auth.load_secret() == b"my shared cluster key"


def test_creation_without_hard_links(home, monkeypatch):
    def no_link(src, dst):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_link)
    key = auth.load_secret()
    assert len(key) == 64
    assert stat.S_IMODE((home / ".minitf" / "secret").stat().st_mode) == 0o600
    assert os.listdir(home / ".minitf") == ["secret"]


def _load_after_barrier(barrier, queue):
    barrier.wait(10)
    try:
        queue.put(auth.load_secret())
    except BaseException as e:  # noqa: BLE001
        queue.put(repr(e))


def test_concurrent_creation_gives_one_secret(home):
    ctx = mp.get_context("fork")
    n = 8
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_load_after_barrier, args=(barrier, queue)) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        keys = [queue.get(timeout=30) for _ in range(n)]
    finally:
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.terminate()
    assert all(isinstance(k, bytes) for k in keys), keys
    assert len(set(keys)) == 1
    assert keys[0] == (home / ".minitf" / "secret").read_text().strip().encode()
    assert os.listdir(home / ".minitf") == ["secret"]
