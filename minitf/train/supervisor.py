"""``tf.train.Supervisor``: TF1's training helper, as its distributed examples use it.

A Supervisor bundles what a replicated training program needs around its loop::

    sv = tf.train.Supervisor(is_chief=task_index == 0, logdir=train_dir,
                             init_op=init_op, global_step=global_step)
    sess = sv.prepare_or_wait_for_session(server.target, config=config)
    while not sv.should_stop():
        sess.run(train_op)

* **the chief** restores the latest checkpoint in ``logdir`` (or runs
  ``init_op``), then starts the *standard services*: a thread that saves a
  checkpoint every ``save_model_secs`` and, with a summary writer, threads
  that record ``summary_op`` and the steps per second every
  ``save_summaries_secs``;
* **every other worker** waits (``recovery_wait_secs`` between checks) until
  the chief has made the model ready, then runs its ``local_init_op``;
* everyone starts the graph's queue runners; :meth:`should_stop` turns true
  when a thread reports an error or the input runs out (OutOfRangeError),
  and :meth:`stop` ends the threads.

The pieces are a :class:`~minitf.train.session_manager.SessionManager`
(session creation and readiness), a
:class:`~minitf.train.coordinator.Coordinator` (the threads), and a
:class:`~minitf.train.saver.Saver`. Arguments left at ``USE_DEFAULT`` come
from the graph's collections, as in TF (``init_op``: the INIT_OP collection
or ``global_variables_initializer()``...).

Summaries: the summary thread runs ``summary_op`` (default: the first op of
the SUMMARY_OP collection, else ``tf.summary.merge_all()``) and hands the result to
``summary_writer.add_summary(summary, global_step)``. As in TF, the chief's
default writer is a ``tf.summary.FileWriter(logdir)`` (it needs the
tensorboard package, as every event file does), and the chief writes what TF
writes: ``graph.pbtxt`` in ``logdir``, and in the event file the graph, the
meta graph, a START session log at the current global step, a CHECKPOINT
session log with every checkpoint and a STOP session log when it stops.
"""

import contextlib
import os
import time

from minitf.framework import dtypes
from minitf.framework import tf_logging as logging
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.protos import proto
from minitf.ops import summary_ops
from minitf.ops import variables as _variables
from minitf.ops.control_flow_ops import group
from minitf.train import graph_io, meta_graph, training_util
from minitf.train.coordinator import Coordinator, LooperThread
from minitf.train.saver import Saver
from minitf.train.session_manager import SessionManager
from minitf.train.training_util import global_step as _global_step_value

__all__ = ["Supervisor"]


def _first_in_collection(key):
    found = get_default_graph().get_collection(key)
    return found[0] if found else None


class Supervisor:
    """See the module docstring."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        graph = graph if graph is not None else get_default_graph()
        D = Supervisor.USE_DEFAULT
        with graph.as_default():
            if ready_op is D:
                ready_op = _first_in_collection(GraphKeys.READY_OP)
                if ready_op is None:
                    ready_op = _variables.report_uninitialized_variables()
                    graph.add_to_collection(GraphKeys.READY_OP, ready_op)
            if ready_for_local_init_op is D:
                ready_for_local_init_op = _first_in_collection(
                    GraphKeys.READY_FOR_LOCAL_INIT_OP)
            if init_op is D:
                init_op = _first_in_collection(GraphKeys.INIT_OP)
                if init_op is None:
                    init_op = _variables.global_variables_initializer()
                    graph.add_to_collection(GraphKeys.INIT_OP, init_op)
            if local_init_op is D:
                local_init_op = _first_in_collection(GraphKeys.LOCAL_INIT_OP)
                if local_init_op is None:
                    local_init_op = group(_variables.local_variables_initializer())
                    graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
            if saver is D:
                saver = _first_in_collection(GraphKeys.SAVERS)
                if saver is None and _variables.global_variables():
                    saver = Saver()
                    graph.add_to_collection(GraphKeys.SAVERS, saver)
            if summary_op is D:
                summary_op = _first_in_collection(GraphKeys.SUMMARY_OP)
                if summary_op is None:
                    summary_op = summary_ops.merge_all()
                    if summary_op is not None:
                        graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
            if global_step is D:
                global_step = _first_in_collection(GraphKeys.GLOBAL_STEP)
                if global_step is None:
                    global_step = _default_global_step(graph)
        self._graph = graph
        self._meta_graph_def = None        # made when first written (it needs the saver)
        self._graph_added_to_summary = False
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._local_init_op = local_init_op
        self._saver = saver
        self._summary_op = summary_op
        self._global_step = global_step
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        self._sessions = []
        if is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                # (TF's summary writer creates the directory; minitf makes it here,
                # so checkpoints have somewhere to go.)
                os.makedirs(logdir, exist_ok=True)
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is D:
                if logdir:
                    self._summary_writer = _default_summary_writer(logdir)
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager or SessionManager(
            local_init_op=local_init_op, ready_op=ready_op,
            ready_for_local_init_op=ready_for_local_init_op, graph=graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        if not is_chief:
            for op in graph.get_operations():
                if op.type in ("Variable", "VariableV2") and not op.device:
                    raise ValueError("When using replicas, all Variables must have their "
                                     "device set: %s" % op)
        graph.finalize()

    # -- what the Supervisor holds ---------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions ---------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief: a session with the model restored or initialized, and the
        standard services started. Others: a session once the model is ready.
        Then the queue runners start (with ``start_standard_services``)."""
        self._coord.clear_stop()
        if self._summary_writer is not None:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config, init_feed_dict=self._init_feed_dict,
                init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        self._sessions.append(sess)
        if start_standard_services:
            logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """``with sv.managed_session(target) as sess:`` - a prepared session; an
        exception in the block stops the services (OutOfRangeError: quietly), and
        the session is closed at the end."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - handed to the coordinator, re-raised by stop()
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001 - the error that ended the block wins
                        pass

    def _write_graph(self):
        """The chief writes ``graph.pbtxt`` into ``logdir``, and the graph and
        its meta graph into the event file once per writer (as TF)."""
        if self._logdir:
            graph_io.write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir,
                                 "graph.pbtxt")
        if self._summary_writer is not None and not self._graph_added_to_summary:
            if self._meta_graph_def is None:
                self._meta_graph_def = meta_graph.create_meta_graph_def(
                    graph_def=self._graph.as_graph_def(add_shapes=True),
                    saver_def=self._saver.saver_def if self._saver is not None else None)
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    # -- threads ----------------------------------------------------------------------------
    def start_standard_services(self, sess):
        """The chief's threads: checkpoints every ``save_model_secs`` into
        ``logdir``; with a summary writer, ``summary_op`` and steps/sec every
        ``save_summaries_secs``."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the SessionManager")
            return []
        if self._global_step is not None and self._summary_writer is not None:
            # TensorBoard purges events after a restart from the START step on.
            self._summary_writer.add_session_log(
                _session_log("START"), training_util.global_step(sess, self._global_step))
        threads = []
        if self._save_summaries_secs and self._summary_writer is not None:
            if self._summary_op is not None:
                threads.append(_SummaryThread(self, sess))
            if self._global_step is not None:
                if _summary_proto() is None:
                    logging.warning("No global_step/sec summaries: they need the tensorboard "
                                    "package (pip install tensorboard)")
                else:
                    threads.append(_StepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs:
            threads.append(_CheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def start_queue_runners(self, sess, queue_runners=None):
        """Start the graph's queue runners (or these) on this Supervisor's coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """A thread that calls ``target`` every ``timer_interval_secs``."""
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stop every thread and wait for them (at most ``stop_grace_secs``); an
        exception a thread (or the training loop) reported is re-raised here.

        minitf also cancels the steps of the sessions it prepared that are still
        running: a queue-runner thread blocked in a step (a dequeue, a
        ``take_grad``) would otherwise never see the stop request."""
        self._coord.request_stop()
        for sess in self._sessions:
            if not getattr(sess, "_closed", False):
                sess._cancel_running_steps()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer is not None:
                # No step: the session may be gone by now (as TF).
                self._summary_writer.add_session_log(_session_log("STOP"))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Hand a summary you computed to the summary writer."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = _global_step_value(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    # TF's CamelCase aliases
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


def _default_global_step(graph):
    """The tensor named ``global_step:0``, if it is an int (TF's fallback)."""
    try:
        gs = graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None
    return gs if gs.dtype.base_dtype in (dtypes.int32, dtypes.int64) else None


def _default_summary_writer(logdir):
    """TF's default: a FileWriter on ``logdir`` (None, said once, without the
    tensorboard package that event files need)."""
    try:
        from minitf.summary.writer import FileWriter   # lazy: tensorboard starts slowly
        return FileWriter(logdir)
    except ImportError:
        logging.warning("The Supervisor writes no event files: they need the tensorboard "
                        "package (pip install tensorboard)")
        return None


def _session_log(status, **fields):
    event_pb2 = proto("event_pb2")
    return event_pb2.SessionLog(status=event_pb2.SessionLog.SessionStatus.Value(status),
                                **fields)


def _summary_proto():
    """TF's Summary protocol buffer class (from the tensorboard package), or None."""
    try:
        from tensorboard.compat.proto.summary_pb2 import Summary  # lazy: a heavy import
    except ImportError:
        return None
    return Summary


class _SummaryThread(LooperThread):
    """Runs ``summary_op`` every ``save_summaries_secs`` and writes the result."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        logging.info("Recording summary at step %s.", step)
        self._sv.summary_writer.add_summary(summary, step)


class _StepCounterThread(LooperThread):
    """Writes ``global_step/sec`` every ``save_summaries_secs``."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._tag = "%s/sec" % sv.global_step.op.name
        self._last_time = 0.0
        self._last_step = 0

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = _global_step_value(self._sess, self._sv.global_step)

    def run_loop(self):
        Summary = _summary_proto()
        step = _global_step_value(self._sess, self._sv.global_step)
        now = time.time()
        elapsed = now - self._last_time
        rate = (step - self._last_step) / elapsed if elapsed > 0 else float("inf")
        self._last_time, self._last_step = now, step
        self._sv.summary_writer.add_summary(
            Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)
        logging.log_first_n(logging.INFO, "%s: %g", 10, self._tag, rate)


class _CheckpointThread(LooperThread):
    """Saves a checkpoint to ``save_path`` every ``save_model_secs``."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        sv = self._sv
        logging.info("Saving checkpoint to path %s", sv.save_path)
        sv.saver.save(self._sess, sv.save_path, global_step=sv.global_step)
        if sv.summary_writer is not None and sv.global_step is not None:
            sv.summary_writer.add_session_log(
                _session_log("CHECKPOINT", checkpoint_path=sv.save_path),
                training_util.global_step(self._sess, sv.global_step))
