# Five QueueRunner threads fill one RandomShuffleQueue; a Coordinator stops
# them. Each thread runs its own enqueue op; every value reaches the
# consumer exactly once, whatever the shuffle order.
from engine import tf

N = 60
counter = tf.train.range_input_producer(N, shuffle=False, num_epochs=1, capacity=N)
index = counter.dequeue()
q = tf.RandomShuffleQueue(capacity=20, min_after_dequeue=5, dtypes=[tf.int32, tf.int32],
                          shapes=[[], []], seed=7)
# five enqueue ops, each takes the next index and enqueues (i, i * i)
enqueues = [q.enqueue([index, index * index]) for _ in range(5)]
qr = tf.train.QueueRunner(q, enqueues)
tf.train.add_queue_runner(qr)
print("runner:", qr.name, len(qr.enqueue_ops), "enqueue ops")
print("collection:", len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)), "runners")
xs, ys = q.dequeue_up_to(7)

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    print("threads started:", len(threads))
    seen = []
    try:
        while True:
            a, b = sess.run([xs, ys])
            assert (a * a == b).all()
            seen.extend(a.tolist())
    except tf.errors.OutOfRangeError:
        print("queue closed by the last runner thread: OutOfRangeError")
    coord.request_stop()
    coord.join(threads)
    print("received:", len(seen), "distinct:", len(set(seen)), "all:", sorted(seen) == list(range(N)))
    print("shuffled:", seen != sorted(seen))
    print("queue closed:", sess.run(q.is_closed()))

# A failing enqueue op: the error goes to the coordinator and join re-raises it.
tf.reset_default_graph()
x = tf.placeholder(tf.float32, [])
q2 = tf.FIFOQueue(4, tf.float32)
qr2 = tf.train.QueueRunner(q2, [q2.enqueue(x)])
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = qr2.create_threads(sess, coord=coord, start=True)
    print("create_threads:", len(threads), "(one per enqueue op + one closer)")
    try:
        coord.join(threads, stop_grace_period_secs=5)
    except tf.errors.InvalidArgumentError as e:
        print("join re-raised InvalidArgumentError:", "must feed a value for placeholder" in e.message)
    print("should_stop:", coord.should_stop(), "joined:", coord.joined)

# Coordinator on its own.
coord = tf.train.Coordinator()
with coord.stop_on_exception():
    raise tf.errors.OutOfRangeError(None, None, "end of input")
print("OutOfRange is a clean stop:", coord.should_stop())
coord.join([])
coord.clear_stop()
with coord.stop_on_exception():
    raise ValueError("boom")
try:
    coord.join([])
except ValueError as e:
    print("re-raised:", e)
