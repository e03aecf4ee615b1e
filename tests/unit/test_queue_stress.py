"""Stress: 4 producer threads and 4 consumer threads move 20,000 elements
through one queue, locally and on a server in another process; every
element must come out exactly once, also when consumers' dequeues time out
at random (a timed-out dequeue drops what it had taken, as TF: then elements may
be lost, never duplicated)."""
import random
import threading
import time

import numpy as np
import pytest

import minitf.compat.v1 as tf

TOTAL, PRODUCERS, CONSUMERS, CHUNK, BATCH = 20_000, 4, 4, 100, 50


def build(shared_name=None):
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(500, tf.int64, shapes=[[]], shared_name=shared_name, name="stress")
        chunk = tf.placeholder(tf.int64, [None])
        ops = {"put": q.enqueue_many([chunk]), "chunk": chunk, "take": q.dequeue_up_to(BATCH),
               "close": q.close(), "size": q.size()}
    return g, ops


def stress(make_session, g, ops, timeouts):
    per = TOTAL // PRODUCERS
    got = [[] for _ in range(CONSUMERS)]
    errors, timed_out = [], [0]
    lock = threading.Lock()

    def producer(p, sess):
        try:
            for start in range(p * per, (p + 1) * per, CHUNK):
                sess.run(ops["put"], {ops["chunk"]: np.arange(start, start + CHUNK)})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def consumer(c, sess, seed):
        rng = random.Random(seed)
        try:
            while True:
                options = tf.RunOptions(timeout_in_ms=rng.choice((1, 2, 5, 20))) \
                    if timeouts else None
                try:
                    got[c].extend(sess.run(ops["take"], options=options).tolist())
                except tf.errors.DeadlineExceededError:
                    with lock:
                        timed_out[0] += 1
                except tf.errors.OutOfRangeError:
                    return
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    sessions = [make_session() for _ in range(PRODUCERS + CONSUMERS + 1)]
    for sess in sessions:  # connect first: a 1 ms timeout is for the dequeue, not the dial
        sess.run(ops["size"])
    try:
        producers = [threading.Thread(target=producer, args=(p, sessions[p]))
                     for p in range(PRODUCERS)]
        consumers = [threading.Thread(target=consumer, args=(c, sessions[PRODUCERS + c], c))
                     for c in range(CONSUMERS)]
        for t in producers + consumers:
            t.start()
        for t in producers:
            t.join(60)
        if timeouts:
            # Every element is in; once the queue is drained the consumers' dequeues
            # wait on an empty queue, so some must time out (on a loaded machine the
            # producers may never have fallen behind before).
            give_up = time.monotonic() + 20
            while not timed_out[0] and time.monotonic() < give_up:
                time.sleep(0.01)
        sessions[-1].run(ops["close"])
        for t in consumers:
            t.join(60)
        assert not any(t.is_alive() for t in producers + consumers), "threads hung"
        assert not errors, errors
        everything = [v for part in got for v in part]
        if timeouts:
            # As TF, a dequeue that timed out loses what it had taken: some elements
            # may be missing, but none comes twice and none is made up.
            assert len(set(everything)) == len(everything)
            assert set(everything) <= set(range(TOTAL))
        else:
            assert sorted(everything) == list(range(TOTAL))      # each exactly once
        for part in got:      # one consumer sees each producer's elements in order
            for p in range(PRODUCERS):
                mine = [v for v in part if p * (TOTAL // PRODUCERS) <= v <
                        (p + 1) * (TOTAL // PRODUCERS)]
                assert mine == sorted(mine)
        assert sessions[-1].run(ops["size"]) == 0
    finally:
        for s in sessions:
            s.close()
    return timed_out[0]


@pytest.mark.parametrize("timeouts", [False, True], ids=["plain", "random_timeouts"])
def test_local_stress(timeouts):
    g, ops = build()
    sess = tf.Session(graph=g)   # a local queue is private to its session: share it
    try:
        n = stress(lambda: _Shared(sess), g, ops, timeouts)
    finally:
        sess.close()
    if timeouts:
        assert n > 0, "no dequeue timed out: the test did not test timeouts"


class _Shared:
    """One local session used by many threads (close only once, at the end)."""

    def __init__(self, sess):
        self.run = sess.run

    def close(self):
        pass


@pytest.fixture(scope="module")
def server():
    from minitf.distributed.launcher import LocalCluster
    cluster = LocalCluster({"local": 1}, echo=False)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.mark.parametrize("timeouts", [False, True], ids=["plain", "random_timeouts"])
def test_remote_stress(server, timeouts):
    name = "stress_%s" % timeouts
    g, ops = build(shared_name=name)       # one queue on the server, 9 sessions
    n = stress(lambda: tf.Session(server.target("local"), graph=g), g, ops, timeouts)
    if timeouts:
        assert n > 0
