"""QueueRunner and Coordinator: thread counts, closing on OutOfRange,
errors reaching join, grace periods, stop_on_exception."""
import threading
import time

import pytest

import minitf.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def test_one_thread_per_enqueue_op_and_the_last_closes_the_queue():
    src = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    dst = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    qr = tf.train.QueueRunner(dst, [dst.enqueue(src.dequeue() * 10) for _ in range(3)])
    with tf.Session() as sess:
        sess.run(src.enqueue_many([list(range(20))]))
        sess.run(src.close())
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        assert len(threads) == 4                        # 3 enqueuers + the closer
        assert qr.create_threads(sess, coord=coord) == []   # already running here
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run(dst.dequeue()))
        assert sorted(got) == [10 * i for i in range(20)]
        assert sess.run(dst.is_closed())
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_error_goes_to_coordinator_and_join_reraises():
    x = tf.placeholder(tf.int32)
    q = tf.FIFOQueue(3, tf.int32)
    qr = tf.train.QueueRunner(q, [q.enqueue(x)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            coord.join(threads, stop_grace_period_secs=5)
        assert coord.should_stop() and coord.joined
        assert not any(t.is_alive() for t in threads)


def test_without_coordinator_errors_are_collected():
    x = tf.placeholder(tf.int32)
    q = tf.FIFOQueue(3, tf.int32)
    qr = tf.train.QueueRunner(q, [q.enqueue(x)])
    with tf.Session() as sess:
        threads = qr.create_threads(sess)
        import logging
        logging.getLogger("minitf.train").disabled = True
        hook, threading.excepthook = threading.excepthook, lambda args: None  # TF re-raises
        try:
            threads[0].start()
            threads[0].join(10)
        finally:
            threading.excepthook = hook
            logging.getLogger("minitf.train").disabled = False
        assert len(qr.exceptions_raised) == 1
        assert isinstance(qr.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_stop_request_cancels_enqueues_blocked_on_a_full_queue():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(1)] * 2))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert all(t.daemon for t in threads)
        time.sleep(0.2)
        assert sess.run(q.size()) == 2                  # full; both threads block
        start = time.monotonic()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert time.monotonic() - start < 4
        assert sess.run(q.is_closed())


def test_start_queue_runners_needs_a_session():
    with pytest.raises(ValueError, match="No default session is registered"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="sess must be a `tf.Session` object"):
        tf.train.start_queue_runners(sess=object())


def test_queue_runner_argument_errors():
    with pytest.raises(ValueError, match="Must provide queue"):
        tf.train.QueueRunner(None, [])
    q = tf.FIFOQueue(2, tf.int32)
    with pytest.raises(ValueError, match="Must provide enqueue_ops"):
        tf.train.QueueRunner(q, [])
    qr = tf.train.QueueRunner(q, [q.enqueue(1)])
    assert qr.name == q.name and qr.close_op.type == "QueueCloseV2"
    assert qr.cancel_op.get_attr("cancel_pending_enqueues") is True
    assert qr.queue_closed_exception_types == (tf.errors.OutOfRangeError,)


def test_coordinator_first_error_wins_and_clean_stops():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "done")
    assert coord.should_stop()
    coord.join([])                                      # OutOfRange: no error
    coord.clear_stop()
    coord.request_stop(ValueError("first"))
    coord.request_stop(KeyError("second"))
    with pytest.raises(ValueError, match="first"):
        coord.join([])
    with pytest.raises(KeyError):                       # after join: raised at once
        coord.request_stop(KeyError("late"))


def test_coordinator_grace_period_names_stragglers():
    coord = tf.train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="slowpoke", daemon=True)
    t.start()
    coord.request_stop()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="threads still running: slowpoke"):
        coord.join([t], stop_grace_period_secs=0.2)
    assert time.monotonic() - start < 2
    coord.clear_stop()
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
    release.set()
    t.join(5)


def test_join_waits_for_threads_when_nobody_requests_stop():
    coord = tf.train.Coordinator()
    done = []

    def work():
        with coord.stop_on_exception():
            time.sleep(0.2)
            done.append(1)
    t = threading.Thread(target=work)
    t.start()
    coord.join([t])
    assert done == [1] and not coord.should_stop()
    assert coord.wait_for_stop(0.01) is False


def test_looper_thread_runs_until_stop():
    coord = tf.train.Coordinator()
    ticks = []
    coord.loop(0.01, lambda: ticks.append(1))
    time.sleep(0.2)
    coord.request_stop()
    coord.join(stop_grace_period_secs=2)
    assert len(ticks) >= 3



def test_batch_join_readers_take_turns(tmp_path):
    """A runner's threads start together (each plans its op, then waits for the
    others), so batch_join's readers interleave from the first batch, as TF's
    concurrent threads do; otherwise the first thread could read a whole small
    file while the others were still planning."""
    files = []
    for day in range(3):
        path = tmp_path / ("day%d.csv" % day)
        path.write_text("".join("%d,%d\n" % (day, hour) for hour in range(6)))
        files.append(str(path))
    firsts = []
    for _ in range(8):
        with tf.Graph().as_default():
            names = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
            per_reader = [tf.decode_csv(tf.TextLineReader().read(names)[1], [[0], [0]])
                          for _ in range(3)]
            batch = tf.train.batch_join(per_reader, batch_size=6)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                firsts.append(sess.run(batch)[0].tolist())
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=5)
    assert all(len(set(days)) > 1 for days in firsts), firsts
