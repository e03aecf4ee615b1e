# What a closed queue does: enqueues fail (CancelledError), what is left can
# still be dequeued, then OutOfRangeError; dequeue_up_to returns the rest;
# closing twice is an error; cancel_pending_enqueues fails blocked enqueues.
from engine import tf


def msg(e):
    """The error's own text: TF prefixes "Graph execution error" and the node."""
    return [l for l in e.message.split("\n") if l and not l.startswith(("\t", " "))][-1]

q = tf.FIFOQueue(3, tf.int32, shapes=[[]], name="q")
enq = q.enqueue_many([[1, 2]])
one = q.enqueue(9)
deq = q.dequeue()
many = q.dequeue_many(2)
up_to = q.dequeue_up_to(5)
close = q.close()
cancel = q.close(cancel_pending_enqueues=True)
with tf.Session() as sess:
    sess.run(enq)
    sess.run(close)
    print("is_closed:", sess.run(q.is_closed()), "size:", sess.run(q.size()))
    try:
        sess.run(one)
    except tf.errors.CancelledError as e:
        print("CancelledError:", msg(e))
    try:
        sess.run(close)
    except tf.errors.CancelledError as e:
        print("close twice: CancelledError:", "is already closed" in e.message)
    try:
        print("dequeue_many(2) with 2 left:", sess.run(many))
        sess.run(deq)
    except tf.errors.OutOfRangeError as e:
        print("OutOfRangeError:", msg(e))

with tf.Session() as sess:
    sess.run(enq)
    sess.run(close)
    print("dequeue_up_to(5) after close:", sess.run(up_to))
    try:
        sess.run(up_to)
    except tf.errors.OutOfRangeError as e:
        print("then OutOfRangeError:", "requested 5, current size 0" in e.message)

# An enqueue blocked on a full queue is cancelled by close(cancel_pending_enqueues=True).
import threading
with tf.Session() as sess:
    sess.run(q.enqueue_many([[1, 2, 3]]))
    result = []

    def blocked():
        try:
            sess.run(one)
            result.append("enqueued")
        except tf.errors.CancelledError as e:
            result.append("CancelledError")

    t = threading.Thread(target=blocked)
    t.start()
    t.join(0.5)
    print("blocked enqueue still waiting:", t.is_alive())
    sess.run(cancel)
    t.join(10)
    print("after cancel:", result)
    print("the 3 queued elements drain:", sess.run(q.dequeue_up_to(10)))
