"""Queue blocking semantics (minitf/ops/queues.py): order, capacity,
close, timeouts and cancellation, each checked by values and errors."""
import threading
import time

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import errors
from minitf.kernels.random_streams import ShuffleQueuePicker
from minitf.ops import queues
from minitf.runtime.step import StepState


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def step(timeout=None):
    return StepState(None if timeout is None else time.monotonic() + timeout)


def elems(*values):
    """A block of int32 rows (one component), as the enqueue kernels hand it over."""
    return (np.array(values, dtype=np.int32),)


def ints(taken):
    """The values of a dequeue's first component (one element or a batch)."""
    return np.atleast_1d(taken[0]).tolist()


def test_fifo_order_and_size():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[3, 1, 2]]))
        sess.run(q.enqueue(7))
        assert sess.run(q.size()) == 4
        assert sess.run(q.dequeue_many(3)).tolist() == [3, 1, 2]
        assert sess.run(q.dequeue()) == 7


def test_enqueue_blocks_when_full_until_a_dequeue():
    q = queues.QueueResource("q", 2, [tf.int32], [])
    q.enqueue(elems(1, 2), step())
    done = threading.Event()

    def producer():
        q.enqueue(elems(3), step(5))
        done.set()
    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.2)            # full: the enqueue waits
    assert ints(q.dequeue(None, step())) == [1]
    assert done.wait(5)
    t.join(5)
    assert ints(q.dequeue(2, step())) == [2, 3]


def test_enqueues_are_served_in_arrival_order():
    q = queues.QueueResource("q", 1, [tf.int32], [])
    q.enqueue(elems(0), step())
    threads = []
    for v in (1, 2, 3):
        t = threading.Thread(target=q.enqueue, args=(elems(v), step(5)))
        t.start()
        threads.append(t)
        time.sleep(0.1)  # make the arrival order certain
    got = [ints(q.dequeue(None, step(5)))[0] for _ in range(4)]
    for t in threads:
        t.join(5)
    assert got == [0, 1, 2, 3]


def test_dequeue_many_takes_elements_as_they_arrive():
    q = queues.QueueResource("q", 10, [tf.int32], [])
    out = []
    t = threading.Thread(target=lambda: out.append(ints(q.dequeue(3, step(5)))))
    t.start()
    for v in (5, 6, 7):
        time.sleep(0.05)
        q.enqueue(elems(v), step())
    t.join(5)
    assert out == [[5, 6, 7]]
    assert q.size() == 0


def test_dequeue_timeout_drops_what_it_took():
    # As TF's queue kernels: the waiting dequeue held 1 and 2; timing out loses them.
    q = queues.QueueResource("q", 10, [tf.int32], [])
    q.enqueue(elems(1, 2), step())
    with pytest.raises(errors.DeadlineExceededError, match="Timed out waiting for notification"):
        q.dequeue(3, step(0.2))
    assert q.size() == 0
    assert q.summary()["dropped"] == 2 and q.summary()["dequeued"] == 2
    q.enqueue(elems(3), step())
    assert ints(q.dequeue(None, step())) == [3]


def test_dequeue_many_timeout_in_a_session_drops_what_it_took():
    # TF 2.21's numbers (conformance program queue_timeout_drops): size 0 after.
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=200)) as sess:
        sess.run(q.enqueue_many([[4, 5]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(3))
        assert sess.run(q.size()) == 0


def test_closed_queue_puts_back_what_a_failed_dequeue_took():
    q = queues.QueueResource("q", 10, [tf.int32], [])
    q.enqueue(elems(1, 2), step())
    q.close(False, step())
    with pytest.raises(errors.OutOfRangeError, match="requested 3, current size 2"):
        q.dequeue(3, step())
    assert ints(q.dequeue(2, step())) == [1, 2]     # same order, nothing lost
    assert q.summary()["dropped"] == 0


def test_cancelled_step_stops_a_waiting_dequeue():
    q = queues.QueueResource("q", 10, [tf.int32], [])
    s = step()
    errs = []

    def consumer():
        try:
            q.dequeue(None, s)
        except errors.CancelledError as e:
            errs.append(e)
    t = threading.Thread(target=consumer)
    t.start()
    time.sleep(0.1)
    s.cancelled.set()
    t.join(5)
    assert not t.is_alive()
    assert "Dequeue operation was cancelled" in errs[0].message


def test_close_lets_remaining_elements_drain_then_out_of_range():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]], name="q")
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(q.enqueue(4))
        assert sess.run(q.dequeue_many(2)).tolist() == [1, 2]
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"insufficient elements \(requested 2, current size 1\)"):
            sess.run(q.dequeue_many(2))
        assert sess.run(q.dequeue_up_to(5)).tolist() == [3]
        with pytest.raises(tf.errors.CancelledError, match="already closed"):
            sess.run(q.close())


def test_close_wakes_a_blocked_dequeue():
    q = queues.QueueResource("q", 10, [tf.int32], [])
    errs = []

    def consumer():
        try:
            q.dequeue(2, step(5))
        except errors.OutOfRangeError as e:
            errs.append(e)
    t = threading.Thread(target=consumer)
    t.start()
    q.enqueue(elems(9), step())
    time.sleep(0.1)
    q.close(False, step())
    t.join(5)
    # TF's numbers: the dequeue still wanted 1 and the queue held none (the one
    # it had taken goes back afterwards).
    assert errs and "requested 1, current size 0" in errs[0].message
    assert ints(q.dequeue(None, step())) == [9]        # put back, still there


def test_close_cancel_pending_enqueues():
    q = queues.QueueResource("q", 1, [tf.int32], [])
    q.enqueue(elems(1), step())
    errs = []

    def producer():
        try:
            q.enqueue(elems(2), step(5))
        except errors.CancelledError as e:
            errs.append(e)
    t = threading.Thread(target=producer)
    t.start()
    time.sleep(0.1)
    q.close(True, step())
    t.join(5)
    assert errs and "Enqueue operation was cancelled" in errs[0].message
    assert ints(q.dequeue(None, step())) == [1]


def test_plain_close_waits_behind_pending_enqueues():
    q = queues.QueueResource("q", 1, [tf.int32], [])
    q.enqueue(elems(1), step())
    t = threading.Thread(target=q.enqueue, args=(elems(2), step(5)))
    t.start()
    time.sleep(0.1)
    closer = threading.Thread(target=q.close, args=(False, step(5)))
    closer.start()
    time.sleep(0.1)
    assert not q.closed                      # the close is in line after the enqueue
    assert ints(q.dequeue(None, step())) == [1]
    t.join(5)
    closer.join(5)
    assert q.closed
    assert ints(q.dequeue(None, step())) == [2]


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed():
    q = queues.RandomShuffleQueue("q", 10, [tf.int32], [], min_after_dequeue=2,
                                  picker=ShuffleQueuePicker(1, 2))
    q.enqueue(elems(*range(5)), step())
    got = ints(q.dequeue(3, step()))
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue(None, step(0.15))          # 2 left = min_after_dequeue: wait
    q.close(False, step())
    got += ints(q.dequeue(2, step()))        # closed: the rest drains
    assert sorted(got) == list(range(5))


def test_random_shuffle_queue_seeded_order_is_reproducible():
    orders = []
    for _ in range(2):
        tf.reset_default_graph()
        q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]], seed=3)
        with tf.Session() as sess:
            sess.run(q.enqueue_many([list(range(20))]))
            orders.append(sess.run(q.dequeue_many(20)).tolist())
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == list(range(20)) and orders[0] != list(range(20))


def test_priority_queue_smallest_first_ties_in_insertion_order():
    q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[3, 1, 2, 1], ["c", "a", "b", "a2"]]))
        pri, val = sess.run(q.dequeue_many(4))
        assert pri.tolist() == [1, 1, 2, 3]
        assert val.tolist() == [b"a", b"a2", b"b", b"c"]


def test_padding_fifo_pads_to_longest():
    q = tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess:
        for v in ([1], [2, 3, 4], []):
            sess.run(q.enqueue([x]), {x: v})
        assert sess.run(q.dequeue_many(3)).tolist() == [[1, 0, 0], [2, 3, 4], [0, 0, 0]]


def test_type_and_shape_mismatch_errors():
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]])
    with pytest.raises(ValueError, match="Expected 2 tensors"):
        q.enqueue([1])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue([1, [1.0, 2.0, 3.0]])


def test_dequeue_output_can_be_fed_and_then_nothing_is_dequeued():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    x = q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        assert sess.run(x + 1, {x: 41}) == 42
        assert sess.run(q.size()) == 1


def test_private_queues_per_session_and_shared_on_a_server_resource_manager():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(q.enqueue(1))
        assert s1.run(q.size()) == 1
        assert s2.run(q.size()) == 0
