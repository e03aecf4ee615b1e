"""Queues move blocks of rows (minitf/ops/queue_stores.py): an enqueue_many is
one block, a dequeue_many gets one back. Each test checks what comes out
(order, values, dtypes, sizes) against a plain-Python model of TF's rule, or
against what TF guarantees (an enqueue_many's rows stay together)."""
import random
import threading
import time

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.tensor_shape import TensorShape
from minitf.kernels import registry
from minitf.kernels.random_streams import PhiloxWords, ShuffleQueuePicker
from minitf.ops import queues
from minitf.runtime.step import StepState


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def step(timeout=None):
    return StepState(None if timeout is None else time.monotonic() + timeout)


def _values(dtype, n, start=0):
    """``n`` rows of width 2 of ``dtype``, row ``i`` telling ``start + i`` apart."""
    i = np.arange(start, start + n)
    if dtype == tf.string:
        return np.array([[b"r%d" % j, b"\x00%d" % j] for j in i], dtype=object)
    if dtype == tf.bool:
        return np.stack([i % 2 == 0, i % 3 == 0], axis=1)
    return np.stack([i, -i], axis=1).astype(dtype.as_numpy_dtype)


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8,
          tf.bool, tf.string]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", ["fifo", "padding"])
def test_blocks_dequeued_in_parts_keep_order_and_values(kind, dtype):
    if kind == "fifo":
        q = tf.FIFOQueue(50, [dtype, tf.int32], shapes=[[2], []])
    else:
        q = tf.PaddingFIFOQueue(50, [dtype, tf.int32], shapes=[[None], []])
    rows = tf.placeholder(dtype, [None, 2])
    ids = tf.placeholder(tf.int32, [None])
    put = q.enqueue_many([rows, ids])
    want = _values(dtype, 17)
    got, got_ids = [], []
    with tf.Session() as sess:
        for a, b in ((0, 5), (5, 6), (6, 17)):       # three blocks, one of a single row
            sess.run(put, {rows: want[a:b], ids: np.arange(a, b)})
        for take in (q.dequeue_many(3), q.dequeue_many(4), q.dequeue(), q.dequeue_many(8)):
            r, i = sess.run(take)
            r = np.asarray(r).reshape(-1, 2)
            assert r.dtype == want.dtype
            got.append(r)
            got_ids += np.atleast_1d(i).tolist()
        sess.run(q.close())
        r, i = sess.run(q.dequeue_up_to(10))
        got.append(r)
        got_ids += i.tolist()
    assert got_ids == list(range(17))
    assert np.concatenate(got).tolist() == want.tolist()


def _shuffle_model(words, script):
    """TF's RandomShuffleQueue in plain Python: take ``words() % size``, fill
    the hole with the last element."""
    items, out = [], []
    for op, arg in script:
        if op == "put":
            items.extend(arg)
        else:
            for _ in range(arg):
                i = words() % len(items)
                items[i], items[-1] = items[-1], items[i]
                out.append(items.pop())
    return out


def _script(seed, total=3000):
    rng = random.Random(seed)
    script, queued, next_id = [], 0, 0
    while next_id < total:
        n = rng.choice((1, 2, 7, 40, 300))
        script.append(("put", list(range(next_id, next_id + n))))
        next_id += n
        queued += n
        while queued and rng.random() < 0.6:
            k = rng.randint(1, queued)
            script.append(("take", k))
            queued -= k
    script.append(("take", queued))
    return script


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_random_shuffle_queue_blocks_follow_tfs_rule(backend):
    # Blocks of every size, takes of every size, the slot storage growing and
    # reusing slots: the order is TF's (the model), ids and strings together.
    script = _script(seed=3)
    picker = registry.backend(backend).shuffle_queue_picker(11, 12)
    q = queues.RandomShuffleQueue("q", -1, [tf.int64, tf.string],
                                  [TensorShape([]), TensorShape([2])], picker=picker)
    got = []
    for op, arg in script:
        if op == "put":
            ids = np.array(arg, np.int64)
            names = np.array([[b"n%d" % i, b"m%d" % i] for i in arg], dtype=object)
            q.enqueue((ids, names), step())
        else:
            ids, names = q.dequeue(arg, step())
            assert names[:, 0].tolist() == [b"n%d" % i for i in ids]
            got += ids.tolist()
    assert got == _shuffle_model(PhiloxWords(11, 12), script)
    assert q.size() == 0 and q.summary()["dequeued"] == len(got) >= 3000


def test_random_shuffle_queue_single_elements_and_blocks_mix():
    q = queues.RandomShuffleQueue("q", 100, [tf.int32], [], picker=ShuffleQueuePicker(4, 5))
    for v in range(3):
        q.enqueue((np.array([v], np.int32),), step(), owned=False)
    q.enqueue((np.arange(3, 9, dtype=np.int32),), step())
    got = [int(q.dequeue(None, step())[0]) for _ in range(9)]
    assert got == _shuffle_model(PhiloxWords(4, 5), [("put", list(range(9))), ("take", 9)])


def test_priority_queue_orders_blocks_by_priority_then_arrival():
    rng = np.random.RandomState(0)
    q = queues.PriorityQueue("q", -1, [tf.int64, tf.float32],
                             [TensorShape([]), TensorShape([3])])
    arrived, got = [], []
    for block in range(30):
        n = int(rng.randint(1, 50))
        pri = rng.randint(0, 8, n).astype(np.int64)           # many ties
        ids = np.arange(len(arrived), len(arrived) + n)
        q.enqueue((pri, np.repeat(ids[:, None], 3, axis=1).astype(np.float32)), step())
        arrived += list(zip(pri.tolist(), ids.tolist()))
        if block % 3 == 2:
            k = int(rng.randint(1, q.size() + 1))
            p, v = q.dequeue(k, step())
            got += list(zip(p.tolist(), v[:, 0].astype(int).tolist()))
            left = sorted(arrived, key=lambda e: e[0])       # stable: arrival order
            assert got[-k:] == left[:k]
            arrived = left[k:]
    assert q.size() == len(arrived)


def test_priority_queue_put_back_goes_before_its_priority():
    # What a failed dequeue (other than a timeout) does with what it took:
    # back in front of every queued element of the same priority, in order.
    q = queues.PriorityQueue("q", -1, [tf.int64, tf.int32], [TensorShape([])] * 2)
    q.enqueue((np.array([1, 1, 2, 2], np.int64), np.arange(4, dtype=np.int32)), step())
    store = q._store
    with q.cond:
        taken = [store.take(1), store.take(2)]           # ids 0, 1, 2
        store.put(((np.array([1, 2], np.int64)), np.array([10, 20], np.int32)), 0, 2, True)
        store.put_back(taken)
    p, v = q.dequeue(6, step())
    assert list(zip(p.tolist(), v.tolist())) == [(1, 0), (1, 1), (1, 10), (2, 2), (2, 3),
                                                 (2, 20)]


def test_priority_dequeue_many_waits_for_the_whole_batch_as_tf():
    q = queues.PriorityQueue("q", 10, [tf.int64, tf.int32], [TensorShape([])] * 2)
    q.enqueue((np.array([5, 3], np.int64), np.array([50, 30], np.int32)), step())
    out = []
    t = threading.Thread(target=lambda: out.append(q.dequeue(3, step(5))))
    t.start()
    time.sleep(0.2)
    assert q.size() == 2 and not out       # TF takes none until all 3 are there
    q.enqueue((np.array([4], np.int64), np.array([40], np.int32)), step())
    t.join(5)
    assert out[0][0].tolist() == [3, 4, 5] and out[0][1].tolist() == [30, 40, 50]
    q.enqueue((np.array([2], np.int64), np.array([20], np.int32)), step())
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue(2, step(0.1))
    assert q.size() == 1 and q.summary()["dropped"] == 0     # a timeout lost nothing
    q.close(False, step())
    with pytest.raises(errors.OutOfRangeError, match=r"requested 2, current size 1"):
        q.dequeue(2, step())
    assert q.size() == 1
    # TF's dequeue_up_to on a closed PriorityQueue with fewer left takes them, then fails.
    with pytest.raises(errors.OutOfRangeError, match=r"requested 1, current size 0"):
        q.dequeue(2, step(), allow_smaller=True)
    assert q.size() == 0 and q.summary()["dropped"] == 1


def test_enqueue_many_blocks_from_two_threads_stay_whole():
    # Each enqueue_many is one attempt in TF's line of enqueues: through a
    # queue of capacity 3 it waits for room part way, and no other block's
    # rows get between its rows.
    q = queues.QueueResource("q", 3, [tf.int32], [TensorShape([])])
    blocks = [np.arange(base, base + 40, dtype=np.int32) for base in (1000, 2000, 3000)]
    threads = [threading.Thread(target=q.enqueue, args=((b,), step(10))) for b in blocks]
    for t in threads:
        t.start()
    got = []
    while len(got) < 120:
        k = min(int(np.random.randint(1, 4)), 120 - len(got))
        got += q.dequeue(k, step(10))[0].tolist()
    for t in threads:
        t.join(10)
    runs = [got[i:i + 40] for i in range(0, 120, 40)]
    assert sorted(runs) == [b.tolist() for b in blocks]


def test_enqueue_many_waits_for_room_and_keeps_what_it_put_on_timeout():
    q = queues.QueueResource("q", 4, [tf.int32], [TensorShape([])])
    with pytest.raises(errors.DeadlineExceededError):
        q.enqueue((np.arange(10, dtype=np.int32),), step(0.1))
    assert q.size() == 4 and q.summary()["enqueued"] == 4   # as TF: the first 4 stay
    assert q.dequeue(4, step())[0].tolist() == [0, 1, 2, 3]


def test_random_shuffle_queue_timeout_frees_what_it_dropped():
    q = queues.RandomShuffleQueue("q", 10, [tf.int32], [TensorShape([])], min_after_dequeue=2,
                                  picker=ShuffleQueuePicker(1, 1))
    q.enqueue((np.arange(5, dtype=np.int32),), step())
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue(6, step(0.1))               # takes 3, waits, drops them
    assert q.size() == 2 and q.summary()["dropped"] == 3
    q.enqueue((np.arange(10, 18, dtype=np.int32),), step())
    q.close(False, step())
    left = q.dequeue(10, step())[0].tolist()
    model = _shuffle_model(PhiloxWords(1, 1), [("put", list(range(5))), ("take", 3),
                                               ("put", list(range(10, 18))), ("take", 10)])
    assert left == model[3:]


def test_a_dequeued_batch_is_the_callers_and_a_fed_block_is_copied():
    q = tf.FIFOQueue(20, tf.float32, shapes=[[2]])
    x = tf.placeholder(tf.float32, [None, 2])
    put, take = q.enqueue_many([x]), q.dequeue_many(3)
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Session() as sess:
        sess.run(put, {x: data})
        data[:] = -1                          # the caller's array: the queue copied it
        first = sess.run(take)
        first[:] = 99                         # the caller may write into its batch
        assert sess.run(take).tolist() == [[6, 7], [8, 9], [10, 11]]
        assert first.tolist() == [[99, 99]] * 3


def test_a_plain_enqueue_keeps_the_tensor_and_enqueue_many_copies_it_as_tf():
    # TF 2.21 (conformance program queue_blocks): a variable enqueued with
    # enqueue() and then changed in place comes out changed; enqueue_many copies.
    v = tf.Variable([1.0, 2.0])
    fifo = tf.FIFOQueue(5, tf.float32, shapes=[[2]])
    prio = tf.PriorityQueue(5, [tf.float32], shapes=[[2]])
    puts = [fifo.enqueue(v), fifo.enqueue_many([tf.expand_dims(v, 0)]),
            prio.enqueue((tf.constant(1, tf.int64), v))]
    add = tf.assign_add(v, [10.0, 10.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        for p in puts:
            sess.run(p)
        sess.run(add)
        assert sess.run(fifo.dequeue()).tolist() == [11, 12]
        assert sess.run(fifo.dequeue()).tolist() == [1, 2]
        assert sess.run(prio.dequeue_many(1))[1].tolist() == [[11, 12]]
        got = sess.run(fifo.dequeue_many(0))
        assert got.shape == (0, 2)


def test_queues_without_shapes_keep_each_elements_shape():
    x = tf.placeholder(tf.int32, None)
    for q in (tf.FIFOQueue(10, tf.int32),
              tf.RandomShuffleQueue(10, 0, tf.int32, seed=2)):
        with tf.Session() as sess:
            sess.run(q.enqueue(x), {x: [1, 2, 3]})
            sess.run(q.enqueue_many([x]), {x: [[4, 5], [6, 7]]})
            sess.run(q.enqueue(x), {x: 8})
            got = sorted(np.asarray(sess.run(q.dequeue())).tolist().__repr__()
                         for _ in range(4))
            assert got == ["8", "[1, 2, 3]", "[4, 5]", "[6, 7]"]


def test_padding_queue_pads_strings_across_blocks():
    q = queues.PaddingFIFOQueue("q", 10, [tf.string], [TensorShape([None])])
    q.enqueue((np.array([[b"a", b"b"]], dtype=object),), step())
    q.enqueue((np.array([[b"c"], [b"d"]], dtype=object),), step())
    out = q.dequeue(3, step())[0]
    assert out.dtype == object and out.tolist() == [[b"a", b"b"], [b"c", b""], [b"d", b""]]


def test_sizes_and_bytes_for_widgets():
    q = queues.RandomShuffleQueue("q", 100, [tf.float32], [TensorShape([4])],
                                  picker=ShuffleQueuePicker(1, 2))
    q.enqueue((np.zeros((10, 4), np.float32),), step())
    q.dequeue(3, step())
    assert q.size() == 7 and q.nbytes() == 7 * 16
    f = queues.QueueResource("f", 100, [_dtypes.int64], [TensorShape([])])
    f.enqueue((np.arange(10),), step())
    f.dequeue(4, step())
    assert f.nbytes() == 6 * 8
    s = f.summary()
    assert (s["size"], s["enqueued"], s["dequeued"]) == (6, 10, 4)
