"""GPU memory: a budget per card, an allocator per device of a session.

A GPU has a fixed amount of memory (a *card*: the real card's total, or a
virtual GPU's budget, 2 GiB unless configured). Every session or server that
uses the GPU gets its own :class:`GPUAllocator`, which *reserves* memory on
the card the way TensorFlow's does:

* without ``gpu_options.allow_growth`` the allocator reserves its whole limit
  when the session starts (TF grabs nearly the whole card up front, which is
  why a second process on the same GPU often runs out of memory at once);
* with ``allow_growth`` it reserves only what its tensors need, as they need
  it, and keeps it (TF never gives grown memory back);
* ``per_process_gpu_memory_fraction`` caps the limit at that fraction of the
  card.

Inside the reservation the allocator keeps live bytes per buffer. A buffer is
*charged* when an op on the GPU produces it and *released* when the last op
that reads it is done (or the step ends): the executor counts each tensor's
consumers for that. Variables are charged for as long as they live. A request
that does not fit raises :class:`ResourceExhaustedError` with TF's wording,
never a crash, and the failed step's buffers are released, so the session
stays usable.
"""

import threading
import weakref

import numpy as np

from minitf.framework import errors

_ALIGN = 256  # bytes; allocations are rounded up like a real GPU allocator's


def buffer_key(value):
    """One key per underlying buffer (views of one array share it)."""
    data = getattr(value, "gpu_data", None)
    if data is not None:
        return ("dev", id(data))
    base = value
    while isinstance(base, np.ndarray) and base.base is not None and \
            isinstance(base.base, np.ndarray):
        base = base.base
    return ("np", id(base))


def _aligned(nbytes):
    return -(-int(nbytes) // _ALIGN) * _ALIGN if nbytes else 0


class GPUCard:
    """The physical (or virtual) memory of one GPU, shared by every allocator on it."""

    def __init__(self, name, total_bytes):
        self.name = name
        self.total = int(total_bytes)
        self.reserved = 0
        self.lock = threading.Lock()

    @property
    def free(self):
        return self.total - self.reserved


_cards = {}
_cards_lock = threading.Lock()


def card(key, name, total_bytes):
    """The process-wide card for ``key`` (created on first use)."""
    with _cards_lock:
        c = _cards.get(key)
        if c is None:
            c = _cards[key] = GPUCard(name, total_bytes)
        return c


class GPUAllocator:
    """Live-byte bookkeeping for one GPU device of one session (or server).

    ``limit`` is what this allocator may ever hold; ``reserved`` what it holds
    on the card now; ``in_use`` what live tensors occupy; ``peak`` the
    largest ``in_use`` seen (:meth:`reset_peak` starts a new step's peak).
    """

    def __init__(self, device_name, gpu_card, fraction=0.0, allow_growth=False):
        self.device_name = device_name
        self.card = gpu_card
        self.allow_growth = bool(allow_growth)
        limit = gpu_card.total
        if fraction and fraction > 0:
            limit = int(gpu_card.total * min(float(fraction), 1.0))
        self._lock = threading.Lock()
        self.in_use = 0
        self.peak = 0
        self._live = {}        # key -> [bytes, refcount]
        self._variables = {}   # id(VariableResource) -> its charge key
        self._aliases = {}     # id(VariableResource) -> key of its current buffer
        # What this allocator holds on the card, in a separate object so that
        # the finalizer can give it back without keeping the allocator alive.
        self._hold = _Reservation()
        if self.allow_growth:
            self.limit = limit
        else:
            with gpu_card.lock:
                self._hold.bytes = min(limit, gpu_card.free)
                gpu_card.reserved += self._hold.bytes
            self.limit = self._hold.bytes
        self._finalizer = weakref.finalize(self, _give_back, gpu_card, self._hold)

    @property
    def reserved(self):
        return self._hold.bytes

    # -- what is left ----------------------------------------------------------------------
    def available(self):
        """Bytes a new allocation may still take."""
        if not self.allow_growth:
            return self.reserved - self.in_use
        return min(self.limit - self.in_use,
                   self.reserved - self.in_use + max(self.card.free, 0))

    # -- charging and releasing ----------------------------------------------------------
    def charge(self, key, nbytes, shape, dtype_name=""):
        """Account for a buffer. ``key`` identifies it (the same buffer reached
        through two tensors is charged once, with a reference count)."""
        size = _aligned(nbytes)
        with self._lock:
            entry = self._live.get(key)
            if entry is not None:
                entry[1] += 1
                return 0
            free = self.available()
            if size > free:
                raise errors.ResourceExhaustedError(
                    None, None, "OOM when allocating tensor of shape %s%s on %s: requested "
                    "%d bytes, %d free (limit %d bytes%s)"
                    % ("[%s]" % ",".join(str(d) for d in shape),
                       " and type " + dtype_name if dtype_name else "",
                       self.device_name, size, max(free, 0), self.limit,
                       ", allow_growth" if self.allow_growth else ""))
            if self.allow_growth and self.in_use + size > self.reserved:
                grow = self.in_use + size - self.reserved
                with self.card.lock:
                    self.card.reserved += grow
                    self._hold.bytes += grow
            self.in_use += size
            if self.in_use > self.peak:
                self.peak = self.in_use
            self._live[key] = [size, 1]
            return size

    def charge_variable(self, resource, nbytes, shape, dtype_name=""):
        """Charge a variable's buffer for as long as the variable lives (a new
        size replaces the old charge; the charge ends when the variable dies)."""
        rid = id(resource)
        key = ("variable", rid, int(nbytes))
        with self._lock:
            old = self._variables.get(rid)
        if old == key:
            return
        if old is not None:
            self.release(old)
        try:
            self.charge(key, nbytes, shape, dtype_name)
        except errors.ResourceExhaustedError:
            if old is not None:
                self.charge(old, old[2], shape, dtype_name)
            raise
        with self._lock:
            self._variables[rid] = key
        if old is None:
            weakref.finalize(resource, self._forget_variable, rid)

    def alias_variable(self, resource, buffer):
        """Reads of a variable hand out views of its ``buffer``: mark the buffer as
        already charged (to the variable) so those views are not charged again."""
        if buffer is None:
            return
        with self._lock:
            self._aliases[id(resource)] = buffer_key(buffer)

    def is_variable_buffer(self, buffer_key):
        return buffer_key in self._aliases.values()

    def _forget_variable(self, rid):
        with self._lock:
            self._aliases.pop(rid, None)
            key = self._variables.pop(rid, None)
        if key is not None:
            self.release(key)

    def release(self, key):
        with self._lock:
            entry = self._live.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] <= 0:
                del self._live[key]
                self.in_use -= entry[0]

    def holds(self, key):
        return key in self._live

    def reset_peak(self):
        with self._lock:
            self.peak = self.in_use

    def stats(self):
        return {"device": self.device_name, "limit": self.limit, "reserved": self.reserved,
                "in_use": self.in_use, "peak": self.peak, "card_total": self.card.total,
                "allow_growth": self.allow_growth}

    def close(self):
        """Give the reservation back to the card (session closed)."""
        with self._lock:
            self._live.clear()
            self.in_use = 0
        self._finalizer()


class _Reservation:
    __slots__ = ("bytes", "__weakref__")

    def __init__(self):
        self.bytes = 0


def _give_back(gpu_card, hold):
    with gpu_card.lock:
        gpu_card.reserved -= hold.bytes
        hold.bytes = 0
