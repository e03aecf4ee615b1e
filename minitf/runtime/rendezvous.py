"""The rendezvous: where a ``_Send`` leaves a tensor for the ``_Recv`` that wants it.

Tensors cross tasks by *pulling*: a ``_Send`` puts its input in its task's
rendezvous under a key (tensor name; source device; destination device) and
the step id; the ``_Recv`` (see ``minitf/ops/sendrecv_ops.py``) asks for that
key and waits until it is there. On one task that is a wait on an event
variable; across tasks the receiving worker asks the sending worker, whose
request handler waits in *its* rendezvous and replies with the bytes (see
:class:`minitf.distributed.worker.RemoteRendezvous`). So workers exchange
tensors directly; the client and the master never see them.

Every wait honours the step's deadline and cancellation, and ends as soon as
nobody waits for the answer any more (``abandoned``: the peer that asked hung
up). A step that failed is *aborted*: its waiters wake up with the error, the
values it left behind are dropped at once, and late senders' values are
dropped instead of kept for ever. Values are kept per step, so dropping a
step's leftovers costs nothing however many other steps are in flight.
"""

import threading
import time

from minitf.framework import errors

_POLL = 0.05          # seconds between checks of cancellation while waiting
MAX_ABORTED = 1000    # aborted steps remembered (so late senders fail fast)


class Rendezvous:
    """Tensors handed from ``_Send`` ops to whoever asks, keyed by (step, key).

    A receiver that has to wait leaves an Event under each key it waits for;
    a send sets only the events of its own key, so one arrival wakes only the
    receivers of that tensor (not every thread waiting in the rendezvous)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_step = {}   # step id -> {key: value}: values sent, not yet received
        self._waiters = {}   # (step id, key) -> [Event] of receivers waiting for it
        self._callbacks = {}  # (step id, key) -> callback of a receive_async
        self._aborted = {}   # step id -> OpError, oldest first

    def send(self, step_id, key, value):
        with self._lock:
            if step_id in self._aborted:
                return
            callback = self._callbacks.pop((step_id, key), None)
            if callback is None:
                values = self._by_step.get(step_id)
                if values is None:
                    values = self._by_step[step_id] = {}
                values[key] = value
                waiting = self._waiters.pop((step_id, key), None)
        if callback is not None:
            callback(value, None)
            return
        for event in waiting or ():
            event.set()

    def recv_async(self, step_id, key, callback):
        """Take ``key`` of step ``step_id`` without a thread waiting for it:
        ``callback(value, None)`` runs as soon as it is here (now, or in the
        sender's thread), ``callback(None, error)`` if the step is aborted.
        This is TF's ``RecvAsync``: the executor's scheduler hears of the
        arrival through its queue of finished ops (executor.py). Nothing here
        watches the deadline or cancellation: the scheduler does."""
        with self._lock:
            values = self._by_step.get(step_id)
            if values and key in values:
                value = values.pop(key)
                if not values:
                    del self._by_step[step_id]
                error = None
            else:
                value, error = None, self._aborted.get(step_id)
                if error is None:
                    self._callbacks[(step_id, key)] = callback
                    return
        callback(value, error)

    def receives_locally(self, send_task, key):
        """Whether ``key`` arrives in this rendezvous by itself (a local
        ``_Send`` or a stream leaves it here), so :meth:`recv_async` can wait
        for it; a server's worker pulls other keys from their sender."""
        return True

    def recv(self, step_id, key, deadline=None, cancelled=None, waiting_for="",
             abandoned=None):
        """Wait for ``key`` of step ``step_id`` and take it.

        Ends with the step's abort error, CancelledError when ``cancelled``
        (an Event) is set or ``abandoned()`` turns true, or
        DeadlineExceededError at ``deadline``."""
        for _, value in self.recv_many(step_id, (key,), deadline, cancelled,
                                       waiting_for or key, abandoned):
            return value

    def recv_many(self, step_id, keys, deadline=None, cancelled=None, waiting_for="",
                  abandoned=None):
        """Take every key of ``keys`` of step ``step_id``, yielding ``(key, value)``
        in the order they arrive (not the order asked): a key that waits for
        its sender never holds up one that is already here. Ends as
        :meth:`recv` does."""
        for batch in self.recv_batches(step_id, keys, deadline, cancelled, waiting_for,
                                       abandoned):
            yield from batch

    def recv_batches(self, step_id, keys, deadline=None, cancelled=None, waiting_for="",
                     abandoned=None):
        """:meth:`recv_many`, yielding a list of every ``(key, value)`` that is
        here each time it looks (so a stream can send them in one frame)."""
        left = set(keys)
        while left:
            event = None      # made only to wait: most keys are here when asked for
            with self._lock:
                got = []
                values = self._by_step.get(step_id)
                if values:
                    got = [(k, values.pop(k)) for k in list(left) if k in values]
                    if not values:
                        del self._by_step[step_id]
                if not got:
                    err = self._aborted.get(step_id)
                    if err is not None:
                        raise err
                    event = threading.Event()
                    for k in left:
                        self._waiters.setdefault((step_id, k), []).append(event)
            if got:
                for k, _ in got:
                    left.discard(k)
                yield got
                continue
            try:
                while not event.is_set():
                    what = waiting_for or ", ".join(sorted(left))
                    if cancelled is not None and cancelled.is_set():
                        raise errors.CancelledError(
                            None, None, "Step %d was cancelled while waiting for %s"
                            % (step_id, what))
                    if abandoned is not None and abandoned():
                        raise errors.CancelledError(
                            None, None, "Stopped waiting for %s of step %d: the peer that "
                            "asked for it hung up" % (what, step_id))
                    wait = _POLL
                    if deadline is not None:
                        rest = deadline - time.monotonic()
                        if rest <= 0:
                            raise errors.DeadlineExceededError(
                                None, None, "Timed out waiting for %s" % what)
                        wait = min(wait, rest)
                    event.wait(wait)
            finally:
                with self._lock:
                    for k in left:
                        waiting = self._waiters.get((step_id, k))
                        if waiting is not None and event in waiting:
                            waiting.remove(event)
                            if not waiting:
                                del self._waiters[(step_id, k)]

    def receive(self, step, send_task, key, tensor_name, send_incarnation=None):
        """What a ``_Recv`` kernel calls: the value ``send_task`` sent under ``key``
        in ``step`` (here always a local wait; a server's worker overrides this
        and checks ``send_incarnation``, the sending process it expects)."""
        return self.recv(step.step_id, key, step.deadline, step.cancelled, tensor_name)

    def asked_micros(self, key):
        """When the request for ``key`` left, if that was before its ``_Recv``
        started (a stream asks for a step's tensors at once); else None."""
        return None

    def abort(self, step_id, error):
        """Fail step ``step_id``: wake its waiters with ``error`` (the first
        error a step was aborted with is the one kept: it names the cause),
        drop what it left here, and drop what its late senders bring."""
        with self._lock:
            if step_id not in self._aborted:
                self._aborted[step_id] = error      # newest last
            while len(self._aborted) > MAX_ABORTED:
                del self._aborted[next(iter(self._aborted))]
            self._by_step.pop(step_id, None)
            woken = [e for k, events in self._waiters.items() if k[0] == step_id
                     for e in events]
            told = self._drop_callbacks(step_id)
        for event in woken:
            event.set()
        for callback in told:
            callback(None, error)

    def _drop_callbacks(self, step_id):
        """(Holding the lock.) Forget the async receives of ``step_id``."""
        if not self._callbacks:
            return []
        keys = [k for k in self._callbacks if k[0] == step_id]
        return [self._callbacks.pop(k) for k in keys]

    def finish(self, step_id):
        """Drop whatever a finished step left behind (sends nobody received)."""
        with self._lock:
            self._by_step.pop(step_id, None)
            self._drop_callbacks(step_id)

    def abort_error(self, step_id):
        """The error step ``step_id`` was aborted with, or None."""
        return self._aborted.get(step_id)

    def has_values(self, step_id):
        """Whether step ``step_id`` has values here that nobody received yet."""
        return step_id in self._by_step

    def pending(self):
        """``{step id: number of values waiting}`` (for tests and inspection)."""
        with self._lock:
            return {s: len(v) for s, v in self._by_step.items()}
