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

from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.train import training_util
from minitf.train.saver import Saver


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
        self._global_step = training_util.get_global_step()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if step >= self._last_step:
            # The step that was fetched was read before the update: read again,
            # as TF does, so we stop exactly at last_step.
            step = int(run_context.session.run(self._global_step))
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Save a checkpoint every ``save_steps`` global steps or ``save_secs``
    seconds, and once more at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt"):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs and save_steps must be given")
        self._dir = checkpoint_dir
        self._secs = save_secs
        self._steps = save_steps
        self._saver = saver
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)

    def begin(self):
        self._global_step = training_util.get_global_step()
        if self._saver is None:
            savers = get_default_graph().get_collection(GraphKeys.SAVERS)
            self._saver = savers[0] if savers else Saver()
        self._last_step = None
        self._last_time = time.monotonic()

    def after_create_session(self, session, coord):
        os.makedirs(self._dir, exist_ok=True)
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
            if self._due(step):
                self._save(run_context.session, step)

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._last_step:
            self._save(session, step)

    def _save(self, session, step):
        self._saver.save(session, self._path, global_step=step)
        self._last_step = step
        self._last_time = time.monotonic()


class LoggingTensorHook(SessionRunHook):
    """Print the values of some tensors every ``every_n_iter`` steps."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, formatter=None):
        if isinstance(tensors, dict):
            self._tags, self._tensors = list(tensors), list(tensors.values())
        else:
            self._tensors = list(tensors)
            self._tags = [getattr(t, "name", str(t)) for t in self._tensors]
        self._every = every_n_iter or 1
        self._formatter = formatter
        self._count = 0

    def before_run(self, run_context):
        return SessionRunArgs(self._tensors) if self._count % self._every == 0 else None

    def after_run(self, run_context, run_values):
        if self._count % self._every == 0:
            values = dict(zip(self._tags, run_values.results))
            print(self._formatter(values) if self._formatter else
                  ", ".join("%s = %s" % (k, values[k]) for k in self._tags), flush=True)
        self._count += 1
