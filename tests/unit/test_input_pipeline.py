"""Producers and batchers: epochs, shuffling with seeds, element shapes,
enqueue_many, dynamic_pad, allow_smaller_final_batch, join variants."""
import pytest

import minitf.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def run_pipeline(fetch, limit=1000):
    """Start the runners, collect ``fetch`` until OutOfRangeError, stop."""
    out = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while len(out) < limit:
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    return out


def test_string_input_producer_epochs_in_order():
    q = tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
    assert q.dtypes == [tf.string] and q.name == "input_producer"
    assert [v.decode() for v in run_pipeline(q.dequeue())] == list("abcabc")
    epochs = tf.local_variables()
    assert [v.name for v in epochs] == ["input_producer/limit_epochs/epochs:0"]
    assert epochs[0].dtype.base_dtype == tf.int64
    assert not tf.trainable_variables()


def test_epoch_limit_needs_local_init():
    q = tf.train.string_input_producer(["a"], num_epochs=1)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="uninitialized value input_producer/limit_epochs/epochs"):
            coord.join(threads, stop_grace_period_secs=5)


def test_shuffle_with_seed_is_a_permutation_per_epoch_and_reproducible():
    def order():
        tf.reset_default_graph()
        q = tf.train.range_input_producer(10, num_epochs=3, shuffle=True, seed=5)
        return [int(v) for v in run_pipeline(q.dequeue())]
    a, b = order(), order()
    assert a == b
    for e in range(3):
        assert sorted(a[10 * e:10 * e + 10]) == list(range(10))
    assert a[:10] != list(range(10))


def test_input_producer_errors():
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tf.constant([1]), 0)
    with pytest.raises(ValueError, match="requires a non-null input tensor"):
        tf.train.string_input_producer([])


def test_slice_input_producer_keeps_rows_together():
    x, y = tf.train.slice_input_producer([tf.constant([1, 2, 3]),
                                          tf.constant(["a", "b", "c"])],
                                         num_epochs=1, shuffle=True, seed=1)
    assert x.shape.as_list() == [] and y.dtype == tf.string
    got = run_pipeline([x, y])
    assert sorted((int(a), b.decode()) for a, b in got) == [(1, "a"), (2, "b"), (3, "c")]


def test_batch_shapes_single_tensor_and_smaller_final_batch():
    q = tf.train.range_input_producer(7, num_epochs=1, shuffle=False)
    b = tf.train.batch([q.dequeue()], batch_size=3, allow_smaller_final_batch=True)
    assert isinstance(b, tf.Tensor) and b.shape.as_list() == [None]   # TF: one in, one out
    assert [v.tolist() for v in run_pipeline(b)] == [[0, 1, 2], [3, 4, 5], [6]]


def test_batch_without_smaller_final_batch_drops_the_rest():
    tf.reset_default_graph()
    q = tf.train.range_input_producer(7, num_epochs=1, shuffle=False)
    b = tf.train.batch([q.dequeue()], batch_size=3)
    assert b.shape.as_list() == [3]
    assert [v.tolist() for v in run_pipeline(b)] == [[0, 1, 2], [3, 4, 5]]


def test_batch_enqueue_many_and_dict():
    q = tf.train.range_input_producer(2, num_epochs=1, shuffle=False)
    i = q.dequeue()
    rows = tf.stack([i * 10, i * 10 + 1])
    out = tf.train.batch({"v": rows, "w": rows + 100}, batch_size=4, enqueue_many=True,
                         allow_smaller_final_batch=True)
    assert sorted(out) == ["v", "w"]
    got = run_pipeline(out)
    assert [g["v"].tolist() for g in got] == [[0, 1, 10, 11]]
    assert [g["w"].tolist() for g in got] == [[100, 101, 110, 111]]


def test_batch_shapes_must_be_known_unless_dynamic_pad():
    x = tf.placeholder(tf.int32, [None])
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([x], 2)
    b = tf.train.batch([x], 2, dynamic_pad=True)
    assert b.shape.as_list() == [2, None]


def test_batch_num_threads_gets_every_element_once():
    q = tf.train.range_input_producer(40, num_epochs=1, shuffle=False, capacity=40)
    b = tf.train.batch([q.dequeue()], batch_size=5, num_threads=4,
                       allow_smaller_final_batch=True)
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 4
    got = [v for batch in run_pipeline(b) for v in batch.tolist()]
    assert sorted(got) == list(range(40))


def test_shuffle_batch_and_joins():
    q = tf.train.range_input_producer(30, num_epochs=1, shuffle=False)
    i = q.dequeue()
    sb = tf.train.shuffle_batch([i, i * 2], batch_size=4, capacity=20, min_after_dequeue=5,
                                seed=3, allow_smaller_final_batch=True)
    got = run_pipeline(sb)
    flat = [int(v) for a, b in got for v in a]
    assert all((b == 2 * a).all() for a, b in got)
    assert sorted(flat) == list(range(30)) and flat != list(range(30))

    tf.reset_default_graph()
    q = tf.train.range_input_producer(20, num_epochs=1, shuffle=False)
    i = q.dequeue()
    bj = tf.train.batch_join([[i], [i + 100]], batch_size=5, allow_smaller_final_batch=True)
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 2
    vals = [v for b in run_pipeline(bj) for v in b.tolist()]
    assert sorted(v % 100 for v in vals) == list(range(20))

    tf.reset_default_graph()
    q = tf.train.range_input_producer(20, num_epochs=1, shuffle=False)
    i = q.dequeue()
    sbj = tf.train.shuffle_batch_join([[i], [i + 100]], batch_size=5, capacity=10,
                                      min_after_dequeue=2, allow_smaller_final_batch=True)
    vals = [v for b in run_pipeline(sbj) for v in b.tolist()]
    assert sorted(v % 100 for v in vals) == list(range(20))
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        tf.train.shuffle_batch([i], 2, capacity=5, min_after_dequeue=5)


def test_csv_reader_pipeline_end_to_end(tmp_path):
    names = []
    for k in range(3):
        p = tmp_path / ("f%d.csv" % k)
        p.write_text("x,y\n" + "".join("%d,%s\n" % (10 * k + j, "" if j == 1 else j * 0.5)
                                       for j in range(4)))
        names.append(str(p))
    fq = tf.train.string_input_producer(names, num_epochs=2, shuffle=True, seed=2)
    _, line = tf.TextLineReader(skip_header_lines=1).read(fq)
    x, y = tf.decode_csv(line, [[0], [-1.0]])
    xb, yb = tf.train.shuffle_batch([x, y], 5, capacity=30, min_after_dequeue=3,
                                    num_threads=2, allow_smaller_final_batch=True)
    got = run_pipeline([xb, yb])
    xs = [int(v) for a, _ in got for v in a]
    ys = {int(a): float(b) for xa, ya in got for a, b in zip(xa, ya)}
    assert sorted(xs) == sorted(2 * [10 * k + j for k in range(3) for j in range(4)])
    assert ys[1] == -1.0 and ys[2] == 1.0 and ys[13] == 1.5
