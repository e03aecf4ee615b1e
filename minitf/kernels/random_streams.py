"""The state of TF's stateful random ops, and what each op draws per run.

A TF random op (``RandomUniform``, ``RandomStandardNormal``,
``TruncatedNormal``, ``RandomUniformInt``, ``RandomShuffle``,
``Multinomial``) owns one :class:`GuardedPhiloxRandom`, created with its
kernel from the op's ``seed`` and ``seed2`` attributes. TF makes one kernel
per op per session, so:

* running the op again in the same session continues its stream (the second
  ``sess.run`` gives TF's second draw);
* a new session starts it over from the seeds;
* seeds ``(0, 0)`` mean "no seed": the stream starts somewhere random.

The stream is a Philox4x32-10 counter (:mod:`minitf.kernels.cpu.philox`).
Each run *reserves* a stretch of it, ``ReserveSamples128(n)``: the run gets
the current position and the position moves ``n`` 128-bit blocks on. How much
an op reserves is TF's choice, not what it uses, and this module copies it:

====================  ==================================================
op                    blocks reserved per run
====================  ==================================================
RandomUniform,        ``256 * num_elements`` (``ReserveRandomOutputs(n,
RandomStandardNormal, 256)``), for every dtype
TruncatedNormal
RandomUniformInt      ``256 * num_elements``; nothing for an empty output
RandomShuffle         ``ceil((rows - 1) / 4)``; nothing when the input has
                      at most one element or one row
Multinomial           ``256 * batch * 2 * ceil4(num_samples)``; nothing for
                      an empty output
====================  ==================================================

Usage by an op kernel (one ``GuardedPhiloxRandom`` per op per session; the
ops in ``minitf/ops/random_ops.py`` keep it in the session's state)::

    gen = GuardedPhiloxRandom(op.attrs["seed"], op.attrs["seed2"])   # first run
    out = random_uniform(gen, shape, np.float32)                     # each run

The functions validate their inputs with TF's messages and return arrays of
the output's shape and dtype. What computes the samples from a reserved
position is the ``fill`` module they are given: the CPU's Numba kernels
(:mod:`minitf.kernels.cpu.random_fill`, the default, imported on first use),
the numpy reference, or the CUDA kernels; the bookkeeping here is the same for all three, which is
why a virtual or a real GPU draws the CPU's numbers.

Two other users of TF's streams draw one 32-bit word at a time
(:class:`PhiloxWords`, TF's ``SingleSampleAdapter``): a ``RandomShuffleQueue``
picks the element each dequeue takes (:class:`ShuffleQueuePicker`, many
takes in one loop), and tf.data's ``shuffle`` the element each ``get_next`` takes
from its buffer.
"""

import math
import secrets
import threading
from typing import NamedTuple

import numpy as np

from minitf.framework.errors import InvalidArgumentError
from minitf.kernels import split
from minitf.kernels.threads import kernel_threads

_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1

#: Samples TF reserves per output of its fill kernels (``ReserveRandomOutputs``);
#: the truncated-normal loop relies on it (random_op_cpu.h).
RESERVED_PER_OUTPUT = 256


class PhiloxRandom(NamedTuple):
    """A position in a Philox stream: TF's ``random::PhiloxRandom`` value.

    ``key`` is 64 bits (TF's ``key_[0] | key_[1] << 32``), ``counter`` 128 bits
    (``counter_[0]`` least significant). Block ``g`` from here is
    ``philox(key, counter + g)``.
    """
    key: int
    counter: int

    @classmethod
    def from_seeds(cls, seed, seed2):
        """``PhiloxRandom(seed, seed2)``: key = ``seed``, counter = ``seed2 << 64``."""
        return cls(int(seed) & _M64, (int(seed2) & _M64) << 64)

    def skip(self, count):
        """The position ``count`` blocks further on (TF's ``Skip``)."""
        return PhiloxRandom(self.key, (self.counter + int(count)) & _M128)


def nondeterministic_seeds():
    """Two fresh 64-bit seeds, as TF's ``random::New64()`` gives for seeds (0, 0)."""
    return secrets.randbits(64), secrets.randbits(64)


class GuardedPhiloxRandom:
    """One stateful random op's stream (TF's ``GuardedPhiloxRandom``).

    Thread-safe: concurrent runs each get a stretch of their own.
    """

    def __init__(self, seed=0, seed2=0):
        seed, seed2 = int(seed), int(seed2)
        if seed == 0 and seed2 == 0:
            seed, seed2 = nondeterministic_seeds()
        self._lock = threading.Lock()
        self._generator = PhiloxRandom.from_seeds(seed, seed2)

    @property
    def position(self):
        """Where the next reservation starts (a :class:`PhiloxRandom`)."""
        return self._generator

    def reserve_samples128(self, samples):
        """The current position; the stream moves on ``samples`` blocks."""
        with self._lock:
            local = self._generator
            self._generator = local.skip(samples)
        return local

    def reserve_samples32(self, samples):
        """Room for ``samples`` 32-bit words: ``ceil(samples / 4)`` blocks."""
        return self.reserve_samples128((int(samples) + 3) // 4)

    def reserve_random_outputs(self, output_count, multiplier):
        """TF's conservative reservation: ``output_count * multiplier`` blocks."""
        return self.reserve_samples128(int(output_count) * int(multiplier))


def philox_block(key, counter):
    """One Philox4x32-10 block: four 32-bit words from a 64-bit key and a 128-bit
    counter (plain Python; :mod:`minitf.kernels.cpu.philox` has the loop nests
    that make millions of them). Each round multiplies two counter words by
    fixed constants and mixes the halves of the products with the other two
    words and the key; the key is raised by two constants between rounds."""
    c0, c1 = counter & 0xFFFFFFFF, (counter >> 32) & 0xFFFFFFFF
    c2, c3 = (counter >> 64) & 0xFFFFFFFF, (counter >> 96) & 0xFFFFFFFF
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF,
                          (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF)
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


class PhiloxWords:
    """32-bit words one at a time from a Philox stream: TF's
    ``SingleSampleAdapter<PhiloxRandom>``.

    It computes a block when the previous one is used up and hands its four
    words out in order, so word ``i`` is word ``i % 4`` of block ``i // 4``.
    Not locked: its owner (a queue, a shuffle buffer) already holds a lock.
    Seeds are taken as they are; ``(0, 0)`` is a stream like any other (the
    owners replace it with random seeds first, as TF's do).
    """

    def __init__(self, seed, seed2):
        self._position = PhiloxRandom.from_seeds(seed, seed2)
        self._block = ()
        self._used = 4

    def __call__(self):
        """The next word (an int in ``[0, 2**32)``)."""
        if self._used == 4:
            self._block = philox_block(*self._position)
            self._position = self._position.skip(1)
            self._used = 0
        word = self._block[self._used]
        self._used += 1
        return word


class ShuffleQueuePicker:
    """Which elements a ``RandomShuffleQueue`` hands out: TF's
    ``DequeueLocked`` (element ``word % size`` of its vector, the hole filled
    with the last element), ``k`` takes at a time.

    The words are :class:`PhiloxWords`' (the queue's stream, seeded by the
    queue op's ``seed``/``seed2``, one word per element taken); the queue
    keeps its elements as slots of its storage in ``order``, and
    ``fill.shuffle_queue_pick`` runs the ``k`` takes on it in one loop that
    also computes the words: no Python work per element.
    Not locked: the queue holds its lock around every call.
    """

    def __init__(self, seed, seed2, fill=None):
        self._position = PhiloxRandom.from_seeds(seed, seed2)   # the next block
        self._block = np.zeros(4, np.uint64)                    # the current one
        self._used = 4                                          # its words gone
        self._fill = fill

    def pick(self, order, size, k):
        """The ``k`` slots taken from ``order[:size]`` (int64, in take order);
        ``order[:size - k]`` is what remains."""
        slots, made, self._used = _fill(self._fill).shuffle_queue_pick(
            self._position, self._block, self._used, order, size, k)
        self._position = self._position.skip(made)
        return slots


# ------------------------------------------------------------ shapes ----

def output_shape(shape):
    """The output shape from a ``shape`` input (a 1-D int32/int64 array), as TF checks it.

    A Python list or tuple (``[2, 3]``, ``[]``) is taken as int64."""
    shape = np.asarray(shape) if isinstance(shape, np.ndarray) else \
        np.asarray(shape, np.int64)
    if shape.ndim != 1 or shape.dtype not in (np.int32, np.int64):
        if shape.ndim != 1:
            raise InvalidArgumentError(None, None, "shape must be a vector of {int32,int64}, "
                                       "got shape %s" % _shape_str(shape.shape))
        raise InvalidArgumentError(None, None, "shape must be a vector of {int32,int64}.")
    dims = tuple(int(d) for d in shape)
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(None, None, "Dimension %d must be >= 0" % d)
    return dims


def _shape_str(shape):
    return "[%s]" % ",".join(str(d) for d in shape)


def _size(shape):
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


# --------------------------------------------------------- the op kernels ----

def _fill(fill):
    """The module that samples: ``fill``, else the CPU's Numba kernels."""
    if fill is not None:
        return fill
    from minitf.kernels.cpu import random_fill   # lazy: Numba's start-up and cache set-up
    return random_fill


def random_uniform(generator, shape, dtype, fill=None):
    """``RandomUniform``: floats in [0, 1) of ``shape`` (``tf.random_uniform`` then
    scales them with ordinary ops)."""
    shape = output_shape(shape)
    n = _size(shape)
    philox = generator.reserve_random_outputs(n, RESERVED_PER_OUTPUT)
    return _fill(fill).uniform(philox, n, dtype).reshape(shape)


def random_standard_normal(generator, shape, dtype, fill=None):
    """``RandomStandardNormal``: N(0, 1) samples of ``shape``."""
    shape = output_shape(shape)
    n = _size(shape)
    philox = generator.reserve_random_outputs(n, RESERVED_PER_OUTPUT)
    return _fill(fill).normal(philox, n, dtype).reshape(shape)


def truncated_normal(generator, shape, dtype, fill=None):
    """``TruncatedNormal``: N(0, 1) samples of ``shape``, redrawn until ``|x| < 2``."""
    shape = output_shape(shape)
    n = _size(shape)
    philox = generator.reserve_random_outputs(n, RESERVED_PER_OUTPUT)
    return _fill(fill).truncated_normal(philox, n, dtype).reshape(shape)


def random_uniform_int(generator, shape, minval, maxval, fill=None):
    """``RandomUniformInt``: integers in ``[minval, maxval)`` of ``minval``'s dtype."""
    shape = output_shape(shape)
    minval, maxval = np.asarray(minval), np.asarray(maxval)
    for name, v in (("minval", minval), ("maxval", maxval)):
        if v.ndim != 0:
            raise InvalidArgumentError(None, None, "%s must be 0-D, got shape %s"
                                       % (name, _shape_str(v.shape)))
    n = _size(shape)
    dtype = minval.dtype
    if n == 0:
        # TF returns before checking minval < maxval: zero impossible draws are fine.
        return np.empty(shape, dtype)
    lo, hi = int(minval), int(maxval)
    if not lo < hi:
        raise InvalidArgumentError(None, None, "Need minval < maxval, got %d >= %d" % (lo, hi))
    philox = generator.reserve_random_outputs(n, RESERVED_PER_OUTPUT)
    return _fill(fill).uniform_int(philox, n, lo, hi, dtype).reshape(shape)


def random_shuffle(generator, value, fill=None):
    """``RandomShuffle``: ``value`` with its first dimension shuffled (any dtype)."""
    value = np.asarray(value)
    if value.size <= 1 or value.ndim == 0 or value.shape[0] <= 1:
        return value                    # TF passes the input through, drawing nothing
    rows = value.shape[0]
    philox = generator.reserve_samples32(rows - 1)
    return value[_fill(fill).shuffle_permutation(philox, rows)]


def default_num_threads():
    """TF's default intra-op thread count: the CPUs this process may run on."""
    return split.cores()


def multinomial(generator, logits, num_samples, output_dtype=np.int64, num_threads=None,
                fill=None):
    """``Multinomial``: ``[batch, num_samples]`` class indices drawn from ``logits``.

    ``num_threads`` is the session's intra-op thread count (TF's
    ``intra_op_parallelism_threads``; None: the calling thread's kernel budget,
    :func:`minitf.kernels.threads.kernel_threads`, else TF's default,
    :func:`default_num_threads`). TF's numbers depend on it once a batch is
    big enough for TF to split it (see :func:`tf_work_shards`).
    """
    logits = np.asarray(logits)
    if logits.ndim != 2:
        raise InvalidArgumentError(None, None, "logits should be a matrix, got shape %s"
                                   % _shape_str(logits.shape))
    num_samples = np.asarray(num_samples)
    if num_samples.ndim != 0:
        raise InvalidArgumentError(None, None, "num_samples should be a scalar, got shape %s"
                                   % _shape_str(num_samples.shape))
    num_samples = int(num_samples)
    if num_samples < 0:
        raise InvalidArgumentError(None, None, "num_samples should be non-negative, got %d"
                                   % num_samples)
    batch, classes = logits.shape
    if classes <= 0:
        raise InvalidArgumentError(None, None, "num_classes should be positive, got %d"
                                   % classes)
    if batch * num_samples == 0:
        return np.empty((batch, num_samples), output_dtype)
    # CPU: doubles, two words per sample, num_samples rounded up to 4.
    per_row = (num_samples + 3) // 4 * 4 * 2
    philox = generator.reserve_random_outputs(batch * per_row, RESERVED_PER_OUTPUT)
    cost = int(50 * (num_samples * math.log(classes) / math.log(2) + classes))
    if num_threads is None:
        num_threads = kernel_threads() or default_num_threads()
    shards = tf_work_shards(batch, cost, int(num_threads))
    return _fill(fill).multinomial(philox, logits, num_samples, shards, output_dtype)


# ------------------------------------------------- TF's split of the work ----

def tf_work_shards(total, cost_per_unit, num_threads):
    """The first unit of each shard TF's ``Shard()`` cuts ``[0, total)`` into.

    TF's CPU kernels call ``Shard(num_threads, pool, total, cost, work)``. With
    more than one thread it is the intra-op pool's ``ParallelFor``, i.e.
    Eigen's ``ThreadPoolDevice::parallelFor``: a cost model picks a block
    size, and ``work`` runs on ``[k * block, (k + 1) * block)``. Most kernels
    give the same numbers for any split; ``Multinomial`` does not, which is
    why minitf reproduces the split. (Eigen's TensorCostModel and
    ``CalculateParallelForBlock``, with TF's ``TensorOpCost(0, 0, cost)``.)
    """
    total, cost, threads = int(total), float(cost_per_unit), int(num_threads)
    if total <= 0:
        return []
    if threads <= 1 or total == 1:
        return [0]
    # CostModel::numThreads: startup and per-thread costs of 100000 cycles each.
    wanted = (total * cost - 100000) / 100000 + 0.9
    if min(threads, max(1, int(min(wanted, 2**31 - 1)))) == 1:
        return [0]
    # CalculateParallelForBlock: aim at 40000-cycle tasks, at most 4 per thread...
    block_size_f = 1.0 / (cost / 40000) if cost > 0 else float("inf")
    block = min(total, max(-(-total // (4 * threads)),
                           int(min(block_size_f, 2**63 - 1))))
    max_block = min(total, 2 * block)
    count = -(-total // block)

    def efficiency(blocks):
        return blocks / (-(-blocks // threads) * threads)

    best = efficiency(count)
    # ...then coarser blocks (up to twice the size) while threads stay as busy.
    prev = count
    while best < 1.0 and prev > 1:
        coarser = -(-total // (prev - 1))
        if coarser > max_block:
            break
        coarser_count = -(-total // coarser)
        prev = coarser_count
        e = efficiency(coarser_count)
        if e + 0.01 >= best:
            block, count = coarser, coarser_count
            best = max(best, e)
    return list(range(0, total, block))
