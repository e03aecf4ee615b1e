"""``tf.train.SessionManager``: create a session whose model is ready to use.

In between-graph training every worker program builds the same graph and
opens its own session on the cluster, but the variables live once, on the
parameter servers. Somebody must initialize them -- or restore them from the
newest checkpoint -- and everybody else must wait until that is done. A
SessionManager does either, and is what a MonitoredSession calls each time it
(re)creates its session:

* :meth:`prepare_session` (the chief): restore the newest checkpoint in
  ``checkpoint_dir`` if there is one, else run ``init_op``/``init_fn``; then
  run the local init op and check that the model is ready;
* :meth:`wait_for_session` (every other worker): open a session, and if the
  model is not ready yet (``ready_op`` still names uninitialized variables),
  close it, wait ``recovery_wait_secs`` and try again, saying in the log what
  it waits for -- until the chief has done its part;
* :meth:`recover_session`: restore if possible, report whether it worked.

Readiness is asked of the cluster, not remembered: after a parameter server
restarts, its variables are uninitialized again, so waiting workers keep
waiting until the chief has restored them.

One difference from TF: ``recovery_wait_secs`` defaults to 0.2 seconds (TF: 30),
because minitf's clusters run on one machine and come up in about a second.
"""

import math
import time

from minitf.framework import errors
from minitf.framework import tf_logging as logging
from minitf.framework.graph import get_default_graph
from minitf.runtime.session import Session
from minitf.train.checkpoint_management import get_checkpoint_state
from minitf.train.saver import latest_checkpoint

#: Seconds between two "Waiting for model to be ready" lines: TF logs one per
#: wait, every 30 s; minitf waits 0.2 s at a time.
WAIT_LOG_EVERY = 5.0


def _names(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class SessionManager:
    """Makes sessions whose model is initialized, restored, or waited for."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=0.2, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "local_init_op , ready_for_local_init_op [%s]"
                             % ready_for_local_init_op)
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict

    # -- the chief ----------------------------------------------------------------------------
    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """``(session, restored)``: a new session, with the model restored
        from the newest checkpoint when there is one."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        if saver is None or not checkpoint_dir:
            return sess, False
        waited = 0.0
        path = latest_checkpoint(checkpoint_dir)
        while path is None:
            if not wait_for_checkpoint or waited >= max_wait_secs:
                return sess, False
            logging.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            path = latest_checkpoint(checkpoint_dir)
        saver.restore(sess, path)      # (it logs TF's "Restoring parameters from ...")
        # As TF: the saver takes over the checkpoints the previous program
        # kept, so that max_to_keep deletes the oldest of them too.
        saver.recover_last_checkpoints(
            get_checkpoint_state(checkpoint_dir).all_model_checkpoint_paths)
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session whose model is ready: restored from the newest checkpoint
        in ``checkpoint_dir`` if one exists, else initialized with ``init_op``
        and ``init_fn(sess)``. Raises RuntimeError if the model is still not
        ready afterwards."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                       "local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError("Init operations did not make model ready for local_init.  "
                                   "Init op: %s, init fn: %s, error: %s"
                                   % (None if init_op is None else init_op.name, init_fn, msg))
            ready, msg = self._model_ready(sess)
            if not ready:
                raise RuntimeError("Init operations did not make model ready.  Init op: %s, "
                                   "init fn: %s, local_init_op: %s, error: %s"
                                   % (None if init_op is None else init_op.name, init_fn,
                                      self._local_init_op, msg))
        except BaseException:
            _safe_close(sess)
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """``(session, initialized)``: a new session, restored from a checkpoint
        if there is one; ``initialized`` says whether the model is ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        checkpoint_dir = checkpoint_dir or checkpoint_filename_with_path
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        if not ok:
            logging.info("Restoring model from %s did not make model ready for local init:"
                         " %s", checkpoint_dir, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logging.info("Restoring model from %s did not make model ready: %s",
                         checkpoint_dir, msg)
            return sess, False
        logging.info("Restored model from %s", checkpoint_dir)
        return sess, True

    # -- every other worker -------------------------------------------------------------------
    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A new session, once some other program (the chief) has made the model
        ready: until then, retry every ``recovery_wait_secs``, logging (at INFO,
        as TF) what is still uninitialized every few seconds. DeadlineExceededError after
        ``max_wait_secs``."""
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        start = time.monotonic()
        last_log = None
        while True:
            sess = Session(master, graph=self._graph, config=config)
            try:
                ok, not_ready_local = self._try_run_local_init_op(sess)
                not_ready = None
                if ok:
                    ready, not_ready = self._model_ready(sess)
                    if ready:
                        return sess
            except BaseException:
                _safe_close(sess)
                raise
            _safe_close(sess)
            now = time.monotonic()
            left = max_wait_secs - (now - start)
            if not math.isinf(left) and left - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs." % max_wait_secs)
            if last_log is None or now - last_log >= WAIT_LOG_EVERY:
                logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, "
                             "ready: %s", not_ready_local, not_ready)
                last_log = now
            time.sleep(self._recovery_wait_secs)

    # -- readiness ------------------------------------------------------------------------------
    def _ready(self, op, sess):
        """``(ready, message)``: the model is ready when ``op`` (a
        report_uninitialized_variables) returns an empty list."""
        if op is None:
            return True, None
        try:
            value = sess.run(op)
        except errors.FailedPreconditionError as e:
            if "uninitialized" not in str(e):
                raise
            return False, str(e)
        if value is None or getattr(value, "size", 1) == 0:
            return True, None
        return False, "Variables not initialized: " + ", ".join(_names(value))

    def _model_ready(self, sess):
        return self._ready(self._ready_op, sess)

    def _model_ready_for_local_init(self, sess):
        return self._ready(self._ready_for_local_init_op, sess)

    def _try_run_local_init_op(self, sess):
        """Run the local init op once the model is ready for it: ``(ran, why not)``."""
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        logging.info("Done running local_init_op.")
        return True, None


def _safe_close(sess):
    """Close a session that is being given up, whatever its state."""
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - nothing useful to say about a session we drop
        pass
