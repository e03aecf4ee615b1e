"""The math functions: trigonometry, hyperbolic functions, ``expm1``/``log1p``,
``rint``, and the special functions (``erf``, ``lgamma``, ``digamma``...).

Every op here is elementwise on floats, so each is one row declared with
``unary_op``/``binary_op`` (``minitf/ops/elementwise.py``): a scalar function
of one or two numbers, which Numba compiles into the CPU ufunc and which
becomes the body of the CUDA kernel (TF has GPU kernels for all of them).
The scalar functions spell out their edge cases (``acos(2)`` is NaN,
``atanh(1)`` is inf, ``lgamma`` of a pole is inf) instead of relying on the
math library: numba's CUDA simulator runs them as Python, where
``math.acos(2.0)`` raises, and TF answers with NaN or inf, never an error.

Gradients are TF's (``tensorflow/python/ops/math_grad.py``), written with
the ops they use: ``d sin(x) = cos(x) dx``, ``d lgamma(x) = digamma(x) dx``,
``d digamma(x) = polygamma(1, x) dx``.

Digamma and the Hurwitz zeta function (behind ``polygamma``) have no math
library routine, so they are computed here: digamma by the recurrence
``psi(x) = psi(x + 1) - 1/x`` up to ``x >= 10`` and then its asymptotic
series; zeta by Euler-Maclaurin summation (Cephes' method).
"""

import math

import numpy as np

from minitf.framework.op_def import NOT_DIFFERENTIABLE
from minitf.ops import math_ops
from minitf.ops.core import FLOAT_TYPES
from minitf.ops.elementwise import FLOAT_NAMES, binary_op, unary_op
from minitf.ops.math_ops import unbroadcast

# The dtypes of TF's CPU and GPU kernels (TF's kernel registrations).
_F = {"cpu": FLOAT_NAMES, "gpu": FLOAT_NAMES}
_GAMMA = {"cpu": ("float16", "float32", "float64"), "gpu": ("float16", "float32", "float64")}
_ZETA = {"cpu": ("float32", "float64"), "gpu": ("float32", "float64")}


def _vectorized(fn):
    """A numpy reference from a scalar function of Python floats (float64)."""
    v = np.vectorize(fn, otypes=[np.float64])

    def reference(*arrays):
        return v(*[np.asarray(a, np.float64) for a in arrays])
    return reference


# ================================================================= trigonometry ===
def _sin(x):
    if math.isinf(x):
        return math.nan
    return math.sin(x)


def _sin_grad(op, grad):
    return [grad * cos(op.inputs[0])]


SIN = unary_op("Sin", _sin, np.sin, fusion="np.sin({x})", gradient=_sin_grad, **_F)


def _cos(x):
    if math.isinf(x):
        return math.nan
    return math.cos(x)


def _cos_grad(op, grad):
    return [-grad * sin(op.inputs[0])]


COS = unary_op("Cos", _cos, np.cos, fusion="np.cos({x})", gradient=_cos_grad, **_F)


def _tan(x):
    if math.isinf(x):
        return math.nan
    return math.tan(x)


def _tan_grad(op, grad):
    secant = math_ops.reciprocal(cos(op.inputs[0]))
    return [grad * math_ops.square(secant)]


TAN = unary_op("Tan", _tan, np.tan, fusion="np.tan({x})", gradient=_tan_grad,
               domain=[(-1.5, 1.5)], **_F)


def _asin(x):
    if x != x or x < -1.0 or x > 1.0:
        return math.nan
    return math.asin(x)


def _asin_grad(op, grad):
    x = op.inputs[0]
    return [grad * math_ops.reciprocal(math_ops.sqrt(1.0 - math_ops.square(x)))]


ASIN = unary_op("Asin", _asin, np.arcsin, fusion="np.arcsin({x})", gradient=_asin_grad,
                domain=[(-0.875, 0.875)], **_F)


def _acos(x):
    if x != x or x < -1.0 or x > 1.0:
        return math.nan
    return math.acos(x)


def _acos_grad(op, grad):
    x = op.inputs[0]
    return [-grad * math_ops.reciprocal(math_ops.sqrt(1.0 - math_ops.square(x)))]


ACOS = unary_op("Acos", _acos, np.arccos, fusion="np.arccos({x})", gradient=_acos_grad,
                domain=[(-0.875, 0.875)], **_F)


def _atan(x):
    return math.atan(x)


def _atan_grad(op, grad):
    return [grad * math_ops.reciprocal(1.0 + math_ops.square(op.inputs[0]))]


ATAN = unary_op("Atan", _atan, np.arctan, fusion="np.arctan({x})", gradient=_atan_grad, **_F)


def _atan2(y, x):
    return math.atan2(y, x)


def _atan2_grad(op, grad):
    y, x = op.inputs
    inverse = grad / (math_ops.square(x) + math_ops.square(y))
    return unbroadcast(x * inverse, y), unbroadcast(-y * inverse, x)


ATAN2 = binary_op("Atan2", _atan2, np.arctan2, gradient=_atan2_grad, inputs=("y", "x"),
                  domain=[(-10, 10), (-10, 10)], **_F)


# ============================================================ hyperbolic functions ===
def _sinh(x):
    if x > 710.0:
        return math.inf
    if x < -710.0:
        return -math.inf
    return math.sinh(x)


def _sinh_grad(op, grad):
    return [grad * cosh(op.inputs[0])]


SINH = unary_op("Sinh", _sinh, np.sinh, fusion="np.sinh({x})", gradient=_sinh_grad, **_F)


def _cosh(x):
    if x > 710.0 or x < -710.0:
        return math.inf
    return math.cosh(x)


def _cosh_grad(op, grad):
    return [grad * sinh(op.inputs[0])]


COSH = unary_op("Cosh", _cosh, np.cosh, fusion="np.cosh({x})", gradient=_cosh_grad, **_F)


def _asinh(x):
    return math.asinh(x)


def _asinh_grad(op, grad):
    return [grad / cosh(op.outputs[0])]


ASINH = unary_op("Asinh", _asinh, np.arcsinh, fusion="np.arcsinh({x})",
                 gradient=_asinh_grad, **_F)


def _acosh(x):
    if x != x or x < 1.0:
        return math.nan
    return math.acosh(x)


def _acosh_grad(op, grad):
    return [grad / sinh(op.outputs[0])]


ACOSH = unary_op("Acosh", _acosh, np.arccosh, fusion="np.arccosh({x})",
                 gradient=_acosh_grad, domain=[(1.0, 10)], **_F)


def _atanh(x):
    if x == 1.0:
        return math.inf
    if x == -1.0:
        return -math.inf
    if x != x or x < -1.0 or x > 1.0:
        return math.nan
    return math.atanh(x)


def _atanh_grad(op, grad):
    return [grad * math_ops.reciprocal(1.0 - math_ops.square(op.inputs[0]))]


ATANH = unary_op("Atanh", _atanh, np.arctanh, fusion="np.arctanh({x})",
                 gradient=_atanh_grad, domain=[(-0.875, 0.875)], **_F)


# ===================================================== exp and log near zero, rint ===
def _expm1(x):
    if x > 709.0:
        return math.inf
    return math.expm1(x)


def _expm1_grad(op, grad):
    return [grad * math_ops.exp(op.inputs[0])]


EXPM1 = unary_op("Expm1", _expm1, np.expm1, fusion="np.expm1({x})", gradient=_expm1_grad,
                 **_F)


def _log1p(x):
    if x == -1.0:
        return -math.inf
    if x != x or x < -1.0:
        return math.nan
    return math.log1p(x)


def _log1p_grad(op, grad):
    return [grad * math_ops.reciprocal(1.0 + op.inputs[0])]


LOG1P = unary_op("Log1p", _log1p, np.log1p, fusion="np.log1p({x})", gradient=_log1p_grad,
                 domain=[(-0.875, 10)], **_F)


def _rint(x):
    return np.rint(x)            # half to even, as TF's Rint (and Round)


RINT = unary_op("Rint", {"f": _rint}, np.rint, cpu=("float32", "float64"),
                gpu=("float16", "float32", "float64"),
                cuda=math_ops._round_cuda, gradient=NOT_DIFFERENTIABLE)


# =========================================================== the error function ===
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf(x):
    return math.erf(x)


def _erf_grad(op, grad):
    x = op.inputs[0]
    return [grad * _TWO_OVER_SQRT_PI * math_ops.exp(-math_ops.square(x))]


ERF = unary_op("Erf", _erf, _vectorized(math.erf), gradient=_erf_grad, **_F)


def _erfc(x):
    return math.erfc(x)


def _erfc_grad(op, grad):
    x = op.inputs[0]
    return [grad * -_TWO_OVER_SQRT_PI * math_ops.exp(-math_ops.square(x))]


ERFC = unary_op("Erfc", _erfc, _vectorized(math.erfc), gradient=_erfc_grad, **_F)


# ====================================================== the gamma function family ===
def _lgamma(x):
    """``log|gamma(x)|``; inf at the poles (0, -1, -2, ...), as TF."""
    if x != x:
        return x
    if math.isinf(x) or (x <= 0.0 and x % 1.0 == 0.0):
        return math.inf
    return math.lgamma(x)


def _lgamma_grad(op, grad):
    return [grad * digamma(op.inputs[0])]


LGAMMA = unary_op("Lgamma", _lgamma, _vectorized(_lgamma), gradient=_lgamma_grad,
                  domain=[(0.125, 10)], **_GAMMA)


def _digamma(x):
    """``psi(x) = d/dx lgamma(x)``.

    Negative ``x``: the reflection ``psi(x) = psi(1 - x) - pi / tan(pi x)``
    moves it to positive values (NaN at the poles 0, -1, -2...). Then the
    recurrence ``psi(x) = psi(x + 1) - 1/x`` climbs to ``x >= 10``, where the
    asymptotic series ``log x - 1/(2x) - sum B_2k / (2k x^2k)`` (five terms)
    is accurate to double precision."""
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    reflection = 0.0
    if x <= 0.0:
        if x % 1.0 == 0.0:
            return math.nan
        reflection = math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    result = -reflection
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240
                                                                    - z * (1.0 / 132)))))
    return result + math.log(x) - 0.5 / x - series


def _digamma_reference(x):
    """Digamma in numpy: the same recurrence taken 1000 steps at once (a sum)
    and three terms of the series, plus the reflection for negative ``x``."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        negative = x <= 0
        pole = negative & (x == np.floor(x))
        y = np.where(negative, 1.0 - x, x)
        k = np.arange(1000, dtype=np.float64).reshape((1000,) + (1,) * y.ndim)
        z = y + 1000.0
        psi = -np.sum(1.0 / (y + k), axis=0) + np.log(z) - 0.5 / z - 1.0 / (12 * z * z)
        psi = np.where(negative, psi - np.pi / np.tan(np.pi * x), psi)
        return np.where(pole | np.isnan(x), np.nan, psi)


def _digamma_grad(op, grad):
    return [grad * polygamma(1.0, op.inputs[0])]


DIGAMMA = unary_op("Digamma", _digamma, _digamma_reference, gradient=_digamma_grad,
                   domain=[(0.125, 10)], **_GAMMA)


def _zeta(s, q):
    """The Hurwitz zeta function ``sum over k >= 0 of (k + q) ** -s`` (s > 1).

    Euler-Maclaurin summation: add the first terms directly until ``q + k``
    passes 9 (at least 9 terms), then the integral of the tail and its
    correction terms with the Bernoulli numbers ``B_2j / (2j)!`` (their
    reciprocals are the constants below), stopping when a term no longer
    changes the sum."""
    if s != s or q != q:
        return math.nan
    if s == 1.0:
        return math.inf
    if s < 1.0:
        return math.nan
    if q <= 0.0:
        if q % 1.0 == 0.0:
            return math.inf
        if s % 1.0 != 0.0:
            return math.nan          # (k + q) ** -s of a negative number
    # (2j)! / B_2j for j = 1..12: the correction terms' denominators.
    bernoulli = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                 7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                 -4.5979787224074726105e15, 1.8152105401943546773e17,
                 -7.1661652561756670113e18)
    eps = 1.1102230246251565e-16
    total = math.pow(q, -s)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = math.pow(a, -s)
        total += b
        if abs(b / total) < eps:
            return total
    w = a
    total += b * w / (s - 1.0)
    total -= 0.5 * b
    factor = 1.0
    k = 0.0
    for j in range(12):
        factor *= s + k
        b /= w
        term = factor * b / bernoulli[j]
        total += term
        if abs(term / total) < eps:
            return total
        k += 1.0
        factor *= s + k
        b /= w
        k += 1.0
    return total


def _zeta_reference(s, q):
    """The first 100 terms of the zeta sum added up in numpy, then the tail as
    its integral plus three Euler-Maclaurin corrections."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        k = np.arange(100, dtype=np.float64).reshape((100,) + (1,) * s.ndim)
        n = q + 100.0
        total = (np.sum((k + q) ** -s, axis=0) + n ** (1 - s) / (s - 1) + 0.5 * n ** -s
                 + s / 12 * n ** (-s - 1) - s * (s + 1) * (s + 2) / 720 * n ** (-s - 3))
        bad = (s < 1) | ((q <= 0) & (s != np.floor(s)))
        pole = (s == 1) | ((q <= 0) & (q == np.floor(q)))
        return np.where(pole, np.inf, np.where(bad, np.nan, total))


def _zeta_grad(op, grad):
    x, q = op.inputs
    return None, unbroadcast(grad * -x * zeta(x + 1.0, q), q)


ZETA = binary_op("Zeta", _zeta, _zeta_reference, gradient=_zeta_grad, inputs=("x", "q"),
                 domain=[(1.5, 6), (0.5, 5)], **_ZETA)


def _polygamma(n, x):
    """``psi^(n)(x)``, the n-th derivative of digamma: ``psi(x)`` for ``n = 0``,
    else ``(-1)**(n + 1) * n! * zeta(n + 1, x)``; NaN unless ``n`` is a
    non-negative integer."""
    if n != n or x != x or n < 0.0 or n % 1.0 != 0.0:
        return math.nan
    if n == 0.0:
        return _digamma(x)
    if n > 170.0:
        return math.nan              # n! overflows a double
    sign = 1.0 if int(n) % 2 == 1 else -1.0
    return sign * math.gamma(n + 1.0) * _zeta(n + 1.0, x)


def _polygamma_reference(n, x):
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        whole = (n >= 0) & (n == np.floor(n)) & (n <= 170)
        m = np.where(whole, n, 1.0)
        factorial = np.vectorize(math.gamma, otypes=[np.float64])(m + 1.0)
        higher = (-1.0) ** (m + 1) * factorial * _zeta_reference(m + 1.0, x)
        out = np.where(n == 0, _digamma_reference(x), higher)
        return np.where(whole, out, np.nan)


def _polygamma_grad(op, grad):
    n, x = op.inputs
    return None, unbroadcast(grad * polygamma(n + 1.0, x), x)


POLYGAMMA = binary_op("Polygamma", _polygamma, _polygamma_reference,
                      gradient=_polygamma_grad, inputs=("a", "x"),
                      domain=[(1, 4), (0.5, 5)], **_ZETA)


# ============================================================ the tf.* functions ===
def _float_unary(row, default_name=None):
    def op(x, name=None):
        return math_ops._unary(row, x, name or default_name or row.name, FLOAT_TYPES)
    op.__name__ = row.name.lower()
    op.__doc__ = "Elementwise ``%s`` (float dtypes)." % row.name
    return op


sin = _float_unary(SIN)
cos = _float_unary(COS)
tan = _float_unary(TAN)
asin = _float_unary(ASIN)
acos = _float_unary(ACOS)
atan = _float_unary(ATAN)
sinh = _float_unary(SINH)
cosh = _float_unary(COSH)
asinh = _float_unary(ASINH)
acosh = _float_unary(ACOSH)
atanh = _float_unary(ATANH)
expm1 = _float_unary(EXPM1)
log1p = _float_unary(LOG1P)
rint = _float_unary(RINT)
erf = _float_unary(ERF)
erfc = _float_unary(ERFC)
lgamma = _float_unary(LGAMMA)
digamma = _float_unary(DIGAMMA)


def atan2(y, x, name=None):
    """The angle of the point ``(x, y)``: ``atan(y / x)`` in the right quadrant."""
    return math_ops._binary(ATAN2, y, x, name or "Atan2", FLOAT_TYPES)


def zeta(x, q, name=None):
    """The Hurwitz zeta function ``sum over k >= 0 of (k + q) ** -x``."""
    return math_ops._binary(ZETA, x, q, name or "Zeta", FLOAT_TYPES)


def polygamma(a, x, name=None):
    """The ``a``-th derivative of digamma (``a`` a non-negative whole number,
    as a float tensor of x's dtype)."""
    return math_ops._binary(POLYGAMMA, a, x, name or "Polygamma", FLOAT_TYPES)
