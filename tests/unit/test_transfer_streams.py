"""Tensors between tasks travel as one ``RecvTensors`` stream per peer and step:
the receiving worker asks once for every key it needs from that peer, and the
peer sends each tensor as soon as its ``_Send`` has run."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed import launcher, protocol


@pytest.fixture(scope="module")
def servers():
    cluster = {"a": ["localhost:%d" % launcher.free_port() for _ in range(2)]}
    started = [tf.train.Server(cluster, "a", i) for i in range(2)]
    yield started
    for s in started:
        s.stop()


@pytest.fixture
def requests(servers, monkeypatch):
    """Every worker request each server answers: [(task index, op, keys)]."""
    seen = []
    for index, server in enumerate(servers):
        handlers = server.worker.handlers
        for op in (protocol.RECV_TENSOR, protocol.RECV_TENSORS):
            def spy(header, tensors, peer, _inner=handlers[op], _index=index, _op=op):
                seen.append((_index, _op, header.get("keys") or [header.get("key")]))
                return _inner(header, tensors, peer)
            monkeypatch.setitem(handlers, op, spy)
    return seen


def _ping_pong_graph():
    """task 1 holds three variables; task 0 needs all three, and task 1 needs
    a value task 0 computes from one of them: a stream that waited for every
    key before sending any would never finish."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:a/task:1"):
            v1 = tf.Variable([1.0, 2.0], name="v1")
            v2 = tf.Variable([10.0, 20.0], name="v2")
            v3 = tf.Variable([100.0, 200.0], name="v3")
        with tf.device("/job:a/task:0"):
            a = v1 * 2.0                      # task 1 -> task 0
        with tf.device("/job:a/task:1"):
            b = a + v2                        # task 0 -> task 1 -> ...
        with tf.device("/job:a/task:0"):
            out = b + v3 + v1                 # ... -> task 0, with v3 and v1 again
    return g, out, [v1, v2, v3]


def test_one_stream_per_peer_and_step_carries_every_tensor(servers, requests):
    g, out, variables = _ping_pong_graph()
    with g.as_default(), tf.Session(servers[0].target, graph=g) as sess:
        sess.run([v.initializer for v in variables])
        sess.run(out)
        del requests[:]
        for _ in range(3):
            np.testing.assert_allclose(sess.run(out), [113.0, 226.0])
    assert {op for _, op, _ in requests} == {protocol.RECV_TENSORS}
    # Per step: task 0 asks task 1 once, for v1, v3 and b together (v1 and v3
    # are ready at once, b only after task 0's own `a` went the other way),
    # and task 1 asks task 0 once, for a.
    def names(keys):
        return sorted(k.split(";")[0] for k in keys)
    assert [names(keys) for index, _, keys in requests if index == 1] == \
        [["add:0", "v1/read:0", "v3/read:0"]] * 3
    assert [names(keys) for index, _, keys in requests if index == 0] == [["mul:0"]] * 3


def test_a_failure_on_the_sender_reaches_the_client_and_the_next_step_runs(servers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:a/task:1"):
            v = tf.Variable([1.0, 2.0], name="v")
            u = tf.Variable([3.0, 4.0], name="u")     # never initialized
        with tf.device("/job:a/task:0"):
            both = v + u
            only_v = v * 1.0
        with tf.Session(servers[0].target, graph=g) as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.FailedPreconditionError, match="u"):
                sess.run(both)
            np.testing.assert_allclose(sess.run(only_v), [1.0, 2.0])


def test_a_dead_tensor_crosses_in_the_stream(servers):
    g = tf.Graph()
    with g.as_default():
        pred = tf.placeholder(tf.bool, [])
        with tf.device("/job:a/task:1"):
            x = tf.constant([1.0, 2.0])
            y = tf.constant([5.0, 6.0])
        with tf.device("/job:a/task:0"):
            out = tf.cond(pred, lambda: x * 2.0, lambda: y + 1.0)
        with tf.Session(servers[0].target, graph=g) as sess:
            np.testing.assert_allclose(sess.run(out, {pred: True}), [2.0, 4.0])
            np.testing.assert_allclose(sess.run(out, {pred: False}), [6.0, 7.0])


def test_parts_skip_the_dead_checks_only_when_no_op_of_the_step_makes_dead_values(servers):
    """A ``_Recv`` may bring a dead value (the untaken side of a ``tf.cond`` on
    another task), so a part with receives checks every op for dead inputs,
    about a microsecond each. The master knows the whole step: when no op of
    it makes dead values, it registers every part with ``live_receives`` and
    the parts skip those checks; with a cond anywhere in the step, they keep them."""
    target = servers[0].target
    plans = []
    for with_cond in (False, True):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.bool, [])
            with tf.device("/job:a/task:1"):
                v = tf.Variable([1.0, 2.0])
                w = v * 3.0
            with tf.device("/job:a/task:0"):
                y = tf.cond(p, lambda: w + 1.0, lambda: w - 1.0) if with_cond else w + 1.0
            with tf.Session(target) as sess:
                sess.run(v.initializer)
                feed = {p: False} if with_cond else {}
                assert sess.run(y, feed).tolist() == ([2.0, 5.0] if with_cond else [4.0, 7.0])
                parts = [part for server in servers
                         for part in list(server.worker._partitions.values())
                         if any(op.type == "_Recv" for op in part.graph.get_operations())]
                assert parts
                plans.append({part.live_receives: [plan.may_be_dead for plan in
                                                   part.plans._plans.values()]
                              for part in parts})
    assert plans[0] == {True: [False]}
    assert plans[1] == {False: [True]}


def test_tensors_ready_together_cross_in_one_frame(servers):
    """A ``RecvTensors`` reply carries in one frame every tensor that is ready
    when it is made (a layer's gradients usually are): the receiver decodes
    one header and does two reads instead of one of each per tensor. A dead
    value (the untaken side of a cond) is named by its position, with no
    tensor; one that comes later gets a frame of its own."""
    import threading
    import time
    from minitf.framework.op_def import DEAD
    worker = servers[1].worker
    step = 987654321
    worker.rendezvous.send(step, "a", np.arange(3, dtype=np.float32))
    worker.rendezvous.send(step, "b", DEAD)
    worker.rendezvous.send(step, "c", np.ones(2, np.int32))
    frames = worker.recv_tensors(step, ["a", "b", "c", "d"], time.monotonic() + 10)
    header, tensors = next(frames)
    assert header["more"] is True and sorted(header["keys"]) == ["a", "b", "c"]
    assert [header["keys"][i] for i in header["dead"]] == ["b"]
    live = [k for i, k in enumerate(header["keys"]) if i not in header["dead"]]
    got = dict(zip(live, tensors))
    assert got["a"].tolist() == [0.0, 1.0, 2.0] and got["c"].tolist() == [1, 1]
    threading.Timer(0.1, worker.rendezvous.send, (step, "d", np.zeros(1))).start()
    header, tensors = next(frames)
    assert header == {"keys": ["d"], "more": False} and tensors[0].tolist() == [0.0]
    assert list(frames) == []
