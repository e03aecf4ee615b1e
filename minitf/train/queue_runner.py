"""``tf.train.QueueRunner``: threads that keep a queue fed.

A QueueRunner holds a queue and a list of *enqueue ops*. ``create_threads``
starts one thread per enqueue op; each thread runs its op again and again in
the session. So with ``[enqueue_op] * 5`` five threads fill the queue at once
(each run of an enqueue op blocks while the queue is full, which is what
paces the producers). TF's threads run at the same time; under Python's GIL
one thread could run a whole small job alone, so here the threads start
together (each plans its op, then waits for its siblings) and each yields
after every run: ``batch_join``'s readers (one per thread) take turns, and a
batch mixes their files, as in TF.

How it ends:

* when an enqueue op fails with OutOfRangeError (its input ran out, e.g. an
  epoch limit, or it reads from a closed queue) that thread stops; when the
  *last* thread of the runner stops that way, it runs ``close_op``, which
  closes the queue: consumers drain what is left, then get OutOfRangeError;
* any other error goes to the coordinator (``coord.request_stop(e)``), which
  stops everyone and re-raises it in ``coord.join``;
* with a coordinator, one extra thread waits for the stop request and then
  runs ``cancel_op`` (close with ``cancel_pending_enqueues=True``), which
  wakes every enqueue blocked on a full queue.

``tf.train.add_queue_runner`` puts a runner in the graph's QUEUE_RUNNERS
collection; ``tf.train.start_queue_runners(sess, coord)`` starts them all.
"""

import threading
import time
import weakref

from minitf.framework import tf_logging as logging
from minitf.framework import errors
from minitf.framework.default_session import get_default_session
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.runtime.session import BaseSession


# How long a runner's thread waits for its siblings to be ready (see QueueRunner._run).
_START_TIMEOUT_S = 1.0


class QueueRunner:
    """Runs ``enqueue_ops`` in threads to keep ``queue`` full."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise errors.UnimplementedError(None, None, "minitf does not build QueueRunners from "
                                     "protos: pass the queue and its enqueue ops")
        if not queue:
            raise ValueError("Must provide queue.")
        if not enqueue_ops:
            raise ValueError("Must provide enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            self._queue_closed_exception_types = (errors.OutOfRangeError,)
        else:
            types = tuple(queue_closed_exception_types)
            if not types or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                                    for t in types):
                raise TypeError("queue_closed_exception_types, when provided, must be a "
                                "tuple of tf.error types, but saw: %s"
                                % (queue_closed_exception_types,))
            self._queue_closed_exception_types = types
        self._lock = threading.Lock()
        # session -> number of this runner's threads still running in it
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._queue_closed_exception_types)

    @property
    def exceptions_raised(self):
        """Errors the threads hit when they had no coordinator to report to."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None, ready=None):
        """One thread: run ``enqueue_op`` until told to stop or it runs out.

        ``ready`` is a barrier shared by the runner's threads: each waits there
        after planning its op, so they all start running together, as TF's do,
        instead of the first one filling the queue while the others still plan."""
        decremented = False
        try:
            try:
                enqueue = sess.make_callable(enqueue_op)
            finally:
                if ready is not None:
                    try:
                        ready.wait(_START_TIMEOUT_S)
                    except threading.BrokenBarrierError:
                        pass        # a sibling failed or never started: go on alone
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    enqueue()
                    time.sleep(0)   # let the siblings run: TF's threads run at the same time
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:  # the last one closes
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - TF ignores these too
                                logging.vlog(1, "Ignored exception: %s", e)
                        return
        except Exception as e:  # noqa: BLE001 - every other error goes to the coordinator
            if coord is not None:
                coord.request_stop(e)
            else:
                logging.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        """Wait for the coordinator's stop, then close the queue and cancel
        pending enqueues, so no thread stays blocked on a full queue."""
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001
            logging.vlog(1, "Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The threads for ``sess``: one per enqueue op, plus the closer when
        there is a coordinator. None if they already run in this session."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        ready = threading.Barrier(len(self._enqueue_ops)) if len(self._enqueue_ops) > 1 \
            else None
        threads = [threading.Thread(target=self._run, args=(sess, op, coord, ready),
                                    name="QueueRunnerThread-%s-%s" % (self.name, op.name))
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                name="QueueRunnerThread-%s-close_on_stop" % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Add ``qr`` to the default graph's QUEUE_RUNNERS collection."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Start the threads of every QueueRunner in ``collection``; returns them."""
    if sess is None:
        sess = get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not isinstance(sess, BaseSession):
        raise TypeError("sess must be a `tf.Session` object. Given class: {}"
                        .format(sess.__class__))
    runners = sess.graph.get_collection(collection)
    if not runners:
        logging.warning("`tf.train.start_queue_runners()` was called when no queue runners were "
                     "defined. You can safely remove the call to this deprecated function.")
    threads = []
    with sess.graph.as_default():
        for qr in runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
