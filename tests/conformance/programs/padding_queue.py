# PaddingFIFOQueue: dequeue_many zero-pads each component to the longest
# element of the batch; dynamic_pad=True in tf.train.batch uses one.
from engine import tf

q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None], [None, 2]])
x = tf.placeholder(tf.int32, [None])
s = tf.placeholder(tf.string, [None, 2])
enq = q.enqueue([x, s])
a, b = q.dequeue_many(3)
print("static shapes:", a.shape, b.shape)
with tf.Session() as sess:
    sess.run(enq, {x: [1], s: [["a", "b"]]})
    sess.run(enq, {x: [1, 2, 3], s: [["c", "d"], ["e", "f"], ["g", "h"]]})
    sess.run(enq, {x: [], s: [["i", "j"], ["k", "l"]]})
    va, vb = sess.run([a, b])
    print(va.tolist())
    print(vb.tolist())
    try:
        sess.run(enq, {x: [[1]], s: [["a", "b"]]})
    except ValueError as e:
        print("ValueError:", "Cannot feed value of shape" in str(e))

tf.reset_default_graph()
seq = tf.placeholder(tf.int32, [None])
length = tf.placeholder(tf.int32, [])
example_queue = tf.PaddingFIFOQueue(10, [tf.int32, tf.int32], shapes=[[None], []])
put = example_queue.enqueue([seq, length])
one_seq, one_len = example_queue.dequeue()
batch_seq, batch_len = tf.train.batch([one_seq, one_len], batch_size=2, dynamic_pad=True)
print("batch static shape:", batch_seq.shape, batch_len.shape)
with tf.Session() as sess:
    for v in ([5, 6], [7], [8, 9, 10, 11], [12]):
        sess.run(put, {seq: v, length: len(v)})
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    for _ in range(2):
        bs, bl = sess.run([batch_seq, batch_len])
        print("dynamic_pad batch:", bs.tolist(), bl.tolist())
    coord.request_stop()
    sess.run(example_queue.close(cancel_pending_enqueues=True))
    coord.join(threads)
