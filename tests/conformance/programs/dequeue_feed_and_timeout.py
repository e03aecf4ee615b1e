# A dequeue's output can be fed (then the dequeue does not run at all), and
# a dequeue on an empty queue times out under operation_timeout_in_ms or
# RunOptions.timeout_in_ms with DeadlineExceededError. The session stays
# usable and no element is lost or duplicated.
from engine import tf

q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
x = q.dequeue()
y = x * 2.0
enq = q.enqueue_many([[1.0, 2.0, 3.0]])
size = q.size()

config = tf.ConfigProto(operation_timeout_in_ms=300)
with tf.Session() as warm:  # first runs may compile kernels: not part of the lesson
    warm.run(y, feed_dict={x: 1.0})
with tf.Session(config=config) as sess:
    print("fed dequeue:", sess.run(y, feed_dict={x: 21.0}), "queue size:", sess.run(size))
    try:
        sess.run(y)
    except tf.errors.DeadlineExceededError:
        print("empty queue: DeadlineExceededError")
    sess.run(enq)
    print("session still usable:", sess.run(y), "size:", sess.run(size))
    print("nothing lost:", sess.run(q.dequeue_many(2)))

with tf.Session() as sess:
    try:
        sess.run(x, options=tf.RunOptions(timeout_in_ms=200))
    except tf.errors.DeadlineExceededError:
        print("RunOptions.timeout_in_ms: DeadlineExceededError")
    sess.run(enq)
    print("then:", sess.run(x))

# A full queue: the enqueue times out too.
small = tf.FIFOQueue(1, tf.int32, shapes=[[]])
put = small.enqueue(5)
with tf.Session(config=config) as sess:
    sess.run(put)
    try:
        sess.run(put)
    except tf.errors.DeadlineExceededError:
        print("full queue: DeadlineExceededError")
    print("size:", sess.run(small.size()), "value:", sess.run(small.dequeue()))

# On a server, the same.
server = tf.train.Server.create_local_server()
with tf.Session(server.target, config=config) as sess:
    try:
        sess.run(x)
    except tf.errors.DeadlineExceededError:
        print("remote: DeadlineExceededError")
    sess.run(enq)
    print("remote then:", sess.run(x), sess.run(size))
