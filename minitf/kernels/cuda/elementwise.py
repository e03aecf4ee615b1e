"""Elementwise CUDA kernels: one thread per output element, grid-stride loop.

Launch layout (the same for every kernel here)::

    blocks  = min(ceil(n / 256), 1024)        # a 1-D grid of 1-D blocks
    threads = 256                              # threads per block
    # thread (block b, lane t) starts at i = b * 256 + t and then jumps by
    # the whole grid (blocks * 256) until it passes n: a "grid-stride loop",
    # so any n runs on a bounded grid and neighbouring threads touch
    # neighbouring elements (coalesced memory access).

Broadcasting is stride arithmetic, not copies: the caller passes the output
shape and, for each input, its stride per output dimension in elements (0 on
a broadcast dimension). Thread ``i`` unravels ``i`` into output coordinates
and dots them with each input's strides to find the elements it reads::

    x_off = sum(coord[d] * x_strides[d] for d in dims)

The op is an integer code (see ``UNARY_CODES``/``BINARY_CODES``); the ``if``
chain in the device functions is the same for every thread of a launch, so
it costs the GPU no divergence.
"""

import math

from numba import config, cuda

# The simulator runs every GPU thread as a Python thread: small blocks keep it quick.
THREADS = 16 if config.ENABLE_CUDASIM else 256
MAX_BLOCKS = 1024

UNARY_CODES = {"Neg": 0, "Abs": 1, "Square": 2, "Sqrt": 3, "Rsqrt": 4, "Exp": 5, "Log": 6,
               "Relu": 7, "Sigmoid": 8, "Tanh": 9, "Sign": 10, "Reciprocal": 11,
               "Floor": 12, "Ceil": 13, "Round": 14}
ARITH_CODES = {"AddV2": 0, "Sub": 1, "Mul": 2, "RealDiv": 3, "FloorDiv": 4, "FloorMod": 5,
               "Pow": 6, "Maximum": 7, "Minimum": 8, "SquaredDifference": 9}
COMPARE_CODES = {"Equal": 0, "NotEqual": 1, "Less": 2, "LessEqual": 3, "Greater": 4,
                 "GreaterEqual": 5}


def launch_config(n):
    """(blocks, threads) for ``n`` elements."""
    return max(1, min(MAX_BLOCKS, (n + THREADS - 1) // THREADS)), THREADS


@cuda.jit(device=True)
def _round_half_even(v):
    f = math.floor(v)
    d = v - f
    if d > 0.5 or (d == 0.5 and f % 2 != 0):
        return f + 1
    return f


@cuda.jit(device=True)
def unary_op(op, v):
    if op == 0:
        return -v
    if op == 1:
        return abs(v)
    if op == 2:
        return v * v
    if op == 3:
        return math.sqrt(v) if v >= 0 else math.nan
    if op == 4:
        if v == 0:
            return math.copysign(math.inf, v)
        return 1.0 / math.sqrt(v) if v >= 0 else math.nan
    if op == 5:
        if v > 709.0:
            return math.inf
        return math.exp(v)
    if op == 6:
        if v < 0:
            return math.nan
        if v == 0:
            return -math.inf
        return math.log(v)
    if op == 7:
        return v if (v > 0 or v != v) else 0.0
    if op == 8:
        if v < -700.0:
            return 0.0
        return 1.0 / (1.0 + math.exp(-v))
    if op == 9:
        return math.tanh(v)
    # (Floor/Ceil/Round below; the simulator runs this in Python, where
    # math.floor(inf) raises, so infinities and NaN return early.)
    if op == 10:
        if v > 0:
            return 1.0
        if v < 0:
            return -1.0
        return v
    if op == 11:
        return 1.0 / v if v != 0 else math.copysign(math.inf, v)
    if v != v or math.isinf(v):
        return v                 # Floor, Ceil, Round keep NaN and infinities
    if op == 12:
        return math.floor(v)
    if op == 13:
        return math.ceil(v)
    return _round_half_even(v)


@cuda.jit(device=True)
def _div(x, y):
    # Real CUDA divides by zero quietly (inf/NaN); spelled out so that the
    # simulator, which runs this in Python, gives the same answer.
    if y == 0:
        if x == 0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


@cuda.jit(device=True)
def arith_op(op, x, y):
    if op == 0:
        return x + y
    if op == 1:
        return x - y
    if op == 2:
        return x * y
    if op == 3:
        return _div(x, y)
    if op == 4:
        return math.floor(_div(x, y))
    if op == 5:
        if y == 0 or x != x or y != y or math.isinf(x):
            return math.nan
        r = math.fmod(x, y)
        if r != 0 and (r < 0) != (y < 0):
            r += y
        return r
    if op == 6:
        if x == 0 and y < 0:
            return math.inf
        if x < 0 and y != math.floor(y):
            return math.nan
        return x ** y
    if op == 7:
        if x != x:
            return x
        if y != y:
            return y
        return x if x >= y else y
    if op == 8:
        if x != x:
            return x
        if y != y:
            return y
        return x if x <= y else y
    d = x - y
    return d * d


@cuda.jit(device=True)
def compare_op(op, x, y):
    if op == 0:
        return x == y
    if op == 1:
        return x != y
    if op == 2:
        return x < y
    if op == 3:
        return x <= y
    if op == 4:
        return x > y
    return x >= y


@cuda.jit(device=True)
def offsets(i, shape, xs, ys):
    """Offsets into x and y of output element ``i`` (unravel, then dot strides)."""
    xo = 0
    yo = 0
    for d in range(shape.size - 1, -1, -1):
        c = i % shape[d]
        i //= shape[d]
        xo += c * xs[d]
        yo += c * ys[d]
    return xo, yo


@cuda.jit(cache=True)
def unary_kernel(x, out, op):
    """``out[i] = f(x[i])`` for flat, contiguous ``x`` and ``out``."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = unary_op(op, x[i])


@cuda.jit(cache=True)
def arith_kernel(x, y, out, op, shape, xs, ys):
    """``out[i] = f(x[x_off(i)], y[y_off(i)])`` with broadcasting by strides."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        xo, yo = offsets(i, shape, xs, ys)
        out[i] = arith_op(op, x[xo], y[yo])


@cuda.jit(cache=True)
def compare_kernel(x, y, out, op, shape, xs, ys):
    """Like :func:`arith_kernel`, writing bools."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        xo, yo = offsets(i, shape, xs, ys)
        out[i] = compare_op(op, x[xo], y[yo])


@cuda.jit(cache=True)
def select_kernel(c, x, y, out, shape, cs, xs):
    """``out[i] = x[i] if c[c_off(i)] else y[i]`` (x, y already of the output shape)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        co, xo = offsets(i, shape, cs, xs)
        out[i] = x[xo] if c[co] else y[xo]


@cuda.jit(cache=True)
def cast_kernel(x, out, scale):
    """``out[i] = x[i] * scale`` converted to out's dtype (Mean uses scale = 1/count)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] * scale


@cuda.jit(cache=True)
def add_kernel_inplace(acc, x):
    """``acc[i] += x[i]`` (AddN accumulates its inputs one launch at a time)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, acc.size, stride):
        acc[i] += x[i]
