"""exp, log, tanh and sigmoid written so that the compiler can vectorize them.

``math.exp(x)`` in a Numba loop is a call into the C library, one element at
a time. numpy's ``np.exp`` instead runs hand-written SIMD code that does 8 or
16 elements per instruction, so a plain Numba loop is 2-10x slower than numpy
on these ops. The fix is the one every fast math library uses: compute the
function from ``+ - * /``, comparisons and bit tricks only. LLVM vectorizes
such a loop by itself (the same instructions run on 8 float32 lanes at once),
and two threads then split the array.

Every function here follows the same three steps (the Cephes library's
algorithms, as Eigen, the library under TensorFlow's CPU kernels, uses them):

1. **Range reduction.** Turn the argument into a small one. For ``exp``:
   ``x = n * ln2 + r`` with integer ``n`` and ``|r| <= ln2 / 2``, because
   ``exp(x) = 2**n * exp(r)``. For ``log``: ``x = 2**e * m`` with ``m`` near 1,
   because ``log(x) = e * ln2 + log(m)``.
2. **A polynomial** (or a ratio of two) that matches the function on the small
   range to within an ulp or two.
3. **Reconstruction** with the exponent bits: ``2**n`` is the float whose bit
   pattern is ``(n + 127) << 23`` (float32), so it is built by writing bits,
   not by calling ``ldexp``.

No branch depends on the data: special cases (NaN, infinities, zero, negative
log arguments, denormals) are computed on every lane and picked with
``a if cond else b``, which becomes a SIMD blend. The errors, measured against
exact values in tests/unit/test_vector_math.py, are at most 2.5 ulps (float32
tanh: 5, the rational function TensorFlow's own CPU kernel uses).

Each function exists as ``exp_f32``/``exp_f64`` and so on: Numba
``inline="always"`` functions that a loop calls directly, so that the whole
computation lands in the loop body, where LLVM vectorizes it.
:func:`map_kernel` is that loop for the rows that name one of these (``Exp``...); the fused
kernels (minitf/runtime/fusion.py) and the softmax kernels (``nn.py``) call
the same functions, so fused and unfused runs compute the same thing. The plain names :func:`exp`,
:func:`log`, :func:`tanh`, :func:`sigmoid` are numpy's for Python callers,
and pick the float32 or float64 version (not inlined) in Numba code.
Nothing here compiles at import.
"""

import numba
import numpy as np
from llvmlite import ir
from numba import prange
from numba.core import types
from numba.extending import intrinsic, overload

__all__ = ["exp", "log", "tanh", "sigmoid", "exp_f32", "exp_f64", "log_f32", "log_f64",
           "tanh_f32", "tanh_f64", "sigmoid_f32", "sigmoid_f64", "OPS", "map_kernel",
           "map_signature"]


# ------------------------------------------------------------ bit patterns ----

@intrinsic
def float_bits(typingctx, x):
    """The bit pattern of a float as a same-width signed integer (no conversion)."""
    if x == types.float32:
        return types.int32(x), lambda ctx, b, sig, args: b.bitcast(args[0], ir.IntType(32))
    if x == types.float64:
        return types.int64(x), lambda ctx, b, sig, args: b.bitcast(args[0], ir.IntType(64))
    return None


@intrinsic
def float32_from_bits(typingctx, bits):
    """The float32 whose bit pattern is ``bits`` (any integer, low 32 bits used)."""
    def codegen(context, builder, sig, args):
        low = context.cast(builder, args[0], sig.args[0], types.int32)
        return builder.bitcast(low, ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def float64_from_bits(typingctx, bits):
    """The float64 whose bit pattern is ``bits`` (any integer, low 64 bits used)."""
    def codegen(context, builder, sig, args):
        wide = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.bitcast(wide, ir.DoubleType())
    return types.float64(bits), codegen


# ------------------------------------------------------------------- exp ----

F = np.float32
D = np.float64
_F_LOG2E, _F_HALF, _F_ONE, _F_TWO = F(1.44269504088896341), F(0.5), F(1.0), F(2.0)
# ln2 split in two so that n * ln2 is exact for the first part: C1 has few bits.
_F_LN2_HI, _F_LN2_LO = F(0.693359375), F(-2.12194440e-4)
_F_EXP_P = (F(1.9875691500e-4), F(1.3981999507e-3), F(8.3334519073e-3),
            F(4.1665795894e-2), F(1.6666665459e-1), F(5.0000001201e-1))
# exp(89) overflows float32 and exp(-104) rounds to 0: clamping there keeps n small.
_F_EXP_HI, _F_EXP_LO = F(89.0), F(-104.0)


@numba.njit(inline="always")
def exp_f32(x):
    xc = x if x < _F_EXP_HI else _F_EXP_HI      # NaN goes to the top too (fixed below)
    xc = xc if xc > _F_EXP_LO else _F_EXP_LO
    n = np.floor(xc * _F_LOG2E + _F_HALF)       # nearest integer to x / ln2
    r = xc - n * _F_LN2_HI
    r = r - n * _F_LN2_LO                       # |r| <= ln2 / 2
    p0, p1, p2, p3, p4, p5 = _F_EXP_P
    y = (((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5) * (r * r) + r + _F_ONE
    # y * 2**n, as two exact scalings by 2**(n/2) so that n down to -150
    # (a denormal result) never needs an exponent field below 1.
    k = np.int32(n)
    half = k >> 1
    y = y * float32_from_bits((half + 127) << 23)
    y = y * float32_from_bits((k - half + 127) << 23)
    return x if x != x else y


_D_LOG2E, _D_HALF, _D_ONE, _D_TWO = D(1.4426950408889634), D(0.5), D(1.0), D(2.0)
_D_LN2_HI, _D_LN2_LO = D(6.93145751953125e-1), D(1.42860682030941723212e-6)
_D_EXP_P = (D(1.26177193074810590878e-4), D(3.02994407707441961300e-2),
            D(9.99999999999999999910e-1))
_D_EXP_Q = (D(3.00198505138664455042e-6), D(2.52448340349684104192e-3),
            D(2.27265548208155028766e-1), D(2.00000000000000000009e0))
_D_EXP_HI, _D_EXP_LO = D(710.0), D(-746.0)


@numba.njit(inline="always")
def exp_f64(x):
    xc = x if x < _D_EXP_HI else _D_EXP_HI
    xc = xc if xc > _D_EXP_LO else _D_EXP_LO
    n = np.floor(xc * _D_LOG2E + _D_HALF)
    r = xc - n * _D_LN2_HI
    r = r - n * _D_LN2_LO
    # exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)), a Pade approximation.
    rr = r * r
    p0, p1, p2 = _D_EXP_P
    q0, q1, q2, q3 = _D_EXP_Q
    px = r * ((p0 * rr + p1) * rr + p2)
    q = ((q0 * rr + q1) * rr + q2) * rr + q3
    y = _D_ONE + _D_TWO * (px / (q - px))
    k = np.int64(n)
    half = k >> 1
    y = y * float64_from_bits((half + 1023) << 52)
    y = y * float64_from_bits((k - half + 1023) << 52)
    return x if x != x else y


# ------------------------------------------------------------------- log ----

_F_SQRTH = F(0.707106781186547524)
_F_MIN_NORMAL, _F_2_25 = F(1.17549435e-38), F(33554432.0)
_F_LOG_P = (F(7.0376836292e-2), F(-1.1514610310e-1), F(1.1676998740e-1),
            F(-1.2420140846e-1), F(1.4249322787e-1), F(-1.6668057665e-1),
            F(2.0000714765e-1), F(-2.4999993993e-1), F(3.3333331174e-1))
_F_INF, _F_NAN = F(np.inf), F(np.nan)


@numba.njit(inline="always")
def log_f32(x):
    # Denormals have no implicit leading 1: scale them up by 2**25 first.
    tiny = x < _F_MIN_NORMAL
    xs = x * _F_2_25 if tiny else x
    bits = float_bits(xs)
    e = ((bits >> 23) & 0xFF) - (151 if tiny else 126)
    m = float32_from_bits((bits & 0x007FFFFF) | 0x3F000000)    # x = m * 2**e, m in [0.5, 1)
    # Move m into [sqrt(1/2), sqrt(2)) so that log(m) is small, then f = m - 1.
    low = m < _F_SQRTH
    e = e - (1 if low else 0)
    f = (m + m - _F_ONE) if low else (m - _F_ONE)
    ef = F(e)
    ff = f * f
    p = _F_LOG_P[0]
    for c in _F_LOG_P[1:]:
        p = p * f + c
    y = p * f * ff + ef * _F_LN2_LO - _F_HALF * ff
    y = f + y + ef * _F_LN2_HI
    y = _F_INF if x == _F_INF else y
    y = -_F_INF if x == 0 else y
    return _F_NAN if (x < 0 or x != x) else y


_D_SQRTH = D(0.70710678118654752440)
_D_MIN_NORMAL, _D_2_54 = D(2.2250738585072014e-308), D(18014398509481984.0)
_D_LOG_P = (D(1.01875663804580931796e-4), D(4.97494994976747001425e-1),
            D(4.70579119878881725854e0), D(1.44989225341610930846e1),
            D(1.79368678507819816313e1), D(7.70838733755885391666e0))
_D_LOG_Q = (D(1.12873587189167450590e1), D(4.52279145837532221105e1),
            D(8.29875266912776603211e1), D(7.11544750618563894466e1),
            D(2.31251620126765340583e1))
_D_INF, _D_NAN = D(np.inf), D(np.nan)


@numba.njit(inline="always")
def log_f64(x):
    tiny = x < _D_MIN_NORMAL
    xs = x * _D_2_54 if tiny else x
    bits = float_bits(xs)
    e = ((bits >> 52) & 0x7FF) - (1076 if tiny else 1022)
    m = float64_from_bits((bits & 0x000FFFFFFFFFFFFF) | 0x3FE0000000000000)
    low = m < _D_SQRTH
    e = e - (1 if low else 0)
    f = (m + m - _D_ONE) if low else (m - _D_ONE)
    ef = D(e)
    ff = f * f
    # log(1 + f) = f - f^2 / 2 + f^3 P(f) / Q(f)
    p = _D_LOG_P[0]
    for c in _D_LOG_P[1:]:
        p = p * f + c
    q = f + _D_LOG_Q[0]
    for c in _D_LOG_Q[1:]:
        q = q * f + c
    y = f * (ff * p / q) + ef * _D_LN2_LO - _D_HALF * ff
    y = f + y + ef * _D_LN2_HI
    y = _D_INF if x == _D_INF else y
    y = -_D_INF if x == 0 else y
    return _D_NAN if (x < 0 or x != x) else y


# ------------------------------------------------------------------ tanh ----
# float32: TensorFlow's CPU kernel (Eigen) computes tanh as one rational
# function, x P(x^2) / Q(x^2) on [-7.9, 7.9]: no exp, one division, about
# 4 ulps from exact. Beyond 9, tanh rounds to +-1 in float32; between 7.9 and
# 9 the clamped ratio is within a few ulps of 1. Below 4e-4, tanh(x) == x.

_F_TANH_CLAMP, _F_TANH_ONE, _F_TANH_TINY = F(7.90531110763549805), F(9.0), F(4e-4)
_F_TANH_P = (F(-2.76076847742355e-16), F(2.00018790482477e-13), F(-8.60467152213735e-11),
             F(5.12229709037114e-08), F(1.48572235717979e-05), F(6.37261928875436e-04),
             F(4.89352455891786e-03))
_F_TANH_Q = (F(1.19825839466702e-06), F(1.18534705686654e-04), F(2.26843463243900e-03),
             F(4.89352518554385e-03))


@numba.njit(inline="always")
def tanh_f32(x):
    c = min(max(x, -_F_TANH_CLAMP), _F_TANH_CLAMP)
    z = c * c
    p = _F_TANH_P[0]
    for k in _F_TANH_P[1:]:
        p = p * z + k
    q = _F_TANH_Q[0]
    for k in _F_TANH_Q[1:]:
        q = q * z + k
    y = c * p / q
    a = abs(x)
    y = (_F_ONE if x > 0 else -_F_ONE) if a > _F_TANH_ONE else y
    return x if (a < _F_TANH_TINY or x != x) else y


# float64: for |x| >= 0.625, tanh|x| = 1 - 2 / (exp(2|x|) + 1), no cancellation
# there; below, the odd form x + x^3 P(x^2) / Q(x^2) keeps full precision near 0.

_D_TANH_SPLIT, _D_TANH_CLAMP = D(0.625), D(22.0)    # tanh(22) == 1 in float64
_D_TANH_P = (D(-9.64399179425052238628e-1), D(-9.92877231001918586564e1),
             D(-1.61468768441708447952e3))
_D_TANH_Q = (D(1.12811678491632931402e2), D(2.23548839060100448583e3),
             D(4.84406305325125486048e3))


@numba.njit(inline="always")
def tanh_f64(x):
    a = abs(x)
    a = a if a < _D_TANH_CLAMP else _D_TANH_CLAMP
    big = _D_ONE - _D_TWO / (exp_f64(a + a) + _D_ONE)
    big = -big if x < 0 else big
    z = x * x
    p = (_D_TANH_P[0] * z + _D_TANH_P[1]) * z + _D_TANH_P[2]
    q = ((z + _D_TANH_Q[0]) * z + _D_TANH_Q[1]) * z + _D_TANH_Q[2]
    small = x + x * (z * p / q)
    small = x if x == 0 else small
    return small if (abs(x) < _D_TANH_SPLIT or x != x) else big


# --------------------------------------------------------------- sigmoid ----

@numba.njit(inline="always")
def sigmoid_f32(x):
    # exp(-x) is inf for x < -89 and 1 / inf = 0: the right limit, no NaN.
    return _F_ONE / (_F_ONE + exp_f32(-x))


@numba.njit(inline="always")
def sigmoid_f64(x):
    return _D_ONE / (_D_ONE + exp_f64(-x))


# ------------------------------------------------------- the public names ----

def exp(x):
    """``e**x``. Python callers get numpy's; Numba code gets the vector version."""
    return np.exp(x)


def log(x):
    """Natural logarithm (NaN below 0, -inf at 0)."""
    return np.log(x)


def tanh(x):
    """Hyperbolic tangent."""
    return np.tanh(x)


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return 1.0 / (1.0 + np.exp(-x))


def _by_dtype(f32_version, f64_version):
    """A Numba overload body: the float32 or float64 version, chosen by type.

    An overload returns a plain Python function for Numba to compile: here the
    ``py_func`` of the chosen version. Loops that must vectorize call the
    ``*_f32``/``*_f64`` versions directly instead, which Numba inlines.
    """
    def choose(x):
        version = {types.float32: f32_version, types.float64: f64_version}.get(x)
        return None if version is None else version.py_func
    return choose


overload(exp)(_by_dtype(exp_f32, exp_f64))
overload(log)(_by_dtype(log_f32, log_f64))
overload(tanh)(_by_dtype(tanh_f32, tanh_f64))
overload(sigmoid)(_by_dtype(sigmoid_f32, sigmoid_f64))


# ------------------------------------------------------------ the kernel ----

#: The functions :func:`map_kernel` computes, by the name an op row gives in
#: ``Elementwise.vector_math``, with their codes.
OPS = {"exp": 0, "log": 1, "tanh": 2, "sigmoid": 3}


def map_kernel(x, out, op, parallel):
    """``out[i] = f(x[i])`` for one of :data:`OPS`, over flat contiguous arrays.

    Loop nest (``T`` pieces when ``parallel``, one otherwise)::

        for t in prange(T):                   # one piece per thread
            xs, os = x[piece t], out[piece t]
            for i in range(xs.size):          # vectorized: 8 float32 per step
                os[i] = f(xs[i])

    The op is chosen once per piece, outside the inner loop, so each inner
    loop is a straight line of arithmetic that LLVM turns into SIMD code.
    Indexing a slice from 0 (rather than ``x[lo + i]``) lets Numba drop its
    negative-index check, which would otherwise stop the vectorizer.
    """
    n = x.size
    pieces = 16 if parallel else 1
    if parallel:
        for t in prange(pieces):
            _map_piece(x[t * n // pieces:(t + 1) * n // pieces],
                       out[t * n // pieces:(t + 1) * n // pieces], op)
    else:
        _map_piece(x, out, op)


def _map_loops(exp_, log_, tanh_, sigmoid_):
    """The inner loops of :func:`map_kernel` for one dtype's four functions."""
    def map_piece(xs, os, op):
        if op == 0:
            for i in range(xs.size):
                os[i] = exp_(xs[i])
        elif op == 1:
            for i in range(xs.size):
                os[i] = log_(xs[i])
        elif op == 2:
            for i in range(xs.size):
                os[i] = tanh_(xs[i])
        else:
            for i in range(xs.size):
                os[i] = sigmoid_(xs[i])
    return map_piece


_MAP_LOOPS = {types.float32: _map_loops(exp_f32, log_f32, tanh_f32, sigmoid_f32),
              types.float64: _map_loops(exp_f64, log_f64, tanh_f64, sigmoid_f64)}


def _map_piece(xs, os, op):
    """Placeholder that Numba replaces with the loops for ``xs``'s dtype."""
    raise TypeError("_map_piece only runs compiled, inside map_kernel")


@overload(_map_piece)
def _map_piece_for(xs, os, op):
    return _MAP_LOOPS.get(xs.dtype)


def map_signature(np_dtype):
    """``void(x, out, op, parallel)`` for 1-D C-contiguous arrays of ``np_dtype``."""
    t = numba.from_dtype(np_dtype)
    return numba.void(types.Array(t, 1, "C", readonly=True), t[::1], numba.int64,
                      numba.boolean)
