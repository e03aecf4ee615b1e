# parallel_iterations bounds how many iterations of a while loop are in flight.
# Each even iteration dequeues two items: its own and the next iteration's, so
# it can finish only if the next iteration runs beside it. With
# parallel_iterations=1 the step waits until its deadline; with 2 it ends.
# Also: how a queue reads its `shapes` argument.
from engine import tf


def loop(parallel):
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(10, tf.int32, shapes=[])      # [] is one shape: a scalar

        def body(i, acc):
            enq = q.enqueue(i)
            with tf.control_dependencies([enq]):
                got = tf.cond(tf.equal(i % 2, 0),
                              lambda: tf.reduce_sum(q.dequeue_many(2)),
                              lambda: tf.constant(0))
            return i + 1, acc + got
        _, total = tf.while_loop(lambda i, a: i < 6, body, [0, 0],
                                 parallel_iterations=parallel)
        with tf.Session() as s:
            try:
                print(parallel, "->", s.run(total, options=tf.RunOptions(timeout_in_ms=1000)))
                print("left in the queue:", s.run(q.size()))
            except tf.errors.DeadlineExceededError:
                # (What is left in the queue then depends on when the deadline
                # struck: before or after the dequeue had taken the first item.)
                print(parallel, "-> DeadlineExceededError: iteration 1 never started")


loop(1)
loop(2)

for shapes in ([], [2, 3], [[2], [3]], tf.TensorShape([4]), 5, [2, None]):
    dtypes = [tf.int32, tf.int32] if shapes == [[2], [3]] else tf.float32
    try:
        print(repr(shapes), [s.as_list() for s in tf.FIFOQueue(3, dtypes, shapes=shapes).shapes])
    except (TypeError, ValueError) as e:
        print(repr(shapes), type(e).__name__, e)
