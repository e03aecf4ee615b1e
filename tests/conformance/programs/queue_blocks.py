# Blocks of rows through every kind of queue. An enqueue_many's rows come out
# in order with their values, whatever the dtype, when they are taken in parts
# (dequeue_many, dequeue, dequeue_up_to) and across blocks; a seeded
# RandomShuffleQueue's order over several blocks and partial takes, also when
# a waiting dequeue_many takes each block as it comes; a PriorityQueue across
# blocks; a PaddingFIFOQueue batch spanning blocks of different lengths; an
# enqueue_many bigger than the room left, finished while a consumer takes
# rows; two threads' enqueue_many blocks each stay whole; a dequeue that times
# out loses what it took; queues without shapes; a variable enqueued with
# enqueue (kept as it is: read when dequeued) and with enqueue_many (copied).
import threading
import time

import numpy as np

from engine import tf


def show(value):
    value = np.asarray(value)
    return "%s %s" % (value.dtype, value.tolist())


def dtypes_in_parts():
    for dt in (tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.int8, tf.int16,
               tf.bool, tf.float16, tf.string):
        with tf.Graph().as_default():
            q = tf.FIFOQueue(20, [dt, tf.int32], shapes=[[2], []])
            if dt == tf.string:
                rows = [[b"r%d" % i, b"s\x00%d" % i] for i in range(10)]
            elif dt == tf.bool:
                rows = [[i % 2 == 0, i % 3 == 0] for i in range(10)]
            else:
                rows = [[i * 1.5 if dt.is_floating else i, -i if dt != tf.uint8 else 200 + i]
                        for i in range(10)]
            a = tf.constant(rows[:4], dt)
            b = tf.constant(rows[4:], dt)
            with tf.Session() as sess:
                sess.run(q.enqueue_many([a, tf.range(4)]))
                sess.run(q.enqueue_many([b, tf.range(4, 10)]))
                first, ids = sess.run(q.dequeue_many(3))
                print(dt.name, "dequeue_many(3):", show(first), ids.tolist())
                one, i = sess.run(q.dequeue())
                print("  dequeue():", show(one), i)
                across, ids = sess.run(q.dequeue_many(4))
                print("  dequeue_many(4) across two blocks:", show(across), ids.tolist())
                sess.run(q.close())
                rest, ids = sess.run(q.dequeue_up_to(10))
                print("  closed, dequeue_up_to(10):", show(rest), ids.tolist())


def shuffle_blocks():
    with tf.Graph().as_default():
        q = tf.RandomShuffleQueue(30, 4, [tf.int32, tf.string], shapes=[[], [2]], seed=5)
        ids = tf.placeholder(tf.int32, [None])
        names = tf.placeholder(tf.string, [None, 2])
        put = q.enqueue_many([ids, names])
        take = q.dequeue_many(5)
        with tf.Session() as sess:
            for start in (0, 6, 12):
                sess.run(put, {ids: list(range(start, start + 6)),
                               names: [["n%d" % i, "m%d" % i] for i in range(start, start + 6)]})
            i, n = sess.run(take)
            print("RandomShuffleQueue dequeue_many(5):", i.tolist(), n[:, 0].tolist())
            i, n = sess.run(q.dequeue())
            print("  dequeue():", i, n.tolist())
            i, n = sess.run(q.dequeue_up_to(3))
            print("  dequeue_up_to(3):", i.tolist(), n[:, 1].tolist())
            sess.run(put, {ids: [100, 101], names: [["x", "y"], ["z", "w"]]})
            i, n = sess.run(q.dequeue_many(6))
            print("  dequeue_many(6):", i.tolist(), n[:, 0].tolist())
            sess.run(q.close())
            try:
                sess.run(q.dequeue_many(20))
            except tf.errors.OutOfRangeError as e:
                print("  closed, dequeue_many(20):", type(e).__name__)
            i, n = sess.run(q.dequeue_up_to(20))
            print("  closed, dequeue_up_to(20):", i.tolist(), n[:, 1].tolist())


def shuffle_waiting_dequeue():
    with tf.Graph().as_default():
        q = tf.RandomShuffleQueue(30, 0, [tf.int32], shapes=[[]], seed=9)
        x = tf.placeholder(tf.int32, [None])
        put = q.enqueue_many([x])
        take = q.dequeue_many(7)
        with tf.Session() as sess:
            out = []
            t = threading.Thread(target=lambda: out.append(sess.run(take).tolist()))
            t.start()
            for block in ([0, 1, 2], [10, 11, 12, 13], [20, 21]):
                time.sleep(0.3)
                sess.run(put, {x: block})
            t.join(10)
            print("a waiting dequeue_many(7) takes each block as it comes:", out)
            print("  left:", sess.run(q.size()))


def priority_blocks():
    with tf.Graph().as_default():
        q = tf.PriorityQueue(20, [tf.string, tf.float32], shapes=[[], [2]])
        p = tf.placeholder(tf.int64, [None])
        s = tf.placeholder(tf.string, [None])
        v = tf.placeholder(tf.float32, [None, 2])
        put = q.enqueue_many([p, s, v])
        with tf.Session() as sess:
            for prios in ([5, 1, 9, 3], [4, 8, 0, 2, 7]):
                sess.run(put, {p: prios, s: ["p%d" % i for i in prios],
                               v: [[i, -i] for i in prios]})
            pr, st, va = sess.run(q.dequeue_many(3))
            print("PriorityQueue dequeue_many(3):", pr.tolist(), st.tolist(), va.tolist())
            pr, st, va = sess.run(q.dequeue())
            print("  dequeue():", pr, st, va.tolist())
            sess.run(put, {p: [6, -1], s: ["p6", "p-1"], v: [[6, -6], [-1, 1]]})
            out = []
            nine = q.dequeue_many(9)
            t = threading.Thread(target=lambda: out.append(sess.run(nine)))
            t.start()
            time.sleep(0.3)     # 7 queued: TF's PriorityQueue takes none until there are 9
            print("  a waiting dequeue_many(9) with 7 in: size", sess.run(q.size()))
            sess.run(put, {p: [-5, 50], s: ["p-5", "p50"], v: [[0, 0], [1, 1]]})
            t.join(10)
            print("  then 2 more: it gets", out[0][0].tolist(), out[0][1].tolist())
            sess.run(put, {p: [3, 2, 1], s: ["a", "b", "c"], v: np.zeros([3, 2])})
            sess.run(q.close())
            for take in (q.dequeue_many(5), q.dequeue_up_to(5), q.dequeue_up_to(1)):
                try:
                    pr, st, va = sess.run(take)
                    print("  closed,", take[0].op.type, "->", pr.tolist(), st.tolist())
                except tf.errors.OutOfRangeError as e:
                    print("  closed,", take[0].op.type, "->", type(e).__name__,
                          e.message.split("insufficient elements ")[1].split(")")[0] + ")",
                          "size after:", sess.run(q.size()))


def padding_blocks():
    with tf.Graph().as_default():
        q = tf.PaddingFIFOQueue(20, [tf.int32, tf.string], shapes=[[None], [None]])
        a = tf.placeholder(tf.int32, [None, None])
        b = tf.placeholder(tf.string, [None, None])
        put_many = q.enqueue_many([a, b])
        x = tf.placeholder(tf.int32, [None])
        y = tf.placeholder(tf.string, [None])
        put_one = q.enqueue([x, y])
        with tf.Session() as sess:
            sess.run(put_many, {a: [[1, 2, 3], [4, 5, 6]], b: [["a"], ["b"]]})
            sess.run(put_one, {x: [7], y: ["c", "d", "e"]})
            sess.run(put_many, {a: [[8], [9], [10]], b: [["f", "g"], ["h", "i"], ["j", "k"]]})
            n, s = sess.run(q.dequeue_many(1))
            print("PaddingFIFOQueue dequeue_many(1):", n.tolist(), s.tolist())
            n, s = sess.run(q.dequeue_many(3))
            print("  dequeue_many(3) across three blocks:", n.tolist(), s.tolist())
            n, s = sess.run(q.dequeue())
            print("  dequeue():", n.tolist(), s.tolist())
            sess.run(q.close())
            n, s = sess.run(q.dequeue_up_to(5))
            print("  closed, dequeue_up_to(5):", n.tolist(), s.tolist())


def capacity_and_threads():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
        x = tf.placeholder(tf.int32, [None])
        put = q.enqueue_many([x])
        take = q.dequeue()
        with tf.Session() as sess:
            t = threading.Thread(target=lambda: sess.run(put, {x: list(range(10))}))
            t.start()
            got = [int(sess.run(take)) for _ in range(10)]
            t.join(10)
            print("enqueue_many(10) into capacity 4, dequeued one by one:", got)
            threads = [threading.Thread(target=lambda base=base: sess.run(
                put, {x: list(range(base, base + 12))})) for base in (100, 200)]
            for t in threads:
                t.start()
            got = [int(sess.run(take)) for _ in range(24)]
            for t in threads:
                t.join(10)
            runs = [v // 100 for i, v in enumerate(got) if i == 0 or v // 100 != got[i - 1] // 100]
            print("two threads' blocks of 12 through capacity 4: each whole:", len(runs) == 2,
                  "each in order:", sorted(got) == sorted(set(got)) and all(
                      got[i] < got[i + 1] for i in range(23) if got[i] // 100 == got[i + 1] // 100))


def timeouts():
    quick = tf.RunOptions(timeout_in_ms=200)
    with tf.Graph().as_default():
        q = tf.RandomShuffleQueue(20, 2, [tf.int32], shapes=[[]], seed=3)
        with tf.Session() as sess:
            sess.run(q.enqueue_many([[1, 2, 3, 4, 5]]))
            try:
                sess.run(q.dequeue_many(6), options=quick)
            except tf.errors.DeadlineExceededError as e:
                print("RandomShuffleQueue dequeue_many(6) with 5 in, min_after_dequeue 2:",
                      type(e).__name__)
            print("  size after:", sess.run(q.size()))
            sess.run(q.close())
            print("  closed, what is left:", sess.run(q.dequeue_up_to(10)).tolist())
    with tf.Graph().as_default():
        q = tf.PriorityQueue(20, [tf.int32], shapes=[[]])
        with tf.Session() as sess:
            sess.run(q.enqueue_many([[3, 1, 2], [30, 10, 20]]))
            try:
                sess.run(q.dequeue_many(4), options=quick)
            except tf.errors.DeadlineExceededError as e:
                print("PriorityQueue dequeue_many(4) with 3 in:", type(e).__name__,
                      "size after:", sess.run(q.size()))


def without_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, None)
        queues = [tf.FIFOQueue(10, tf.int32), tf.RandomShuffleQueue(10, 0, tf.int32, seed=2)]
        try:
            tf.PriorityQueue(10, [tf.int32], shapes=None)
        except TypeError as e:
            print("PriorityQueue without shapes:", type(e).__name__, e)
        with tf.Session() as sess:
            for q in queues:
                sess.run(q.enqueue(x), {x: [1, 2, 3]})
                sess.run(q.enqueue_many([x]), {x: [[4, 5], [6, 7]]})
                sess.run(q.enqueue(x), {x: 8})
                got = [np.asarray(sess.run(q.dequeue())).tolist() for _ in range(4)]
                print(type(q).__name__, "without shapes:", got)
                try:
                    sess.run(q.dequeue_many(1))
                except tf.errors.InvalidArgumentError as e:
                    print("  dequeue_many:", type(e).__name__)


def a_variable_enqueued():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        fifo = tf.FIFOQueue(5, tf.float32, shapes=[[2]])
        shuffle = tf.RandomShuffleQueue(5, 0, tf.float32, shapes=[[2]], seed=1)
        puts = [fifo.enqueue(v), fifo.enqueue_many([tf.expand_dims(v, 0)]), shuffle.enqueue(v)]
        add = tf.assign_add(v, [10.0, 10.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            for put in puts:
                sess.run(put)
            sess.run(add)
            print("a variable enqueued, then changed in place: enqueue ->",
                  sess.run(fifo.dequeue()).tolist(), "enqueue_many ->",
                  sess.run(fifo.dequeue()).tolist(), "RandomShuffleQueue enqueue ->",
                  sess.run(shuffle.dequeue_many(1)).tolist())


dtypes_in_parts()
shuffle_blocks()
shuffle_waiting_dequeue()
priority_blocks()
padding_blocks()
capacity_and_threads()
timeouts()
without_shapes()
a_variable_enqueued()
