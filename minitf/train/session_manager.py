"""``tf.train.SessionManager``: make a session whose model is ready to use.

The two halves of TF1's replicated-training start-up:

* :meth:`SessionManager.prepare_session` (the chief): open a session, restore
  the newest checkpoint of ``checkpoint_dir`` if there is one, otherwise run
  ``init_op``; then run ``local_init_op`` and check ``ready_op``;
* :meth:`SessionManager.wait_for_session` (every other worker): open a
  session and check whether the chief has initialized the model; if not,
  close it, wait ``recovery_wait_secs`` and try again, until ``max_wait_secs``
  (DeadlineExceededError).

"Ready" is what ``ready_op`` says: it returns the names of the variables
that are still uninitialized (``report_uninitialized_variables``), and an
empty answer means ready. ``ready_for_local_init_op`` is the same question
asked before ``local_init_op`` runs (a local variable initialized from a
global one, like SyncReplicasOptimizer's local step, needs the global one).
"""

import sys
import time

from minitf.framework import errors
from minitf.framework.graph import get_default_graph
from minitf.runtime.session import Session
from minitf.train.checkpoint_management import get_checkpoint_state
from minitf.train.saver import latest_checkpoint

__all__ = ["SessionManager"]


def _log(line):
    # (TF logs these at INFO level, which it hides by default; waiting for the
    # chief without a word would look like a hang, so minitf says it.)
    print("minitf: %s" % line, file=sys.stderr, flush=True)


def _name(op):
    return op.name if op is not None else None


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "local_init_op , ready_for_local_init_op [%s]"
                             % ready_for_local_init_op)
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    # -- the chief ----------------------------------------------------------------------------
    def _restore_checkpoint(self, master, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs, config):
        self._target = master
        sess = Session(master, graph=self._graph, config=config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        path = latest_checkpoint(checkpoint_dir)
        while path is None:
            if wait_for_checkpoint and waited < max_wait_secs:
                _log("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                path = latest_checkpoint(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, path)
        # As TF: take over the checkpoints the previous program kept, so that
        # max_to_keep deletes the oldest of them too.
        saver.recover_last_checkpoints(get_checkpoint_state(checkpoint_dir).all_model_checkpoint_paths)
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session on ``master`` with the model restored or initialized."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, message = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               "Init op: %s, init fn: %s, error: %s"
                               % (_name(init_op), init_fn, message))
        ready, message = self._model_ready(sess)
        if not ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: %s, "
                               "init fn: %s, local_init_op: %s, error: %s"
                               % (_name(init_op), init_fn, self._local_init_op, message))
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """``(session, restored)``: a session, with the model restored if a
        checkpoint made it ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        ok, message = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        where = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            _log("Restoring model from %s did not make model ready for local init: %s"
                 % (where, message))
            return sess, False
        ready, message = self._model_ready(sess)
        if not ready:
            _log("Restoring model from %s did not make model ready: %s" % (where, message))
            return sess, False
        _log("Restored model from %s" % where)
        return sess, True

    # -- the other workers ----------------------------------------------------------------------
    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session on ``master`` once the model is ready (the chief initialized
        it); DeadlineExceededError after ``max_wait_secs``."""
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            ok, local_message = self._try_run_local_init_op(sess)
            message = None
            if ok:
                ready, message = self._model_ready(sess)
                if ready:
                    return sess
            _close_quietly(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs."
                    % max_wait_secs)
            _log("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s"
                 % (local_message, message))
            time.sleep(self._recovery_wait_secs)

    # -- readiness ----------------------------------------------------------------------------
    def _model_ready(self, sess):
        return _ready(self._ready_op, sess)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, message = _ready(self._ready_for_local_init_op, sess)
        if not ready:
            return False, message
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        return True, None


def _ready(op, sess):
    """``(True, None)`` when ``op`` reports nothing uninitialized, else ``(False, why)``."""
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
    names = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value]
    return False, "Variables not initialized: " + ", ".join(names)


def _close_quietly(sess):
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - the session may be half open: closing must not fail
        pass
