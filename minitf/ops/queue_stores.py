"""Where a queue keeps its elements: blocks of rows, never one object per row.

A queue's element is a tuple of arrays, one per component. Elements arrive in
*blocks*: an ``enqueue_many`` of ``n`` rows is one tuple of arrays whose first
dimension is ``n`` (a plain ``enqueue`` is a block of one row). A store keeps
those arrays as they are and moves rows in and out by slicing and indexing, so
an ``enqueue_many``/``dequeue_many`` of a thousand rows costs a few numpy calls,
not a thousand Python tuples.

Every store has the same five operations, all called with the queue's lock held:

``put(block, start, stop, owned)``
    append rows ``start:stop`` of ``block``. ``owned``: the block is the
    queue's own (``enqueue_many`` copied it once), so the store may keep views
    of it and hand them out. Not owned: a plain ``enqueue``'s element, kept as
    the caller's arrays and read when it is dequeued, as TF keeps the tensor
    itself (a variable enqueued and then changed in place comes out changed);
``take(k) -> taken``
    remove ``k`` rows, in the queue's dequeue order;
``put_back(taken_list)``
    undo takes (a dequeue that fails on a closed queue), in TF's order;
``drop(taken_list)``
    forget takes (a dequeue that timed out or was cancelled loses them);
``blocks(taken_list) -> list of (block, owned)``
    the rows taken, as blocks, in order (the queue then stacks or pads them;
    an owned block may be handed out as it is).

Three stores, one per order:

* :class:`BlockStore` (FIFOQueue, PaddingFIFOQueue): a deque of blocks. A take
  slices the head block; the rows come back as views, so a ``dequeue_many``
  that takes exactly one ``enqueue_many``'s block copies nothing at all.
* :class:`ShuffleStore` (RandomShuffleQueue): the rows live in *slots* of one
  preallocated array per component; ``order[:size]`` lists the occupied slots
  in TF's vector order, and the picker (the queue's Philox stream) chooses
  which slots each take removes. Takes gather with one fancy index per
  component.
* :class:`PriorityStore` (PriorityQueue): slots too, with ``order`` kept
  sorted by (priority, arrival); a block is merged in with ``searchsorted``.

Components whose shape the queue does not know (a queue made without
``shapes``) may differ from element to element. A block store does not mind
(each block has one shape). A slot store keeps such a component *boxed*: an
object array with one element array per slot. Such queues cannot
``dequeue_many`` anyway (TF requires shapes for that), so the per-row boxes
never meet the batched path.
"""

import collections

import numpy as np

OBJECT = np.dtype(object)


def rows(block):
    """How many rows a block has (its components share the first dimension)."""
    return block[0].shape[0]


def _nbytes(array):
    return 0 if array.dtype == OBJECT else int(array.nbytes)


# ------------------------------------------------------------------ FIFO ----
class BlockStore:
    """First in, first out: a deque of blocks, the oldest on the left."""

    def __init__(self, dtypes, shapes):
        self._blocks = collections.deque()     # (block, owned) pairs
        self.size = 0

    def put(self, block, start, stop, owned):
        if start != 0 or stop != rows(block):
            block = tuple(c[start:stop] for c in block)
        self._blocks.append((block, owned))
        self.size += stop - start

    def take(self, k):
        """``(block, owned)`` pairs holding the next ``k`` rows (views, nothing copied)."""
        taken = []
        blocks = self._blocks
        while k:
            head, owned = blocks[0]
            n = rows(head)
            if n <= k:
                taken.append(blocks.popleft())
                k -= n
                self.size -= n
            else:
                taken.append((tuple(c[:k] for c in head), owned))
                blocks[0] = (tuple(c[k:] for c in head), owned)
                self.size -= k
                k = 0
        return taken

    def put_back(self, taken_list):
        # The rows go back in front, in their order: the queue is as before.
        for taken in reversed(taken_list):
            for pair in reversed(taken):
                self._blocks.appendleft(pair)
                self.size += rows(pair[0])

    def drop(self, taken_list):
        pass            # views of blocks nobody else holds: the garbage collector's

    def blocks(self, taken_list):
        return [pair for taken in taken_list for pair in taken]

    def nbytes(self):
        return sum(_nbytes(c) for b, _ in list(self._blocks) for c in b)


# ---------------------------------------------------------------- slots ----
class _SlotStore:
    """Rows in slots of preallocated arrays (one per component), grown by
    doubling; ``order[:size]`` are the occupied slots in dequeue order (the
    subclass decides what that order is). Freed slots go on a stack.

    A row copied into a slot is the queue's own. A plain enqueue's element
    (not owned) is copied too, and also remembered in ``_aliases`` (slot ->
    the caller's arrays): its slot is read from those arrays when it is
    dequeued, so it comes out as the caller's arrays are then (as in TF)."""

    def __init__(self, dtypes, shapes):
        self._dtypes = [d.np_dtype for d in dtypes]
        self._row_shapes = [tuple(s.as_list()) if s is not None and s.is_fully_defined()
                            else None for s in shapes]
        self._columns = None       # made on the first put
        self._free = np.empty(0, np.int64)
        self._n_free = 0
        self.order = np.empty(0, np.int64)
        self.size = 0
        self._aliases = {}

    def _grow(self, need):
        cap = len(self.order)
        new_cap = max(16, 2 * cap, cap + need)
        columns = []
        for i, dt in enumerate(self._dtypes):
            shape = self._row_shapes[i]
            # Unknown shape: boxed, one element array per slot.
            col = np.empty((new_cap,) if shape is None else (new_cap,) + shape,
                           OBJECT if shape is None else dt)
            if self._columns is not None:
                col[:cap] = self._columns[i]
            columns.append(col)
        self._columns = columns
        order = np.empty(new_cap, np.int64)
        order[:self.size] = self.order[:self.size]
        self.order = order
        free = np.empty(new_cap, np.int64)
        free[:self._n_free] = self._free[:self._n_free]
        free[self._n_free:self._n_free + new_cap - cap] = np.arange(new_cap - 1, cap - 1, -1)
        self._free = free
        self._n_free += new_cap - cap

    def _store(self, block, start, stop, owned):
        """Copy rows ``start:stop`` into free slots; returns the slots."""
        k = stop - start
        if self._n_free < k:
            self._grow(k - self._n_free)
        slots = self._free[self._n_free - k:self._n_free][::-1].copy()
        self._n_free -= k
        for col, values, shape in zip(self._columns, block, self._row_shapes):
            if shape is None:
                for s, j in zip(slots.tolist(), range(start, stop)):
                    col[s] = values[j, ...]
            else:
                col[slots] = values[start:stop]
        if not owned:
            for s, j in zip(slots.tolist(), range(start, stop)):
                self._aliases[s] = tuple(values[j, ...] for values in block)
        return slots

    def _release(self, slots):
        if self._aliases:
            for s in slots.tolist():
                self._aliases.pop(s, None)
        k = len(slots)
        self._free[self._n_free:self._n_free + k] = slots
        self._n_free += k
        for col in self._columns:
            if col.dtype == OBJECT:
                col[slots] = None        # let go of strings and boxed arrays

    def drop(self, taken_list):
        for slots in taken_list:
            self._release(slots)

    def blocks(self, taken_list):
        """The taken rows gathered into one block (copies); their slots are freed."""
        if not taken_list:
            return []
        slots = taken_list[0] if len(taken_list) == 1 else np.concatenate(taken_list)
        block = tuple(col[slots] for col in self._columns)
        if self._aliases:
            for j, s in enumerate(slots.tolist()):
                element = self._aliases.get(s)
                if element is not None:
                    for out, value, shape in zip(block, element, self._row_shapes):
                        if shape is not None:    # (a boxed slot holds the arrays already)
                            out[j] = value
        self._release(slots)
        return [(block, True)]

    def nbytes(self):
        if self._columns is None:
            return 0
        return sum(_nbytes(col) * self.size // len(col) for col in self._columns)


class ShuffleStore(_SlotStore):
    """TF's RandomShuffleQueue vector: a take removes the element at
    ``word % size`` and moves the last one into its place (``picker``)."""

    def __init__(self, dtypes, shapes, picker):
        super().__init__(dtypes, shapes)
        self._picker = picker

    def put(self, block, start, stop, owned):
        slots = self._store(block, start, stop, owned)
        self.order[self.size:self.size + len(slots)] = slots
        self.size += len(slots)

    def take(self, k):
        slots = self._picker.pick(self.order, self.size, k)
        self.size -= k
        return slots

    def put_back(self, taken_list):
        # TF pushes the taken elements back on the end, the last taken first.
        slots = np.concatenate(taken_list)[::-1]
        self.order[self.size:self.size + len(slots)] = slots
        self.size += len(slots)


class PriorityStore(_SlotStore):
    """Smallest priority (component 0, an int64 scalar) first; equal
    priorities in arrival order. ``order`` (the slots), ``_priority`` and
    ``_arrival`` are sorted by (priority, arrival)."""

    def __init__(self, dtypes, shapes):
        super().__init__(dtypes, shapes)
        self._priority = np.empty(0, np.int64)
        self._arrival = np.empty(0, np.int64)
        self._count = 0

    def _priorities(self, block, start, stop):
        values = block[0][start:stop]
        if values.dtype == OBJECT or values.ndim != 1:
            return np.array([int(v) for v in values], np.int64)
        return values.astype(np.int64)

    def _merge(self, slots, priority, arrival, side):
        """Insert entries whose arrival numbers all come after (``side="right"``)
        or all before (``"left"``) those queued: only priorities need comparing."""
        new = np.lexsort((arrival, priority))
        priority, arrival, slots = priority[new], arrival[new], slots[new]
        at = np.searchsorted(self._priority, priority, side=side)
        live = self.order[:self.size]
        self._priority = np.insert(self._priority, at, priority)
        self._arrival = np.insert(self._arrival, at, arrival)
        merged = np.insert(live, at, slots)
        self.size = len(merged)
        if len(self.order) < self.size:
            self._grow(self.size - len(self.order))
        self.order[:self.size] = merged

    def put(self, block, start, stop, owned):
        priority = self._priorities(block, start, stop)
        slots = self._store(block, start, stop, owned)
        arrival = np.arange(self._count, self._count + len(slots), dtype=np.int64)
        self._count += len(slots)
        self._merge(slots, priority, arrival, "right")

    def take(self, k):
        slots = self.order[:k].copy()
        self.order[:self.size - k] = self.order[k:self.size]
        taken = (slots, self._priority[:k], self._arrival[:k])
        self._priority = self._priority[k:]
        self._arrival = self._arrival[k:]
        self.size -= k
        return taken

    def put_back(self, taken_list):
        # Before every queued element of its priority, the first taken first:
        # fresh arrival numbers below all others, the first taken lowest.
        slots = np.concatenate([t[0] for t in taken_list])
        priority = np.concatenate([t[1] for t in taken_list])
        m = len(slots)
        arrival = -(self._count + m - np.arange(m, dtype=np.int64))
        self._count += m
        self._merge(slots, priority, arrival, "left")

    def drop(self, taken_list):
        super().drop([t[0] for t in taken_list])

    def blocks(self, taken_list):
        return super().blocks([t[0] for t in taken_list])
