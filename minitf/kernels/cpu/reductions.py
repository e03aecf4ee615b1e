"""Reductions (sum, prod, max, min) and argmax/argmin as Numba loop nests.

The caller first views the input as a 3-D C-contiguous array ``x[A, K, B]``:
``A`` = the kept axes before the reduced block, ``K`` = the reduced axes,
``B`` = the kept axes after it. Every reduction is then::

    out[a, b] = combine(x[a, 0, b], x[a, 1, b], ..., x[a, K - 1, b])

The work is cut into ``A * C`` items: item ``(a, c)`` reduces the ``c``-th of
``C`` chunks of the ``k`` range into ``partial[a, c, :]``; the caller combines
the ``C`` partials (``C`` is 1 unless ``A`` alone is too small to keep every
thread busy, e.g. a full reduction, where ``A == B == 1``)::

    for item in prange(A * C):                 # one item per task
        a, c = divmod(item, C)
        for k in chunk c of range(K):
            if B == 1:  acc = combine(acc, x[a, k, 0])          # a contiguous run
            else:       for b in range(B):                      # a contiguous row
                            partial[a, c, b] = combine(partial[a, c, b], x[a, k, b])

Both inner loops read memory in order, which lets LLVM use SIMD. Float sums
and products accumulate in float64 (``partial`` is float64 for float32 input):
as accurate as numpy's pairwise sum, and ``fastmath={"reassoc"}`` lets the
compiler reorder the additions for speed.

Float Max and Min have a kernel of their own, :func:`float_extreme_kernel`,
which compares the floats' bit patterns as integers (see its docstring): a
float max that must notice NaNs does not vectorize, an integer max does.
:func:`reduce_kernel` still serves integer Max/Min and bool All/Any.
"""

import numba
import numpy as np
from numba import prange

SUM, PROD, MAX, MIN = 0, 1, 2, 3
OP_CODES = {"sum": SUM, "prod": PROD, "max": MAX, "min": MIN}


@numba.njit(inline="always")
def _combine(op, acc, v):
    if op == SUM:
        return acc + v
    if op == PROD:
        return acc * v
    if op == MAX:
        # ``v != v`` is NaN: the first NaN wins and then sticks, like numpy.
        return v if (v > acc or v != v) else acc
    return v if (v < acc or v != v) else acc


@numba.njit(inline="always")
def _reduce_item(x, op, init, partial, item):
    A, K, B = x.shape
    C = partial.shape[1]
    a = item // C
    c = item % C
    lo = c * K // C
    hi = (c + 1) * K // C
    if B == 1:
        # A contiguous run: index a 1-D slice from 0 so that numba can drop its
        # negative-index checks and LLVM can vectorize the loop.
        run = x.reshape(x.size)[a * K + lo:a * K + hi]
        acc = init
        if op == SUM:
            for k in range(run.size):
                acc += run[k]
        elif op == PROD:
            for k in range(run.size):
                acc *= run[k]
        else:
            # Integer Max/Min (float Max/Min use float_extreme_kernel): four
            # independent accumulators let the CPU overlap four comparisons.
            m0 = m1 = m2 = m3 = acc
            n4 = run.size // 4 * 4
            for k in range(0, n4, 4):
                m0 = _combine(op, m0, run[k])
                m1 = _combine(op, m1, run[k + 1])
                m2 = _combine(op, m2, run[k + 2])
                m3 = _combine(op, m3, run[k + 3])
            for k in range(n4, run.size):
                m0 = _combine(op, m0, run[k])
            acc = _combine(op, _combine(op, m0, m1), _combine(op, m2, m3))
        partial[a, c, 0] = acc
    else:
        for b in range(B):
            partial[a, c, b] = init
        for k in range(lo, hi):
            for b in range(B):
                partial[a, c, b] = _combine(op, partial[a, c, b], x[a, k, b])


def reduce_kernel(x, op, init, partial, parallel):
    """``partial[a, c, b]`` = ``op``-combination of ``x[a, k, b]`` over chunk ``c`` of k.

    ``op`` is one of SUM, PROD, MAX, MIN; ``init`` its identity (0, 1, lowest,
    highest), which is also the answer over an empty ``k`` range. Loop nest::

        for item in prange(A * C):      # range(...) when parallel is False
            reduce chunk (a, c) = divmod(item, C) into partial[a, c, :]
    """
    n_items = partial.shape[0] * partial.shape[1]
    if parallel:
        for item in prange(n_items):
            _reduce_item(x, op, init, partial, item)
    else:
        for item in range(n_items):
            _reduce_item(x, op, init, partial, item)


@numba.njit(inline="always")
def _arg_item(x, find_max, best, where, item):
    A, K, B = x.shape
    C = best.shape[1]
    a = item // C
    c = item % C
    lo = c * K // C
    hi = (c + 1) * K // C
    for b in range(B):
        best[a, c, b] = x[a, lo, b]
        where[a, c, b] = lo
    for k in range(lo + 1, hi):
        for b in range(B):
            v = x[a, k, b]
            cur = best[a, c, b]
            # Strict comparison keeps the first of equal values (TF, numpy);
            # the first NaN wins, as in numpy.
            better = (v > cur) if find_max else (v < cur)
            if better or (v != v and cur == cur):
                best[a, c, b] = v
                where[a, c, b] = k


def arg_reduce_kernel(x, find_max, best, where, parallel):
    """``where[a, c, b]`` = index k of the max (or min) of ``x[a, k, b]`` in chunk c.

    ``best`` holds the winning values, so the caller can pick the best chunk.
    Loop nest::

        for item in prange(A * C):
            a, c = divmod(item, C)
            for k in chunk c:  for b in range(B):
                if x[a, k, b] beats best[a, c, b]:  best, where = x[a, k, b], k
    """
    n_items = best.shape[0] * best.shape[1]
    if parallel:
        for item in prange(n_items):
            _arg_item(x, find_max, best, where, item)
    else:
        for item in range(n_items):
            _arg_item(x, find_max, best, where, item)


# ------------------------------------------------- float Max/Min via bits ----

@numba.njit(inline="always")
def _key(i, top):
    """The sortable integer key of the float whose bits are the signed int ``i``.

    ``top`` is the int with every bit set but the sign (0x7fffffff for float32).
    The map is its own inverse: ``_key(_key(i, top), top) == i``, which is how
    a winning key is turned back into float bits. ``np.bitwise_xor`` rather than
    ``^``: on int32, numba's operators widen to int64 (4 SIMD lanes instead of
    8); the ufunc keeps int32.
    """
    return np.bitwise_xor(i, top) if i < 0 else i


@numba.njit(inline="always")
def _decode(find_max, kmax, kmin, top, inf_bits, nan_bits):
    """The float bits of the Max (or Min), from the largest and smallest key."""
    if kmax > inf_bits or kmin < np.invert(inf_bits):
        return nan_bits             # a key beyond +-inf's: some input was a NaN
    return _key(kmax if find_max else kmin, top)


@numba.njit(inline="always")
def _extreme_item(bits, find_max, top, inf_bits, nan_bits, out, item):
    A, K, B = bits.shape
    C = out.shape[1]
    a = item // C
    c = item % C
    lo = c * K // C
    hi = (c + 1) * K // C
    # Start from the key of the identity (-inf for Max, +inf for Min): one more
    # element that never wins and is the answer over an empty range.
    # key(-x) == ~key(x), so key(-inf) == ~inf_bits.
    first = np.invert(inf_bits) if find_max else inf_bits
    if B == 1:
        # A contiguous run (see _reduce_item): two accumulators that LLVM
        # splits into SIMD lanes (an integer max may be taken in any order).
        run = bits.reshape(bits.size)[a * K + lo:a * K + hi]
        kmax = kmin = first
        for k in range(run.size):
            key = _key(run[k], top)
            kmax = max(kmax, key)
            kmin = min(kmin, key)
        out[a, c, 0] = _decode(find_max, kmax, kmin, top, inf_bits, nan_bits)
    else:
        # Rows: B running keys in kmax (the output row) and kmin. Each pass of
        # the b loop folds in four contiguous rows of x, so that kmax and kmin
        # are loaded and stored once per four rows instead of once per row.
        kmax = out[a, c]
        kmin = np.empty_like(kmax)
        for b in range(B):
            kmax[b] = first
            kmin[b] = first
        k4 = lo + (hi - lo) // 4 * 4
        for k in range(lo, k4, 4):
            x0 = bits[a, k]
            x1 = bits[a, k + 1]
            x2 = bits[a, k + 2]
            x3 = bits[a, k + 3]
            for b in range(B):
                v0 = _key(x0[b], top)
                v1 = _key(x1[b], top)
                v2 = _key(x2[b], top)
                v3 = _key(x3[b], top)
                kmax[b] = max(kmax[b], max(max(v0, v1), max(v2, v3)))
                kmin[b] = min(kmin[b], min(min(v0, v1), min(v2, v3)))
        for k in range(k4, hi):
            row = bits[a, k]
            for b in range(B):
                key = _key(row[b], top)
                kmax[b] = max(kmax[b], key)
                kmin[b] = min(kmin[b], key)
        for b in range(B):
            kmax[b] = _decode(find_max, kmax[b], kmin[b], top, inf_bits, nan_bits)


def float_extreme_kernel(bits, find_max, top, inf_bits, nan_bits, out, parallel):
    """Float Max (``find_max``) or Min over k, computed on the floats' bits.

    ``bits`` is the float input ``x[A, K, B]`` viewed as same-width signed ints
    (float32 -> int32, float64 -> int64: a free numpy ``.view``) and ``out`` the
    ``[A, C, B]`` float partials viewed the same way; ``top``, ``inf_bits`` and
    ``nan_bits`` come from :func:`float_bits_constants`. Same items and loop
    nest as :func:`reduce_kernel`, on integer keys::

        for item in prange(A * C):          # range(...) when parallel is False
            a, c = divmod(item, C)
            for k in chunk c:  for b in range(B):
                key = bits[a, k, b] ^ (top if bits[a, k, b] < 0 else 0)
                kmax[b] = max(kmax[b], key);  kmin[b] = min(kmin[b], key)
            out[a, c, b] = NaN if kmax[b] or kmin[b] is beyond +-inf's key,
                           else the float whose key is kmax[b] (Max) / kmin[b] (Min)

    **Why not compare the floats?** numpy and TF propagate NaN, so a float loop
    tests ``v != v`` for every element. LLVM only turns a float max/min loop
    into a SIMD reduction under fast-math "no NaNs", which would also delete
    that test; without it the loop runs one element at a time (2-3.5x slower
    than numpy's max on 10M elements, two threads against one). Integer max
    and min are associative and know no NaN, so the same loop over int keys
    becomes ``vpmaxsd``/``vpminsd`` on 8 int32 lanes (``vpmaxsq``/``vpminsq``
    on 4 int64 lanes, 256-bit registers) plus two instructions for the key;
    ``kernel.inspect_asm()`` shows them.

    **Why the keys sort like the floats.** An IEEE float is sign + magnitude,
    and magnitudes compare as integers in the same order as the values
    (exponent above fraction, both biased upwards; +inf above every finite
    number, NaNs above +inf). As a signed int, a non-negative float is its
    magnitude and a negative one is ``sign bit + magnitude`` < 0: below every
    non-negative one, as it should be, but a larger magnitude gives a larger
    int where it should give a smaller float. ``i ^ top`` flips the magnitude
    bits of the negative ones, reversing their order, and keeps the sign bit.
    So for ``x >= +0.0``, ``key(-x) == ~key(x) == -key(x) - 1``: the keys are
    in float order, with -0.0 (key -1) just below +0.0 (key 0), so Max of both
    gives +0.0 and Min -0.0. No bit is lost: float64 values one ulp apart get
    different keys.

    **NaN.** A NaN has the largest exponent and a nonzero fraction, so its
    magnitude is above inf's: a positive NaN's key is above ``key(+inf) ==
    inf_bits``, a negative NaN's below ``key(-inf) == ~inf_bits``. Keeping
    both the largest and the smallest key therefore catches every NaN in the
    same pass, and the answer is then the quiet NaN ``nan_bits``, as numpy's
    and TF's. The same two keys give the Max and the Min: the loop does not
    even depend on ``find_max``.
    """
    n_items = out.shape[0] * out.shape[1]
    if parallel:
        for item in prange(n_items):
            _extreme_item(bits, find_max, top, inf_bits, nan_bits, out, item)
    else:
        for item in range(n_items):
            _extreme_item(bits, find_max, top, inf_bits, nan_bits, out, item)


def bits_dtype(np_dtype):
    """The signed int dtype with the width of a float dtype (float32 -> int32)."""
    return np.dtype("i%d" % np.dtype(np_dtype).itemsize)


def float_bits_constants(np_dtype):
    """``(top, inf_bits, nan_bits)`` of a float dtype, as scalars of its :func:`bits_dtype`.

    ``top`` has every bit set but the sign (int32: 0x7fffffff); ``inf_bits`` and
    ``nan_bits`` are the bits of +inf (0x7f800000) and of numpy's NaN (0x7fc00000).
    """
    it = bits_dtype(np_dtype)
    return (it.type(np.iinfo(it).max), np.array(np.inf, np_dtype).view(it)[()],
            np.array(np.nan, np_dtype).view(it)[()])


def float_extreme_signature(int_dtype):
    t = numba.from_dtype(int_dtype)
    return numba.void(readonly(int_dtype, 3), numba.boolean, t, t, t, t[:, :, ::1],
                      numba.boolean)


def readonly(np_dtype, ndim):
    """The numba type of a C-contiguous input array. Declared read-only so that
    read-only numpy arrays (constants, broadcast views) are accepted too."""
    return numba.types.Array(numba.from_dtype(np_dtype), ndim, "C", readonly=True)


def reduce_signature(np_dtype, acc_dtype):
    a = numba.from_dtype(acc_dtype)
    return numba.void(readonly(np_dtype, 3), numba.int64, a, a[:, :, ::1], numba.boolean)


def arg_reduce_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 3), numba.boolean, t[:, :, ::1],
                      numba.int64[:, :, ::1], numba.boolean)


def accumulator_dtype(np_dtype, op):
    """float32 sums/products accumulate in float64; everything else in its own type."""
    if np_dtype == np.float32 and op in (SUM, PROD):
        return np.dtype(np.float64)
    return np.dtype(np_dtype)
