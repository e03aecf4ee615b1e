"""TF's random numbers on a GPU: Philox4x32-10 and its distributions as CUDA kernels.

The same numbers as the CPU kernels (:mod:`minitf.kernels.cpu.philox`), for
the same reason TF's GPU kernels (``random_op_gpu.h``) give its CPU's: block
``g`` of a stream is ``philox(key, counter + g)``, a pure function, so any
thread can make any block. Launch layout::

    blocks, threads = launch_config(groups)   # one group = one Philox block
    for g in grid-stride range(groups):       # thread i: groups i, i + T, i + 2T...
        x0, x1, x2, x3 = philox_at(key, counter, g)
        out[G*g : G*g + G] = distribution(x0, x1, x2, x3)

``G`` is 4 for 32-bit outputs and 2 for 64-bit ones. A truncated-normal group
reads its own stretch of the stream (``g * 256`` blocks in, ``g * 128`` for
float64) until it has kept ``G`` values within two standard deviations.

Uniform floats are the mantissa bits times a power of two,
``(w & 0x7FFFFF) * 2**-23``, which is exactly TF's ``[1, 2) - 1`` trick
without reinterpreting bits. float16 and bfloat16 come out as float32 (the
CUDA backend keeps half types widened; see :mod:`minitf.kernels.cuda`):
their values ``(w & 0x3FF) / 1024`` and ``(w & 0x7F) / 128`` are exact in
both. Normals call the device's ``logf``/``sinf``/``cosf`` (as TF's GPU
kernels do), which may differ from the C library's in the last bit.

Integers: ``lo + w % (hi - lo)`` is always in ``[lo, hi)``, so it is computed
without ever overflowing (the simulator, which runs these in numpy, would
warn where a GPU wraps silently).
"""

import math

import numpy as np
from numba import cuda

from minitf.kernels.cuda.elementwise import launch_config

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_MUL0 = np.uint64(0xD2511F53)
_MUL1 = np.uint64(0xCD9E8D57)
_RAISE0 = np.uint64(0x9E3779B9)
_RAISE1 = np.uint64(0xBB67AE85)
_TWO_PI = 2.0 * math.pi
_EPS_F32 = np.float32(1e-7)
_TWO_POW_M23 = np.float32(2.0 ** -23)
_TWO_POW_M52 = 2.0 ** -52
_HALF_2_62 = np.int64(1 << 62)

#: Mantissa masks and scales of uniform floats, by output kind.
UNIFORM_F32, UNIFORM_F16, UNIFORM_BF16 = 0, 1, 2


@cuda.jit(device=True)
def philox_at(key, ctr_lo, ctr_hi, g):
    """Block ``g`` of the stream (four words, as uint64 values below 2**32)."""
    lo = ctr_lo + g
    hi = ctr_hi
    if lo < ctr_lo:                     # the 128-bit add's carry
        hi = hi + np.uint64(1)
    c0, c1, c2, c3 = lo & _M32, lo >> _S32, hi & _M32, hi >> _S32
    k0, k1 = key & _M32, key >> _S32
    for r in range(10):
        if r:
            k0 = (k0 + _RAISE0) & _M32
            k1 = (k1 + _RAISE1) & _M32
        p0 = _MUL0 * c0
        p1 = _MUL1 * c2
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _M32, (p0 >> _S32) ^ c3 ^ k1, p0 & _M32
    return c0, c1, c2, c3


@cuda.jit(device=True)
def uint32_to_float(x):
    return np.float32(x & np.uint64(0x7FFFFF)) * _TWO_POW_M23


@cuda.jit(device=True)
def uint64_to_double(x0, x1):
    return np.float64(((x0 & np.uint64(0xFFFFF)) << _S32) | x1) * _TWO_POW_M52


@cuda.jit(device=True)
def box_muller_f32(x0, x1):
    u1 = uint32_to_float(x0)
    if u1 < _EPS_F32:
        u1 = _EPS_F32
    v1 = np.float32(_TWO_PI * np.float64(uint32_to_float(x1)))
    u2 = np.float32(math.sqrt(np.float32(-2.0) * np.float32(math.log(u1))))
    return np.float32(math.sin(v1)) * u2, np.float32(math.cos(v1)) * u2


@cuda.jit(device=True)
def box_muller_f64(x0, x1, x2, x3):
    u1 = uint64_to_double(x0, x1)
    if u1 < 1e-7:
        u1 = 1e-7
    v1 = _TWO_PI * uint64_to_double(x2, x3)
    u2 = math.sqrt(-2.0 * math.log(u1))
    return math.sin(v1) * u2, math.cos(v1) * u2


@cuda.jit
def uniform32_kernel(key, ctr_lo, ctr_hi, kind, out):
    """float32 (and half types, widened): four outputs per block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        w = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        for j in range(4):
            i = 4 * g + j
            if i < n:
                if kind == UNIFORM_F32:
                    out[i] = uint32_to_float(w[j])
                elif kind == UNIFORM_F16:
                    out[i] = np.float32(w[j] & np.uint64(0x3FF)) / np.float32(1024.0)
                else:
                    out[i] = np.float32(w[j] & np.uint64(0x7F)) / np.float32(128.0)


@cuda.jit
def uniform64_kernel(key, ctr_lo, ctr_hi, out):
    """float64: two outputs per block, 52 bits each."""
    n = out.size
    for g in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        out[2 * g] = uint64_to_double(x0, x1)
        if 2 * g + 1 < n:
            out[2 * g + 1] = uint64_to_double(x2, x3)


@cuda.jit
def normal32_kernel(key, ctr_lo, ctr_hi, out):
    """float32: Box-Muller on words (0, 1) and (2, 3) of each block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        a, b = box_muller_f32(x0, x1)
        c, d = box_muller_f32(x2, x3)
        v = (a, b, c, d)
        for j in range(4):
            if 4 * g + j < n:
                out[4 * g + j] = v[j]


@cuda.jit
def normal64_kernel(key, ctr_lo, ctr_hi, out):
    """float64: one Box-Muller pair from the four words of each block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        a, b = box_muller_f64(x0, x1, x2, x3)
        out[2 * g] = a
        if 2 * g + 1 < n:
            out[2 * g + 1] = b


@cuda.jit
def truncated32_kernel(key, ctr_lo, ctr_hi, out):
    """float32: group g reads blocks from ``g * 256`` on, keeping ``|x| < 2``."""
    n = out.size
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        need = min(4, n - 4 * g)
        filled = 0
        b = np.uint64(g) * np.uint64(256)
        while filled < need:
            x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, b)
            b += np.uint64(1)
            a, c = box_muller_f32(x0, x1)
            d, e = box_muller_f32(x2, x3)
            v = (a, c, d, e)
            for j in range(4):
                if filled < need and abs(v[j]) < np.float32(2.0):
                    out[4 * g + filled] = v[j]
                    filled += 1


@cuda.jit
def truncated64_kernel(key, ctr_lo, ctr_hi, out):
    """float64: group g reads blocks from ``g * 128`` on, one pair per block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        need = min(2, n - 2 * g)
        filled = 0
        b = np.uint64(g) * np.uint64(128)
        while filled < need:
            x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, b)
            b += np.uint64(1)
            a, c = box_muller_f64(x0, x1, x2, x3)
            if filled < need and abs(a) < 2.0:
                out[2 * g + filled] = a
                filled += 1
            if filled < need and abs(c) < 2.0:
                out[2 * g + filled] = c
                filled += 1


@cuda.jit
def uniform_int32_kernel(key, ctr_lo, ctr_hi, lo, span, out):
    """int32: ``lo + w % span`` (``span = hi - lo``), four per block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        w = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        for j in range(4):
            if 4 * g + j < n:
                out[4 * g + j] = np.int32(lo + np.int64(w[j] % span))


@cuda.jit(device=True)
def _add_below(lo, r):
    """``lo + r`` for ``r < hi - lo`` (so the sum fits), with no overflow on the way."""
    if r < np.uint64(1 << 63):
        return lo + np.int64(r)
    # r >= 2**63 only when lo < 0: add 2**63 to lo in two halves, then the rest.
    return (lo + _HALF_2_62) + _HALF_2_62 + np.int64(r - np.uint64(1 << 63))


@cuda.jit
def uniform_int64_kernel(key, ctr_lo, ctr_hi, lo, span, out):
    """int64: ``lo + (w0 | w1 << 32) % span``, two per block."""
    n = out.size
    for g in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        x0, x1, x2, x3 = philox_at(key, ctr_lo, ctr_hi, np.uint64(g))
        out[2 * g] = _add_below(lo, (x0 | (x1 << _S32)) % span)
        if 2 * g + 1 < n:
            out[2 * g + 1] = _add_below(lo, (x2 | (x3 << _S32)) % span)


# -- the fill interface (what kernels.random_streams calls) ----------------------------------------
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _stream(philox):
    counter = int(philox.counter)
    return (np.uint64(int(philox.key) & 0xFFFFFFFFFFFFFFFF),
            np.uint64(counter & 0xFFFFFFFFFFFFFFFF), np.uint64(counter >> 64))


def _launch(kernel, groups, *args):
    if groups:
        blocks, threads = launch_config(groups)
        kernel[blocks, threads](*args)


def _out(size, dtype):
    """64-bit types stay themselves; 32- and 16-bit floats are made as float32."""
    return cuda.device_array(size, _F64 if np.dtype(dtype) == _F64 else _F32)


def uniform(philox, size, dtype):
    """``size`` floats in [0, 1) on the device (half types as float32)."""
    dtype = np.dtype(dtype)
    out = _out(size, dtype)
    if dtype == _F64:
        _launch(uniform64_kernel, (size + 1) // 2, *_stream(philox), out)
    else:
        kind = UNIFORM_F32 if dtype == _F32 else UNIFORM_F16 if dtype == _F16 else UNIFORM_BF16
        _launch(uniform32_kernel, (size + 3) // 4, *_stream(philox), kind, out)
    return out


def normal(philox, size, dtype):
    out = _out(size, dtype)
    if out.dtype == _F64:
        _launch(normal64_kernel, (size + 1) // 2, *_stream(philox), out)
    else:
        _launch(normal32_kernel, (size + 3) // 4, *_stream(philox), out)
    return out


def truncated_normal(philox, size, dtype):
    out = _out(size, dtype)
    if out.dtype == _F64:
        _launch(truncated64_kernel, (size + 1) // 2, *_stream(philox), out)
    else:
        _launch(truncated32_kernel, (size + 3) // 4, *_stream(philox), out)
    return out


def uniform_int(philox, size, lo, hi, dtype):
    """``RandomUniformInt`` on the device: int32 or int64 in ``[lo, hi)``."""
    dtype = np.dtype(dtype)
    out = cuda.device_array(size, dtype)
    span = np.uint64(int(hi) - int(lo))
    if dtype == np.dtype(np.int32):
        _launch(uniform_int32_kernel, (size + 3) // 4, *_stream(philox), np.int64(lo), span,
                out)
    else:
        _launch(uniform_int64_kernel, (size + 1) // 2, *_stream(philox), np.int64(lo), span,
                out)
    return out
