# A dequeue that times out loses what it had already taken (TF's queue kernels
# move elements into the waiting dequeue; a cancelled one hands nothing back),
# while one that fails because the queue closed puts them back: FIFOQueue and
# RandomShuffleQueue (whose min_after_dequeue lets a waiting dequeue_many take
# some elements and then wait for the rest).
from engine import tf

sess = tf.Session()
quick = tf.RunOptions(timeout_in_ms=200)

fifo = tf.FIFOQueue(10, [tf.int32], shapes=[[]], name="fifo")
sess.run(fifo.enqueue_many([[1, 2, 3]]))
try:
    sess.run(fifo.dequeue_many(5), options=quick)
except tf.errors.DeadlineExceededError as e:
    print("fifo dequeue_many(5) with 3 in:", type(e).__name__)
print("fifo size after the timeout:", sess.run(fifo.size()))
sess.run(fifo.enqueue_many([[4, 5]]))
sess.run(fifo.close())
try:
    sess.run(fifo.dequeue_many(3))
except tf.errors.OutOfRangeError as e:
    print("closed, dequeue_many(3) with 2 in:", type(e).__name__)
print("closed: what is left:", sess.run(fifo.dequeue_up_to(10)).tolist())

shuffle = tf.RandomShuffleQueue(20, 5, [tf.int32], shapes=[[]], seed=7, name="shuffle")
sess.run(shuffle.enqueue_many([list(range(12))]))
print("first 6:", sorted(sess.run(shuffle.dequeue_many(6)).tolist()))
try:
    sess.run(shuffle.dequeue_many(2), options=quick)
except tf.errors.DeadlineExceededError as e:
    print("shuffle dequeue_many(2) with 6 in, min_after_dequeue 5:", type(e).__name__)
print("shuffle size after the timeout:", sess.run(shuffle.size()))
sess.run(shuffle.close())
print("closed: how many are left:", len(sess.run(shuffle.dequeue_up_to(10))))

config = tf.ConfigProto(operation_timeout_in_ms=200)
with tf.Session(config=config) as s:
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]], name="with_config")
    s.run(q.enqueue_many([[7, 8]]))
    try:
        s.run(q.dequeue_many(3))
    except tf.errors.DeadlineExceededError as e:
        print("operation_timeout_in_ms:", type(e).__name__, "size after:", s.run(q.size()))
