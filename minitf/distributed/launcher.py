"""Start a whole local cluster in subprocesses, for lessons and tests.

::

    from minitf.distributed.launcher import LocalCluster

    with LocalCluster({"ps": 1, "worker": 2}) as cluster:
        sess = tf.Session(cluster.target("worker", 0))
        ...
    # every server process is stopped here

Each task runs ``python -m minitf.distributed.server ...`` in its own
process. The launcher picks free loopback ports (or takes yours), waits until
every task answers an authenticated request, streams each task's log lines
prefixed with its name, and stops every process on ``stop()``, on leaving the
``with`` block, and at interpreter exit, so a notebook never leaks a server
or a port. A task that dies while starting is reported with its last log
lines instead of being waited for forever.
"""

import atexit
import json
import os
import subprocess
import sys
import threading
import time
import weakref

from minitf.framework import errors
from minitf.distributed import protocol
from minitf.distributed.cluster_spec import ClusterSpec
from minitf.distributed.ports import free_port, free_ports  # noqa: F401 - free_port: launcher's API
from minitf.distributed.rpc import Channel

_LIVE = weakref.WeakSet()


def _cluster_from(jobs, host, base_port):
    """``{"ps": 1, "worker": 2}`` -> ``{"ps": ["localhost:p0"], ...}``."""
    out = {}
    port = base_port
    picked = iter(free_ports(sum(n for n in jobs.values() if isinstance(n, int)))
                  if base_port is None else ())
    for job in sorted(jobs):
        spec = jobs[job]
        if isinstance(spec, int):
            addrs = []
            for _ in range(spec):
                if base_port is None:
                    addrs.append("%s:%d" % (host, next(picked)))
                else:
                    addrs.append("%s:%d" % (host, port))
                    port += 1
            out[job] = addrs
        else:
            out[job] = spec
    return out


class LocalCluster:
    """A cluster of server subprocesses on this machine."""

    def __init__(self, jobs, host="localhost", base_port=None, cpus_per_task=1,
                 start=True, timeout=60.0, echo=True, env=None):
        if isinstance(jobs, ClusterSpec):
            jobs = jobs.as_dict()
        self.spec = ClusterSpec(_cluster_from(dict(jobs), host, base_port))
        self.cpus_per_task = cpus_per_task
        self.timeout = timeout
        self.echo = echo
        self.env = dict(env or {})
        self.processes = {}
        self.logs = {}
        self._threads = []
        self._retired = []   # processes of tasks that were restarted
        self._lock = threading.Lock()
        if start:
            self.start()

    # -- what lessons use ---------------------------------------------------------------
    @property
    def cluster(self):
        return self.spec

    def tasks(self):
        return [(job, i) for job in self.spec.jobs for i in self.spec.task_indices(job)]

    def address(self, job, task=0):
        return self.spec.task_address(job, task)

    def target(self, job, task=0):
        """The session target of one task: ``grpc://localhost:PORT``."""
        return "grpc://" + self.address(job, task)

    def is_alive(self, job, task=0):
        proc = self.processes.get((job, task))
        return proc is not None and proc.poll() is None

    # -- starting and stopping -----------------------------------------------------------
    def start(self):
        for job, task in self.tasks():
            if not self.is_alive(job, task):
                self.start_task(job, task, wait=False)
        self.wait_until_up()
        _LIVE.add(self)
        return self

    def start_task(self, job, task=0, wait=True):
        """(Re)start one task's process (``wait``: until it answers)."""
        old = self.processes.get((job, task))
        if old is not None and old.poll() is None:
            raise errors.FailedPreconditionError(
                None, None, "/job:%s/replica:0/task:%d is still running (pid %d): stop or "
                "kill it before starting it again" % (job, task, old.pid))
        cmd = [sys.executable, "-u", "-m", "minitf.distributed.server",
               "--cluster", json.dumps(self.spec.as_dict()), "--job", job,
               "--task", str(task), "--cpus", str(self.cpus_per_task)]
        env = dict(os.environ)
        env.update(self.env)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        if old is not None:
            self._retired.append(old)   # its log pipe is closed by stop()
        self.processes[(job, task)] = proc
        self.logs[(job, task)] = []
        t = threading.Thread(target=self._pump, args=(job, task, proc), daemon=True,
                             name="minitf-log %s/%d" % (job, task))
        t.start()
        self._threads.append(t)
        if wait:
            self._wait_one(job, task, time.monotonic() + self.timeout)

    def _pump(self, job, task, proc):
        prefix = "[%s/%d] " % (job, task)
        for line in proc.stdout:
            line = line.rstrip("\n")
            with self._lock:
                self.logs[(job, task)].append(line)
            if self.echo:
                print(prefix + line, file=sys.stderr, flush=True)

    def _wait_one(self, job, task, deadline):
        name = "/job:%s/replica:0/task:%d" % (job, task)
        secret = self.env.get("MINITF_SECRET")
        channel = Channel(self.address(job, task), name,
                          secret.encode("utf-8") if secret else None)
        try:
            while True:
                proc = self.processes[(job, task)]
                if proc.poll() is not None:
                    time.sleep(0.1)  # let the log pump catch the last lines
                    tail = "\n".join(self.logs.get((job, task), [])[-5:])
                    raise errors.UnavailableError(
                        None, None, "%s exited with code %s while starting:\n%s"
                        % (name, proc.returncode, tail))
                try:
                    channel.call({"op": protocol.GET_STATUS},
                                 deadline=min(deadline, time.monotonic() + 2.0))
                    return
                except (errors.UnavailableError, errors.DeadlineExceededError):
                    if time.monotonic() > deadline:
                        raise errors.UnavailableError(
                            None, None, "%s at %s did not answer within %.0f s"
                            % (name, self.address(job, task), self.timeout)) from None
                    time.sleep(0.05)
        finally:
            channel.close()

    def wait_until_up(self):
        deadline = time.monotonic() + self.timeout
        try:
            for job, task in self.tasks():
                self._wait_one(job, task, deadline)
        except BaseException:
            self.stop()
            raise

    def kill_task(self, job, task=0):
        """Kill one task's process at once (SIGKILL), as a crash would."""
        proc = self.processes.get((job, task))
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)

    def stop(self, timeout=5.0):
        """Stop every task: SIGTERM, then SIGKILL after ``timeout`` seconds."""
        procs = [p for p in self.processes.values() if p.poll() is None]
        for p in procs:
            p.terminate()
        end = time.monotonic() + timeout
        for p in procs:
            try:
                p.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        for p in list(self.processes.values()) + self._retired:
            if p.stdout is not None:
                try:
                    p.stdout.close()
                except OSError:
                    pass
        _LIVE.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        alive = sum(1 for k in self.processes if self.is_alive(*k))
        return "<LocalCluster %s, %d/%d tasks alive>" % (
            json.dumps(self.spec.as_dict()), alive, len(self.processes))


@atexit.register
def _stop_all():
    for cluster in list(_LIVE):
        try:
            cluster.stop(timeout=2.0)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
