"""Elementwise ops: one tiny scalar function per op.

Each function below computes *one* output element. :func:`ufunc_kernel` turns
it into a numpy ufunc with ``numba.vectorize``, which writes the loop for us::

    # serial ufunc: numpy drives the loop (and the broadcasting)
    for i in range(out.size):
        out[i] = scalar_fn(x[i], y[i])

    # parallel ufunc (large contiguous inputs): each thread t does
    for i in range(t * n // T, (t + 1) * n // T):
        out[i] = scalar_fn(x[i], y[i])

The functions are written once for every dtype: numba compiles them per
signature (``float32(float32, float32)``...). Integer ``int32`` arithmetic is
done in 64 bits by numba and wrapped back to 32 bits on store, which gives the
same two's-complement results as TensorFlow.

Half types (``float16``, ``bfloat16``) never reach these functions: the caller
computes in float32 and rounds once at the end.
"""

import math

import numpy as np

from minitf.kernels.cpu import vector_math


# ---------------------------------------------------------------- unary ----

def neg(x):
    return -x


def abs_(x):
    return abs(x)


def square(x):
    return x * x


def sqrt(x):
    return math.sqrt(x)


def rsqrt(x):
    return 1.0 / math.sqrt(x)


# Exp, Log, Tanh and Sigmoid: the front (cpu/__init__.py) runs these ops with
# vector_math's array kernel, whose loop vectorizes, not with a ufunc. The
# scalar versions below are that same arithmetic, for anyone who builds a
# ufunc or a loop of their own from this table.

def exp(x):
    return vector_math.exp(x)


def log(x):
    return vector_math.log(x)


def relu(x):
    # ``x != x`` is the NaN test: relu(NaN) stays NaN, as np.maximum(x, 0) does.
    if x > 0 or x != x:
        return x
    return 0


def sigmoid(x):
    return vector_math.sigmoid(x)


def tanh(x):
    return vector_math.tanh(x)


def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return x  # 0, -0.0 or NaN


def reciprocal(x):
    return 1.0 / x


def floor(x):
    return np.floor(x)   # math.floor would return a Python int


def ceil(x):
    return np.ceil(x)


def round_half_to_even(x):
    return np.rint(x)    # TF's Round is banker's rounding: 2.5 -> 2


def logical_not(x):
    return not x


# --------------------------------------------------------------- binary ----

def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def real_div(x, y):
    return x / y


def truncate_div_int(x, y):
    # Integer RealDiv/Div rounds toward zero, as C does. The caller has already
    # rejected y == 0. y == -1 is special-cased: MIN_INT // -1 overflows.
    if y == -1:
        return -x
    q = x // y
    if q < 0 and q * y != x:
        q += 1
    return q


def floor_div_float(x, y):
    return np.floor(x / y)     # TF: floor(x / y), so 1 // 0.1 == 10, not 9


def floor_div_int(x, y):
    if y == -1:
        return -x
    return x // y


def floor_mod_float(x, y):
    # TF: the remainder of truncated division, moved into the divisor's sign.
    r = np.fmod(x, y)
    if r != 0 and (r < 0) != (y < 0):
        r += y
    return r


def floor_mod_int(x, y):
    if y == -1:
        return x * 0
    return x % y


def pow_(x, y):
    return x ** y


def maximum(x, y):
    if x != x:          # NaN wins, like np.maximum
        return x
    if y != y:
        return y
    return x if x >= y else y


def minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


def squared_difference(x, y):
    d = x - y
    return d * d


def equal(x, y):
    return x == y


def not_equal(x, y):
    return x != y


def less(x, y):
    return x < y


def less_equal(x, y):
    return x <= y


def greater(x, y):
    return x > y


def greater_equal(x, y):
    return x >= y


def logical_and(x, y):
    return x and y


def logical_or(x, y):
    return x or y


def select(cond, x, y):
    return x if cond else y


# ---------------------------------------------------------------- tables ----
# op -> {dtype kind: scalar function}. Kinds: "b" bool, "i" int32/int64,
# "f" float32/float64. A missing kind means "not supported for that dtype".

_NUM = ("i", "f")

UNARY_FUNCTIONS = {
    "Neg": dict.fromkeys(_NUM, neg),
    "Abs": dict.fromkeys(_NUM, abs_),
    "Square": dict.fromkeys(_NUM, square),
    "Sqrt": {"f": sqrt},
    "Rsqrt": {"f": rsqrt},
    "Exp": {"f": exp},
    "Log": {"f": log},
    "Relu": dict.fromkeys(_NUM, relu),
    "Sigmoid": {"f": sigmoid},
    "Tanh": {"f": tanh},
    "Sign": dict.fromkeys(_NUM, sign),
    "Reciprocal": {"f": reciprocal},
    "Floor": {"f": floor},
    "Ceil": {"f": ceil},
    "Round": {"f": round_half_to_even},
    "LogicalNot": {"b": logical_not},
}

BINARY_FUNCTIONS = {
    "AddV2": dict.fromkeys(_NUM, add),
    "Sub": dict.fromkeys(_NUM, sub),
    "Mul": dict.fromkeys(_NUM, mul),
    "RealDiv": {"f": real_div, "i": truncate_div_int},
    "FloorDiv": {"f": floor_div_float, "i": floor_div_int},
    "FloorMod": {"f": floor_mod_float, "i": floor_mod_int},
    "Pow": dict.fromkeys(_NUM, pow_),
    "Maximum": dict.fromkeys(_NUM, maximum),
    "Minimum": dict.fromkeys(_NUM, minimum),
    "SquaredDifference": dict.fromkeys(_NUM, squared_difference),
    "Equal": dict.fromkeys(("b", "i", "f"), equal),
    "NotEqual": dict.fromkeys(("b", "i", "f"), not_equal),
    "Less": dict.fromkeys(_NUM, less),
    "LessEqual": dict.fromkeys(_NUM, less_equal),
    "Greater": dict.fromkeys(_NUM, greater),
    "GreaterEqual": dict.fromkeys(_NUM, greater_equal),
    "LogicalAnd": {"b": logical_and},
    "LogicalOr": {"b": logical_or},
}

#: Binary ops whose output is bool whatever the input dtype.
BOOL_OUTPUT = frozenset(["Equal", "NotEqual", "Less", "LessEqual", "Greater",
                         "GreaterEqual", "LogicalAnd", "LogicalOr"])
