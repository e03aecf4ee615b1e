"""tf.compat.v1.logging: TF's names and levels, the "tensorflow" logger, and
minitf's own messages in TF's words (the hook lines are also checked against
live TF: tests/conformance/programs/logging_hooks.py)."""

import logging
import subprocess
import sys

import pytest

import minitf.compat.v1 as tf
from minitf.framework import tf_logging

TF_NAMES = ["DEBUG", "ERROR", "FATAL", "INFO", "TaskLevelStatusMessage", "WARN", "debug",
            "error", "fatal", "flush", "get_verbosity", "info", "log", "log_every_n",
            "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning"]


@pytest.fixture()
def records():
    """The "tensorflow" logger's records while the test runs, at every level."""
    logger = logging.getLogger("tensorflow")
    got = []
    handler = logging.Handler()
    handler.emit = got.append
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(1)
    yield got
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_the_namespace_has_tf_s_names_and_levels():
    assert sorted(n for n in dir(tf.logging) if not n.startswith("_")) == TF_NAMES
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)
    assert not hasattr(tf.logging, "WARNING")      # TF's v1 logging has WARN only
    assert tf.get_logger() is logging.getLogger("tensorflow")


def test_a_fresh_program_logs_warnings_to_stderr_in_tf_s_format():
    code = ("import minitf.compat.v1 as tf\n"
            "print(tf.logging.get_verbosity())\n"
            "tf.logging.info('not shown')\n"
            "tf.logging.warn('shown %d', 1)\n"
            "tf.logging.set_verbosity(tf.logging.INFO)\n"
            "tf.logging.info('now shown')\n"
            "tf.logging.fatal('fatal only logs')\n"
            "print('still running')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["30", "still running"]
    assert out.stderr.splitlines() == ["WARNING:tensorflow:shown 1", "INFO:tensorflow:now shown",
                                       "CRITICAL:tensorflow:fatal only logs"]


def test_a_program_that_configured_logging_first_gets_no_second_handler():
    code = ("import logging\n"
            "logging.basicConfig(format='root %(name)s %(message)s')\n"
            "import minitf.compat.v1 as tf\n"
            "tf.logging.warning('once')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stderr.splitlines() == ["root tensorflow once"]


def test_levels_verbosity_and_the_caller_s_line(records):
    tf.logging.set_verbosity(tf.logging.ERROR)
    try:
        assert tf.logging.get_verbosity() == 40
        tf.logging.warning("dropped")
        tf.logging.error("kept %s", "this")
    finally:
        tf.logging.set_verbosity(1)
    tf.logging.vlog(1, "verbose")
    tf.logging.log(tf.logging.INFO, "at %d", 20)
    tf.logging.log_if(tf.logging.INFO, "if true", True)
    tf.logging.log_if(tf.logging.INFO, "if false", False)
    tf.logging.TaskLevelStatusMessage("status")
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (40, "kept this"), (1, "verbose"), (20, "at 20"), (20, "if true"), (40, "status")]
    assert all(r.name == "tensorflow" for r in records)
    assert {r.filename for r in records} == {"test_tf_logging.py"}   # not tf_logging.py
    with pytest.raises(NotImplementedError):
        tf.logging.flush()


def _every_third(i):
    tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)


def _first_two(i):
    tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)


def test_log_every_n_and_first_n_count_calls_from_one_line(records):
    for i in range(7):
        _every_third(i)
        _first_two(i)
    assert [r.getMessage() for r in records] == ["every 0", "first 0", "first 1", "every 3",
                                                 "every 6"]


def test_logging_tensor_hook_logs_tf_s_line(records):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        loss = tf.constant(0.5, name="loss")
        train = tf.assign_add(step, 1)
        hook = tf.train.LoggingTensorHook({"step": step, "loss": loss}, every_n_iter=2)
        listed = tf.train.LoggingTensorHook(["loss:0"], every_n_iter=3, at_end=True)
        with tf.train.MonitoredSession(hooks=[hook, listed]) as sess:
            for _ in range(3):
                sess.run(train)
    lines = [r.getMessage() for r in records if "loss" in r.getMessage()]
    assert len(lines) == 4
    assert lines[:2] == ["loss = 0.5, step = 1", "loss:0 = 0.5"]  # sorted tags, no time yet
    assert lines[2].startswith("loss = 0.5, step = 3 (") and lines[2].endswith(" sec)")
    assert lines[3].startswith("loss:0 = 0.5 (")                  # at_end


def test_logging_tensor_hook_refuses_what_tf_refuses():
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook({"a": "a:0"})
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook({"a": "a:0"}, every_n_iter=0)
    with tf.Graph().as_default():
        tf.split(tf.zeros([4]), 2, name="halves")
        hook = tf.train.LoggingTensorHook(["halves"], every_n_iter=1)
        with pytest.raises(ValueError, match="Name halves is ambiguous"):
            hook.begin()


def test_a_listener_hears_every_save_and_can_stop_training(tmp_path, records):
    heard = []

    class Listener(tf.train.CheckpointSaverListener):
        def before_save(self, session, step):
            heard.append(("before", step))

        def after_save(self, session, step):
            heard.append(("after", step))
            return step >= 2

        def end(self, session, step):
            heard.append(("end", step))

    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        tf.Variable(1.0, name="w")
        hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert heard == [("before", 0), ("after", 0), ("before", 2), ("after", 2), ("end", 2)]
    messages = [r.getMessage() for r in records]
    assert "Create CheckpointSaverHook." in messages
    assert "Saving checkpoints for 2 into %s." % (tmp_path / "model.ckpt") in messages
    assert any(m.startswith("A CheckpointSaverListener requested that training be stopped")
               for m in messages)


def test_minitf_s_own_messages_go_through_the_tensorflow_logger(tmp_path, records):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
            saver.restore(sess, path)
        coord = tf.train.Coordinator()
        try:
            raise ValueError("boom")
        except ValueError as e:
            coord.request_stop(e)
    messages = [r.getMessage() for r in records]
    assert "Restoring parameters from %s" % path in messages
    assert "Error reported to Coordinator: <class 'ValueError'>, boom" in messages
    assert tf_logging.get_logger() is logging.getLogger("tensorflow")


def test_checkpoint_saver_hook_takes_the_scaffold_s_saver(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        tf.Variable(1.0, name="w")
        saver = tf.train.Saver(max_to_keep=1)
        scaffold = tf.train.Scaffold(saver=saver)
        with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
            tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=saver,
                                         scaffold=scaffold)
        hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold)
        creator = tf.train.ChiefSessionCreator(scaffold=scaffold)
        with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
            for _ in range(3):
                sess.run(train)
    # max_to_keep=1: the scaffold's saver did the saving.
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [
        str(tmp_path / "model.ckpt-3")]
