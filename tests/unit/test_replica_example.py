"""The example program examples/replica_training.py (TF's mnist_replica.py style)
runs as 1 ps + 2 workers, each its own process, in async and in sync mode."""

import os
import re
import socket
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "examples", "replica_training.py")


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _wait_for_port(port, process, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("the ps exited early: %s" % process.communicate()[1][-2000:])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the ps did not listen on %d" % port)


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_one_ps_and_two_workers_train(mode):
    ps_port, w0, w1 = _free_ports(3)
    args = ["--ps_hosts=localhost:%d" % ps_port,
            "--worker_hosts=localhost:%d,localhost:%d" % (w0, w1), "--train_steps=60"]
    if mode == "sync":
        args.append("--sync_replicas")
    run = [sys.executable, PROGRAM]
    ps = subprocess.Popen(run + ["--job_name=ps", "--task_index=0"] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = []
    try:
        _wait_for_port(ps_port, ps)
        workers = [subprocess.Popen(run + ["--job_name=worker", "--task_index=%d" % i] + args,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for i in range(2)]
        outs = []
        for w in workers:
            out, err = w.communicate(timeout=180)
            assert w.returncode == 0, err[-3000:]
            outs.append(out)
    finally:
        for p in workers + [ps]:
            if p.poll() is None:
                p.terminate()
                try:
                    p.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
    chief, other = outs
    assert "Worker 0: Initializing session..." in chief
    assert "Worker 1: Waiting for session to be initialized..." in other
    entropies = []
    for i, out in enumerate(outs):
        # device_filters: a worker sees the ps and itself, never the other worker
        assert "Worker %d: devices ['/job:ps/replica:0/task:0', '/job:worker/replica:0/task:%d']"\
            % (i, i) in out, out
        m = re.search(r"After 60 training step\(s\), validation cross entropy = (\S+) \(was "
                      r"(\S+)\), accuracy = (\S+)", out)
        assert m, out
        final, first, accuracy = (float(v) for v in m.groups())
        entropies.append((final, first))
        assert accuracy > 0.9, out
    # Against the chief's starting point: the other worker may join when the model
    # is already trained (the chief alone can run the 60 steps before it is up).
    start = entropies[0][1]
    assert all(final < 0.2 * start for final, _ in entropies), entropies
    steps = [int(re.search(r"training finished after (\d+) local steps", out).group(1))
             for out in outs]
    if mode == "sync":
        # one averaged update per global step, from one gradient of each worker
        # (a faster worker may sometimes give two): 60 steps need 120 gradients
        assert sum(steps) >= 120, steps
    else:
        assert sum(steps) >= 60, steps
