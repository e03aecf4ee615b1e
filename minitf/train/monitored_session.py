"""``tf.train.MonitoredTrainingSession``: a session that sets itself up and
survives the faults of a cluster.

It does what every distributed training script otherwise writes by hand:

* **the chief** (``is_chief=True``) restores the newest checkpoint from
  ``checkpoint_dir`` or, if there is none, runs the variables' initializers;
* **every other worker** waits until the chief has done that, saying in the
  log what it waits for, then runs its local initializers;
* queue runners start, hooks run around every step (``StopAtStepHook``,
  checkpoints on the chief), and leaving the ``with`` block stops the threads
  and closes the session. An ``OutOfRangeError`` (input exhausted) inside the
  block ends training quietly, as in TF.

**Recovery.** A task of the cluster may die and come back (a machine
rebooted, a process was killed). The steps that needed it fail with
``UnavailableError`` (it is gone) or ``AbortedError`` (it came back as a new
process that knows nothing of this session). A MonitoredSession treats both
as "start over": it closes its session, creates a new one with the same
*session creator* -- so the chief restores the newest checkpoint again and
the other workers wait for the model to be ready again -- calls every hook's
``after_create_session`` again, and runs the failed step once more. Training
goes on from the newest checkpoint, by itself. Every other error ends
``run()`` as usual. This is TF's design (``monitored_session.py``): the
layers TF stacks as wrapper classes (recoverable, coordinated, hooked
session) are the three methods ``_create``, ``run`` and ``_close_session``
of one class here.

The session creators say how a session is made: :class:`ChiefSessionCreator`
(``SessionManager.prepare_session``: restore or initialize) and
:class:`WorkerSessionCreator` (``SessionManager.wait_for_session``).
"""

import time

from minitf.framework import errors
from minitf.framework import tf_logging as logging
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import variables as _variables
from minitf.ops import summary_ops
from minitf.ops.control_flow_ops import group
from minitf.train.coordinator import Coordinator
from minitf.train.hooks import (CheckpointSaverHook, SessionRunContext, SessionRunValues,
                                StepCounterHook, SummarySaverHook, tensorboard_available)
from minitf.train.queue_runner import start_queue_runners
from minitf.train.saver import Saver, add_to_savers_collection
from minitf.train.session_manager import SessionManager

#: The errors after which a MonitoredSession creates a new session: a task is
#: gone (Unavailable) or was restarted (Aborted).
PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
RECREATE_PAUSE = 0.2   # seconds between attempts when creating a session fails at once


#: TF's words for a preemption error that MonitoredSession recovers from.
_PREEMPTED = ("This may be due to a preemption in a connected worker or parameter server. "
              "The current session will be closed and a new session will be created. This "
              "error may also occur due to a gRPC failure caused by high memory or network "
              "bandwidth usage in the parameter servers. If this error occurs repeatedly, try "
              "increasing the number of parameter servers assigned to the job. Error: %s")


def _first_line(exc):
    """``"UnavailableError: <the first line of its message>"``, without a final full stop."""
    text = exc.message if isinstance(exc, errors.OpError) else str(exc)
    return "%s: %s" % (type(exc).__name__, text.splitlines()[0].rstrip(".") if text else "")


class Scaffold:
    """The ops a MonitoredSession needs: init, local init, readiness, saver."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None):
        self.init_op = init_op
        self.init_feed_dict = init_feed_dict
        self.init_fn = init_fn
        self.ready_op = ready_op
        self.ready_for_local_init_op = ready_for_local_init_op
        self.local_init_op = local_init_op
        self.summary_op = summary_op
        self.saver = saver
        self._finalized = False

    @staticmethod
    def get_or_default(key, make):
        """The op kept in collection ``key``, or a new one from ``make()`` (kept
        there), so a second MonitoredSession on a finalized graph reuses it."""
        graph = get_default_graph()
        found = graph.get_collection(key)
        if found:
            return found[0]
        op = make()
        graph.add_to_collection(key, op)
        return op

    def _session_init_fn(self):
        """``init_fn(scaffold, session)`` as SessionManager calls it: ``fn(session)``."""
        if self.init_fn is None:
            return None
        return lambda sess: self.init_fn(self, sess)

    def finalize(self):
        if self._finalized:
            return self
        graph = get_default_graph()
        if self.init_op is None:
            self.init_op = self.get_or_default(GraphKeys.INIT_OP,
                                               _variables.global_variables_initializer)
        if self.ready_op is None:
            self.ready_op = self.get_or_default(GraphKeys.READY_OP,
                                                _variables.report_uninitialized_variables)
        if self.ready_for_local_init_op is None:
            self.ready_for_local_init_op = self.get_or_default(
                "ready_for_local_init_op",
                lambda: _variables.report_uninitialized_variables(
                    _variables.global_variables()))
        if self.local_init_op is None:
            self.local_init_op = self.get_or_default(
                GraphKeys.LOCAL_INIT_OP,
                lambda: group(_variables.local_variables_initializer(), name="local_init"))
        if self.saver is None and _variables.global_variables():
            savers = graph.get_collection(GraphKeys.SAVERS)
            self.saver = savers[0] if savers else add_to_savers_collection(Saver())
        if self.summary_op is None:
            self.summary_op = self.get_or_default(GraphKeys.SUMMARY_OP, summary_ops.merge_all) \
                if graph.get_collection(GraphKeys.SUMMARIES) else None
        if not graph.finalized:
            graph.finalize()
        logging.info("Graph was finalized.")
        self._finalized = True
        return self


# -- session creators ------------------------------------------------------------------------
class SessionCreator:
    """Makes the tf.Session a MonitoredSession runs (again after a fault)."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for %s." % self)


class ChiefSessionCreator(SessionCreator):
    """The chief's sessions: restore the newest checkpoint, or initialize."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._session_manager = None

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager

    def create_session(self):
        scaffold = self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=scaffold.init_op,
            init_feed_dict=scaffold.init_feed_dict, init_fn=scaffold._session_init_fn())


class WorkerSessionCreator(SessionCreator):
    """A non-chief worker's sessions: wait until the chief made the model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs
        self._session_manager = None

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


# -- the monitored session ---------------------------------------------------------------------
class _MonitoredSession:
    """A session with hooks, a coordinator for queue-runner threads and,
    with ``should_recover``, recovery from preemption errors (see the module
    docstring)."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._should_recover = should_recover
        self._grace = stop_grace_period_secs
        self._sess = None       # the tf.Session in use; None between a fault and the next one
        self._coord = None
        self._threads = []
        self._stop_requested = False
        self._closed = False
        self._create()

    # -- creating (and re-creating) the session --------------------------------------------
    def _create(self):
        """Create the session, start the queue runners, tell the hooks. A
        preemption error on the way (a task still down) means: try again."""
        while True:
            try:
                sess = self._creator.create_session()
            except PREEMPTION_ERRORS as e:
                if not self._should_recover:
                    raise
                logging.info("An error was raised while a session was being created. This "
                             "may be due to a preemption of a connected worker or parameter "
                             "server. A new session will be created. This error may also "
                             "occur due to a gRPC failure caused by high memory or network "
                             "bandwidth usage in the parameter servers. If this error occurs "
                             "repeatedly, try increasing the number of parameter servers "
                             "assigned to the job. Error: %s", _first_line(e))
                time.sleep(RECREATE_PAUSE)
                continue
            coord = Coordinator(clean_stop_exception_types=[])
            threads = []
            try:
                if self._graph.get_collection(GraphKeys.QUEUE_RUNNERS):
                    threads = start_queue_runners(sess, coord=coord, daemon=True)
                for hook in self._hooks:
                    hook.after_create_session(sess, coord)
            except PREEMPTION_ERRORS as e:
                self._stop(sess, coord, threads)
                if not self._should_recover:
                    raise
                logging.info("An error was raised while a session was being created. "
                             + _PREEMPTED, _first_line(e))
                continue
            except BaseException:
                self._stop(sess, coord, threads)
                raise
            self._sess, self._coord, self._threads = sess, coord, threads
            self._stop_requested = False
            return

    def _recover(self, exc):
        """The session failed with a preemption error: drop it; the next
        ``run`` creates a new one."""
        logging.info("An error was raised. " + _PREEMPTED, _first_line(exc))
        sess, coord, threads = self._sess, self._coord, self._threads
        self._sess, self._coord, self._threads = None, None, []
        try:
            self._stop(sess, coord, threads)
        except PREEMPTION_ERRORS as e:  # a queue runner saw the same fault
            logging.error("An error occurred when attempting to close the session. This "
                          "may be due to a preemption in a connected worker or parameter "
                          "server. Error: %s", _first_line(e))

    def _stop(self, sess, coord, threads):
        """Stop the queue runners and close ``sess`` (TF's coordinated close)."""
        coord.request_stop()
        try:
            # Queue-runner threads may be blocked inside a step (a dequeue) that
            # will never complete now: cancel it so they see the stop request.
            sess._cancel_running_steps()
        except errors.OpError:
            pass
        try:
            coord.join(threads, stop_grace_period_secs=self._grace, ignore_live_threads=True)
        finally:
            try:
                sess.close()
            except PREEMPTION_ERRORS as e:
                logging.error("An error occurred when attempting to close the session. "
                              "This may be due to a preemption in a connected worker or "
                              "parameter server. Error: %s", _first_line(e))

    # -- running ------------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    def should_stop(self):
        """True once a hook asked to stop, a queue-runner thread stopped the
        coordinator, or the session was closed. A thread's preemption error
        is recovered from here, as in TF."""
        if self._closed:
            return True
        if self._sess is None:
            return False         # between a fault and the next run: not stopped
        if self._stop_requested:
            return True
        try:
            self._coord.raise_requested_exception()
        except PREEMPTION_ERRORS as e:
            if not self._should_recover:
                return True
            self._recover(e)
            return False
        except Exception:  # noqa: BLE001 - TF: a failed thread means stop, not raise here
            return True
        return self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run a step with every hook's extra fetches; hooks may stop training.
        After a preemption error the step is run again in a new session."""
        if self._closed:
            raise RuntimeError("Run called even after should_stop requested.")
        while True:
            if self._sess is None:
                self._create()
            if self.should_stop():
                raise RuntimeError("Run called even after should_stop requested.")
            if self._sess is None:
                continue     # should_stop() just dropped a session a thread found broken
            try:
                return self._run_with_hooks(fetches, feed_dict, options, run_metadata)
            except PREEMPTION_ERRORS as e:
                if not self._should_recover:
                    raise
                self._recover(e)

    def _run_with_hooks(self, fetches, feed_dict, options, run_metadata):
        sess = self._sess
        context = SessionRunContext((fetches, feed_dict), sess)
        extra = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        for args in extra:
            if args is not None and args.feed_dict:
                feeds.update(args.feed_dict)
        try:
            results = sess.run([fetches, [a.fetches if a is not None else [] for a in extra]],
                               feed_dict=feeds or None, options=options,
                               run_metadata=run_metadata)
        except PREEMPTION_ERRORS:
            raise
        except Exception:
            # A queue runner's preemption error may be the root cause of this
            # one: then that is the error to recover from (TF does the same).
            self._coord.raise_requested_exception()
            raise
        outputs, hook_results = results
        for hook, args, value in zip(self._hooks, extra, hook_results):
            hook.after_run(context, SessionRunValues(value if args is not None else None,
                                                     options, run_metadata))
        if context.stop_requested:
            self._stop_requested = True
        return outputs

    # -- closing ------------------------------------------------------------------------------
    def close(self):
        self._close(None)

    def _close(self, exception_type):
        if self._closed:
            raise RuntimeError("Session is already closed.")
        try:
            if exception_type is None and self._sess is not None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            sess, coord, threads = self._sess, self._coord, self._threads
            self._closed = True
            self._sess, self._coord, self._threads = None, None, []
            try:
                if sess is not None:
                    self._stop(sess, coord, threads)
            finally:
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type in (errors.OutOfRangeError, StopIteration):
            exc_type = None
        self._close(exc_type)
        return exc_type is None

    def _tf_sess(self):
        """The tf.Session in use now (None between a fault and the next run)."""
        return self._sess


class MonitoredSession(_MonitoredSession):
    """Initialization (by a session creator), hooks, queue runners and
    recovery from AbortedError/UnavailableError (TF's ``tf.train.MonitoredSession``)."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief's MonitoredSession that does not recover (for one process, not
    a cluster); ``raw_session()`` gives its tf.Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=None, save_summaries_steps=None,
                             save_summaries_secs=None, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=None,
                             max_wait_secs=7200, save_checkpoint_steps=None, summary_dir=None,
                             save_graph_def=True):
    """TF1's factory: a recovering MonitoredSession whose chief restores or
    initializes the model, saves checkpoints and TensorBoard summaries, and
    whose other workers wait for the chief."""
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    if checkpoint_dir:
        if save_checkpoint_secs or save_checkpoint_steps:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir,
                                                 save_secs=save_checkpoint_secs
                                                 if not save_checkpoint_steps else None,
                                                 save_steps=save_checkpoint_steps,
                                                 save_graph_def=save_graph_def))
        elif save_checkpoint_secs is None and save_checkpoint_steps is None:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=600,
                                                 save_graph_def=save_graph_def))
    # TensorBoard's files, as TF: the speed and the graph's summaries every
    # 100 steps by default, into summary_dir (default: checkpoint_dir).
    summary_dir = summary_dir or checkpoint_dir
    asked = save_summaries_steps is not None or save_summaries_secs is not None
    if summary_dir and (asked or tensorboard_available()):
        if not asked:
            save_summaries_steps = 100
        if save_summaries_steps or save_summaries_secs:
            steps = save_summaries_steps if not save_summaries_secs else None
            all_hooks.append(StepCounterHook(
                every_n_steps=log_step_count_steps or steps,
                every_n_secs=None if (log_step_count_steps or steps) else
                save_summaries_secs, output_dir=summary_dir))
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    all_hooks += list(hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
