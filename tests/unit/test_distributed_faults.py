"""Faults of the distributed runtime: each must give a clear error, never a
hang, and leave the server serving.

Servers run in subprocesses (LocalCluster) where the fault needs a process
of its own (a kill, another secret); the rest run in this process.
"""

import multiprocessing
import socket
import threading
import time

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed import launcher
from minitf.distributed.server import Server, run_server


def _free_port():
    return launcher.free_port()


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _still_serves(target, graph):
    with graph.as_default():
        c = tf.constant(20.0) + 1.0
        with tf.Session(target) as sess:
            return float(sess.run(c))


def test_wrong_secret_is_refused_and_server_keeps_serving(graph, monkeypatch):
    with launcher.LocalCluster({"local": 1}, env={"MINITF_SECRET": "right"}, echo=False) as c:
        monkeypatch.setenv("MINITF_SECRET", "wrong")
        with graph.as_default():
            x = tf.constant(1.0) + 1.0
            sess = tf.Session(c.target("local"), config=tf.ConfigProto(
                operation_timeout_in_ms=5000))
            with pytest.raises(tf.errors.UnauthenticatedError, match="cluster secret"):
                sess.run(x)
            sess.close()
        time.sleep(0.2)
        assert any("did not prove it holds the cluster secret" in line
                   for line in c.logs[("local", 0)]), c.logs
        monkeypatch.setenv("MINITF_SECRET", "right")
        assert _still_serves(c.target("local"), graph) == 21.0


def test_garbage_bytes_close_only_that_connection(graph):
    server = Server.create_local_server()
    try:
        host, port = server.address.split(":")
        for junk in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", bytes(range(256)) * 8, b"\x00"):
            with socket.create_connection((host, int(port)), timeout=5) as s:
                s.sendall(junk)
                s.settimeout(5)
                try:
                    while s.recv(4096):  # the server answers with its challenge, then closes
                        pass
                except (ConnectionResetError, socket.timeout):
                    pass
        assert _still_serves(server.target, graph) == 21.0
    finally:
        server.stop()


def test_port_in_use_fails_at_once_naming_the_port():
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        start = time.monotonic()
        with pytest.raises(tf.errors.UnknownError, match="port %d" % port):
            Server({"local": ["localhost:%d" % port]}, job_name="local", task_index=0)
        assert time.monotonic() - start < 2.0


def test_server_binds_only_its_interface():
    server = Server.create_local_server()
    try:
        host, port = server._listener.getsockname()[:2]
        assert host == "127.0.0.1"
    finally:
        server.stop()


def test_task_that_never_comes_up_with_a_timeout(graph):
    cluster = {"worker": ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()]}
    server = Server(cluster, job_name="worker", task_index=0)
    try:
        with graph.as_default():
            c = tf.constant(1.0) * 3.0
            sess = tf.Session(server.target, config=tf.ConfigProto(operation_timeout_in_ms=1500))
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError,
                               match=r"/job:worker/replica:0/task:1 at localhost:\d+"):
                sess.run(c)
            assert time.monotonic() - start < 6.0
            sess.close()
        assert _still_serves(Server.create_local_server().target, graph) == 21.0
    finally:
        server.stop()


def test_task_that_never_comes_up_without_a_timeout_logs_and_then_proceeds(graph, capsys,
                                                                             monkeypatch):
    from minitf.distributed import rpc
    monkeypatch.setattr(rpc, "WAIT_LOG_EVERY", 0.3)
    cluster = {"worker": ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()]}
    s0 = Server(cluster, job_name="worker", task_index=0)
    s1 = []
    starter = threading.Timer(1.5, lambda: s1.append(
        Server(cluster, job_name="worker", task_index=1)))
    starter.start()
    try:
        with graph.as_default():
            with tf.device("/job:worker/task:1"):
                c = tf.constant(2.0) * 3.0
            with tf.Session(s0.target) as sess:
                assert sess.run(c) == 6.0
        err = capsys.readouterr().err
        assert "waiting for /job:worker/replica:0/task:1 at %s" % cluster["worker"][1] in err
    finally:
        starter.join()
        s0.stop()
        for s in s1:
            s.stop()


def test_worker_killed_mid_step(graph):
    with launcher.LocalCluster({"worker": 2}, echo=False) as c:
        with graph.as_default():
            with tf.device("/job:worker/task:1"):
                a = tf.random_uniform([600, 600])
                slow = a
                for _ in range(400):  # a few seconds of work on task 1
                    slow = tf.matmul(slow, a) * 0.001
                total = tf.reduce_sum(slow)
            with tf.device("/job:worker/task:0"):
                after = total + 1.0
                local = tf.constant(5.0) * 2.0
            sess = tf.Session(c.target("worker", 0),
                              config=tf.ConfigProto(operation_timeout_in_ms=30000))
            assert sess.run(local) == 10.0
            killer = threading.Timer(1.0, c.kill_task, args=("worker", 1))
            killer.start()
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match="/job:worker/replica:0/task:1"):
                sess.run(after)
            killer.join()
            assert time.monotonic() - start < 20.0
            assert sess.run(local) == 10.0  # the session and task 0 are still usable
            sess.close()


def _fork_server_entry(address):
    run_server({"local": [address]}, "local", 0)


def test_fork_started_server_after_the_parent_used_sessions(graph):
    # The parent uses local and remote sessions first: thread pools, server
    # threads and connections exist when it forks.
    first = Server.create_local_server()
    try:
        with graph.as_default():
            big = tf.reduce_sum(tf.constant(np.ones(200000, np.float32)) * 2.0)
            with tf.Session() as sess:
                assert sess.run(big) == 400000.0
            with tf.Session(first.target) as sess:
                assert sess.run(big) == 400000.0
        address = "localhost:%d" % _free_port()
        ctx = multiprocessing.get_context("fork")
        proc = ctx.Process(target=_fork_server_entry, args=(address,), daemon=True)
        proc.start()
        try:
            with graph.as_default():
                sess = tf.Session("grpc://" + address,
                                  config=tf.ConfigProto(operation_timeout_in_ms=20000))
                assert sess.run(big) == 400000.0
                sess.close()
        finally:
            proc.terminate()
            proc.join(10)
            assert not proc.is_alive()
    finally:
        first.stop()


def test_load_8_threads_x_500_assign_add_lose_nothing(graph):
    with launcher.LocalCluster({"ps": 1}, echo=False) as c:
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(0, name="counter")
                inc = tf.assign_add(v, 1)
            target = c.target("ps")
            with tf.Session(target) as sess:
                sess.run(v.initializer)
            failures = []

            def client():
                try:
                    with tf.Session(target, graph=graph) as sess:
                        for _ in range(500):
                            sess.run(inc.op)
                except Exception as e:  # noqa: BLE001 - reported below
                    failures.append(e)
            threads = [threading.Thread(target=client) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not failures
            with tf.Session(target) as sess:
                assert sess.run(v) == 4000

