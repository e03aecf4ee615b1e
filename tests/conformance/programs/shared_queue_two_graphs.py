# A queue with a shared_name lives on the server: one graph fills it, a
# different graph (another session) drains it. Without shared_name each
# session would get a queue of its own.
from engine import tf

server = tf.train.Server.create_local_server()

producer = tf.Graph()
with producer.as_default():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]], shared_name="jobs", name="jobs")
    fill = q.enqueue_many([[10, 20, 30]])
    close = q.close()
    size = q.size()
with tf.Session(server.target, graph=producer) as sess:
    sess.run(fill)
    print("producer sees size:", sess.run(size))

consumer = tf.Graph()
with consumer.as_default():
    q2 = tf.FIFOQueue(10, tf.int32, shapes=[[]], shared_name="jobs", name="jobs_view")
    take = q2.dequeue()
    take_many = q2.dequeue_up_to(5)
with tf.Session(server.target, graph=consumer) as sess:
    print("consumer dequeues:", sess.run(take))

with tf.Session(server.target, graph=producer) as sess:
    sess.run(close)
with tf.Session(server.target, graph=consumer) as sess:
    print("the rest after close:", sess.run(take_many))
    try:
        sess.run(take)
    except tf.errors.OutOfRangeError as e:
        print("then OutOfRangeError:", "is closed and has insufficient elements" in e.message)

private = tf.Graph()
with private.as_default():
    p = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    put = p.enqueue(1)
    psize = p.size()
with tf.Session(server.target, graph=private) as sess:
    sess.run(put)
    print("private queue, first session:", sess.run(psize))
with tf.Session(server.target, graph=private) as sess:
    print("private queue, second session:", sess.run(psize))
