"""TensorFlow's random numbers: Philox4x32-10 and its distributions, as Numba loops.

**Philox** (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
2011) is a *counter-based* generator. It keeps no evolving state: block ``g``
of a stream is a pure function of a 64-bit **key** and a 128-bit **counter**::

    block(g) = philox(key, counter + g)        # four 32-bit words

``philox`` runs ten *rounds*; each multiplies two of the four counter words by
fixed odd constants, keeps both halves of the 64-bit products, and mixes them
with the other two words and the key by xor. Between rounds the key is
"raised" by two fixed (golden-ratio) constants. TF's op ``seed`` becomes the
key and ``seed2`` the counter's high 64 bits; the low 64 bits count blocks.

**Skip-ahead.** Because block ``g`` needs no earlier block, any thread can
start anywhere: ``counter + g`` *is* the skip. TF's CPU fill
(``FillPhiloxRandom`` in random_op_cpu.h) cuts the output into *groups* (one
block each) and gives each thread a range of groups; the numbers do not depend
on how the range was cut. The kernels here do the same with ``prange``, so the
parallel result equals the serial one bit for bit.

**Distributions** (random_distributions.h) turn a block's words into samples:

* uniform float32: 23 random mantissa bits under the exponent of 1.0 give a
  float in [1, 2); subtract 1. Four per block. float64: 52 bits from two words
  (20 from the first, 32 from the second), two per block.
* uniform int32/int64: ``lo + bits % (hi - lo)``, with the range unsigned so
  that ``hi - lo`` cannot overflow (``RandomUniformInt``). int64 takes two words.
* standard normal: Box-Muller. Two uniforms ``u1, u2`` give
  ``sqrt(-2 log u1) * (sin(2 pi u2), cos(2 pi u2))``: float32 from words
  (0, 1) and (2, 3); float64 from all four words (two 52-bit uniforms).
* truncated normal: Box-Muller pairs, keeping values with ``|x| < 2``, until
  a group of 4 (float64: 2) is full. Since a group may need any number of
  words, TF gives group ``g`` its own stretch of the stream, starting
  ``256 * group size / 4`` blocks after group ``g - 1``'s.

The math calls (``log``, ``sin``, ``cos`` of float32 or float64) go to the C
library, as TF's do, so on the same platform the normals are TF's bit for bit.

Every kernel takes the stream as three ``uint64`` values: ``key`` and the
counter's low and high halves ``ctr_lo, ctr_hi``. Which counter each op starts
from, and how far it moves per run, is the business of
:mod:`minitf.kernels.random_streams`; nothing is compiled at import
(:mod:`.compile`).
"""

import math

import numba
import numpy as np
from numba import prange

from minitf.kernels.cpu.reductions import readonly
from minitf.kernels.cpu.vector_math import float32_from_bits, float64_from_bits

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
# Philox4x32's round multipliers and key increments (the paper's constants).
_MUL0 = np.uint64(0xD2511F53)
_MUL1 = np.uint64(0xCD9E8D57)
_RAISE0 = np.uint64(0x9E3779B9)
_RAISE1 = np.uint64(0xBB67AE85)

_FLOAT_MANTISSA = np.uint64(0x7FFFFF)
_FLOAT_ONE = np.uint64(0x3F800000)          # bits of 1.0f
_DOUBLE_HIGH_MANTISSA = np.uint64(0xFFFFF)
_DOUBLE_ONE = np.uint64(0x3FF0000000000000)  # bits of 1.0
_TWO_PI = 2.0 * math.pi                      # a double, as ``2.0f * M_PI`` is in C++
_EPS_F32 = np.float32(1e-7)
_TRUNCATE_F32 = np.float32(2.0)

#: Pieces a parallel fill is cut into (more than threads, so that they balance).
PIECES = 64
#: Blocks between the starts of two truncated-normal groups: 256 samples are
#: reserved per output, 4 outputs per group (float64: 2) and 4 words per block.
TRUNCATED_STRIDE_F32 = 256
TRUNCATED_STRIDE_F64 = 128


# ------------------------------------------------------------ the generator ----

@numba.njit(inline="always")
def _round(c0, c1, c2, c3, k0, k1):
    """One Philox round: two 32x32->64 products, their halves xor-ed across."""
    p0 = _MUL0 * c0
    p1 = _MUL1 * c2
    return (p1 >> _S32) ^ c1 ^ k0, p1 & _M32, (p0 >> _S32) ^ c3 ^ k1, p0 & _M32


@numba.njit(inline="always")
def skip(ctr_lo, ctr_hi, count):
    """The counter ``count`` blocks further on: a 128-bit add (TF's ``Skip``)."""
    lo = ctr_lo + count
    return lo, ctr_hi + np.uint64(lo < ctr_lo)


@numba.njit(inline="always")
def philox_at(key, ctr_lo, ctr_hi, g):
    """Block ``g`` of the stream: the four words of Philox4x32-10 at ``counter + g``.

    Each word is a ``uint64`` below ``2**32`` (Numba's arithmetic is 64-bit;
    the masks keep the 32-bit semantics). Written out, not as a loop, so that
    LLVM sees one straight line it can run on 8 or 16 blocks at once.
    """
    lo, hi = skip(ctr_lo, ctr_hi, g)
    c0, c1, c2, c3 = lo & _M32, lo >> _S32, hi & _M32, hi >> _S32
    k0, k1 = key & _M32, key >> _S32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    c0, c1, c2, c3 = _round(c0, c1, c2, c3, k0, k1)
    k0, k1 = (k0 + _RAISE0) & _M32, (k1 + _RAISE1) & _M32
    return _round(c0, c1, c2, c3, k0, k1)


# -------------------------------------------------------- word -> sample ----

@numba.njit(inline="always")
def uint32_to_float(x):
    """A float32 in [0, 1) from the low 23 bits of a word (``Uint32ToFloat``)."""
    return float32_from_bits((x & _FLOAT_MANTISSA) | _FLOAT_ONE) - np.float32(1.0)


@numba.njit(inline="always")
def uint64_to_double(x0, x1):
    """A float64 in [0, 1): 20 bits of ``x0`` above all 32 of ``x1`` (``Uint64ToDouble``)."""
    man = ((x0 & _DOUBLE_HIGH_MANTISSA) << _S32) | x1
    return float64_from_bits(man | _DOUBLE_ONE) - 1.0


@numba.njit(inline="always")
def box_muller_f32(x0, x1):
    """Two float32 normals from two words (``BoxMullerFloat``): sin one first.

    Every step is float32, as in TF, except the angle: ``2.0f * M_PI`` is a
    double in C++, so ``2 pi u`` is computed in double and then rounded.
    """
    u1 = uint32_to_float(x0)
    if u1 < _EPS_F32:
        u1 = _EPS_F32                 # never log(0)
    v1 = np.float32(_TWO_PI * np.float64(uint32_to_float(x1)))
    u2 = np.float32(math.sqrt(np.float32(-2.0) * np.float32(math.log(u1))))
    return np.float32(math.sin(v1)) * u2, np.float32(math.cos(v1)) * u2


@numba.njit(inline="always")
def box_muller_f64(x0, x1, x2, x3):
    """Two float64 normals from four words (``BoxMullerDouble``)."""
    u1 = uint64_to_double(x0, x1)
    if u1 < 1e-7:
        u1 = 1e-7
    v1 = _TWO_PI * uint64_to_double(x2, x3)
    u2 = math.sqrt(-2.0 * math.log(u1))
    return math.sin(v1) * u2, math.cos(v1) * u2


# ------------------------------------------------ fills of fixed-size groups ----
#
# Every fill below has the same loop nest. Group g (one block) makes the
# outputs out[G*g : G*g + G] (G = 4 or 2); the last group may be cut short:
#
#     for p in prange(PIECES):                 # range(1) when not parallel
#         for g in piece p's groups:           # vectorized: 8-16 groups per step
#             x0, x1, x2, x3 = philox_at(key, counter, g)
#             out[G*g : G*g + G] = distribution(x0, x1, x2, x3)
#
# The inner loops are separate (not inlined) functions that index a slice of
# ``out`` from 0: LLVM then vectorizes them, inside a prange body or not.

@numba.njit(inline="always")
def _groups_of(size, per_group):
    return (size + per_group - 1) // per_group


@numba.njit(cache=True, nogil=True)
def _words_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    o = out[4 * g0:min(4 * g1, out.size)]
    base = np.uint64(g0)
    full = o.size // 4
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        o[4 * g] = x0
        o[4 * g + 1] = x1
        o[4 * g + 2] = x2
        o[4 * g + 3] = x3
    if o.size > 4 * full:
        x = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        for j in range(o.size - 4 * full):
            o[4 * full + j] = x[j]


@numba.njit(cache=True, nogil=True)
def _uniform_f32_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    o = out[4 * g0:min(4 * g1, out.size)]
    base = np.uint64(g0)
    full = o.size // 4
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        o[4 * g] = uint32_to_float(x0)
        o[4 * g + 1] = uint32_to_float(x1)
        o[4 * g + 2] = uint32_to_float(x2)
        o[4 * g + 3] = uint32_to_float(x3)
    if o.size > 4 * full:
        x = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        for j in range(o.size - 4 * full):
            o[4 * full + j] = uint32_to_float(x[j])


@numba.njit(cache=True, nogil=True)
def _uniform_f64_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    o = out[2 * g0:min(2 * g1, out.size)]
    base = np.uint64(g0)
    full = o.size // 2
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        o[2 * g] = uint64_to_double(x0, x1)
        o[2 * g + 1] = uint64_to_double(x2, x3)
    if o.size > 2 * full:
        x0, x1, _, _ = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        o[2 * full] = uint64_to_double(x0, x1)


@numba.njit(cache=True, nogil=True)
def _uniform_int32_piece(key, ctr_lo, ctr_hi, lo, span, out, g0, g1):
    # lo + (x % span) in uint64, cut to 32 bits: the wrap-around of TF's SignedAdd.
    o = out[4 * g0:min(4 * g1, out.size)]
    base = np.uint64(g0)
    ulo = np.uint64(lo)
    full = o.size // 4
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        o[4 * g] = np.int32((ulo + x0 % span) & _M32)
        o[4 * g + 1] = np.int32((ulo + x1 % span) & _M32)
        o[4 * g + 2] = np.int32((ulo + x2 % span) & _M32)
        o[4 * g + 3] = np.int32((ulo + x3 % span) & _M32)
    if o.size > 4 * full:
        x = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        for j in range(o.size - 4 * full):
            o[4 * full + j] = np.int32((ulo + x[j] % span) & _M32)


@numba.njit(cache=True, nogil=True)
def _uniform_int64_piece(key, ctr_lo, ctr_hi, lo, span, out, g0, g1):
    o = out[2 * g0:min(2 * g1, out.size)]
    base = np.uint64(g0)
    ulo = np.uint64(lo)
    full = o.size // 2
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        o[2 * g] = np.int64(ulo + (x0 | (x1 << _S32)) % span)
        o[2 * g + 1] = np.int64(ulo + (x2 | (x3 << _S32)) % span)
    if o.size > 2 * full:
        x0, x1, _, _ = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        o[2 * full] = np.int64(ulo + (x0 | (x1 << _S32)) % span)


@numba.njit(cache=True, nogil=True)
def _normal_f32_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    o = out[4 * g0:min(4 * g1, out.size)]
    base = np.uint64(g0)
    full = o.size // 4
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        a, b = box_muller_f32(x0, x1)
        c, d = box_muller_f32(x2, x3)
        o[4 * g] = a
        o[4 * g + 1] = b
        o[4 * g + 2] = c
        o[4 * g + 3] = d
    rest = o.size - 4 * full
    if rest:
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        a, b = box_muller_f32(x0, x1)
        c, d = box_muller_f32(x2, x3)
        v = (a, b, c, d)
        for j in range(rest):
            o[4 * full + j] = v[j]


@numba.njit(cache=True, nogil=True)
def _normal_f64_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    o = out[2 * g0:min(2 * g1, out.size)]
    base = np.uint64(g0)
    full = o.size // 2
    for g in range(full):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(g))
        a, b = box_muller_f64(x0, x1, x2, x3)
        o[2 * g] = a
        o[2 * g + 1] = b
    if o.size > 2 * full:
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, base + np.uint64(full))
        o[2 * full] = box_muller_f64(x0, x1, x2, x3)[0]


# ------------------------------------------- truncated normal: own stretches ----

@numba.njit(cache=True, nogil=True)
def _truncated_f32_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    """Groups g0..g1 of 4: each reads blocks from its own start, two pairs a block."""
    n = out.size
    for g in range(g0, g1):
        lo, hi = skip(ctr_lo, ctr_hi, np.uint64(g) * np.uint64(TRUNCATED_STRIDE_F32))
        need = min(4, n - 4 * g)
        filled = 0
        b = 0
        while filled < need:
            x0, x1, x2, x3 = philox_at(key, lo, hi, np.uint64(b))
            b += 1
            for f in box_muller_f32(x0, x1) + box_muller_f32(x2, x3):
                if filled < need and abs(f) < _TRUNCATE_F32:
                    out[4 * g + filled] = f
                    filled += 1


@numba.njit(cache=True, nogil=True)
def _truncated_f64_piece(key, ctr_lo, ctr_hi, out, g0, g1):
    """Groups g0..g1 of 2: each reads blocks from its own start, one pair a block."""
    n = out.size
    for g in range(g0, g1):
        lo, hi = skip(ctr_lo, ctr_hi, np.uint64(g) * np.uint64(TRUNCATED_STRIDE_F64))
        need = min(2, n - 2 * g)
        filled = 0
        b = 0
        while filled < need:
            x0, x1, x2, x3 = philox_at(key, lo, hi, np.uint64(b))
            b += 1
            for f in box_muller_f64(x0, x1, x2, x3):
                if filled < need and abs(f) < 2.0:
                    out[2 * g + filled] = f
                    filled += 1


# ---------------------------------------------------------------- kernels ----
#
# One front per distribution: split the groups into pieces, run the pieces.
# (Numba cannot take the piece function as an argument and still cache, so the
# few lines are repeated; each kernel is compiled only for the dtypes it serves.)

def words_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``out`` = the stream's raw 32-bit words, four per block, in order.

    Loop nest::

        for p in prange(PIECES):  for g in piece p:  out[4g:4g+4] = philox_at(g)
    """
    groups = _groups_of(out.size, 4)
    if parallel:
        for p in prange(PIECES):
            _words_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                         (p + 1) * groups // PIECES)
    else:
        _words_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def uniform_f32_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``RandomUniform`` float32: ``out[4g + j] = uint32_to_float(block(g)[j])``."""
    groups = _groups_of(out.size, 4)
    if parallel:
        for p in prange(PIECES):
            _uniform_f32_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                               (p + 1) * groups // PIECES)
    else:
        _uniform_f32_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def uniform_f64_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``RandomUniform`` float64: ``out[2g + j] = uint64_to_double(words 2j, 2j + 1)``."""
    groups = _groups_of(out.size, 2)
    if parallel:
        for p in prange(PIECES):
            _uniform_f64_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                               (p + 1) * groups // PIECES)
    else:
        _uniform_f64_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def uniform_int32_kernel(key, ctr_lo, ctr_hi, lo, span, out, parallel):
    """``RandomUniformInt`` int32: ``out[4g + j] = lo + block(g)[j] % span`` (wrapping)."""
    groups = _groups_of(out.size, 4)
    if parallel:
        for p in prange(PIECES):
            _uniform_int32_piece(key, ctr_lo, ctr_hi, lo, span, out, p * groups // PIECES,
                                 (p + 1) * groups // PIECES)
    else:
        _uniform_int32_piece(key, ctr_lo, ctr_hi, lo, span, out, 0, groups)


def uniform_int64_kernel(key, ctr_lo, ctr_hi, lo, span, out, parallel):
    """``RandomUniformInt`` int64: ``lo + (w0 | w1 << 32) % span``, two per block."""
    groups = _groups_of(out.size, 2)
    if parallel:
        for p in prange(PIECES):
            _uniform_int64_piece(key, ctr_lo, ctr_hi, lo, span, out, p * groups // PIECES,
                                 (p + 1) * groups // PIECES)
    else:
        _uniform_int64_piece(key, ctr_lo, ctr_hi, lo, span, out, 0, groups)


def normal_f32_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``RandomStandardNormal`` float32: Box-Muller on words (0, 1) and (2, 3) of block g."""
    groups = _groups_of(out.size, 4)
    if parallel:
        for p in prange(PIECES):
            _normal_f32_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                              (p + 1) * groups // PIECES)
    else:
        _normal_f32_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def normal_f64_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``RandomStandardNormal`` float64: one Box-Muller pair from all four words of block g."""
    groups = _groups_of(out.size, 2)
    if parallel:
        for p in prange(PIECES):
            _normal_f64_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                              (p + 1) * groups // PIECES)
    else:
        _normal_f64_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def truncated_normal_f32_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``TruncatedNormal`` float32. Loop nest::

        for p in prange(PIECES):
            for g in piece p:                          # groups of 4 outputs
                b = g * 256                            # this group's first block
                while the group is not full:
                    for f in box_muller(block(b) words 0,1) + (words 2,3):
                        if |f| < 2: keep f
                    b += 1
    """
    groups = _groups_of(out.size, 4)
    if parallel:
        for p in prange(PIECES):
            _truncated_f32_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                                 (p + 1) * groups // PIECES)
    else:
        _truncated_f32_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def truncated_normal_f64_kernel(key, ctr_lo, ctr_hi, out, parallel):
    """``TruncatedNormal`` float64: groups of 2, 128 blocks apart, one pair per block."""
    groups = _groups_of(out.size, 2)
    if parallel:
        for p in prange(PIECES):
            _truncated_f64_piece(key, ctr_lo, ctr_hi, out, p * groups // PIECES,
                                 (p + 1) * groups // PIECES)
    else:
        _truncated_f64_piece(key, ctr_lo, ctr_hi, out, 0, groups)


def fill_signature(np_dtype):
    """``void(key, ctr_lo, ctr_hi, out, parallel)`` with a 1-D contiguous ``out``."""
    t = numba.from_dtype(np_dtype)
    return numba.void(numba.uint64, numba.uint64, numba.uint64, t[::1], numba.boolean)


def uniform_int_signature(np_dtype):
    """``void(key, ctr_lo, ctr_hi, lo, span, out, parallel)``: ``span = hi - lo`` unsigned."""
    t = numba.from_dtype(np_dtype)
    return numba.void(numba.uint64, numba.uint64, numba.uint64, numba.int64, numba.uint64,
                      t[::1], numba.boolean)


# --------------------------------------------------------------- shuffle ----

def shuffle_kernel(key, ctr_lo, ctr_hi, perm):
    """``RandomShuffle``'s permutation of ``0 .. n-1`` into ``perm``.

    TF's own Fisher-Yates (``ShuffleRange`` in shuffle_common.h), written to
    use exactly ``n - 1`` words, one per step, read in order from the stream::

        for i in range(n - 1):
            j = i + word[i] % (n - i)          # uint32 arithmetic
            swap(perm[i], perm[j])

    ``% (n - i)`` is slightly biased for huge ``n``; TF accepts that, so do we.
    Serial: each step depends on the swaps before it.
    """
    n = perm.size
    for i in range(n):
        perm[i] = i
    x0 = x1 = x2 = x3 = np.uint64(0)
    for i in range(n - 1):
        if i % 4 == 0:
            x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(i // 4))
        w = (x0, x1, x2, x3)[i % 4]
        j = i + np.int64(w % np.uint64(n - i))
        perm[i], perm[j] = perm[j], perm[i]


def shuffle_signature():
    return numba.void(numba.uint64, numba.uint64, numba.uint64, numba.int64[::1])


def shuffle_queue_pick_kernel(key, ctr_lo, ctr_hi, block, used, order, size, out):
    """A ``RandomShuffleQueue`` taking ``k = out.size`` elements: TF's
    ``DequeueLocked`` once per element, each with the next 32-bit word of the
    queue's stream (TF's ``SingleSampleAdapter``: a block's four words in
    order, then the next block).

    ``order[:size]`` holds the queue's elements (as slots of its storage) in
    TF's vector order. Each take removes the element at ``word % size`` and
    moves the last one into the hole, so the next word sees one element less::

        for j in range(k):
            if used == 4:  block = philox_at(g); g += 1; used = 0
            i = block[used] % (size - j);  used += 1      # uint32 % size, as TF
            out[j] = order[i]
            order[i] = order[size - 1 - j]

    ``block`` (4 words) and ``used`` are the stream's current block and how
    many of its words are gone; ``g`` counts blocks from ``(ctr_lo, ctr_hi)``,
    the next one. Returns ``(g, used)``: how many blocks were made, and the
    words used of the last. ``order`` and ``block`` are changed in place.
    Serial: each take depends on the ones before.
    """
    g = 0
    for j in range(out.size):
        if used == 4:
            x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
            block[0] = x0
            block[1] = x1
            block[2] = x2
            block[3] = x3
            g += 1
            used = 0
        live = size - j
        i = np.int64(block[used] % np.uint64(live))
        used += 1
        out[j] = order[i]
        order[i] = order[live - 1]
    return g, used


def shuffle_queue_pick_signature():
    return numba.types.UniTuple(numba.int64, 2)(
        numba.uint64, numba.uint64, numba.uint64, numba.uint64[::1], numba.int64,
        numba.int64[::1], numba.int64, numba.int64[::1])


# ----------------------------------------------------------- multinomial ----

@numba.njit(inline="always")
def _upper_bound(cdf, x):
    """The first index ``i`` with ``cdf[i] > x`` (``len(cdf)`` if none): ``std::upper_bound``."""
    lo, hi = 0, cdf.size
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, nogil=True)
def _multinomial_rows(key, ctr_lo, ctr_hi, logits, num_samples, start, stop, out):
    classes = logits.shape[1]
    # TF's shard skip: start * (num_samples + 3) / 4 blocks (C integer division).
    lo, hi = skip(ctr_lo, ctr_hi, np.uint64(start * (num_samples + 3) // 4))
    cdf = np.empty(classes)
    drawn = 0
    x0 = x1 = x2 = x3 = np.uint64(0)
    for b in range(start, stop):
        row = logits[b]
        top = -np.inf
        for j in range(classes):
            if np.isfinite(row[j]) and row[j] > top:
                top = row[j]
        total = 0.0
        for j in range(classes):
            if np.isfinite(row[j]):
                total += math.exp(row[j] - top)
            cdf[j] = total
        for s in range(num_samples):
            # SimplePhilox::RandDouble: two words per sample, so two per block.
            if drawn % 2 == 0:
                x0, x1, x2, x3 = philox_at(key, lo, hi, np.uint64(drawn // 2))
                u = uint64_to_double(x0, x1)
            else:
                u = uint64_to_double(x2, x3)
            drawn += 1
            out[b, s] = _upper_bound(cdf, u * total)


def multinomial_kernel(key, ctr_lo, ctr_hi, logits, num_samples, shard_starts, out, parallel):
    """``Multinomial``: ``out[b, s]`` = a class drawn from ``softmax(logits[b])``.

    Per row: ``cdf[j] = sum of exp(logits[b, k] - max)`` over finite ``k <= j``
    (not normalized); a sample is ``upper_bound(cdf, uniform_double * cdf[-1])``.

    The rows are cut into TF's work shards (``shard_starts``; see
    ``random_streams.tf_work_shards``) because, unlike the fills above, TF's
    multinomial is *not* independent of its split: a shard starting at row
    ``r`` skips ``r * (num_samples + 3) // 4`` blocks, then its rows draw two
    words per sample one after another. The numbers therefore depend on the
    shards, never on how many threads run them here. Loop nest::

        for s in prange(len(shard_starts)):
            for b in shard s's rows:  build cdf;  for each sample: binary search
    """
    batch = logits.shape[0]
    shards = shard_starts.size
    if parallel:
        for s in prange(shards):
            stop = shard_starts[s + 1] if s + 1 < shards else batch
            _multinomial_rows(key, ctr_lo, ctr_hi, logits, num_samples, shard_starts[s],
                              stop, out)
    else:
        for s in range(shards):
            stop = shard_starts[s + 1] if s + 1 < shards else batch
            _multinomial_rows(key, ctr_lo, ctr_hi, logits, num_samples, shard_starts[s],
                              stop, out)


def multinomial_signature(out_dtype):
    """``void(key, ctr_lo, ctr_hi, logits f64[B, C], num_samples, shard_starts, out, parallel)``."""
    t = numba.from_dtype(out_dtype)
    return numba.void(numba.uint64, numba.uint64, numba.uint64, readonly(np.float64, 2),
                      numba.int64, readonly(np.int64, 1), t[:, ::1], numba.boolean)
