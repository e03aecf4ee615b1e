"""vector_math: Exp/Log/Tanh/Sigmoid accurate to a few ulps, right at the edges,
one algorithm for every input size, and compiled to SIMD code."""

import platform
import re

import numba
import numpy as np
import pytest

from minitf.framework.op_def import lookup
from minitf.kernels import cpu
from minitf.kernels.cpu import vector_math as vm

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

EXACT = {
    "Exp": np.exp,
    "Log": np.log,
    "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}

#: The largest error each op may have, in units in the last place of the result.
MAX_ULPS = {("Tanh", F32): 5.0}
DEFAULT_MAX_ULPS = 2.5


def unary(op, x):
    """The CPU kernel of elementwise op ``op`` (its row of the op table) on ``x``."""
    return cpu.unary(lookup(op), x)


def inputs(op, dtype, rng):
    """Arguments over the whole useful range: overflow, underflow, denormals, tiny."""
    big = 88.0 if dtype == F32 else 709.0
    if op == "Log":
        tiny = np.finfo(dtype).smallest_subnormal
        spread = np.exp(rng.uniform(np.log(tiny) + 1, np.log(np.finfo(dtype).max) - 1, 200_000))
        near_one = rng.uniform(0.5, 2.0, 100_000)
        return np.concatenate([spread, near_one, [tiny, 3 * tiny]]).astype(dtype)
    if op == "Exp":
        wide = rng.uniform(-1.2 * big, 1.01 * big, 200_000)
    else:
        wide = rng.standard_normal(200_000) * 6
    small = rng.uniform(-1e-3, 1e-3, 50_000)
    return np.concatenate([wide, small, rng.uniform(-1, 1, 50_000)]).astype(dtype)


def ulps(got, x, op, dtype):
    """|got - exact| in ulps of the exact result, where it is a finite ``dtype`` value."""
    wide = np.longdouble if dtype == F64 else np.float64
    with np.errstate(all="ignore"):
        exact = EXACT[op](x.astype(wide))
    info = np.finfo(dtype)
    finite = (np.abs(exact) >= info.smallest_subnormal) & (np.abs(exact) <= info.max)
    spacing = np.spacing(np.abs(exact[finite]).astype(dtype)).astype(wide)
    return np.abs(got[finite].astype(wide) - exact[finite]) / spacing


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("op", sorted(EXACT))
def test_error_is_a_few_ulps_over_the_whole_range(op, dtype):
    x = inputs(op, dtype, np.random.default_rng(7))
    got = unary(op, x)
    assert got.dtype == dtype and got.shape == x.shape
    error = ulps(got, x, op, dtype)
    assert error.size > 0.9 * x.size
    assert error.max() <= MAX_ULPS.get((op, dtype), DEFAULT_MAX_ULPS), error.max()


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_special_values(dtype):
    inf, nan = np.inf, np.nan
    x = np.array([nan, inf, -inf, 0.0, -0.0], dtype)
    with np.errstate(all="ignore"):
        for op in ("Exp", "Log", "Tanh"):
            np.testing.assert_array_equal(unary(op, x), EXACT[op](x), err_msg=op)
    assert unary("Log", np.array([-1.0, 1.0], dtype)).tolist()[1] == 0.0
    assert np.isnan(unary("Log", np.array([-1.0], dtype))[0])
    assert np.signbit(unary("Tanh", x)[4])                       # tanh(-0.0) == -0.0
    assert unary("Sigmoid", x).tolist()[1:] == [1.0, 0.0, 0.5, 0.5]
    assert np.isnan(unary("Sigmoid", x)[0])
    big = 110.0 if dtype == F32 else 800.0
    edges = np.array([big, -big, -big * 1.1], dtype)
    assert unary("Exp", edges).tolist() == [inf, 0.0, 0.0]    # overflow, underflow
    assert unary("Sigmoid", edges).tolist() == [1.0, 0.0, 0.0]
    saturated = 9.5 if dtype == F32 else 20.0                     # tanh rounds to 1 there
    assert unary("Tanh", np.array([saturated, -30.0, 1e30], dtype)).tolist() == [1, -1, 1]
    tiny = np.finfo(dtype).smallest_subnormal
    logs = unary("Log", np.array([tiny, -tiny, np.finfo(dtype).max], dtype))
    np.testing.assert_allclose(logs[[0, 2]], np.log(np.array([tiny, np.finfo(dtype).max],
                                                             np.float64)), rtol=1e-6)
    assert np.isnan(logs[1])


@pytest.mark.parametrize("op", sorted(EXACT))
def test_same_answer_at_every_size_and_layout(op):
    """Big inputs take the multi-threaded loop, small ones the serial one,
    strided views are copied first, 0-d stays 0-d: all give identical bits."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(cpu.PARALLEL_MIN_SIZE * 3 + 5) * 5).astype(np.float32)
    if op == "Log":
        x = np.abs(x) + np.float32(1e-3)
    whole = unary(op, x)
    np.testing.assert_array_equal(unary(op, x[:1000]), whole[:1000])
    np.testing.assert_array_equal(unary(op, x[::3]), whole[::3])
    np.testing.assert_array_equal(unary(op, x[:12].reshape(3, 4)), whole[:12].reshape(3, 4))
    scalar = unary(op, x[5])
    assert scalar.shape == () and scalar == whole[5]


def test_half_types_compute_in_float32():
    import ml_dtypes
    x = np.linspace(-4, 4, 33, dtype=np.float32)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        got = unary("Tanh", x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, unary("Tanh", x.astype(dtype).astype(np.float32))
                                      .astype(dtype))


def test_python_callers_get_numpy():
    x = np.array([0.5, 2.0])
    np.testing.assert_array_equal(vm.exp(x), np.exp(x))
    np.testing.assert_array_equal(vm.log(x), np.log(x))
    np.testing.assert_array_equal(vm.tanh(x), np.tanh(x))
    np.testing.assert_allclose(vm.sigmoid(x), 1 / (1 + np.exp(-x)))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="reads x86 assembly")
def test_map_kernel_compiles_to_packed_simd_instructions():
    """The inner loops use packed instructions (``vmulps``: 4-16 floats at a
    time), not the scalar ``vmulss`` a libm call per element would leave."""
    kernel = numba.njit(vm.map_signature(F32), parallel=True, error_model="numpy",
                        fastmath={"contract"})(vm.map_kernel)
    asm = kernel.inspect_asm(kernel.signatures[0])
    packed = re.findall(r"\bv?(?:mul|add|fmadd\d*|div)ps\b", asm)
    assert len(packed) > 40, len(packed)
    assert not re.search(r"call\w*\s+\S*(expf|logf|tanhf)\b", asm)


def test_softmax_family_rows_nan_and_no_classes():
    """The softmax kernels compute exp once per element with vector_math's exp:
    values match numpy's three-pass formula, a NaN poisons only its own row,
    and a row of no classes gives empty outputs and a zero loss (as TF)."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((300, 257)) * 4).astype(np.float32)   # big: parallel rows
    x[7, 100] = np.nan
    z = x - np.nanmax(x, axis=1, keepdims=True)
    want = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    got = cpu.softmax(x)
    assert np.isnan(got[7]).all() and not np.isnan(np.delete(got, 7, axis=0)).any()
    np.testing.assert_allclose(np.delete(got, 7, axis=0), np.delete(want, 7, axis=0),
                               rtol=1e-5, atol=1e-8)
    labels = rng.integers(0, 257, 300)
    loss, backprop = cpu.sparse_softmax_xent(np.delete(x, 7, axis=0), np.delete(labels, 7))
    log_p = np.log(np.delete(want, 7, axis=0))
    np.testing.assert_allclose(loss, -log_p[np.arange(299), np.delete(labels, 7)], rtol=1e-5)
    empty = np.zeros((3, 0), np.float32)
    assert cpu.softmax(empty).shape == (3, 0)
    loss, backprop = cpu.softmax_xent(empty, empty)
    assert loss.tolist() == [0.0, 0.0, 0.0] and backprop.shape == (3, 0)
