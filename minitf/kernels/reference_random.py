"""TF's random streams in plain numpy: the oracle the Numba kernels are tested against.

The fast kernels live in :mod:`minitf.kernels.cpu.philox`; this module computes
the same numbers the obvious way, whole arrays at a time, favouring being
clearly right over being fast. Tests compare the two, and both against real
TensorFlow. Nothing here is used at run time.

The pieces, in the order TF stacks them:

1. :func:`philox` -- Philox4x32-10: a 128-bit *counter* and a 64-bit *key*
   go through ten rounds of multiply/xor; out come four 32-bit words. Block
   ``g`` of a stream is ``philox(key, counter + g)``.
2. Word -> sample conversions (``random_distributions.h``): mantissa bits for
   uniform floats, ``%`` for integers, Box-Muller for normals.
3. The fill loops (``random_op_cpu.h``): which block feeds which output.

Box-Muller uses numpy's float32 ``log``/``sin``/``cos``, which may differ from
the C library's (what TF and the Numba kernels call) in the last bit, so
normal-based results agree with them to about 1e-7 relative, not bit for bit.
"""

import ml_dtypes
import numpy as np

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
M128 = (1 << 128) - 1

# Philox's constants (Salmon et al. 2011): the round multipliers and the two
# "Weyl" increments that raise the key between rounds.
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85


# ------------------------------------------------------------ the generator ----

def key_counter_from_seeds(seed, seed2):
    """``PhiloxRandom(seed, seed2)``: the key is ``seed``, the counter's high half ``seed2``.

    Returns ``(key, counter)`` as tuples of 2 and 4 Python ints (32-bit words,
    least significant first). Both seeds are taken as 64-bit two's complement.
    """
    s, s2 = int(seed) & M64, int(seed2) & M64
    return (s & M32, s >> 32), (0, 0, s2 & M32, s2 >> 32)


def counter_to_int(counter):
    c0, c1, c2, c3 = (int(c) for c in counter)
    return c0 | c1 << 32 | c2 << 64 | c3 << 96


def int_to_counter(value):
    value &= M128
    return tuple((value >> (32 * i)) & M32 for i in range(4))


def skip(counter, count):
    """The counter ``count`` 128-bit blocks further on (TF's ``PhiloxRandom::Skip``)."""
    return int_to_counter(counter_to_int(counter) + int(count))


def philox(key, counter, n):
    """Blocks ``0 .. n-1`` of the stream at ``(key, counter)``: a uint32 array ``(n, 4)``."""
    g = np.arange(n, dtype=np.uint64)
    base = counter_to_int(counter)
    lo = np.uint64(base & M64) + g                       # wraps modulo 2**64
    hi = np.uint64((base >> 64) & M64) + (lo < np.uint64(base & M64)).astype(np.uint64)
    m32 = np.uint64(M32)
    c0, c1, c2, c3 = lo & m32, lo >> np.uint64(32), hi & m32, hi >> np.uint64(32)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0 = np.uint64(PHILOX_M0) * c0
        p1 = np.uint64(PHILOX_M1) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m32)
        k0 = (k0 + np.uint64(PHILOX_W0)) & m32
        k1 = (k1 + np.uint64(PHILOX_W1)) & m32
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def words(key, counter, n):
    """The stream's first ``n`` 32-bit words, in order (``SingleSampleAdapter``)."""
    return philox(key, counter, (n + 3) // 4).reshape(-1)[:n]


# -------------------------------------------------------- word -> sample ----

def uint32_to_float(w):
    """``Uint32ToFloat``: 23 mantissa bits under exponent 0 give [1, 2); minus 1."""
    bits = (np.asarray(w, np.uint32) & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)
    return bits.view(np.float32) - np.float32(1)


def uint64_to_double(w_hi, w_lo):
    """``Uint64ToDouble(x0, x1)``: 20 bits of ``x0`` and all of ``x1`` as the mantissa."""
    man = (np.asarray(w_hi, np.uint64) & np.uint64(0xFFFFF)) << np.uint64(32) \
        | np.asarray(w_lo, np.uint64)
    return (man | np.uint64(1023 << 52)).view(np.float64) - 1.0


def uint16_to_half(w):
    """``Uint16ToHalf``: the low 10 bits of each word as a float16 mantissa."""
    bits = (np.asarray(w, np.uint32) & np.uint32(0x3FF)) | np.uint32(15 << 10)
    return bits.astype(np.uint16).view(np.float16) - np.float16(1)


def uint16_to_bfloat16(w):
    """``Uint16ToGfloat16``: the low 7 bits of each word as a bfloat16 mantissa."""
    man = (np.asarray(w, np.uint32) & np.uint32(0x7F)).astype(np.float32)
    return (man / np.float32(128)).astype(ml_dtypes.bfloat16)    # exact


def box_muller_float(x0, x1):
    """``BoxMullerFloat``: two words -> two float32 normals (sin first, cos second)."""
    u1 = np.maximum(uint32_to_float(x0), np.float32(1e-7))
    # 2.0f * M_PI is a double: the angle is computed in double, then rounded.
    v1 = (2.0 * np.pi * uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    u2 = np.sqrt(np.float32(-2) * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


def box_muller_double(x0, x1, x2, x3):
    """``BoxMullerDouble``: four words -> two float64 normals."""
    u1 = np.maximum(uint64_to_double(x0, x1), 1e-7)
    v1 = 2 * np.pi * uint64_to_double(x2, x3)
    u2 = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


# ------------------------------------------------------------- the fills ----

def group_size(dtype):
    """Outputs per 128-bit block: 4 for 32- and 16-bit types, 2 for 64-bit ones."""
    return 2 if np.dtype(dtype).itemsize == 8 else 4


def uniform(key, counter, n, dtype):
    """``RandomUniform``: ``n`` samples in [0, 1) of a float ``dtype``."""
    dtype = np.dtype(dtype)
    blocks = philox(key, counter, -(-n // group_size(dtype)))
    if dtype == np.float64:
        out = uint64_to_double(blocks[:, 0::2], blocks[:, 1::2])
    elif dtype == np.float32:
        out = uint32_to_float(blocks)
    elif dtype == np.float16:
        out = uint16_to_half(blocks)
    elif dtype == ml_dtypes.bfloat16:
        out = uint16_to_bfloat16(blocks)
    else:
        raise TypeError("RandomUniform has no %s kernel" % dtype)
    return out.reshape(-1)[:n]


def uniform_int(key, counter, n, lo, hi, dtype):
    """``RandomUniformInt``: ``lo + (bits % (hi - lo))`` with TF's unsigned range."""
    dtype = np.dtype(dtype)
    bits_per = 64 if dtype == np.int64 else 32
    rng = (int(hi) - int(lo)) % (1 << bits_per)
    blocks = philox(key, counter, -(-n // group_size(dtype))).astype(np.uint64)
    if bits_per == 64:
        bits = blocks[:, 0::2] | (blocks[:, 1::2] << np.uint64(32))
    else:
        bits = blocks
    r = (bits % np.uint64(rng)).reshape(-1)[:n]
    # Python ints: lo + r wraps modulo 2**bits like TF's SignedAdd.
    wrapped = [((int(lo) + int(v)) + (1 << (bits_per - 1))) % (1 << bits_per)
               - (1 << (bits_per - 1)) for v in r]
    return np.array(wrapped, dtype=dtype)


def normal(key, counter, n, dtype):
    """``RandomStandardNormal``: Box-Muller on each block's words."""
    dtype = np.dtype(dtype)
    blocks = philox(key, counter, -(-n // group_size(dtype)))
    if dtype == np.float64:
        a, b = box_muller_double(blocks[:, 0], blocks[:, 1], blocks[:, 2], blocks[:, 3])
        out = np.stack([a, b], axis=-1)
    else:
        a0, b0 = box_muller_float(blocks[:, 0], blocks[:, 1])
        a1, b1 = box_muller_float(blocks[:, 2], blocks[:, 3])
        out = np.stack([a0, b0, a1, b1], axis=-1)
        if dtype != np.float32:
            out = out.astype(dtype)
    return out.reshape(-1)[:n]


def truncated_normal(key, counter, n, dtype):
    """``TruncatedNormal``: normals with ``|x| < 2``, rejection-sampled per group.

    Group ``g`` (4 outputs, or 2 for float64) reads its own stretch of the stream,
    starting ``256 * group size / 4`` blocks after group ``g - 1``'s, word by word,
    and keeps drawing Box-Muller pairs until the group is full.
    """
    dtype = np.dtype(dtype)
    size = group_size(dtype)
    stride = size * 256 // 4
    out = np.empty(-(-n // size) * size, np.float64 if dtype == np.float64 else np.float32)
    for g in range(len(out) // size):
        stream = iter(words(key, skip(counter, g * stride), stride * 4))
        filled = 0
        while filled < size:
            if dtype == np.float64:
                pair = box_muller_double(*(np.uint32(next(stream)) for _ in range(4)))
            else:
                pair = box_muller_float(np.uint32(next(stream)), np.uint32(next(stream)))
            for v in pair:
                if filled < size and abs(v) < 2:
                    out[g * size + filled] = v
                    filled += 1
    return out[:n].astype(dtype)


def shuffle_permutation(key, counter, size):
    """``RandomShuffle``'s order: Fisher-Yates from the front, ``j = i + w % (size - i)``."""
    perm = np.arange(size)
    w = words(key, counter, max(size - 1, 0))
    for i in range(size - 1):
        j = i + int(w[i]) % (size - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def multinomial(key, counter, logits, num_samples, shard_starts, output_dtype=np.int64):
    """``Multinomial``: per row, an unnormalized CDF of ``exp(logit - max)``; a sample is
    the first class whose CDF exceeds ``uniform double * total``.

    Rows are cut into TF's work shards (``shard_starts``, each shard running to the
    next start): a shard skips ``start * (num_samples + 3) // 4`` blocks, then its
    rows draw two words per sample, one after the other.
    """
    logits = np.asarray(logits)
    batch, classes = logits.shape
    out = np.zeros((batch, num_samples), output_dtype)
    bounds = list(shard_starts) + [batch]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        n_words = 2 * num_samples * (stop - start)
        w = words(key, skip(counter, start * (num_samples + 3) // 4), n_words)
        pos = 0
        for b in range(start, stop):
            row = logits[b]
            finite = np.isfinite(row)
            top = row[finite].max() if finite.any() else np.finfo(row.dtype).min
            exps = np.exp(row.astype(np.float64) - float(top))
            cdf = np.cumsum(np.where(finite, exps, 0.0))
            total = cdf[-1]
            for j in range(num_samples):
                u = uint64_to_double(w[pos], w[pos + 1])
                pos += 2
                out[b, j] = np.searchsorted(cdf, u * total, side="right")
    return out
