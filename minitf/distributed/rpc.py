"""Calling another task: a request frame out, a reply frame back.

A :class:`Channel` talks to one task (``/job:worker/replica:0/task:1`` at
``localhost:2223``). Each call borrows an authenticated connection from the
channel's small pool (opening one when none is idle), sends one request,
reads one reply and returns the connection. Concurrent calls therefore use
separate connections, so a long call (a step, a blocked receive) never holds
up a short one.

A pooled connection may have died while it sat idle (the task was restarted:
the old process's end of it is gone). So a connection idle for more than
:data:`CHECK_IDLE_AFTER` seconds is looked at before it is used (a dead one is
readable with nothing to read), and a request whose *sending* fails on a
reused connection -- nothing reached the task -- is sent once more on a fresh
one. Connections reused at once, as in a training loop, cost nothing extra.
A connection the channel closes on purpose gets a ``Goodbye`` first, so the
server can tell it from a peer whose process died.

Failures always name the task and its address:

* nothing listens there, or the connection breaks -> UnavailableError
  ("... /job:worker/replica:0/task:1 at localhost:2223 ...");
* the deadline passes -> DeadlineExceededError;
* the peer has another secret -> UnauthenticatedError.

:meth:`Channel.wait_until_up` is what a master does before it trusts a task:
retry until the task answers, logging "waiting for ..." every few seconds
when there is no deadline, instead of hanging silently.
"""

import os
import select
import sys
import threading
import time

from minitf.framework import errors
from minitf.distributed import auth, protocol, wire

WAIT_LOG_EVERY = 5.0     # seconds between "waiting for" lines
RETRY_PAUSE = 0.05
CHECK_IDLE_AFTER = 0.1   # seconds idle after which a pooled connection is checked
MAX_IDLE = 8             # pooled connections kept per channel


class Channel:
    """Request/reply calls to one task's server."""

    def __init__(self, address, task_name, secret=None):
        self.address = address
        self.task_name = task_name
        self._secret = secret
        self._idle = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def _secret_bytes(self):
        if self._secret is None:
            self._secret = auth.load_secret()
        return self._secret

    def _where(self):
        return "%s at %s" % (self.task_name, self.address)

    def _connect(self, deadline):
        try:
            sock = wire.connect(self.address, deadline)
        except errors.UnavailableError as e:
            raise errors.UnavailableError(
                None, None, "%s is not reachable: %s. Is the server for this task running?"
                % (self._where(), e.message)) from None
        except errors.DeadlineExceededError:
            raise errors.DeadlineExceededError(
                None, None, "Deadline exceeded while connecting to %s" % self._where()) from None
        hs_deadline = deadline if deadline is not None else \
            time.monotonic() + auth.DEFAULT_HANDSHAKE_TIMEOUT
        try:
            auth.client_handshake(sock, self._secret_bytes(), hs_deadline)
        except errors.DeadlineExceededError:
            sock.close()
            raise errors.DeadlineExceededError(
                None, None, "Deadline exceeded while connecting to %s: it accepted the "
                "connection but did not answer the handshake (is its process stopped or "
                "overloaded?)" % self._where()) from None
        except BaseException:
            sock.close()
            raise
        return sock

    def _checkout(self, deadline):
        """``(socket, reused)``: an idle pooled connection that is still alive,
        or a new one."""
        while True:
            with self._lock:
                if self._pid != os.getpid():  # forked: the parent's sockets are not ours
                    self._idle = []
                    self._pid = os.getpid()
                if not self._idle:
                    break
                sock, idle_since = self._idle.pop()
            if time.monotonic() - idle_since < CHECK_IDLE_AFTER or _alive(sock):
                return sock, True
            sock.close()   # the task restarted or closed it: try the next one
        return self._connect(deadline), False

    def _checkin(self, sock):
        with self._lock:
            if len(self._idle) < MAX_IDLE and self._pid == os.getpid():
                self._idle.append((sock, time.monotonic()))
                return
        _say_goodbye(sock)

    def call(self, header, tensors=(), deadline=None, what=None):
        """Send one request and return ``(reply_header, reply_tensors)``;
        an error reply is raised as the matching ``tf.errors`` class."""
        what = what or "the reply to %s from %s" % (header.get("op"), self._where())
        sending = "a %s request to %s" % (header.get("op"), self._where())
        sock, reused = self._checkout(deadline)
        try:
            try:
                wire.send_frame(sock, header, tensors, deadline=deadline, what=sending)
            except (BrokenPipeError, ConnectionResetError):
                if not reused:
                    raise
                # The pooled connection was dead and the task never got the
                # request: send it once more, on a fresh connection.
                sock.close()
                sock = self._connect(deadline)
                wire.send_frame(sock, header, tensors, deadline=deadline, what=sending)
            reply, out = wire.recv_frame(sock, deadline=deadline, what=what)
        except errors.DeadlineExceededError:
            sock.close()  # the stream is out of step now
            raise
        except (wire.WireError, OSError) as e:
            sock.close()
            raise errors.UnavailableError(
                None, None, "Lost the connection to %s during %s: %s. The task may have "
                "died or been stopped." % (self._where(), header.get("op"), e)) from None
        except BaseException:
            sock.close()
            raise
        self._checkin(sock)
        wire.raise_if_error(reply)
        return reply, out

    def call_stream(self, header, tensors=(), deadline=None, what=None):
        """Send one request whose reply comes as a stream of frames
        (``protocol.Streamed``); yields ``(reply_header, reply_tensors)`` per
        frame until one without ``"more"``. An error frame is raised as the
        matching ``tf.errors`` class; the connection goes back to the pool
        only once the stream has ended cleanly."""
        what = what or "the reply to %s from %s" % (header.get("op"), self._where())
        sending = "a %s request to %s" % (header.get("op"), self._where())
        sock, reused = self._checkout(deadline)
        clean = False
        try:
            try:
                wire.send_frame(sock, header, tensors, deadline=deadline, what=sending)
            except (BrokenPipeError, ConnectionResetError):
                if not reused:
                    raise
                # As call(): a dead pooled connection never got the request.
                sock.close()
                sock = self._connect(deadline)
                wire.send_frame(sock, header, tensors, deadline=deadline, what=sending)
            while True:
                try:
                    reply, out = wire.recv_frame(sock, deadline=deadline, what=what)
                except errors.DeadlineExceededError:
                    raise
                except (wire.WireError, OSError) as e:
                    raise errors.UnavailableError(
                        None, None, "Lost the connection to %s during %s: %s. The task may "
                        "have died or been stopped." % (self._where(), header.get("op"), e)
                    ) from None
                if reply.get("error") is not None:
                    clean = True           # an error frame ends the stream too
                    wire.raise_if_error(reply)
                more = reply.get("more", False)
                yield reply, out
                if not more:
                    clean = True
                    return
        finally:
            if clean:
                self._checkin(sock)
            else:
                sock.close()   # stopped part-way: the stream is out of step now

    def wait_until_up(self, deadline=None, log=None, abandoned=None):
        """Block until the task answers a GetStatus call; returns its reply.

        With a deadline: DeadlineExceededError naming the task when it passes (TF's class).
        Without one: retry forever, logging a line every few seconds -- or
        until ``abandoned()`` turns true (whoever wanted the answer hung up:
        CancelledError).
        """
        log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        last_log = time.monotonic()
        while True:
            if abandoned is not None and abandoned():
                raise errors.CancelledError(
                    None, None, "Stopped waiting for %s: the client that asked hung up"
                    % self._where())
            try:
                call_deadline = time.monotonic() + 5.0
                if deadline is not None:
                    call_deadline = min(call_deadline, deadline)
                return self.call({"op": protocol.GET_STATUS}, deadline=call_deadline)[0]
            except (errors.UnavailableError, errors.DeadlineExceededError):
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    raise errors.DeadlineExceededError(   # TF's class for it too
                        None, None, "%s did not come up before the deadline. Start its "
                        "server, or check the address in the ClusterSpec." % self._where()
                    ) from None
                if deadline is None and now - last_log >= WAIT_LOG_EVERY:
                    log("minitf: waiting for %s" % self._where())
                    last_log = now
                time.sleep(RETRY_PAUSE)

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, []
        for sock, _ in idle:
            _say_goodbye(sock)


def _alive(sock):
    """Whether an idle connection is still usable. A live idle connection has
    nothing to read; one whose peer closed or reset it is readable (EOF or
    an error), and so is one with unexpected bytes (out of step)."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


def _say_goodbye(sock):
    """Close a connection on purpose, telling the server so first."""
    try:
        wire.send_frame(sock, {"op": protocol.GOODBYE}, deadline=time.monotonic() + 0.5)
    except (OSError, errors.OpError):
        pass
    try:
        sock.close()
    except OSError:
        pass
