"""The rendezvous: where a ``_Send`` leaves a tensor for the ``_Recv`` that wants it.

Tensors cross tasks by *pulling*: a ``_Send`` puts its input in its task's
rendezvous under a key (tensor name; source device; destination device) and
the step id; the ``_Recv`` (see ``minitf/ops/sendrecv_ops.py``) asks for that
key and waits until it is there. On one task that is a wait on a condition
variable; across tasks the receiving worker asks the sending worker, whose
request handler waits in *its* rendezvous and replies with the bytes (see
:class:`minitf.distributed.worker.RemoteRendezvous`). So workers exchange
tensors directly; the client and the master never see them.

Every wait honours the step's deadline and cancellation, and a step that
failed is *aborted*: its waiters wake up with the error, and late senders'
values are dropped instead of kept for ever.
"""

import threading
import time

from minitf.framework import errors

_POLL = 0.05  # seconds between checks of cancellation while waiting


class Rendezvous:
    """Tensors handed from ``_Send`` ops to whoever asks, keyed by (step, key)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._items = {}
        self._aborted = {}  # step id -> OpError, so late senders/receivers fail fast

    def send(self, step_id, key, value):
        with self._cond:
            if step_id in self._aborted:
                return
            self._items[(step_id, key)] = value
            self._cond.notify_all()

    def recv(self, step_id, key, deadline=None, cancelled=None, waiting_for=""):
        """Wait for ``key`` of step ``step_id`` and take it."""
        with self._cond:
            while True:
                if (step_id, key) in self._items:
                    return self._items.pop((step_id, key))
                err = self._aborted.get(step_id)
                if err is not None:
                    raise err
                if cancelled is not None and cancelled.is_set():
                    raise errors.CancelledError(None, None, "Step %d was cancelled while "
                                                "waiting for %s" % (step_id, waiting_for))
                wait = _POLL
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise errors.DeadlineExceededError(
                            None, None, "Timed out waiting for %s" % (waiting_for or key))
                    wait = min(wait, left)
                self._cond.wait(wait)

    def recv_many(self, step_id, keys, deadline=None, cancelled=None, waiting_for=""):
        """Take every key of ``keys`` of step ``step_id``, yielding ``(key, value)``
        in the order they arrive (not the order asked): a key that waits for
        its sender never holds up one that is already here."""
        left = set(keys)
        while left:
            with self._cond:
                while True:
                    here = [k for k in left if (step_id, k) in self._items]
                    if here:
                        got = [(k, self._items.pop((step_id, k))) for k in here]
                        break
                    err = self._aborted.get(step_id)
                    if err is not None:
                        raise err
                    if cancelled is not None and cancelled.is_set():
                        raise errors.CancelledError(
                            None, None, "Step %d was cancelled while waiting for %s"
                            % (step_id, waiting_for or ", ".join(sorted(left))))
                    wait = _POLL
                    if deadline is not None:
                        rest = deadline - time.monotonic()
                        if rest <= 0:
                            raise errors.DeadlineExceededError(
                                None, None, "Timed out waiting for %s"
                                % (waiting_for or ", ".join(sorted(left))))
                        wait = min(wait, rest)
                    self._cond.wait(wait)
            for k, value in got:
                left.discard(k)
                yield k, value

    def receive(self, step, send_task, key, tensor_name):
        """What a ``_Recv`` kernel calls: the value ``send_task`` sent under ``key``
        in ``step`` (here always a local wait; a server's worker overrides this)."""
        return self.recv(step.step_id, key, step.deadline, step.cancelled, tensor_name)

    def asked_micros(self, key):
        """When the request for ``key`` left, if that was before its ``_Recv``
        started (a stream asks for a step's tensors at once); else None."""
        return None

    def abort(self, step_id, error):
        with self._cond:
            self._aborted[step_id] = error
            for k in [k for k in self._items if k[0] == step_id]:
                del self._items[k]
            if len(self._aborted) > 1000:  # keep the memory of old steps bounded
                for old in list(self._aborted)[:500]:
                    del self._aborted[old]
            self._cond.notify_all()

    def finish(self, step_id):
        """Drop whatever a finished step left behind (sends nobody received)."""
        with self._cond:
            for k in [k for k in self._items if k[0] == step_id]:
                del self._items[k]
