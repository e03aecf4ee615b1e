# Shuffled input in TF's order: RandomShuffleQueue, shuffle_batch(_join), the
# input producers' shuffle=True and tf.data's shuffle, seeded by a graph seed
# or by op seeds. Every pipeline below is deterministic in TF too: each
# queue is filled by one enqueue (or one runner) before its dequeues, with
# min_after_dequeue chosen so that no dequeue waits for a close.
import numpy as np

from engine import tf


def run_queue():
    with tf.Graph().as_default():
        q = tf.RandomShuffleQueue(50, 5, [tf.int32], shapes=[[]], seed=4)
        enqueue = q.enqueue_many([tf.range(20)])
        with tf.Session() as sess:
            sess.run(enqueue)
            print("RandomShuffleQueue dequeue_many(6):", sess.run(q.dequeue_many(6)).tolist())
            print("  dequeue():", sess.run(q.dequeue()))
            print("  dequeue_many(6):", sess.run(q.dequeue_many(6)).tolist())
            sess.run(q.close())
            print("  closed, dequeue_up_to(30):", sess.run(q.dequeue_up_to(30)).tolist())
        with tf.Session() as sess:
            sess.run(enqueue)
            print("  a new session's queue:", sess.run(q.dequeue_many(10)).tolist())
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        tf.random_uniform([1])
        shared = tf.RandomShuffleQueue(50, 0, [tf.int32], shapes=[[]], shared_name="shared_q")
        plain = tf.RandomShuffleQueue(50, 0, [tf.int32], shapes=[[]])
        for q in (shared, plain):
            print("queue seeds:", q.queue_ref.op.get_attr("seed"),
                  q.queue_ref.op.get_attr("seed2"))
        with tf.Session() as sess:
            for q in (shared, plain):
                sess.run(q.enqueue_many([tf.range(10)]))
                print("  order:", sess.run(q.dequeue_many(10)).tolist())


def drain(batch, runs):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        out = []
        try:
            for _ in range(runs):
                out.append(np.asarray(sess.run(batch)).tolist())
        except tf.errors.OutOfRangeError:
            out.append("OutOfRange")
        coord.request_stop()
        coord.join(threads)
    return out


def run_batching(graph_seed, op_seed):
    label = "graph seed %s, op seed %s" % (graph_seed, op_seed)
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        rows = tf.train.limit_epochs(tf.reshape(tf.range(40), [20, 2]), num_epochs=1)
        batch = tf.train.shuffle_batch([rows], 4, capacity=30, min_after_dequeue=4,
                                       enqueue_many=True, seed=op_seed)
        print("shuffle_batch (%s):" % label, drain(batch, 6))
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        rows = tf.train.limit_epochs(tf.range(12), num_epochs=1)
        batch = tf.train.shuffle_batch_join([[rows]], 3, capacity=20, min_after_dequeue=3,
                                            enqueue_many=True, seed=op_seed)
        print("shuffle_batch_join (%s):" % label, drain(batch, 5))
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        names = tf.train.string_input_producer(["a", "b", "c", "d", "e"], num_epochs=3,
                                               seed=op_seed)
        print("string_input_producer (%s):" % label,
              [b.decode() if isinstance(b, bytes) else b for b in drain(names.dequeue(), 16)])
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        index = tf.train.range_input_producer(6, num_epochs=2, seed=op_seed).dequeue()
        print("range_input_producer (%s):" % label, drain(index, 13))
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        x, y = tf.train.slice_input_producer([tf.range(5), tf.range(5) * 10], num_epochs=1,
                                             seed=op_seed)
        print("slice_input_producer (%s):" % label, drain([x, y], 6))


def take(ds, n, init_times=1):
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(init_times):
            sess.run(it.initializer)
            got = []
            for _ in range(n):
                try:
                    got.append(sess.run(nxt).tolist())
                except tf.errors.OutOfRangeError:
                    got.append("End")
                    break
            out.append(got)
    return out


def run_data(graph_seed, op_seed):
    label = "graph seed %s, op seed %s" % (graph_seed, op_seed)
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(10)
        print("shuffle(4) (%s):" % label, take(ds.shuffle(4, seed=op_seed), 11))
        print("  shuffle(10).repeat(3), reshuffled each epoch:",
              take(ds.shuffle(10, seed=op_seed).repeat(3), 31))
        print("  shuffle(10, reshuffle_each_iteration=False).repeat(2):",
              take(ds.shuffle(10, seed=op_seed, reshuffle_each_iteration=False).repeat(2), 21))
        print("  repeat(2).shuffle(5):", take(ds.repeat(2).shuffle(5, seed=op_seed), 21))
        print("  batch(3).shuffle(2):", take(ds.batch(3).shuffle(2, seed=op_seed), 5))
        print("  initialized 3 times:", take(ds.shuffle(10, seed=op_seed), 10, init_times=3))
        one_shot = ds.shuffle(5, seed=op_seed).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            print("  one-shot iterator:", [int(sess.run(one_shot)) for _ in range(10)])


run_queue()
run_batching(None, 21)
run_batching(5, None)
run_data(None, 3)
run_data(8, None)
run_data(8, 3)
