"""Session run hooks: code that runs around every step of a
MonitoredSession.

A hook may: prepare ops before the graph is finalized (``begin``), run
something once the session exists (``after_create_session``), add fetches
to each step (``before_run`` returns ``SessionRunArgs``), look at the
results (``after_run``) and ask training to stop
(``run_context.request_stop()``), and clean up (``end``).
"""

import collections
import os
import time
import warnings

import numpy as np

from minitf.framework import tf_logging as logging
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.protos import proto
from minitf.train import graph_io, meta_graph, training_util
from minitf.train.saver import Saver, add_to_savers_collection


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a step: fetches, feeds, options."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])


class SessionRunContext:
    """Passed to ``before_run``/``after_run``: the step's request and a way
    to ask the session to stop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    original_args = property(lambda self: self._original_args)
    session = property(lambda self: self._session)
    stop_requested = property(lambda self: self._stop_requested)

    def request_stop(self):
        self._stop_requested = True


class SessionRunHook:
    """Base class: override what you need."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class StopAtStepHook(SessionRunHook):
    """Stop once the global step reaches ``last_step`` (or ``num_steps``
    more than when the session started)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step = training_util.get_or_create_global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # The fetched copy was read before this step's increment, hence + 1; read
        # the variable again, as TF does, so we stop exactly at last_step.
        step = int(run_values.results) + 1
        if step >= self._last_step:
            step = int(run_context.session.run(self._global_step))
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Code that runs around each save of a :class:`CheckpointSaverHook`
    (TF's ``CheckpointSaverListener``): ``begin`` before the graph is
    finalized, ``before_save``/``after_save`` around every checkpoint (an
    ``after_save`` that returns True stops training), ``end`` at the end."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Save a checkpoint every ``save_steps`` global steps or ``save_secs``
    seconds, and once more at the end; with ``save_graph_def`` (TF's default)
    also the graph: ``graph.pbtxt`` and the graph and meta graph in the event
    file. The saver is ``saver``, else ``scaffold.saver``, else the graph's
    (``GraphKeys.SAVERS``); ``listeners`` are told about every save."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs and save_steps must be given")
        self._dir = checkpoint_dir
        self._secs = save_secs
        self._steps = save_steps
        self._saver = saver
        self._scaffold = scaffold
        self._listeners = list(listeners or [])
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step = training_util.get_or_create_global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        if self._saver is None and self._scaffold is None:
            # Now, while the graph can still grow: the graph's saver, or a new one.
            savers = get_default_graph().get_collection(GraphKeys.SAVERS)
            if len(savers) > 1:
                raise RuntimeError("More than one item in collection %s. Please indicate "
                                   "which one to use by passing it to the constructor."
                                   % GraphKeys.SAVERS)
            self._saver = savers[0] if savers else add_to_savers_collection(Saver())
        self._writer = _writer_or_none(self._dir)
        self._last_step = None
        self._last_time = time.monotonic()
        for listener in self._listeners:
            listener.begin()

    def _get_saver(self):
        """The saver given, else the scaffold's (it has one once it is finalized)."""
        return self._saver if self._saver is not None else self._scaffold.saver

    def after_create_session(self, session, coord):
        os.makedirs(self._dir, exist_ok=True)
        if self._writer is not None and self._save_graph_def:
            # As TF: the graph for TensorBoard, and graph.pbtxt beside the checkpoints.
            graph = session.graph
            graph_io.write_graph(graph.as_graph_def(add_shapes=True), self._dir, "graph.pbtxt")
            self._writer.add_graph(graph)
            self._writer.add_meta_graph(meta_graph.create_meta_graph_def(
                graph=graph, saver_def=self._get_saver().saver_def))
        self._save(session, int(session.run(self._global_step)))

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def _due(self, step):
        """TF's SecondOrStepTimer: due every ``save_steps`` global steps or
        ``save_secs`` seconds since the last save, never twice at one step."""
        if self._last_step is None:
            return True
        if step == self._last_step:
            return False
        if self._secs is not None and time.monotonic() >= self._last_time + self._secs:
            return True
        return self._steps is not None and step >= self._last_step + self._steps

    def after_run(self, run_context, run_values):
        # The step fetched with the train op may have been read before its
        # update: look at the real value only when a save may be due.
        if self._due(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._due(step) and self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._last_step:
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        """Save (TF's log lines around it); True if a listener asks to stop."""
        logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logging.info("Saving checkpoints for %d into %s.", step, self._path)
        self._get_saver().save(session, self._path, global_step=step)
        if self._writer is not None:
            event_pb2 = proto("event_pb2")
            self._writer.add_session_log(event_pb2.SessionLog(
                status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path=self._path), step)
        self._last_step = step
        self._last_time = time.monotonic()
        logging.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. "
                             "listener: {}".format(listener))
                stop = True
        return stop


_warned_no_tensorboard = []


def tensorboard_available():
    """Whether TF's protos (the tensorboard package) can be imported."""
    try:
        proto("event_pb2")
        return True
    except ImportError:
        return False


def _writer_or_none(logdir):
    """The shared FileWriter of ``logdir`` (TF's hooks write TensorBoard's files
    next to the checkpoints), or None - with one warning - when the tensorboard
    package is not installed."""
    from minitf.summary.writer import FileWriterCache   # lazy: tensorboard starts slowly
    try:
        return FileWriterCache.get(logdir)
    except ImportError as e:
        if not _warned_no_tensorboard:
            warnings.warn("MonitoredTrainingSession writes no TensorBoard files: %s" % e)
            _warned_no_tensorboard.append(True)
        return None


class _Timer:
    """TF's SecondOrStepTimer: due every ``every_steps`` steps or ``every_secs`` seconds."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._secs, self._steps = every_secs, every_steps
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._secs is not None:
            return time.time() >= self._last_time + self._secs
        return step >= self._last_step + self._steps

    def reset(self):
        self._last_time = self._last_step = None

    def update_last_triggered_step(self, step):
        now = time.time()
        elapsed = None if self._last_time is None else \
            (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed


class SummarySaverHook(SessionRunHook):
    """Run the summary op every ``save_steps`` steps (or ``save_secs``
    seconds) and write what it returns with a FileWriter - the one given, or
    the shared one of ``output_dir`` (TF's ``SummarySaverHook``)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._scaffold = scaffold
        self._writer = summary_writer
        self._output_dir = output_dir
        self._timer = _Timer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._writer is None and self._output_dir:
            from minitf.summary.writer import FileWriterCache   # lazy: as _writer_or_none
            self._writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step = training_util.get_or_create_global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")

    def _ops(self):
        op = self._summary_op if self._summary_op is not None else \
            getattr(self._scaffold, "summary_op", None)
        if op is None:
            return None
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context):
        self._request = self._next_step is None or \
            self._timer.should_trigger_for_step(self._next_step)
        fetches = {"global_step": self._global_step}
        if self._request and self._ops() is not None:
            fetches["summary"] = self._ops()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._writer is None:
            return
        step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request:
            step = int(run_context.session.run(self._global_step))
        if self._next_step is None:
            event_pb2 = proto("event_pb2")
            self._writer.add_session_log(event_pb2.SessionLog(
                status=event_pb2.SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", ()):
                self._writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Write (and log) the training speed, ``global_step/sec``, every
    ``every_n_steps`` steps (TF's ``StepCounterHook``)."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = _Timer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._writer = summary_writer
        self._output_dir = output_dir

    def begin(self):
        if self._writer is None and self._output_dir:
            from minitf.summary.writer import FileWriterCache   # lazy: as _writer_or_none
            self._writer = FileWriterCache.get(self._output_dir)
        self._global_step = training_util.get_or_create_global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StepCounterHook.")
        self._tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1        # read before this step's increment
        if self._timer.should_trigger_for_step(step):
            step = int(run_context.session.run(self._global_step))
            elapsed = self._timer.update_last_triggered_step(step)
            if elapsed is not None and elapsed[0] > 0:
                rate = elapsed[1] / elapsed[0]
                logging.info("%s: %g", self._tag, rate)
                if self._writer is not None:
                    summary = proto("summary_pb2").Summary()
                    summary.value.add(tag=self._tag, simple_value=rate)
                    self._writer.add_summary(summary, step)


class LoggingTensorHook(SessionRunHook):
    """Log the values of some tensors (at INFO, TF's ``tf.logging``) every
    ``every_n_iter`` local steps or ``every_n_secs`` seconds, and/or once
    more at the end (``at_end``). The line is TF's: ``tag = value`` for each
    tag (a dict's tags sorted), joined by ", ", then the seconds since the
    last line: ``loss = 0.5, step = 10 (0.012 sec)``; or ``formatter(values)``.
    Nothing shows until ``tf.logging.set_verbosity(tf.logging.INFO)``."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = None if only_at_end else _Timer(every_secs=every_n_secs,
                                                      every_steps=every_n_iter)
        self._at_end = at_end

    def begin(self):
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        self._current = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and \
            self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log_tensors(self, values):
        elapsed = self._timer.update_last_triggered_step(self._iter_count) \
            if self._timer is not None else None
        with np.printoptions(suppress=True):
            if self._formatter:
                logging.info(self._formatter(values))
                return
            stats = ", ".join("%s = %s" % (tag, values[tag]) for tag in self._tag_order)
            if elapsed is not None:
                logging.info("%s (%.3f sec)", stats, elapsed[0])
            else:
                logging.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._at_end:
            self._log_tensors(session.run(self._current))


def _as_graph_element(obj):
    """A tensor of the default graph, or its name (``"loss"`` means ``"loss:0"``,
    and must not be an op with several outputs), as TF's hooks take them."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError("Passed %s should have graph attribute that is equal to current "
                             "graph %s." % (obj, graph))
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError("Name %s is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2)." % obj)
