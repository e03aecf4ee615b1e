"""The CPU front of TF's random streams: arrays in, Philox loop nests run, arrays out.

Each function takes a *stream position* ``philox`` (anything with integer
``key`` (64-bit) and ``counter`` (128-bit) attributes, e.g.
:class:`minitf.kernels.random_streams.PhiloxRandom`) and computes what TF's
CPU kernel computes from that position. None of them moves a stream: deciding
where each op starts and how far a run advances it is
:mod:`minitf.kernels.random_streams`' job.

Work that is worth threads (by the same per-element costs TF's own sharder
uses) runs the ``prange`` variant under :data:`~.compile.PARALLEL_LOCK`; the
result is the same either way.

float16 and bfloat16 are storage types: uniform ones are built from raw words
(the same bits TF uses), normal ones computed in float32 and rounded once,
which is exactly what TF's half-precision distributions do.
"""

import warnings

import ml_dtypes
import numba
import numpy as np

from minitf.kernels.cpu import philox as _philox
from minitf.kernels.cpu.compile import PARALLEL_LOCK, PARALLEL_MIN_SIZE, jit_kernel

_M64 = (1 << 64) - 1
_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)
_U32 = np.dtype(np.uint32)

#: Dtypes of TF's CPU kernels (random_op.cc registrations).
FLOAT_DTYPES = (_F16, _BF16, _F32, _F64)
INT_DTYPES = (_I32, _I64)

# Cycles per output in TF's cost model (kElementCost of the distribution plus
# Philox's 10 per word), used to decide when threads pay. A uniform float
# costs little more than writing it to memory, so it needs 10x more outputs.
_COST = {"uniform": 13, "normal": 80, "truncated": 100}
_WORTH_THREADS = 13 * PARALLEL_MIN_SIZE * 10


def _stream(philox):
    """``(key, ctr_lo, ctr_hi)`` as the kernels take them."""
    counter = int(philox.counter)
    return (np.uint64(int(philox.key) & _M64), np.uint64(counter & _M64),
            np.uint64((counter >> 64) & _M64))


def _run(kernel, parallel, *args):
    if parallel:
        with PARALLEL_LOCK:
            kernel(*args, True)
    else:
        kernel(*args, False)


def _parallel(size, dist):
    return size * _COST[dist] >= _WORTH_THREADS


def words(philox, size):
    """The stream's first ``size`` 32-bit words (uint32), four per 128-bit block."""
    out = np.empty(size, _U32)
    kernel = jit_kernel(_philox.words_kernel, _philox.fill_signature, (_U32,))
    _run(kernel, _parallel(size, "uniform"), *_stream(philox), out)
    return out


def uniform(philox, size, dtype):
    """``RandomUniform``: ``size`` floats in [0, 1) of ``dtype``, flat."""
    dtype = np.dtype(dtype)
    if dtype in (_F16, _BF16):
        # Uint16ToHalf / Uint16ToGfloat16: the low 10 (7) bits of each word over
        # the exponent of 1.0, minus 1 -- i.e. exactly bits / 1024 (/ 128).
        w = words(philox, size)
        if dtype == _F16:
            return ((w & 0x3FF) | 0x3C00).astype(np.uint16).view(np.float16) - np.float16(1)
        return ((w & 0x7F).astype(np.float32) / np.float32(128)).astype(_BF16)
    if dtype not in (_F32, _F64):
        raise TypeError("RandomUniform has no CPU kernel for %s" % dtype)
    out = np.empty(size, dtype)
    kernel = jit_kernel(_philox.uniform_f32_kernel if dtype == _F32
                        else _philox.uniform_f64_kernel, _philox.fill_signature, (dtype,))
    _run(kernel, _parallel(size, "uniform"), *_stream(philox), out)
    return out


def uniform_int(philox, size, lo, hi, dtype):
    """``RandomUniformInt``: ``lo + bits % (hi - lo)`` (``lo < hi``) as int32 or int64."""
    dtype = np.dtype(dtype)
    if dtype not in INT_DTYPES:
        raise TypeError("RandomUniformInt has no CPU kernel for %s" % dtype)
    bits = 32 if dtype == _I32 else 64
    span = (int(hi) - int(lo)) % (1 << bits)      # TF's unsigned hi - lo
    out = np.empty(size, dtype)
    kernel = jit_kernel(_philox.uniform_int32_kernel if dtype == _I32
                        else _philox.uniform_int64_kernel, _philox.uniform_int_signature,
                        (dtype,))
    _run(kernel, _parallel(size, "uniform"), *_stream(philox), int(lo), np.uint64(span), out)
    return out


def _float_fill(py_kernel32, py_kernel64, philox, size, dtype, dist):
    dtype = np.dtype(dtype)
    if dtype not in FLOAT_DTYPES:
        raise TypeError("%s has no CPU kernel for %s" % (dist, dtype))
    compute = _F64 if dtype == _F64 else _F32
    out = np.empty(size, compute)
    kernel = jit_kernel(py_kernel64 if compute == _F64 else py_kernel32,
                        _philox.fill_signature, (compute,))
    _run(kernel, _parallel(size, dist), *_stream(philox), out)
    # TF's half distributions compute in float32 and round to nearest even.
    return out if compute == dtype else out.astype(dtype)


def normal(philox, size, dtype):
    """``RandomStandardNormal``: ``size`` Box-Muller normals of ``dtype``, flat."""
    return _float_fill(_philox.normal_f32_kernel, _philox.normal_f64_kernel, philox, size,
                       dtype, "normal")


def truncated_normal(philox, size, dtype):
    """``TruncatedNormal``: normals within two standard deviations, TF's rejection loop."""
    return _float_fill(_philox.truncated_normal_f32_kernel,
                       _philox.truncated_normal_f64_kernel, philox, size, dtype, "truncated")


def shuffle_permutation(philox, n):
    """``RandomShuffle``'s order of ``n`` rows: ``out[i]`` is the input row at output ``i``."""
    if n >= 1 << 32:
        # TF passes n - i to a uint32 parameter; beyond 2**32 rows it wraps.
        raise ValueError("RandomShuffle of %d >= 2**32 rows is not supported" % n)
    perm = np.empty(n, _I64)
    with warnings.catch_warnings():
        # jit_kernel compiles with parallel=True; a shuffle is serial by nature.
        warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
        kernel = jit_kernel(_philox.shuffle_kernel, _philox.shuffle_signature, ())
        kernel(*_stream(philox), perm)
    return perm


def shuffle_queue_pick(philox, block, used, order, size, k):
    """The ``k`` slots a ``RandomShuffleQueue`` takes from ``order[:size]``
    (updated in place), its stream at ``philox`` (the next block) with
    ``used`` words of ``block`` gone. Returns ``(slots, blocks made, used)``
    (see :func:`~minitf.kernels.cpu.philox.shuffle_queue_pick_kernel`)."""
    out = np.empty(k, _I64)
    with warnings.catch_warnings():
        # jit_kernel compiles with parallel=True; the takes are serial by nature.
        warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
        kernel = jit_kernel(_philox.shuffle_queue_pick_kernel,
                            _philox.shuffle_queue_pick_signature, ())
    made, used = kernel(*_stream(philox), block, np.int64(used), order, np.int64(size), out)
    return out, made, used


def multinomial(philox, logits, num_samples, shard_starts, output_dtype=_I64):
    """``Multinomial``'s ``[batch, num_samples]`` class indices from 2-D ``logits``.

    ``shard_starts`` are the first rows of TF's work shards (the numbers depend
    on them; see ``philox.multinomial_kernel``).
    """
    output_dtype = np.dtype(output_dtype)
    logits = np.ascontiguousarray(logits, dtype=_F64)   # exact for every float type
    out = np.empty((logits.shape[0], int(num_samples)), output_dtype)
    starts = np.ascontiguousarray(shard_starts, dtype=_I64)
    kernel = jit_kernel(_philox.multinomial_kernel, _philox.multinomial_signature,
                        (output_dtype,))
    parallel = len(starts) > 1 and out.size * _COST["normal"] >= _WORTH_THREADS
    _run(kernel, parallel, *_stream(philox), logits, int(num_samples), starts, out)
    return out
