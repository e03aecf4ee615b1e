"""Faults a server meets in a real cluster (issue 13, points 3-7): each gives
the right error class and message, and afterwards the server's threads, file
descriptors and memory are back where they were.

Most servers here run in this process, so that the test can count its
threads and descriptors and look into the worker's rendezvous; a peer that
misbehaves is a raw authenticated socket speaking the wire protocol.
"""

import ctypes
import gc
import math
import os
import signal
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed import launcher, protocol, rpc, server as server_mod, wire
from minitf.distributed.rpc import Channel
from minitf.distributed.server import Server

from background import Background

MIB = 1 << 20


# ---------------------------------------------------------------- helpers

def _fds():
    return len(os.listdir("/proc/self/fd"))


def _rss(pid="self"):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _give_back_freed_memory():
    """Ask glibc to hand freed heap memory back to the OS (``malloc_trim``), so
    that RSS shows what is still referenced. Late in a long test run, earlier
    frees of big blocks have raised glibc's mmap threshold, 1 MiB arrays come
    from a thread's heap arena instead, and freeing them may leave the RSS
    where it was. (No-op where there is no glibc.)"""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _vm_data():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmData")


# Threads of bounded pools: created on demand and kept for the next steps,
# as in any thread pool, so not counted as leaks.
_POOLS = ("minitf-worker-", "minitf-master", "minitf-abort")


def _threads():
    return sorted(t.name for t in threading.enumerate() if not t.name.startswith(_POOLS))


class Baseline:
    """Threads (outside bounded pools) and file descriptors of this process
    now; ``back()`` waits until they are no more than that again."""

    def __init__(self):
        gc.collect()
        self.threads = _threads()
        self.fds = _fds()

    def back(self, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(_threads()) <= len(self.threads) and _fds() <= self.fds:
                return True
            time.sleep(0.05)
        raise AssertionError("not back to baseline: threads %s (were %s), %d fds (were %d)"
                             % (_threads(), self.threads, _fds(), self.fds))


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def server():
    s = Server.create_local_server()
    try:
        # Warm up what a server creates lazily and keeps (the thread pools of
        # inline and dataflow steps, blocking ops included).
        with tf.Graph().as_default():
            q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
            with tf.Session(s.target) as sess:
                sess.run(tf.constant(1.0) + 1.0)
                sess.run(q.enqueue(1.0))
                sess.run(q.dequeue())
        yield s
    finally:
        s.stop()


def _raw(server_or_address):
    """An authenticated socket to a server, for speaking the protocol by hand."""
    address = getattr(server_or_address, "address", server_or_address)
    return Channel(address, "the test's server")._connect(time.monotonic() + 10)


def _call(sock, header, tensors=(), timeout=10.0):
    wire.send_frame(sock, header, tensors, deadline=time.monotonic() + timeout)
    return wire.recv_frame(sock, deadline=time.monotonic() + timeout)


def _error_of(reply):
    try:
        wire.raise_if_error(reply)
    except tf.errors.OpError as e:
        return e
    raise AssertionError("expected an error reply, got %r" % (reply,))


def _device(server):
    return server.worker.device_list[0].name


def _register(sock, server, build):
    """Register the ops ``build()`` makes (in a fresh graph) as one partition
    on ``server``'s worker; returns the graph handle."""
    g = tf.Graph()
    with g.as_default():
        extra = build(g) or []
    tensors = []
    device = _device(server)
    nodes = [protocol.encode_op(op, tensors, device) for op in g.get_operations()] + extra
    reply, _ = _call(sock, {"op": protocol.REGISTER_GRAPH, "session": "test-session",
                            "nodes": nodes, "config": {}}, tensors)
    wire.raise_if_error(reply)
    return reply["graph"]


def _send_node(device, tensor, key):
    return {"name": "send_" + key, "op": "_Send", "inputs": [[tensor.op.name, 0]],
            "control": [], "device": "", "assigned": device, "colocation": [],
            "attrs": {"key": key, "tensor_name": tensor.name}, "out": []}


def _recv_node(server, key, name="recv_forever"):
    device = _device(server)
    return {"name": name, "op": "_Recv", "inputs": [], "control": [], "device": "",
            "assigned": device, "colocation": [],
            "attrs": {"key": key, "send_task": server.task_name, "send_device": device,
                      "recv_device": device, "tensor_name": key, "T": {"dtype": "float32"}},
            "out": [["float32", []]]}


def _run_graph(sock, handle, step, deadline_ms=0):
    return _call(sock, {"op": protocol.RUN_GRAPH, "graph": handle, "step": step,
                        "feeds": [], "fetches": [], "deadline_ms": deadline_ms})


def _wait_for(predicate, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# ---------------------------------------------------------------- 3. dead pooled connections

def test_a_restarted_task_is_reached_on_the_first_try(graph):
    port = launcher.free_port()
    address = "localhost:%d" % port
    first = Server({"local": [address]}, job_name="local", task_index=0)
    channel = Channel(address, "/job:local/replica:0/task:0")
    base = Baseline()
    try:
        channel.call({"op": protocol.GET_STATUS}, deadline=time.monotonic() + 5)
        first.stop()                            # the pooled connection dies with it
        second = Server({"local": [address]}, job_name="local", task_index=0)
        try:
            time.sleep(rpc.CHECK_IDLE_AFTER)
            reply, _ = channel.call({"op": protocol.GET_STATUS},
                                    deadline=time.monotonic() + 5)
            assert reply["incarnation"] == second.worker.incarnation
        finally:
            second.stop()
    finally:
        channel.close()
        first.stop()
    base.back()


def test_a_pooled_connection_reused_at_once_is_not_checked(server, monkeypatch):
    channel = Channel(server.address, server.task_name)
    try:
        channel.call({"op": protocol.GET_STATUS}, deadline=time.monotonic() + 5)
        checked = []
        monkeypatch.setattr(rpc, "_alive", lambda sock: checked.append(sock) or True)
        for _ in range(20):
            channel.call({"op": protocol.GET_STATUS}, deadline=time.monotonic() + 5)
        assert checked == []                    # a hot loop costs no extra syscall
    finally:
        channel.close()


def test_a_step_after_a_worker_restarts_blames_the_restart_not_the_connection(graph):
    with launcher.LocalCluster({"worker": 2}, echo=False) as cluster:
        with tf.device("/job:worker/task:1"):
            x = tf.constant(2.0) * 3.0
        sess = tf.Session(cluster.target("worker", 0))
        assert sess.run(x) == 6.0
        cluster.kill_task("worker", 1)
        cluster.start_task("worker", 1)
        with pytest.raises(tf.errors.AbortedError,
                           match=r"is not registered on /job:worker/replica:0/task:1 \(the "
                                 r"server restarted\?\)"):
            sess.run(x)
        sess.close()
        with tf.Session(cluster.target("worker", 0)) as fresh:
            assert fresh.run(x) == 6.0          # the first step on a new session works


def test_a_new_plan_on_an_old_session_after_a_restart_is_aborted(graph):
    with launcher.LocalCluster({"ps": 1, "worker": 1}, echo=False) as cluster:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        sess = tf.Session(cluster.target("worker", 0))
        sess.run(v.initializer)
        cluster.kill_task("ps", 0)
        cluster.start_task("ps", 0)
        # A step signature never run before registers a new graph on the new
        # ps process: it must be refused, not run on its uninitialized state.
        with pytest.raises(tf.errors.AbortedError,
                           match=r"/job:ps/replica:0/task:0 was restarted since the session "
                                 r"was created: it is a new process"):
            sess.run(v + 1.0)
        sess.close()


# ---------------------------------------------------------------- 4. waits end

def test_abandoned_recv_tensor_requests_end_with_their_peer(server):
    base = Baseline()
    for i in range(20):
        sock = _raw(server)
        wire.send_frame(sock, {"op": protocol.RECV_TENSOR, "step": 1000 + i,
                               "key": "never;sent;here", "deadline_ms": 0})
        sock.close()                            # the client gives up and goes away
    base.back(timeout=3.0)
    assert server.worker.rendezvous.pending() == {}


def test_a_waiting_recv_tensor_ends_when_its_step_is_aborted(server):
    base = Baseline()
    sock = _raw(server)
    try:
        waiting = Background(_call, sock, {"op": protocol.RECV_TENSOR, "step": 77,
                                           "key": "x:0;a;b", "deadline_ms": 0})
        time.sleep(0.2)
        other = _raw(server)
        try:
            _call(other, {"op": protocol.ABORT_STEP, "step": 77,
                          "message": "another task of step 77 failed"})
        finally:
            other.close()
        err = _error_of(waiting.result()[0])
        assert isinstance(err, tf.errors.AbortedError)
        assert err.message == "another task of step 77 failed"
    finally:
        sock.close()
    base.back()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -5, "soon"])
def test_a_bad_deadline_is_refused(server, bad):
    sock = _raw(server)
    try:
        start = time.monotonic()
        err = _error_of(_call(sock, {"op": protocol.RECV_TENSOR, "step": 5, "key": "k",
                                     "deadline_ms": bad})[0])
        assert time.monotonic() - start < 2.0
        assert isinstance(err, tf.errors.InvalidArgumentError)
        assert "deadline_ms must be a finite number of milliseconds >= 0 (0: no deadline), " \
            "got %r" % (bad,) in err.message
        # The connection is still in step.
        assert _call(sock, {"op": protocol.GET_STATUS})[0]["task"] == server.task_name
    finally:
        sock.close()


def test_a_nan_deadline_from_a_client_is_refused(server, graph):
    x = tf.constant(1.0) + 1.0
    with tf.Session(server.target) as sess:
        sess.run(x)
        sock = _raw(server)
        try:
            err = _error_of(_call(sock, {"op": protocol.RUN_STEP,
                                         "session": sess._runtime.handle, "step": 1,
                                         "fetches": [x.name], "targets": [], "feeds": [],
                                         "deadline_ms": math.nan})[0])
        finally:
            sock.close()
    assert isinstance(err, tf.errors.InvalidArgumentError) and "got nan" in err.message


def test_a_client_killed_mid_step_cancels_its_step(tmp_path):
    with launcher.LocalCluster({"local": 1}, echo=False) as cluster:
        program = tmp_path / "client.py"
        program.write_text(
            "import sys\nimport minitf.compat.v1 as tf\n"
            "q = tf.FIFOQueue(2, tf.float32, shapes=[[]], shared_name='inbox')\n"
            "with tf.Session(sys.argv[1]) as s:\n"
            "    print('waiting', flush=True)\n"
            "    s.run(q.dequeue())\n")
        proc = subprocess.Popen([sys.executable, str(program), cluster.target("local")],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "waiting"
        time.sleep(2.0)                         # the dequeue is blocked on the server
        proc.kill()
        proc.wait(10)
        proc.stdout.close()
        # The server notices the hang-up within a few tenths of a second.
        time.sleep(4 * server_mod.WATCH_EVERY)
        with tf.Graph().as_default():
            q = tf.FIFOQueue(2, tf.float32, shapes=[[]], shared_name="inbox")
            with tf.Session(cluster.target("local")) as sess:
                sess.run(q.enqueue(5.0))
                # The killed client's dequeue was cancelled, not left waiting
                # to take this element.
                time.sleep(0.5)
                assert sess.run(q.size()) == 1
                assert sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=2000)) == 5.0


# ---------------------------------------------------------------- 5. values nobody receives

def _big(g):
    return tf.random_uniform([256, 1024], seed=1)       # 1 MiB, new every step


def test_values_of_a_vanished_masters_steps_are_dropped(server):
    base = Baseline()
    rss_before = _rss()
    sock = _raw(server)
    device = _device(server)

    def build(g):
        big = _big(g)
        return [_send_node(device, big, "big:0;%s;/job:gone/device:CPU:0" % device)]
    handle = _register(sock, server, build)
    for step in range(1, 201):
        reply, _ = _run_graph(sock, handle, step)
        wire.raise_if_error(reply)
    pending = server.worker.rendezvous.pending()
    assert len(pending) == 200                  # each step left 1 MiB for a receiver...
    grown = _rss() - rss_before
    assert grown > 100 * MIB, grown
    sock.close()                                # ...and its master died without a goodbye
    assert _wait_for(lambda: server.worker.rendezvous.pending() == {})
    base.back()
    _give_back_freed_memory()
    assert _rss() - rss_before < grown / 2, (_rss() - rss_before, grown)


def test_values_of_a_master_that_said_goodbye_wait_for_their_receiver(server):
    sock = _raw(server)
    device = _device(server)
    key = "big:0;%s;/job:other/device:CPU:0" % device
    handle = _register(sock, server, lambda g: [_send_node(device, _big(g), key)])
    wire.raise_if_error(_run_graph(sock, handle, 4242)[0])
    wire.send_frame(sock, {"op": protocol.GOODBYE})
    sock.close()
    time.sleep(0.3)
    assert server.worker.rendezvous.pending() == {4242: 1}
    receiver = _raw(server)                     # a late receiver still gets it
    try:
        reply, (value,) = _call(receiver, {"op": protocol.RECV_TENSOR, "step": 4242,
                                           "key": key, "deadline_ms": 5000})
    finally:
        receiver.close()
    assert value.shape == (256, 1024)
    assert server.worker.rendezvous.pending() == {}


def test_a_failed_part_of_a_step_drops_what_it_sent_at_once(server):
    sock = _raw(server)
    device = _device(server)

    def build(g):
        big = _big(g)
        send = _send_node(device, big, "big:0;%s;/job:other/device:CPU:0" % device)
        bad = tf.check_numerics(tf.constant(np.float32(np.nan)), "the step fails here")
        return [send] if bad is not None else []
    handle = _register(sock, server, build)
    try:
        for step in range(1, 51):
            err = _error_of(_run_graph(sock, handle, step)[0])
            assert isinstance(err, tf.errors.InvalidArgumentError)
            assert "the step fails here" in err.message
            assert server.worker.rendezvous.pending() == {}
        # A late receiver of a failed step learns why at once.
        start = time.monotonic()
        err = _error_of(_call(sock, {"op": protocol.RECV_TENSOR, "step": 50,
                                     "key": "big:0;%s;/job:other/device:CPU:0" % device,
                                     "deadline_ms": 0})[0])
        assert time.monotonic() - start < 1.0
        assert isinstance(err, tf.errors.AbortedError)
        assert "Step aborted because its part on /job:localhost/replica:0/task:0 failed" \
            in err.message
    finally:
        sock.close()


def test_a_master_hanging_up_mid_step_ends_the_step(server):
    base = Baseline()
    device = _device(server)
    sock = _raw(server)

    def build(g):
        big = _big(g)
        return [_send_node(device, big, "big:0;%s;/job:other/device:CPU:0" % device),
                _recv_node(server, "nobody;sends;this")]
    handle = _register(sock, server, build)
    wire.send_frame(sock, {"op": protocol.RUN_GRAPH, "graph": handle, "step": 9,
                           "feeds": [], "fetches": [], "deadline_ms": 0})
    assert _wait_for(lambda: server.worker.rendezvous.pending() == {9: 1})
    sock.close()                                # the master dies mid-step
    assert _wait_for(lambda: server.worker.rendezvous.pending() == {})
    assert _wait_for(lambda: not server.worker._steps)
    base.back()


# ---------------------------------------------------------------- 6. error replies

def test_a_malformed_request_gets_an_error_reply_and_the_connection_goes_on(server):
    base = Baseline()
    sock = _raw(server)
    try:
        header = wire.msgpack.packb({"op": protocol.LIST_DEVICES, "tensors": [
            {"dtype": "float32", "shape": [1] * 70, "nbytes": 4}]}, use_bin_type=True)
        sock.sendall(wire.PREFIX.pack(wire.MAGIC, wire.VERSION, len(header), 4) + header +
                     b"\x00" * 4)
        reply, _ = wire.recv_frame(sock, deadline=time.monotonic() + 5)
        err = _error_of(reply)
        assert isinstance(err, tf.errors.InvalidArgumentError)
        assert "Malformed request from" in err.message
        assert "tensor 0 has 70 dimensions; minitf tensors (numpy arrays) have at most 64" \
            in err.message
        assert _call(sock, {"op": protocol.GET_STATUS})[0]["task"] == server.task_name
    finally:
        sock.close()
    base.back()


def test_fetching_a_queue_handle_remotely_is_a_clear_error(server, graph):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    with tf.Session(server.target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(q.queue_ref)
        message = info.value.message
        assert message.startswith("Cannot send the reply to RunStep: %s: it holds a "
                                  "QueueResource, which is not data" % q.queue_ref.name)
        assert "run the ops that use it there instead of fetching it" in message
        sess.run(q.enqueue(1.0))                # the session and connection go on
        assert sess.run(q.size()) == 1


def test_fetching_a_queue_handle_through_another_task_is_a_clear_error(graph):
    with launcher.LocalCluster({"worker": 2}, echo=False) as cluster:
        with tf.device("/job:worker/task:1"):
            q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
        with tf.Session(cluster.target("worker", 0)) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Cannot send the reply to RunGraph: %s: it holds a "
                                     "QueueResource" % q.queue_ref.name):
                sess.run(q.queue_ref)
            assert sess.run(q.size()) == 0


# ---------------------------------------------------------------- 7. smaller faults

def test_a_failed_extend_session_adds_nothing(server, graph):
    a = tf.constant(1.0, name="a")
    with tf.Session(server.target) as sess:
        assert sess.run(a) == 1.0
        handle = sess._runtime.handle
        g2 = tf.Graph()
        with g2.as_default():
            tf.constant(1.0, name="a")
            b = tf.constant(2.0, name="b")
            c = tf.identity(b, name="c")
        nodes, tensors = protocol.encode_ops([b.op, c.op])
        bad = dict(nodes[1], name="d", op="NoSuchOp")
        sock = _raw(server)
        try:
            for _ in range(2):   # the same error twice: nothing was left behind
                err = _error_of(_call(sock, {"op": protocol.EXTEND_SESSION, "session": handle,
                                             "nodes": nodes + [bad]}, tensors)[0])
                assert isinstance(err, tf.errors.InvalidArgumentError)
                assert "Cannot import node 3 of 3: KeyError" in err.message
                assert "minitf has no op type 'NoSuchOp'" in err.message
                assert "(no node was added)" in err.message
            reply, _ = _call(sock, {"op": protocol.EXTEND_SESSION, "session": handle,
                                    "nodes": nodes}, tensors)
            wire.raise_if_error(reply)
        finally:
            sock.close()
        master_graph = server.master.sessions[handle].graph
        assert [op.name for op in master_graph.get_operations()] == ["a", "b", "c"]


def test_running_out_of_memory_names_the_op_the_shape_and_the_device(graph):
    dims = tf.placeholder(tf.int32, [2])
    big = tf.fill(dims, 1.0, name="huge")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError) as info:
            sess.run(big, {dims: [1 << 20, 1 << 20]})
        assert info.value.message.startswith(
            "OOM when allocating tensor with shape[1048576,1048576] and type float on "
            "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu")
        assert info.value.message.endswith("[[{{node huge}}]]")
        assert info.value.op.name == "huge"
        assert sess.run(big, {dims: [2, 2]}).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_running_out_of_memory_on_a_server(server, graph):
    base = Baseline()
    dims = tf.placeholder(tf.int32, [2])
    big = tf.fill(dims, 1.0, name="huge")
    with tf.Session(server.target) as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError,
                           match=r"OOM when allocating tensor with shape\[1048576,1048576\] "
                                 r"and type float on /job:localhost/replica:0/task:0/device:CPU:0"):
            sess.run(big, {dims: [1 << 20, 1 << 20]})
    base.back()


def test_a_stopped_task_fails_at_the_deadline_naming_it(graph):
    with launcher.LocalCluster({"worker": 2}, echo=False) as cluster:
        with tf.device("/job:worker/task:1"):
            x = tf.constant(2.0) * 3.0
        sess = tf.Session(cluster.target("worker", 0))
        assert sess.run(x) == 6.0
        pid = cluster.processes[("worker", 1)].pid
        os.kill(pid, signal.SIGSTOP)
        try:
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError,
                               match=r"/job:worker/replica:0/task:1 at localhost:\d+"):
                sess.run(x, options=tf.RunOptions(timeout_in_ms=1500))
            waited = time.monotonic() - start
            assert 1.45 < waited < 2.1, waited
        finally:
            os.kill(pid, signal.SIGCONT)
        assert sess.run(x) == 6.0
        # A stopped master: the client itself notices, at the deadline.
        pid0 = cluster.processes[("worker", 0)].pid
        os.kill(pid0, signal.SIGSTOP)
        try:
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError,
                               match="grpc://localhost:"):
                sess.run(x, options=tf.RunOptions(timeout_in_ms=1500))
            waited = time.monotonic() - start
            assert 1.45 < waited < 2.4, waited
        finally:
            os.kill(pid0, signal.SIGCONT)
        sess.close()


def test_a_const_whose_value_is_not_its_dtype_is_refused(server, graph):
    x = tf.constant(1.0, name="x")
    with tf.Session(server.target) as sess:
        sess.run(x)
        handle = sess._runtime.handle
        g2 = tf.Graph()
        with g2.as_default():
            fake = tf.constant(np.array([b"not a number"], dtype=object), name="fake")
        nodes, tensors = protocol.encode_ops([fake.op])
        nodes[0]["attrs"]["dtype"] = {"dtype": "float32"}
        nodes[0]["out"] = [["float32", [1]]]
        sock = _raw(server)
        try:
            wire.raise_if_error(_call(sock, {"op": protocol.EXTEND_SESSION, "session": handle,
                                             "nodes": nodes}, tensors)[0])
            err = _error_of(_call(sock, {"op": protocol.RUN_STEP, "session": handle,
                                         "step": 3, "fetches": ["fake:0"], "targets": [],
                                         "feeds": []})[0])
        finally:
            sock.close()
    assert isinstance(err, tf.errors.InvalidArgumentError)
    assert "Type mismatch between value (string) and dtype (float32) of Const node fake" \
        in err.message


def test_a_closed_sessions_constants_are_freed_at_once(server, graph):
    big = tf.constant(np.ones(16 * MIB // 4, np.float32), name="big")
    total = tf.reduce_sum(big)
    gc.disable()
    try:
        with tf.Session(server.target) as sess:
            assert sess.run(total) == 4 * MIB
            handle = sess._runtime.handle
            held = server.master.sessions[handle].graph.get_operation_by_name("big") \
                .get_attr("value")
            alive = weakref.ref(held.base if held.base is not None else held)
            del held
        assert alive() is None                  # freed by the close, no collector needed
    finally:
        gc.enable()


def test_a_servers_memory_comes_back_after_sessions_with_large_constants(tmp_path):
    program = tmp_path / "client.py"
    program.write_text(
        "import sys\nimport numpy as np\nimport minitf.compat.v1 as tf\n"
        "for i in range(4):\n"
        "    with tf.Graph().as_default():\n"
        "        big = tf.constant(np.full(16 * 2 ** 20, i, np.float32))\n"  # 64 MiB
        "        with tf.Session(sys.argv[1]) as s:\n"
        "            s.run(tf.reduce_sum(big))\n")
    with launcher.LocalCluster({"local": 1}, echo=False) as cluster:
        pid = cluster.processes[("local", 0)].pid
        subprocess.run([sys.executable, str(program), cluster.target("local")], check=True,
                       timeout=120)
        first = _rss(pid)
        subprocess.run([sys.executable, str(program), cluster.target("local")], check=True,
                       timeout=120)
        assert _rss(pid) - first < 32 * MIB, (_rss(pid), first)   # 64 MiB a session


def test_an_announced_huge_request_reserves_nothing_and_has_a_deadline(server, monkeypatch,
                                                                       capsys):
    monkeypatch.setattr(server_mod, "STALL_TIMEOUT", 1.0)
    base = Baseline()
    before = _vm_data()
    sock = _raw(server)
    try:
        header = wire.msgpack.packb({"op": protocol.RUN_STEP}, use_bin_type=True)
        sock.sendall(wire.PREFIX.pack(wire.MAGIC, wire.VERSION, len(header), 8 << 30) + header)
        time.sleep(0.4)
        assert _vm_data() - before < 64 * MIB   # not the 8 GiB announced
        start = time.monotonic()
        sock.settimeout(5)
        assert sock.recv(1) == b""              # the server gave up on the frame
        assert time.monotonic() - start < 2.5
    finally:
        sock.close()
    base.back()
    assert "sent nothing for 1 s in the middle of a frame" in capsys.readouterr().err
