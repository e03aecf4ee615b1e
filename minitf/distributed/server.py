"""``tf.train.Server``: one task of a cluster, serving a master and a worker.

A server listens on the address its task has in the ClusterSpec, bound to
that interface only (``localhost:2222`` listens on loopback, never on the
network). Each accepted connection gets a thread that

1. runs the authentication handshake (``auth.py``): a peer without the
   cluster secret is refused and logged, and the server keeps serving;
2. reads request frames and answers each one, in order. Requests whose
   ``op`` belongs to the master (CreateSession, RunStep, ...) go to the
   :class:`MasterService`, the rest to the :class:`WorkerService`.

Whatever goes wrong with a request comes back as an error frame naming the
problem: a handler's error, a frame that arrived whole but is malformed (a
shape of 70 dimensions), a reply that cannot be encoded (a queue handle is not
data). Only a frame that breaks the byte stream itself (bad magic, a length
over the limit, a frame cut short or stalled for :data:`STALL_TIMEOUT`
seconds) closes its connection, and only that one.

A request that waits (a step, a receive) is watched by one *hang-up
watcher* thread per server: if its peer disconnects in the meantime (the
client was killed, the master died), the wait ends at once -- the step is
cancelled or aborted -- instead of holding a thread, a socket and the step's
tensors for ever. Servers can run in the
process that uses them, in a ``multiprocessing.Process`` (fork or spawn, also
after the parent ran sessions: nothing inherited from the parent is reused),
or from the command line::

    minitf-server --cluster '{"worker": ["localhost:2222", "localhost:2223"]}' \\
                  --job worker --task 0
"""

import argparse
import json
import os
import select
import socket
import sys
import threading
import time

from minitf.framework import errors, protos
from minitf.kernels import threads
from minitf.runtime.config import ConfigProto
from minitf.runtime.devices import local_devices
from minitf.distributed import auth, protocol, wire
from minitf.distributed.cluster_spec import ClusterSpec
from minitf.distributed.master import MasterService
from minitf.distributed.ports import free_port, free_ports
from minitf.distributed.rpc import Channel
from minitf.distributed.worker import WorkerService

def _server_def_class():
    """TF's ``ServerDef`` (tensorflow_server.proto, not in the tensorboard
    package), built from its field numbers."""
    return protos.message_class("minitf.tensorflow.ServerDef", [
        ("cluster", 1, "message:cluster_pb2.ClusterDef", False),
        ("job_name", 2, "string", False), ("task_index", 3, "int32", False),
        ("default_session_config", 4, "message:config_pb2.ConfigProto", False),
        ("protocol", 5, "string", False), ("port", 6, "int32", False)])


STALL_TIMEOUT = 30.0   # seconds a started request frame may pause between bytes
WATCH_EVERY = 0.2      # seconds between the hang-up watcher's looks at busy connections
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


def _log(line):
    print(line, file=sys.stderr, flush=True)


class Peer:
    """One accepted connection, as the server's threads see it.

    ``busy_since`` is set while a request is being handled (None when idle);
    a handler that waits says with :meth:`call_on_hangup` what should happen
    if the peer disconnects meanwhile (cancel the step...). The watcher sets ``gone``
    when it sees the peer hang up, and handlers polling in a wait read it.
    ``open_steps`` are steps this peer (a master) ran here that still have
    values waiting to be received; if the peer vanishes without saying
    goodbye they are aborted (worker.py).
    """

    __slots__ = ("sock", "name", "busy_since", "on_hangup", "gone", "open_steps",
                 "said_goodbye")

    def __init__(self, sock, name):
        self.sock = sock
        self.name = name
        self.busy_since = None
        self.on_hangup = None
        self.gone = False
        self.open_steps = None
        self.said_goodbye = False

    def hung_up(self):
        """True once the peer disconnected (for waits that poll)."""
        return self.gone

    def call_on_hangup(self, callback):
        """Have ``callback()`` run if the peer hangs up before the request in
        hand is answered -- at once, if it already has."""
        self.on_hangup = callback
        if self.gone:
            callback()


class Server:
    """An in-process server for one task (TF's ``tf.train.Server``)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        if protocol not in (None, "grpc"):
            raise errors.NotFoundError(
                None, None, "No server factory registered for protocol %r. The available "
                "server factories are: [ GRPC_SERVER ] (minitf servers speak their own "
                "protocol under TF's name 'grpc'; use protocol=None or 'grpc')" % (protocol,))
        if job_name not in cluster.jobs:
            raise errors.InternalError(None, None, 'Job "%s" was not defined in cluster'
                                       % job_name)
        if int(task_index) not in cluster.task_indices(job_name):
            raise errors.InternalError(None, None, 'Task %d was not defined in job "%s"'
                                       % (int(task_index), job_name))
        self._cluster = cluster
        self.job_name = job_name
        self.task_index = int(task_index)
        self.address = cluster.task_address(job_name, self.task_index)
        self.task_name = "/job:%s/replica:0/task:%d" % (job_name, self.task_index)
        self._config = config or ConfigProto()
        self._secret = auth.load_secret()
        self._channels = {}
        self._lock = threading.Lock()
        self._listener = None
        self._stopped = threading.Event()
        self._started = False
        self._peers = set()
        devices = local_devices(self._config, job_name, 0, self.task_index)
        self.worker = WorkerService(self.task_name, devices, self.channel)
        self.master = MasterService(self)
        if start:
            self.start()

    # -- TF's API ----------------------------------------------------------------------
    @property
    def target(self):
        """The session target: ``grpc://host:port``."""
        return "grpc://" + self.address

    @property
    def server_def(self):
        """TF's ``ServerDef`` message: the cluster, this task's job name and
        index, and the protocol (``"grpc"``, what TF names its RPC stack;
        minitf's own wire protocol stands in for it)."""
        server_def = _server_def_class()(job_name=self.job_name, task_index=self.task_index,
                                         protocol="grpc")
        server_def.cluster.CopyFrom(self._cluster.as_cluster_def())
        return server_def

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task server on a free loopback port, in job ``localhost`` as in
        TF, so its devices are named ``/job:localhost/replica:0/task:0/...``."""
        port = free_port()
        return Server({"localhost": ["localhost:%d" % port]}, job_name="localhost",
                      task_index=0, config=config, start=start)

    def start(self):
        """Start listening (a second call does nothing)."""
        if self._started:
            return
        host, port = wire.parse_address(self.address)
        self._listener = _listen(host, port, self.task_name, self.address)
        self._started = True
        threads.share_cores()      # the other tasks' processes run on these cores too
        self._thread = threading.Thread(target=self._accept_loop, daemon=True,
                                        name="minitf-server %s" % self.task_name)
        self._thread.start()
        self._watcher = threading.Thread(target=self._watch_hangups, daemon=True,
                                         name="minitf-hangups %s" % self.task_name)
        self._watcher.start()
        _RUNNING.add(self)
        _log("minitf server %s listening on %s (target %s)"
             % (self.task_name, self.address, self.target))

    def join(self):
        """Block until the server is stopped (``stop()``, or the process ends)."""
        if not self._started:
            raise errors.FailedPreconditionError(None, None, "Server %s was never started"
                                                 % self.task_name)
        while not self._stopped.wait(0.5):
            pass

    def stop(self):
        """Stop listening, close connections and free the port (a minitf extra)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._listener is not None:
            # close() alone does not wake a thread blocked in accept(): the port
            # would keep accepting until the process ends. shutdown() does.
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                self._listener.close()
            except OSError:
                pass
        with self._lock:
            conns = [p.sock for p in self._peers]
            channels = list(self._channels.values())
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                c.close()
            except OSError:
                pass
        for ch in channels:
            ch.close()
        self.worker.shutdown()
        self.master.shutdown()
        _RUNNING.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return "<minitf Server %s at %s>" % (self.task_name, self.address)

    # -- cluster --------------------------------------------------------------------------
    def cluster_task_names(self):
        return ["/job:%s/replica:0/task:%d" % (job, i) for job in self._cluster.jobs
                for i in self._cluster.task_indices(job)]

    def channel(self, task_name):
        """The channel to another task of this cluster."""
        with self._lock:
            ch = self._channels.get(task_name)
            if ch is None:
                job, task = _split_task(task_name)
                try:
                    address = self._cluster.task_address(job, task)
                except ValueError:
                    raise errors.InvalidArgumentError(
                        None, None, "%s is not a task of this cluster (%s)"
                        % (task_name, ", ".join(self.cluster_task_names()))) from None
                ch = self._channels[task_name] = Channel(address, task_name, self._secret)
            return ch

    # -- serving ----------------------------------------------------------------------------
    def _accept_loop(self):
        while not self._stopped.is_set():
            try:
                conn, addr = self._listener.accept()
            except OSError:
                if self._stopped.is_set():
                    return
                continue
            wire.configure_socket(conn)
            peer = Peer(conn, wire.peer_name(conn))
            with self._lock:
                self._peers.add(peer)
            threading.Thread(target=self._serve, args=(peer,), daemon=True,
                             name="minitf-conn %s" % (addr,)).start()

    def _serve(self, peer):
        conn = peer.sock
        try:
            try:
                auth.server_handshake(conn, self._secret)
            except errors.UnauthenticatedError as e:
                _log("minitf server %s: %s" % (self.task_name, e.message))
                return
            except (wire.ConnectionClosed, ConnectionResetError, BrokenPipeError):
                return  # connected and hung up without a word: a port probe
            except (errors.OpError, wire.WireError, OSError) as e:
                _log("minitf server %s: dropped a connection from %s before it "
                     "authenticated (%s)" % (self.task_name, peer.name, e))
                return
            while not self._stopped.is_set():
                if not self._serve_one(peer):
                    return
        finally:
            with self._lock:
                self._peers.discard(peer)
            try:
                conn.close()
            except OSError:
                pass
            if not peer.said_goodbye and peer.open_steps:
                self.worker.peer_vanished(peer)

    def _serve_one(self, peer):
        """Read one request and answer it; False when the connection is over."""
        conn = peer.sock
        try:
            header, tensors = wire.recv_frame(conn, stall_timeout=STALL_TIMEOUT)
        except wire.ConnectionClosed:
            return False
        except wire.MalformedFrame as e:
            # Read whole, so the stream is in step: say what is wrong and go on.
            return self._reply_error(peer, errors.InvalidArgumentError(
                None, None, "Malformed request from %s: %s" % (peer.name, e)))
        except (wire.ProtocolError, errors.DeadlineExceededError) as e:
            _log("minitf server %s: closing the connection from %s: %s"
                 % (self.task_name, peer.name, e))
            return False
        except MemoryError:
            # Only the announcement was read: the stream is out of step.
            _log("minitf server %s: closing the connection from %s: no memory for its "
                 "request" % (self.task_name, peer.name))
            return False
        except OSError:
            return False
        op = header.get("op")
        if op == protocol.GOODBYE:
            peer.said_goodbye = True
            return False
        peer.busy_since = time.monotonic()
        try:
            result = self.dispatch(header, tensors, peer)
            if isinstance(result, protocol.Streamed):
                # Frames are made as their tensors become ready; an error
                # while making one goes back as the stream's last frame.
                for reply, out in result.frames:
                    try:
                        wire.send_frame(conn, reply, out)
                    except OSError:
                        return False
                return True
            reply, out = result
        except Exception as e:  # noqa: BLE001 - every failure goes back as a reply
            if not isinstance(e, errors.OpError):
                _log("minitf server %s: %s while handling %s: %s"
                     % (self.task_name, type(e).__name__, op, e))
            return self._reply_error(peer, e)
        finally:
            peer.busy_since = None
            peer.on_hangup = None
        try:
            wire.send_frame(conn, reply, out)
        except wire.UnsendableTensor as e:
            # Raised before a byte was sent: the client can still be told.
            return self._reply_error(peer, errors.InvalidArgumentError(
                None, None, "Cannot send the reply to %s: %s" % (op, _name_tensor(header, e))))
        except (TypeError, ValueError) as e:
            return self._reply_error(peer, errors.InternalError(
                None, None, "Cannot encode the reply to %s: %s" % (op, e)))
        except OSError:
            return False
        return True

    def _reply_error(self, peer, exc):
        try:
            wire.send_error(peer.sock, exc)
        except (OSError, errors.OpError, TypeError, ValueError):
            return False
        return True

    # -- the hang-up watcher ---------------------------------------------------------------
    def _watch_hangups(self):
        """Every WATCH_EVERY seconds, look at the connections that are busy
        with a request: a peer that has hung up makes its socket readable
        with nothing to read (EOF) or a reset. Idle connections are not
        looked at (their own thread sees the EOF), and nothing here touches a
        request that finishes quickly."""
        while not self._stopped.wait(WATCH_EVERY):
            now = time.monotonic()
            with self._lock:
                busy = [p for p in self._peers if p.busy_since is not None
                        and now - p.busy_since >= WATCH_EVERY and not p.gone]
            if busy:
                for peer in _hung_up(busy):
                    peer.gone = True
                    callback = peer.on_hangup
                    if callback is not None:
                        try:
                            callback()
                        except Exception as e:  # noqa: BLE001 - keep watching the others
                            _log("minitf server %s: cleaning up after %s hung up: %s"
                                 % (self.task_name, peer.name, e))

    def dispatch(self, header, tensors, peer=None):
        op = header.get("op")
        if not isinstance(op, str):
            raise errors.InvalidArgumentError(None, None, "request without an 'op'")
        if op in protocol.MASTER_REQUESTS:
            return self.master.handle(header, tensors, peer)
        return self.worker.handle(header, tensors, peer)


def _name_tensor(request, exc):
    """Say which fetched tensor could not be sent, when the request named them."""
    names = request.get("fetches")
    if isinstance(names, list) and 0 <= exc.index < len(names):
        return "%s: %s" % (names[exc.index], str(exc).split(": ", 1)[-1])
    return str(exc)


def _hung_up(peers):
    """The peers among ``peers`` whose connection has ended."""
    poller = select.poll()
    by_fd = {}
    for peer in peers:
        try:
            fd = peer.sock.fileno()
        except OSError:
            continue
        if fd < 0:
            continue
        by_fd[fd] = peer
        poller.register(fd, select.POLLIN | select.POLLPRI)
    gone = []
    for fd, events in poller.poll(0):
        peer = by_fd[fd]
        if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            gone.append(peer)
            continue
        try:
            if peer.sock.recv(1, socket.MSG_PEEK | _DONTWAIT) == b"":
                gone.append(peer)   # EOF: the peer closed its end
        except BlockingIOError:
            pass
        except OSError:             # a reset
            gone.append(peer)
    return gone


_RUNNING = set()


def _split_task(task_name):
    parts = dict(p.split(":", 1) for p in task_name.strip("/").split("/") if ":" in p)
    return parts["job"], int(parts["task"])


def _listen(host, port, task_name, address):
    """A listening socket bound to exactly the interface of ``host``."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise errors.InvalidArgumentError(None, None, "Cannot resolve the host of %s (%s): %s"
                                          % (task_name, address, e)) from None
    # Prefer IPv4 loopback for "localhost" so clients connecting to 127.0.0.1 find us.
    infos.sort(key=lambda i: i[0] != socket.AF_INET)
    family, stype, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, stype, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
    except OSError as e:
        sock.close()
        raise errors.UnknownError(
            None, None, "Could not start server %s: port %d on %s is already in use (%s). "
            "Another server, or another program, is listening there: stop it or use "
            "another port in the ClusterSpec." % (task_name, port, host, e.strerror or e)
        ) from None
    sock.listen(128)
    return sock


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """``tf.test.create_local_cluster``: ``num_workers`` worker and ``num_ps``
    ps servers, all started in this process on free loopback ports, as TF does.

    Returns ``(worker_servers, ps_servers)``; ``tf.Session(worker_servers[0].target)``
    runs a graph on the whole cluster. The same call works on real TF (it needs
    the ``portpicker`` package there), which is why lessons start their
    in-process clusters with it. Servers in one process share its cores and
    die with it; ``minitf.distributed.LocalCluster`` starts each task as its own
    process instead.
    """
    if int(num_workers) < 0 or int(num_ps) < 0:
        raise ValueError("create_local_cluster needs num_workers >= 0 and num_ps >= 0 "
                         "(got %r and %r)" % (num_workers, num_ps))
    ports = free_ports(int(num_workers) + int(num_ps))
    cluster = ClusterSpec({
        "worker": ["localhost:%d" % p for p in ports[:int(num_workers)]],
        "ps": ["localhost:%d" % p for p in ports[int(num_workers):]]})
    workers = [Server(cluster, job_name="worker", task_index=i, protocol=protocol,
                      config=worker_config, start=True) for i in range(int(num_workers))]
    ps_servers = [Server(cluster, job_name="ps", task_index=i, protocol=protocol,
                         config=ps_config, start=True) for i in range(int(num_ps))]
    return workers, ps_servers


def _after_fork_in_child():
    """A forked child inherits the parent's servers as dead objects (their
    threads did not survive the fork): forget them, so nothing waits on them."""
    _RUNNING.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def run_server(cluster, job_name, task_index, config=None):
    """Start a server and serve until the process is stopped (an entry point
    for ``multiprocessing.Process(target=run_server, ...)``)."""
    server = Server(cluster, job_name=job_name, task_index=task_index, config=config)
    try:
        server.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="minitf-server", description=(
        "Run one task of a minitf cluster until interrupted."))
    parser.add_argument("--cluster", required=True,
                        help='the ClusterSpec as JSON, e.g. \'{"worker": ["localhost:2222"]}\'')
    parser.add_argument("--job", required=True, help="this task's job name")
    parser.add_argument("--task", type=int, required=True, help="this task's index")
    parser.add_argument("--cpus", type=int, default=1, help="number of CPU devices")
    args = parser.parse_args(argv)
    try:
        cluster = json.loads(args.cluster)
    except json.JSONDecodeError as e:
        parser.error("--cluster is not valid JSON: %s" % e)
    if isinstance(cluster, dict):
        cluster = {job: ({int(k): v for k, v in tasks.items()} if isinstance(tasks, dict)
                         else tasks) for job, tasks in cluster.items()}
    config = ConfigProto(device_count={"CPU": args.cpus})
    try:
        run_server(cluster, args.job, args.task, config)
    except errors.OpError as e:
        print("minitf-server: %s" % e.message, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
