"""Queues: the blocking buffers between producers and consumers.

A queue lives in a device's resource manager, like a variable, so every step
(and, with ``shared_name``, every session on a server) that uses it sees the
same elements. An *element* is a tuple of arrays, one per component.

Blocking follows TensorFlow exactly:

* an enqueue waits while the queue is full; enqueues are served in arrival
  order, and a plain ``close()`` takes its place in that line, so it happens
  after the enqueues already waiting (``close(cancel_pending_enqueues=True)``
  fails those enqueues with CancelledError instead);
* a dequeue waits until enough elements are there; dequeues are also served
  in arrival order; a ``dequeue_many(n)`` takes elements as they arrive
  (a PriorityQueue's waits for all ``n`` and takes them at once, see there);
* after ``close()`` the remaining elements drain (a RandomShuffleQueue then
  ignores ``min_after_dequeue``), and a dequeue that cannot be satisfied any
  more fails with OutOfRangeError "... is closed and has insufficient
  elements (requested n, current size m)"; like TF, it first puts back what
  it had taken, and a ``dequeue_up_to`` then takes all that is left, afresh.

A RandomShuffleQueue takes element ``w % size``, ``w`` the next 32-bit word of
its Philox stream (seeded by the queue op's ``seed``/``seed2``), and fills the
hole with the last element: TF's ``DequeueLocked``, so a seeded queue hands
out TF's order.

Elements move in blocks of rows: an ``enqueue_many`` hands the queue one tuple
of arrays (each ``[n, ...]``), a ``dequeue_many`` gets one back; how each kind
of queue keeps its rows is in :mod:`minitf.ops.queue_stores`. An
``enqueue_many`` is one attempt in the line of enqueues, so its rows stay
together in the queue even when it has to wait for room part way.

Every wait watches the step: its deadline (DeadlineExceededError "Timed out
waiting for notification") and its cancellation (CancelledError). A dequeue
that gives up that way **drops** what it had already taken, as TF's queue
kernels do (the elements were moved into the waiting dequeue, and a cancelled
dequeue returns nothing): a ``dequeue_many(5)`` that times out holding 3
elements loses those 3. ``summary()["dropped"]`` counts them. Only the closed
queue's OutOfRangeError puts them back (above), and so does any other failure.
"""

import collections
import threading
import time

import numpy as np

from minitf.framework import errors
from minitf.ops import queue_stores
from minitf.ops.queue_stores import rows

_POLL = 0.05  # seconds: how often a waiter re-checks its step's cancellation


class QueueResource:
    """A FIFO queue of elements (tuples of arrays), kept as blocks of rows."""

    kind = "Queue"
    type_name = "FIFOQueue"
    #: Does a dequeue_many wait until it can take all it wants at once? (False:
    #: it takes elements as they arrive.)
    _whole_batches = False

    def __init__(self, name, capacity, dtypes, shapes, min_after_dequeue=0, picker=None):
        self.name = name
        self.capacity = capacity if capacity is not None and capacity >= 0 else 2**31 - 1
        self.dtypes = list(dtypes)
        self.shapes = list(shapes) if shapes else [None] * len(self.dtypes)
        self.min_after_dequeue = min_after_dequeue
        self.closed = False
        self.cond = threading.Condition()
        self._enqueue_line = collections.deque()
        self._dequeue_line = collections.deque()
        self._cancelled_tickets = set()
        self._store = self._new_store(picker)
        self.enqueued = 0  # totals, for widgets and lessons
        self.dequeued = 0
        self.dropped = 0   # taken by dequeues that then timed out or were cancelled (as TF: lost)

    def _new_store(self, picker):
        return queue_stores.BlockStore(self.dtypes, self.shapes)

    def size(self):
        return self._store.size

    # -- waiting -----------------------------------------------------------------------
    def _wait(self, step, what):
        """Wait for a change, failing on the step's deadline or cancellation."""
        if step is not None:
            if step.cancelled.is_set():
                raise errors.CancelledError(None, None, "%s operation was cancelled" % what)
            if step.deadline is not None:
                left = step.deadline - time.monotonic()
                if left <= 0:
                    raise errors.DeadlineExceededError(None, None,
                                                       "Timed out waiting for notification")
                self.cond.wait(min(_POLL, left))
                return
        self.cond.wait(_POLL)

    # -- enqueue ------------------------------------------------------------------------
    def enqueue(self, block, step, owned=True):
        """Insert the rows of ``block`` (a tuple of arrays, one per component,
        each ``[n, ...]``) in order, waiting for room. Rows put before a
        failure stay queued, as in TF.

        ``owned``: the caller hands the arrays over (``enqueue_many`` copied
        them) and the queue may give out views of them. ``owned=False`` (a
        plain ``enqueue``): the arrays stay the caller's, and are read when
        the element is dequeued -- TF keeps the enqueued tensor itself, so a
        variable enqueued and then changed in place comes out changed."""
        n = rows(block)
        if n == 0:
            return              # TF returns at once, even on a closed queue
        ticket = object()
        store = self._store
        with self.cond:
            self._enqueue_line.append(ticket)
            try:
                done = 0
                while done < n:
                    if ticket in self._cancelled_tickets:
                        raise errors.CancelledError(None, None,
                                                    "Enqueue operation was cancelled")
                    if self.closed:
                        raise errors.CancelledError(None, None, "%s '%s' is closed."
                                                    % (self.type_name, self.name))
                    room = self.capacity - store.size
                    if self._enqueue_line[0] is ticket and room > 0:
                        k = min(n - done, room)
                        store.put(block, done, done + k, owned)
                        done += k
                        self.enqueued += k
                        self.cond.notify_all()
                        continue
                    self._wait(step, "Enqueue")
            finally:
                self._enqueue_line.remove(ticket)
                self._cancelled_tickets.discard(ticket)
                self.cond.notify_all()

    def close(self, cancel_pending_enqueues, step):
        with self.cond:
            if cancel_pending_enqueues:
                self._cancelled_tickets.update(self._enqueue_line)
                self.closed = True
                self.cond.notify_all()
                return
            ticket = object()
            self._enqueue_line.append(ticket)
            try:
                while self._enqueue_line[0] is not ticket:
                    self._wait(step, "Close")
                if self.closed:
                    raise errors.CancelledError(None, None, "Queue '%s' is already closed."
                                                % self.name)
                self.closed = True
            finally:
                self._enqueue_line.remove(ticket)
                self.cond.notify_all()

    # -- dequeue ------------------------------------------------------------------------
    def dequeue(self, n, step, allow_smaller=False):
        """Take ``n`` elements: a tuple of arrays, one per component, ``[n, ...]``
        (stacked, or padded by a PaddingFIFOQueue). ``n=None``: one element,
        not batched (each array the element's own shape)."""
        return self._assemble(self._take(n, step, allow_smaller), n)

    def _take(self, n, step, allow_smaller):
        """The rows a dequeue takes, as a list of blocks in order."""
        wanted = 1 if n is None else n
        ticket = object()
        store = self._store
        taken = []       # what each store.take returned
        count = 0        # rows in ``taken``
        with self.cond:
            self._dequeue_line.append(ticket)
            try:
                while count < wanted:
                    if self._dequeue_line[0] is ticket and self._whole_batches:
                        # TF's PriorityQueue::TryDequeueMany: all at once, or wait.
                        size = store.size
                        remaining = wanted - count
                        if self.closed and (size == 0 or (not allow_smaller
                                                          and size < remaining)):
                            # A dequeue_up_to that took what there was: TF loses it.
                            store.drop(taken)
                            self.dropped += count
                            taken = []
                            raise errors.OutOfRangeError(
                                None, None, "%s '%s' is closed and has insufficient "
                                "elements (requested %d, current size %d)"
                                % (self.type_name, self.name, remaining, size))
                        if size >= remaining or (size and self.closed and allow_smaller):
                            taken.append(store.take(min(size, remaining)))
                            count += min(size, remaining)
                            continue
                    elif self._dequeue_line[0] is ticket:
                        # FIFO, padding, shuffle: take what may be taken now.
                        size = store.size
                        if self.closed and size < wanted - count:
                            # TF: put back what was taken; dequeue_up_to then asks
                            # for all that is left, and draws it afresh.
                            requested = wanted - count
                            if taken:
                                store.put_back(taken)
                            taken, count = [], 0
                            if not (allow_smaller and store.size):
                                raise errors.OutOfRangeError(
                                    None, None, "%s '%s' is closed and has insufficient "
                                    "elements (requested %d, current size %d)"
                                    % (self.type_name, self.name, requested, size))
                            wanted = store.size
                        k = min(wanted - count,
                                store.size - (0 if self.closed else self.min_after_dequeue))
                        if k > 0:
                            taken.append(store.take(k))
                            count += k
                        if count == wanted:
                            break
                    self._wait(step, "Dequeue")
                return store.blocks(taken)
            except (errors.DeadlineExceededError, errors.CancelledError):
                # As TF: a dequeue that timed out or was cancelled loses what it took.
                store.drop(taken)
                self.dropped += count
                raise
            except BaseException:
                if taken:
                    store.put_back(taken)
                    count = 0
                raise
            finally:
                self._dequeue_line.remove(ticket)
                self.dequeued += count
                self.cond.notify_all()

    def _assemble(self, blocks, n):
        """One tuple of arrays from the ``(block, owned)`` pairs taken (outside
        the lock: the rows are the dequeue's own now)."""
        if n is None:
            return tuple(_first_row(c) for c in blocks[0][0])
        if len(blocks) == 1 and blocks[0][1]:
            return blocks[0][0]   # rows of one enqueue_many: no copy at all
        out = []
        for i in range(len(self.dtypes)):
            parts = [b[i] for b, _ in blocks]
            if len({p.shape[1:] for p in parts}) > 1:
                raise errors.InvalidArgumentError(
                    None, None, "Shape mismatch in tuple component %d: elements of a "
                    "batch must have one shape (use a PaddingFIFOQueue)" % i)
            out.append(np.concatenate(parts))
        return tuple(out)

    # -- for widgets -----------------------------------------------------------------------
    def summary(self):
        return {"kind": self.kind, "type": self.type_name, "name": self.name,
                "size": self.size(), "capacity": self.capacity, "closed": self.closed,
                "dtypes": [d.name for d in self.dtypes], "enqueued": self.enqueued,
                "dequeued": self.dequeued, "dropped": self.dropped, "initialized": True}

    def nbytes(self):
        with self.cond:
            return self._store.nbytes()

    def close_for_reset(self):
        """``Session.reset`` drops the queue: wake and fail everyone waiting."""
        with self.cond:
            self._cancelled_tickets.update(self._enqueue_line)
            self.closed = True
            self.cond.notify_all()


def _first_row(column):
    """Row 0 of a component as an array: a view of it, or the element array
    itself where a slot store kept the component boxed (see queue_stores)."""
    row = column[0]
    return row if type(row) is np.ndarray else column[0, ...]


class RandomShuffleQueue(QueueResource):
    """Dequeues a uniformly random element; keeps ``min_after_dequeue``
    elements in the queue until it is closed, so the mix stays random.
    ``picker`` (a :class:`~minitf.kernels.random_streams.ShuffleQueuePicker`
    from the device's backend) holds the queue's Philox stream."""

    type_name = "RandomShuffleQueue"

    def _new_store(self, picker):
        if picker is None:
            raise ValueError("a RandomShuffleQueue needs its random stream (picker)")
        return queue_stores.ShuffleStore(self.dtypes, self.shapes, picker)


class PriorityQueue(QueueResource):
    """Dequeues the element with the smallest priority (component 0, int64);
    equal priorities come out in insertion order.

    As TF's ``PriorityQueue::TryDequeueMany``, a ``dequeue_many(n)`` waits
    until ``n`` elements are there and takes them at once, so a batch is
    sorted (a timed-out one has taken nothing). Once the queue is closed, a
    ``dequeue_up_to(n)`` with fewer than ``n`` left takes them and then fails
    with OutOfRangeError, losing them -- TF's behaviour, kept as it is."""

    type_name = "PriorityQueue"
    _whole_batches = True

    def _new_store(self, picker):
        return queue_stores.PriorityStore(self.dtypes, self.shapes)


class PaddingFIFOQueue(QueueResource):
    """A FIFO queue whose shapes may have unknown dimensions; a batch is
    padded (zeros, empty strings) to the largest element in it."""

    type_name = "PaddingFIFOQueue"

    def _assemble(self, blocks, n):
        if n is None or len(blocks) == 1:    # one block: one shape, nothing to pad
            return super()._assemble(blocks, n)
        out = []
        for i in range(len(self.dtypes)):
            parts = [b[i] for b, _ in blocks]
            shape = [max(p.shape[d] for p in parts) for d in range(1, parts[0].ndim)]
            fill = b"" if parts[0].dtype == queue_stores.OBJECT else 0
            batch = np.full([sum(p.shape[0] for p in parts)] + shape, fill,
                            dtype=parts[0].dtype)
            at = 0
            for p in parts:
                batch[(slice(at, at + p.shape[0]),) + tuple(slice(0, s)
                                                          for s in p.shape[1:])] = p
                at += p.shape[0]
            out.append(batch)
        return tuple(out)
