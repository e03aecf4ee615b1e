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
  in arrival order; a ``dequeue_many(n)`` takes elements as they arrive;
* after ``close()`` the remaining elements drain (a RandomShuffleQueue then
  ignores ``min_after_dequeue``), and a dequeue that cannot be satisfied any
  more fails with OutOfRangeError "... is closed and has insufficient
  elements (requested n, current size m)"; like TF, it first puts back what
  it had taken, and a ``dequeue_up_to`` then takes all that is left, afresh.

A RandomShuffleQueue takes element ``w % size``, ``w`` the next 32-bit word of
its Philox stream (seeded by the queue op's ``seed``/``seed2``), and fills the
hole with the last element: TF's ``DequeueLocked``, so a seeded queue hands
out TF's order.

Every wait watches the step: its deadline (DeadlineExceededError "Timed out
waiting for notification") and its cancellation (CancelledError). A dequeue
that gives up that way **drops** what it had already taken, as TF's queue
kernels do (the elements were moved into the waiting dequeue, and a cancelled
dequeue returns nothing): a ``dequeue_many(5)`` that times out holding 3
elements loses those 3. ``summary()["dropped"]`` counts them. Only the closed
queue's OutOfRangeError puts them back (above), and so does any other failure.
"""

import collections
import heapq
import itertools
import threading
import time

import numpy as np

from minitf.framework import errors

_POLL = 0.05  # seconds: how often a waiter re-checks its step's cancellation


class QueueResource:
    """A FIFO queue of elements (tuples of arrays)."""

    kind = "Queue"
    type_name = "FIFOQueue"

    def __init__(self, name, capacity, dtypes, shapes, min_after_dequeue=0, random_words=None):
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
        self._random_words = random_words
        self._items = self._new_store()
        self.enqueued = 0  # totals, for widgets and lessons
        self.dequeued = 0
        self.dropped = 0   # taken by dequeues that then timed out or were cancelled (as TF: lost)

    # -- storage (subclasses change the order) -------------------------------------------
    def _new_store(self):
        return collections.deque()

    def _put(self, element):
        self._items.append(element)

    def _take(self):
        return self._items.popleft()

    def _put_back(self, elements):
        for element in reversed(elements):
            self._items.appendleft(element)

    def size(self):
        return len(self._items)

    def _can_take(self):
        """May one more element be taken now (given what is in the queue)?"""
        return len(self._items) > (0 if self.closed else self.min_after_dequeue)

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
    def enqueue(self, elements, step):
        """Insert ``elements`` (a list of tuples) in order, waiting for room."""
        ticket = object()
        with self.cond:
            self._enqueue_line.append(ticket)
            try:
                for element in elements:
                    while True:
                        if ticket in self._cancelled_tickets:
                            raise errors.CancelledError(None, None,
                                                        "Enqueue operation was cancelled")
                        if self.closed:
                            raise errors.CancelledError(None, None, "%s '%s' is closed."
                                                        % (self.type_name, self.name))
                        if self._enqueue_line[0] is ticket and \
                                len(self._items) < self.capacity:
                            self._put(element)
                            self.enqueued += 1
                            self.cond.notify_all()
                            break
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
        """Take ``n`` elements (``n=None``: one, not batched). Returns a list."""
        wanted = 1 if n is None else n
        ticket = object()
        taken = []
        with self.cond:
            self._dequeue_line.append(ticket)
            try:
                while len(taken) < wanted:
                    if self._dequeue_line[0] is ticket:
                        size = len(self._items)
                        if self.closed and size < wanted - len(taken):
                            # TF: put back what was taken; dequeue_up_to then asks
                            # for all that is left, and draws it afresh.
                            requested = wanted - len(taken)
                            self._put_back(taken)
                            taken = []
                            if not (allow_smaller and self._items):
                                raise errors.OutOfRangeError(
                                    None, None, "%s '%s' is closed and has insufficient "
                                    "elements (requested %d, current size %d)"
                                    % (self.type_name, self.name, requested, size))
                            wanted = len(self._items)
                        while len(taken) < wanted and self._can_take():
                            taken.append(self._take())
                        if len(taken) == wanted:
                            break
                    self._wait(step, "Dequeue")
            except (errors.DeadlineExceededError, errors.CancelledError):
                # As TF: a dequeue that timed out or was cancelled loses what it took.
                self.dropped += len(taken)
                raise
            except BaseException:
                self._put_back(taken)
                taken = []
                raise
            finally:
                self._dequeue_line.remove(ticket)
                self.dequeued += len(taken)
                self.cond.notify_all()
        return taken

    # -- for widgets -----------------------------------------------------------------------
    def summary(self):
        return {"kind": self.kind, "type": self.type_name, "name": self.name,
                "size": self.size(), "capacity": self.capacity, "closed": self.closed,
                "dtypes": [d.name for d in self.dtypes], "enqueued": self.enqueued,
                "dequeued": self.dequeued, "dropped": self.dropped, "initialized": True}

    def nbytes(self):
        return sum(int(a.nbytes) for e in list(self._items) for a in e
                   if a.dtype != np.dtype(object))

    def close_for_reset(self):
        """``Session.reset`` drops the queue: wake and fail everyone waiting."""
        with self.cond:
            self._cancelled_tickets.update(self._enqueue_line)
            self.closed = True
            self.cond.notify_all()


class RandomShuffleQueue(QueueResource):
    """Dequeues a uniformly random element; keeps ``min_after_dequeue``
    elements in the queue until it is closed, so the mix stays random."""

    type_name = "RandomShuffleQueue"

    def _new_store(self):
        if self._random_words is None:
            raise ValueError("a RandomShuffleQueue needs its random stream (random_words)")
        return []

    def _take(self):
        items = self._items
        i = self._random_words() % len(items)
        items[i], items[-1] = items[-1], items[i]
        return items.pop()

    def _put_back(self, elements):
        # TF pushes the taken elements back on the end, the last taken first.
        self._items.extend(reversed(elements))


class PriorityQueue(QueueResource):
    """Dequeues the element with the smallest priority (component 0, int64);
    equal priorities come out in insertion order."""

    type_name = "PriorityQueue"

    def _new_store(self):
        self._counter = itertools.count()
        return []

    def _put(self, element):
        heapq.heappush(self._items, (int(element[0]), next(self._counter), element))

    def _take(self):
        return heapq.heappop(self._items)[2]

    def _put_back(self, elements):
        # Negative counters sort before every queued element of the same
        # priority; reversed so the first taken comes out first again.
        for element in reversed(elements):
            heapq.heappush(self._items, (int(element[0]), -next(self._counter), element))

    def nbytes(self):
        return sum(int(a.nbytes) for _, _, e in list(self._items) for a in e
                   if a.dtype != np.dtype(object))


class PaddingFIFOQueue(QueueResource):
    """A FIFO queue whose shapes may have unknown dimensions; a batch is
    zero-padded to the largest element in it (see the DequeueMany kernel)."""

    type_name = "PaddingFIFOQueue"
