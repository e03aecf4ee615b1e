"""``tf.train.MonitoredTrainingSession``: a session that sets itself up.

It does what every distributed training script otherwise writes by hand:

* **the chief** (``is_chief=True``) restores the latest checkpoint from
  ``checkpoint_dir`` or, if there is none, runs the variables' initializers;
* **every other worker** waits until the chief has done that, printing
  ``Waiting for model to be ready. Uninitialized: [...]`` every few seconds
  so a stall is never silent, then runs its local initializers;
* queue runners start, hooks run around every step
  (``StopAtStepHook``, checkpoints on the chief), and leaving the ``with``
  block stops the threads and closes the session. An ``OutOfRangeError``
  (input exhausted) inside the block ends training quietly, as in TF.
"""

import logging
import sys
import time

from minitf.framework import errors
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import variables as _variables
from minitf.ops import summary_ops
from minitf.ops.control_flow_ops import group
from minitf.runtime.session import Session
from minitf.train.coordinator import Coordinator
from minitf.train.hooks import (CheckpointSaverHook, SessionRunContext, SessionRunValues,
                                StepCounterHook, SummarySaverHook, tensorboard_available)
from minitf.train.queue_runner import start_queue_runners
from minitf.train.checkpoint_management import get_checkpoint_state
from minitf.train.saver import Saver, add_to_savers_collection, latest_checkpoint

WAIT_LOG_EVERY = 5.0
_logger = logging.getLogger("minitf.train")


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
        self._finalized = True
        return self


def _names(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class MonitoredSession:
    """A session wrapped with hooks, initialization and clean shutdown."""

    def __init__(self, master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                 hooks=None, config=None, max_wait_secs=7200, stop_grace_period_secs=120,
                 log=None):
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._hooks = list(hooks or [])
        self._scaffold = scaffold or Scaffold()
        self._graph = get_default_graph()
        for hook in self._hooks:
            hook.begin()
        self._scaffold.finalize()
        self._sess = Session(master, graph=self._graph, config=config)
        self._coord = Coordinator()
        self._grace = stop_grace_period_secs
        self._stop = False
        try:
            if is_chief:
                self._init_chief(checkpoint_dir)
            else:
                self._wait_for_chief(max_wait_secs)
            self._sess.run(self._scaffold.local_init_op)
            missing = _names(self._sess.run(self._scaffold.ready_op))
            if missing:
                raise RuntimeError("Init operations did not make model ready. "
                                   "Uninitialized: %s" % missing)
            self._threads = []
            if self._graph.get_collection(GraphKeys.QUEUE_RUNNERS):
                self._threads = start_queue_runners(self._sess, coord=self._coord,
                                                    daemon=True)
            for hook in self._hooks:
                hook.after_create_session(self._sess, self._coord)
        except BaseException:
            self._sess.close()
            raise

    # -- set-up -------------------------------------------------------------------------------
    def _init_chief(self, checkpoint_dir):
        scaffold = self._scaffold
        restored = False
        if checkpoint_dir and scaffold.saver is not None:
            path = latest_checkpoint(checkpoint_dir)
            if path is not None:
                scaffold.saver.restore(self._sess, path)
                # As TF's SessionManager: the saver takes over the checkpoints the
                # previous run kept, so max_to_keep counts them too.
                scaffold.saver.recover_last_checkpoints(
                    get_checkpoint_state(checkpoint_dir).all_model_checkpoint_paths)
                # INFO, as TF's "Restoring parameters from ...": not shown unless asked for.
                _logger.info("Restoring parameters from %s", path)
                restored = True
        if not restored:
            self._sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(scaffold, self._sess)

    def _wait_for_chief(self, max_wait_secs):
        start = last_log = time.monotonic()
        while True:
            missing = _names(self._sess.run(self._scaffold.ready_for_local_init_op))
            if not missing:
                return
            now = time.monotonic()
            if now - start > max_wait_secs:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs: the chief has "
                    "not initialized %s" % (max_wait_secs, missing))
            if now - last_log >= WAIT_LOG_EVERY or last_log == start:
                self._log("minitf: waiting for the chief to initialize the model "
                          "(uninitialized: %s)" % ", ".join(missing[:5]))
                last_log = now
            time.sleep(0.2)

    # -- running ------------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    def should_stop(self):
        return self._stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run a step with every hook's extra fetches; hooks may stop training."""
        context = SessionRunContext((fetches, feed_dict), self._sess)
        extra = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        for args in extra:
            if args is not None and args.feed_dict:
                feeds.update(args.feed_dict)
        results = self._sess.run([fetches, [a.fetches if a is not None else [] for a in extra]],
                                 feed_dict=feeds or None, options=options,
                                 run_metadata=run_metadata)
        outputs, hook_results = results
        for hook, args, value in zip(self._hooks, extra, hook_results):
            hook.after_run(context, SessionRunValues(value if args is not None else None,
                                                     options, run_metadata))
        if context.stop_requested:
            self._stop = True
        return outputs

    def close(self):
        try:
            for hook in self._hooks:
                try:
                    hook.end(self._sess)
                except errors.OpError as e:
                    self._log("minitf: a hook failed at the end: %s" % e.message)
        finally:
            self._coord.request_stop()
            # Queue-runner threads may be blocked inside a step (a dequeue, a
            # take_grad) that will never complete now: cancel such steps so the
            # threads see the stop request, instead of waiting out the grace.
            self._sess._cancel_running_steps()
            try:
                self._coord.join(self._threads, stop_grace_period_secs=self._grace)
            finally:
                self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is errors.OutOfRangeError:
            exc = None
        try:
            self.close()
        except Exception:  # noqa: BLE001 - don't hide the error that ended the block
            if exc is None:
                raise
        return exc_type is errors.OutOfRangeError


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=None, save_summaries_steps=None,
                             save_summaries_secs=None, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=None,
                             max_wait_secs=7200, save_checkpoint_steps=None, summary_dir=None,
                             **unused):
    """TF1's factory: a MonitoredSession with a checkpoint hook on the chief."""
    all_hooks = list(hooks or [])
    scaffold = scaffold or Scaffold()
    if is_chief:
        all_hooks += list(chief_only_hooks or [])
        if checkpoint_dir and (save_checkpoint_secs or save_checkpoint_steps):
            all_hooks.append(CheckpointSaverHook(checkpoint_dir,
                                                 save_secs=save_checkpoint_secs
                                                 if not save_checkpoint_steps else None,
                                                 save_steps=save_checkpoint_steps))
        elif checkpoint_dir and save_checkpoint_secs is None and \
                save_checkpoint_steps is None:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=600))
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
    return MonitoredSession(master=master, is_chief=is_chief, checkpoint_dir=checkpoint_dir,
                            scaffold=scaffold, hooks=all_hooks, config=config,
                            max_wait_secs=max_wait_secs,
                            stop_grace_period_secs=stop_grace_period_secs)
