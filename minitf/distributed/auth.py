"""Who may talk to a minitf server: the cluster secret and the handshake.

A minitf server runs graphs it receives, so anyone who can reach its port could
make it do anything. Therefore every connection first passes a *mutual
challenge-response*: both ends prove that they hold the same **cluster
secret**, without ever sending it, before a single request is read::

    client                                             server
      |                         <-- {"auth": "challenge", "v": 1, "nonce": Ns}
      | {"auth": "response", "nonce": Nc,
      |  "mac": HMAC(secret, b"client" + Ns + Nc)} -->
      |                                   server checks the mac
      |                      <-- {"auth": "ok", "mac": HMAC(secret, b"server" + Ns + Nc)}
      | client checks the mac                  (or an UNAUTHENTICATED error frame,
      |                                          then the server hangs up)

* Nonces are 32 fresh random bytes per connection, so a recorded answer is
  useless later (no replay). The labels ``b"client"``/``b"server"`` make the two
  proofs different, so one side's proof cannot be reflected back as the other's.
* The server proves itself only after the client did, so a stranger cannot use
  the server to compute proofs. The client checks the server's proof, so it
  knows it reached a real minitf server of its own cluster, not some other
  program that happens to listen on that port.
* MACs are compared with :func:`hmac.compare_digest` (constant time).
* What this does *not* do: encrypt or sign the traffic that follows. On an
  untrusted network, tunnel the ports (ssh, WireGuard). It keeps out other
  users of a shared machine and stray clients, which is its job here.

Where the secret comes from (:func:`load_secret`):

1. the environment variable ``MINITF_SECRET`` (its UTF-8 bytes), if set;
2. else the file ``~/.minitf/secret`` (``$HOME`` is respected), created on first
   use with 32 random bytes written as 64 hex digits, mode 0600 in a 0700
   directory. Processes of one user on one machine therefore agree without any
   setup. To join servers on other hosts, give them the same secret::

       export MINITF_SECRET="$(cat ~/.minitf/secret)"     # the same key

   (the key is the file's *text*, so this export is equivalent to the file).
   A secret file readable by group or others is refused: ``chmod 600`` it.
"""

import hashlib
import hmac
import os
import secrets as _secrets
import stat
import time

from minitf.framework import errors
from minitf.distributed import wire

__all__ = [
    "ENV_VAR", "NONCE_BYTES", "DEFAULT_HANDSHAKE_TIMEOUT", "AUTH_VERSION",
    "secret_path", "load_secret", "server_handshake", "client_handshake",
    "BAD_SECRET_MESSAGE",
]

ENV_VAR = "MINITF_SECRET"
NONCE_BYTES = 32
AUTH_VERSION = 1
DEFAULT_HANDSHAKE_TIMEOUT = 10.0  # seconds, used when deadline is None
_MAC_BYTES = hashlib.sha256().digest_size
# Frames of the handshake are tiny; refuse big ones before reading them.
_MAX_HANDSHAKE_HEADER = 4096

BAD_SECRET_MESSAGE = (
    "minitf peer did not prove it holds the cluster secret (MINITF_SECRET or "
    "~/.minitf/secret differ between the processes?)")


# --------------------------------------------------------------------------
# The secret
# --------------------------------------------------------------------------

def secret_path():
    """``~/.minitf/secret`` (following ``$HOME``)."""
    return os.path.join(os.path.expanduser("~"), ".minitf", "secret")


def _check_permissions(path, st):
    if st.st_mode & 0o077:
        raise PermissionError(
            "minitf refuses to use the secret file %s: its permissions are %s, so "
            "other users may read it. Run `chmod 600 %s` (or set MINITF_SECRET)."
            % (path, stat.filemode(st.st_mode), path))
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise PermissionError(
            "minitf refuses to use the secret file %s: it belongs to uid %d, not "
            "to you (uid %d)." % (path, st.st_uid, os.getuid()))


def _read_secret_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        _check_permissions(path, os.fstat(fd))
        data = b""
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    key = data.strip()
    if not key:
        raise PermissionError("the minitf secret file %s is empty; delete it and a "
                              "new one is made" % path)
    return key


def _create_secret_file(path):
    """Create ``path`` holding a fresh key, atomically: the file appears with
    its full content or not at all, so a racing process reads either nothing
    (and creates its own candidate, then loses the race) or the whole key.

    A temporary file (O_CREAT|O_EXCL, mode 0600) is written and fsync'ed, then
    hard-linked to ``path``; ``link`` fails with EEXIST if another process won,
    and then everyone uses the winner's key.
    """
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    key = _secrets.token_hex(32).encode("ascii")
    tmp = os.path.join(directory, ".secret.%d.%s.tmp" % (os.getpid(), _secrets.token_hex(4)))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.write(fd, key + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # lost the race: the winner's file is complete
        except OSError:
            # No hard links on this file system: O_EXCL on the final name.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return _wait_for_content(path)
            try:
                os.write(fd, key + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return _read_secret_file(path)


def _wait_for_content(path, timeout=5.0):
    # Only for the no-hard-link fallback, where a file may be seen empty.
    end = time.monotonic() + timeout
    while True:
        try:
            return _read_secret_file(path)
        except PermissionError:
            if time.monotonic() > end:
                raise
            time.sleep(0.01)


def load_secret(environ=None):
    """The cluster secret as bytes: ``$MINITF_SECRET`` or ``~/.minitf/secret``
    (created on first use). Raises PermissionError for an unsafe or foreign
    secret file, ValueError for an empty ``MINITF_SECRET``."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV_VAR)
    if value is not None:
        if not value:
            raise ValueError("%s is set but empty; unset it or give it a value" % ENV_VAR)
        return value.encode("utf-8")
    path = secret_path()
    try:
        return _read_secret_file(path)
    except FileNotFoundError:
        return _create_secret_file(path)


# --------------------------------------------------------------------------
# The handshake
# --------------------------------------------------------------------------

def _mac(secret, label, server_nonce, client_nonce):
    return hmac.new(secret, label + server_nonce + client_nonce, hashlib.sha256).digest()


def _as_key(secret):
    if isinstance(secret, str):
        return secret.encode("utf-8")
    if not isinstance(secret, (bytes, bytearray)) or not secret:
        raise TypeError("the cluster secret must be non-empty bytes (see load_secret())")
    return bytes(secret)


def _default_deadline(deadline):
    return time.monotonic() + DEFAULT_HANDSHAKE_TIMEOUT if deadline is None else deadline


def _close_quietly(sock):
    try:
        sock.close()
    except OSError:
        pass


def server_handshake(sock, secret, deadline=None):
    """Run the server side of the handshake on a freshly accepted socket.

    Returns normally when the client proved it holds ``secret`` (and was sent
    the server's proof). Otherwise the client gets an UNAUTHENTICATED error
    frame when it got that far, the socket is closed, and this raises:
    UnauthenticatedError (wrong or malformed proof), DeadlineExceededError
    (``deadline``, absolute ``time.monotonic()``; None = 10 s from now), or
    the wire's ProtocolError/ConnectionClosed/OSError (not a minitf client).
    A server should log the error and keep serving other connections.
    """
    key = _as_key(secret)
    deadline = _default_deadline(deadline)
    peer = wire.peer_name(sock)
    try:
        server_nonce = os.urandom(NONCE_BYTES)
        wire.send_frame(sock, {"auth": "challenge", "v": AUTH_VERSION,
                               "nonce": server_nonce},
                        deadline=deadline, what="the auth challenge")
        reply, _ = wire.recv_frame(sock, max_header=_MAX_HANDSHAKE_HEADER, max_payload=0,
                                   deadline=deadline, what="the client's auth response")
        client_nonce = reply.get("nonce")
        mac = reply.get("mac")
        ok = (reply.get("auth") == "response"
              and isinstance(client_nonce, bytes) and len(client_nonce) == NONCE_BYTES
              and isinstance(mac, bytes) and len(mac) == _MAC_BYTES
              and hmac.compare_digest(mac, _mac(key, b"client", server_nonce, client_nonce)))
        if not ok:
            exc = errors.UnauthenticatedError(None, None, BAD_SECRET_MESSAGE)
            try:
                wire.send_error(sock, exc, deadline=deadline)
            except (OSError, errors.OpError):
                pass  # the client may be gone already; we refuse it anyway
            raise errors.UnauthenticatedError(
                None, None, "rejected connection from %s: %s" % (peer, BAD_SECRET_MESSAGE))
        wire.send_frame(sock, {"auth": "ok",
                               "mac": _mac(key, b"server", server_nonce, client_nonce)},
                        deadline=deadline, what="the auth proof")
    except BaseException:
        _close_quietly(sock)
        raise


def client_handshake(sock, secret, deadline=None):
    """Run the client side of the handshake on a freshly connected socket.

    Returns normally once both sides proved they hold ``secret``. On failure
    the socket is closed and this raises:

    * UnauthenticatedError -- the server refused our proof (its message says
      the secrets differ), or the server's own proof was wrong (the peer is
      not a server of this cluster);
    * UnavailableError -- the peer is not a minitf server or hung up;
    * DeadlineExceededError -- ``deadline`` (absolute ``time.monotonic()``;
      None = 10 s from now) passed first.
    """
    key = _as_key(secret)
    deadline = _default_deadline(deadline)
    peer = wire.peer_name(sock)
    try:
        try:
            challenge, _ = wire.recv_frame(sock, max_header=_MAX_HANDSHAKE_HEADER,
                                           max_payload=0, deadline=deadline,
                                           what="the server's auth challenge")
            wire.raise_if_error(challenge)
            server_nonce = challenge.get("nonce")
            if challenge.get("auth") != "challenge" or challenge.get("v") != AUTH_VERSION \
                    or not isinstance(server_nonce, bytes) or len(server_nonce) != NONCE_BYTES:
                raise errors.UnavailableError(
                    None, None, "%s sent no valid minitf auth challenge (got %r)"
                    % (peer, sorted(map(str, challenge))))
            client_nonce = os.urandom(NONCE_BYTES)
            wire.send_frame(sock, {"auth": "response", "nonce": client_nonce,
                                   "mac": _mac(key, b"client", server_nonce, client_nonce)},
                            deadline=deadline, what="the auth response")
            reply, _ = wire.recv_frame(sock, max_header=_MAX_HANDSHAKE_HEADER,
                                       max_payload=0, deadline=deadline,
                                       what="the server's auth proof")
            wire.raise_if_error(reply)  # UnauthenticatedError(BAD_SECRET_MESSAGE)
            mac = reply.get("mac")
            if reply.get("auth") != "ok" or not isinstance(mac, bytes) or \
                    not hmac.compare_digest(mac, _mac(key, b"server", server_nonce,
                                                      client_nonce)):
                raise errors.UnauthenticatedError(
                    None, None, "the server at %s did not prove it holds the cluster "
                    "secret: it is not a minitf server of this cluster (MINITF_SECRET or "
                    "~/.minitf/secret differ between the processes?)" % peer)
        except (wire.WireError, OSError) as e:
            raise errors.UnavailableError(
                None, None, "handshake with %s failed: %s: %s (is it a minitf server?)"
                % (peer, type(e).__name__, e)) from e
    except BaseException:
        _close_quietly(sock)
        raise
