"""tf.train.Supervisor's services and its non-chief deadline (what the
conformance program cannot compare with TF: threads on timers)."""

import glob
import os
import time

import pytest

import minitf.compat.v1 as tf


def _events(logdir):
    return [e for path in sorted(glob.glob(os.path.join(logdir, "events.*")))
            for e in tf.train.summary_iterator(path)]


def test_the_chief_records_summaries_steps_per_second_and_checkpoints(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = step.assign_add(1)
        tf.summary.scalar("loss", tf.cast(step, tf.float32) * 2.0)
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05,
                                 save_model_secs=0.1)
        with sv.managed_session() as sess:
            for _ in range(5):
                sess.run(train)
                time.sleep(0.04)
    events = _events(str(tmp_path))
    tags = {v.tag for e in events if e.WhichOneof("what") == "summary" for v in e.summary.value}
    assert {"loss", "global_step/sec"} <= tags, tags
    losses = [(e.step, v.simple_value) for e in events if e.WhichOneof("what") == "summary"
              for v in e.summary.value if v.tag == "loss"]
    assert all(value == 2.0 * s for s, value in losses) and all(0 <= s <= 5 for s, _ in losses)
    logs = [(tf.SessionLog.SessionStatus.Name(e.session_log.status), e.step)
            for e in events if e.WhichOneof("what") == "session_log"]
    assert logs[0] == ("START", 0) and logs[-1] == ("STOP", 0), logs
    checkpoints = [e.session_log.checkpoint_path for e in events
                   if e.WhichOneof("what") == "session_log" and e.session_log.status == 3]
    assert checkpoints and all(p == os.path.join(str(tmp_path), "model.ckpt")
                               for p in checkpoints)
    assert tf.train.latest_checkpoint(str(tmp_path)) is not None
    assert (tmp_path / "graph.pbtxt").exists()


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
