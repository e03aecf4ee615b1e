"""tf.train.Supervisor's services and its non-chief deadline (what the
conformance program cannot compare with TF: threads on timers, a writer of
one's own)."""

import time

import pytest

import minitf.compat.v1 as tf


class RecordingWriter:
    """What the Supervisor needs of a summary writer: add_summary and close."""

    def __init__(self):
        self.summaries = []
        self.closed = False

    def add_summary(self, summary, global_step=None):
        self.summaries.append((summary, global_step))

    def close(self):
        self.closed = True


def test_the_chief_records_summaries_and_steps_per_second(tmp_path):
    writer = RecordingWriter()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = step.assign_add(1)
        summary = tf.constant(b"a serialized summary")
        sv = tf.train.Supervisor(logdir=str(tmp_path), summary_op=summary,
                                 summary_writer=writer, save_summaries_secs=0.05,
                                 save_model_secs=0)
        with sv.managed_session() as sess:
            for _ in range(5):
                sess.run(train)
                time.sleep(0.03)
        assert writer.closed
        ours = [s for s, _ in writer.summaries if s == b"a serialized summary"]
        rates = [s for s, _ in writer.summaries if s != b"a serialized summary"]
        assert ours and rates, writer.summaries
        assert rates[0].value[0].tag == "global_step/sec"
        assert all(0 <= step_ <= 5 for _, step_ in writer.summaries)


def test_a_worker_gives_up_waiting_for_the_chief_with_a_deadline():
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default():
            with tf.device("/job:localhost/task:0"):
                tf.Variable(1.0, name="never_initialized")
            sv = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.1)
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError,
                               match="Session was not ready after waiting 0 secs"):
                sv.prepare_or_wait_for_session(server.target, max_wait_secs=0.5)
            assert time.monotonic() - start < 5
    finally:
        server.stop()


def test_a_checkpoint_thread_saves_into_logdir(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(3.0, name="w")
        tf.train.get_or_create_global_step()
        sv = tf.train.Supervisor(logdir=str(tmp_path / "new"), save_model_secs=60)
        with sv.managed_session():
            deadline = time.monotonic() + 10
            while tf.train.latest_checkpoint(str(tmp_path / "new")) is None and \
                    time.monotonic() < deadline:
                time.sleep(0.05)       # the thread saves at once, then every 60 s
        assert tf.train.latest_checkpoint(str(tmp_path / "new")).endswith("model.ckpt-0")
