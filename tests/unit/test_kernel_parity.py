"""Every CPU kernel agrees with the numpy reference, on every dtype its row declares.

The cases come from the op table, not from the code under test: every row whose
kernel computes with a backend is run on each of its examples
(``minitf/kernels/examples.py``) for *every* dtype the row lists for the CPU
(int8 to uint16 and the half types included), through the row's own kernel,
on the CPU backend and on the numpy reference. Hypothesis then draws shapes
(0-d, empty dims, broadcasting pairs) for the elementwise rows and the
reductions, with values in each row's declared domain. Extra tests pin the
TensorFlow-specific behaviour: error types and messages, NaN handling,
rounding rules, and inputs large enough to take the parallel kernels.
"""

import subprocess
import sys
import textwrap
import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitf.compat.v1 as tf
from minitf.framework import dtypes
from minitf.framework.errors import InvalidArgumentError
from minitf.framework.op_def import lookup
from minitf.framework.tensor_shape import TensorShape
from minitf.kernels import cpu, examples, reference as ref
from minitf.ops.core import make_op

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16)]
NUMBERS = INTS + FLOATS
BOOL = np.dtype(np.bool_)
BIG = cpu.PARALLEL_MIN_SIZE * 2 + 7

FEW = settings(max_examples=12, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


def tolerance(dtype):
    return {np.dtype(np.float16): (2e-3, 1e-3), BF16: (1.6e-2, 1e-2),
            np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-12, 1e-12)
            }.get(np.dtype(dtype), (0, 0))


def assert_same(got, want, atol_scale=1):
    """Same type, dtype and shape; exact for ints/bools, close for floats."""
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = tolerance(want.dtype)
    if rtol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol * atol_scale, equal_nan=True)


def values(draw, dtype, shape, lo=-10, hi=10):
    """An array of ``dtype`` drawn as float64/int64 and converted."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return draw(hnp.arrays(np.bool_, shape))
    if dtype.kind in "iu":
        lo, hi = max(lo, np.iinfo(dtype).min), min(hi, np.iinfo(dtype).max)
        return draw(hnp.arrays(np.int64, shape, elements=st.integers(int(np.ceil(lo)),
                                                                     int(np.floor(hi))))
                    ).astype(dtype)
    raw = draw(hnp.arrays(np.float64, shape, elements=st.floats(lo, hi, width=32)))
    return raw.astype(dtype)


def via_kernel(name, backend, *arrays, **attrs):
    """Run op ``name``'s row kernel with ``backend`` on ``arrays`` (as TF would)."""
    row = lookup(name)
    with tf.Graph().as_default():
        fed = [tf.placeholder(dtypes.dtype_of_numpy(a)) for a in arrays]
        dt = fed[0].dtype.base_dtype
        out = tf.bool if row.elementwise is not None and row.elementwise.bool_output else dt
        op = make_op(row, fed, [out], [TensorShape(None)], attrs=dict({"T": dt}, **attrs))
    return row.kernel(op, backend)(None, list(arrays))


# ----------------------------------------------- every row, every dtype it declares ----

def _row_dtype_cases():
    for row in examples.rows_with_examples("CPU"):
        for dtype in examples.dtypes_of(row, "CPU"):
            yield pytest.param(row, dtype, id="%s-%s" % (row.name, dtype))


@pytest.mark.parametrize("row,dtype", list(_row_dtype_cases()))
def test_every_row_example_on_the_cpu_equals_the_reference(row, dtype):
    found = examples.cases(row, "CPU", only=[dtype])
    assert found, "%s declares %s on the CPU but has no example for it" % (row.name, dtype)
    for case in found:
        got, want = examples.run(case, cpu), examples.run(case, ref)
        assert len(got) == len(want)
        k = max([x.shape[-1] for x in case.inputs if getattr(x, "ndim", 0) >= 1] + [1])
        for g, w in zip(got, want):
            assert_same(np.asarray(g), np.asarray(w), atol_scale=25 * k)


def test_the_table_has_rows_of_every_family_and_small_int_dtypes():
    names = {row.name for row in examples.rows_with_examples("CPU")}
    assert {"AddV2", "Sigmoid", "MatMul", "Sum", "Softmax", "ArgMax", "Select",
            "Cast", "AddN", "LogicalNot"} <= names
    assert "int8" in examples.dtypes_of(lookup("AddV2")) and \
        "uint16" in examples.dtypes_of(lookup("Sum"))


# ------------------------------------------------------------- elementwise ----

def _elementwise(arity):
    out = []
    for row in examples.rows_with_examples("CPU"):
        ew = row.elementwise
        if ew is None or len(ew.domain) != arity:
            continue
        for name in examples.dtypes_of(row, "CPU"):
            if name != "string":
                out.append(pytest.param(row, dtypes.as_dtype(name).np_dtype,
                                        id="%s-%s" % (row.name, name)))
    return out


UNARY_CASES = _elementwise(1)
BINARY_CASES = _elementwise(2)


@pytest.mark.parametrize("row,dtype", UNARY_CASES)
@FEW
@given(data=st.data())
def test_unary(row, dtype, data):
    shape = data.draw(SHAPES)
    (lo, hi), = row.elementwise.domain
    x = values(data.draw, dtype, shape, lo, hi)
    assert_same(cpu.unary(row, x), ref.unary(row, x))


@pytest.mark.parametrize("row,dtype", BINARY_CASES)
@FEW
@given(data=st.data())
def test_binary(row, dtype, data):
    sx, sy = data.draw(PAIRS).input_shapes
    (xlo, xhi), (ylo, yhi) = row.elementwise.domain
    x = values(data.draw, dtype, sx, xlo, xhi)
    y = values(data.draw, dtype, sy, ylo, yhi)
    assert_same(cpu.binary(row, x, y), ref.binary(row, x, y))


# -------------------------------------------------------------- reductions ----

REDUCE_CASES = ([(op, dt) for op in ("sum", "mean", "max", "min", "prod") for dt in NUMBERS]
                + [("all", BOOL), ("any", BOOL)])


@pytest.mark.parametrize("op,dtype", REDUCE_CASES, ids=str)
@FEW
@given(data=st.data())
def test_reduce(op, dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    axes = tuple(data.draw(st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                   max_size=len(shape))))
    keepdims = data.draw(st.booleans())
    lo, hi = (-2, 2) if op == "prod" else (-10, 10)
    x = values(data.draw, dtype, shape, lo, hi)
    assert_same(cpu.reduce(op, x, axes, keepdims), ref.reduce(op, x, axes, keepdims))


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
@pytest.mark.parametrize("find_max", [True, False])
@FEW
@given(data=st.data())
def test_argmax_argmin(dtype, find_max, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = values(data.draw, dtype, shape, -3, 3)      # small range: many ties
    out = np.int32 if find_max else np.int64
    fn = "argmax" if find_max else "argmin"
    assert_same(getattr(cpu, fn)(x, axis, out), getattr(ref, fn)(x, axis, out))


# ---------------------------------------------------- matmul, add_n, others ----

@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
@FEW
@given(data=st.data())
def test_matmul(dtype, data):
    m, k, n = (data.draw(st.integers(0, 5)) for _ in range(3))
    ta, tb = data.draw(st.booleans()), data.draw(st.booleans())
    batch_a, batch_b = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, max_side=3)).input_shapes
    if data.draw(st.booleans()):
        batch_a = batch_b = ()
    a = values(data.draw, dtype, batch_a + ((k, m) if ta else (m, k)), -5, 5)
    b = values(data.draw, dtype, batch_b + ((n, k) if tb else (k, n)), -5, 5)
    got = cpu.matmul(a, b, transpose_a=ta, transpose_b=tb)
    want = ref.matmul(a, b, transpose_a=ta, transpose_b=tb)
    if dtype.kind == "f" and want.size:
        rtol, _ = tolerance(dtype)        # sums of k products: scale atol with k
        np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=rtol,
                                   atol=rtol * 25 * max(k, 1))
        assert got.dtype == want.dtype and got.shape == want.shape
    else:
        assert_same(got, want)


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
@FEW
@given(data=st.data())
def test_add_n(dtype, data):
    shape = data.draw(SHAPES)
    xs = [values(data.draw, dtype, shape) for _ in range(data.draw(st.integers(1, 4)))]
    assert_same(cpu.add_n(xs), ref.add_n(xs))


CAST_DTYPES = [BOOL] + NUMBERS


@pytest.mark.parametrize("src", CAST_DTYPES, ids=str)
@pytest.mark.parametrize("dst", CAST_DTYPES, ids=str)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_cast(src, dst, data):
    x = values(data.draw, src, data.draw(SHAPES), -100, 100)
    assert_same(cpu.cast(x, dst), ref.cast(x, dst))


@pytest.mark.parametrize("dtype", [BOOL] + NUMBERS, ids=str)
@FEW
@given(data=st.data())
def test_select(dtype, data):
    sc, sx, sy = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, max_side=4)).input_shapes
    cond = values(data.draw, BOOL, sc)
    x, y = values(data.draw, dtype, sx), values(data.draw, dtype, sy)
    assert_same(cpu.select(cond, x, y), ref.select(cond, x, y))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@FEW
@given(data=st.data())
def test_softmax_family(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    x = values(data.draw, dtype, shape, -20, 20)
    assert_same(cpu.softmax(x), ref.softmax(x))
    assert_same(cpu.log_softmax(x), ref.log_softmax(x))
    batch, classes = data.draw(st.integers(0, 5)), data.draw(st.integers(1, 5))
    logits = values(data.draw, dtype, (batch, classes), -20, 20)
    probs = ref.softmax(values(data.draw, dtype, (batch, classes)))
    for got, want in zip(cpu.softmax_xent(logits, probs), ref.softmax_xent(logits, probs)):
        assert_same(got, want)
    labels = np.asarray(data.draw(st.lists(st.integers(0, classes - 1), min_size=batch,
                                           max_size=batch)), dtype=np.int32)
    for got, want in zip(cpu.sparse_softmax_xent(logits, labels),
                         ref.sparse_softmax_xent(logits, labels)):
        assert_same(got, want)


# ------------------------------------------------------------ TF behaviour ----

@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "reference"])
@pytest.mark.parametrize("op", ["RealDiv", "FloorDiv", "FloorMod"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_by_zero(backend, op, dtype):
    x = np.array([1, 2, 3], dtype)
    with pytest.raises(InvalidArgumentError, match="^Integer division by zero$"):
        via_kernel(op, backend, x, np.array([1, 0, 1], dtype))


@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "reference"])
def test_integer_negative_power(backend):
    with pytest.raises(InvalidArgumentError,
                       match="^Integers to negative integer powers are not allowed$"):
        via_kernel("Pow", backend, np.array([2, 3], np.int32), np.array([1, -1], np.int32))


@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "reference"])
def test_sparse_xent_bad_label(backend):
    logits = np.zeros((2, 3), np.float32)
    with pytest.raises(InvalidArgumentError) as info:
        backend.sparse_softmax_xent(logits, np.array([0, 5], np.int32))
    assert info.value.message == ("Received a label value of 5 which is outside the valid "
                                  "range of [0, 3).  Label values: 0 5")
    with pytest.raises(InvalidArgumentError, match="label value of -1 "):
        backend.sparse_softmax_xent(logits, np.array([-1, 1], np.int64))


@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "reference"])
def test_argmax_empty_axis(backend):
    with pytest.raises(InvalidArgumentError, match=r"Reduction axis 1 is empty in shape \[2,0\]"):
        backend.argmax(np.zeros((2, 0), np.float32), 1, np.int64)


def test_tf_rounding_and_division_rules():
    f = np.array([1.0, -7.0, 7.0, 2.5, 0.5, -2.5], np.float32)
    d = np.array([0.1, 2.0, -2.0, 1.0, 1.0, 1.0], np.float32)
    # FloorDiv on floats is floor(x / y): 1 // 0.1 is 10 in TF (9 in Python).
    np.testing.assert_array_equal(cpu.binary(lookup("FloorDiv"), f[:3], d[:3]), [10, -4, -4])
    np.testing.assert_array_equal(cpu.binary(lookup("FloorMod"), f[1:3], d[1:3]), [1, -1])
    np.testing.assert_array_equal(cpu.unary(lookup("Round"), f[3:]), [2, 0, -2])   # half to even
    i = np.array([-7, 7, -2**31, 7], np.int32)
    j = np.array([2, -2, -1, 3], np.int32)
    np.testing.assert_array_equal(cpu.binary(lookup("RealDiv"), i, j), [-3, -3, -2**31, 2])
    np.testing.assert_array_equal(cpu.binary(lookup("FloorDiv"), i, j), [-4, -4, -2**31, 2])
    np.testing.assert_array_equal(cpu.binary(lookup("FloorMod"), i, j), [1, -1, 0, 1])
    big = np.array([np.iinfo(np.int64).min], np.int64)
    assert cpu.binary(lookup("FloorDiv"), big, np.array([-1])).tolist() == big.tolist()


def test_nan_propagation_matches_numpy():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert np.isnan(cpu.binary(lookup("Maximum"), x, np.float32([2, 2, 2]))[1])
    assert np.isnan(cpu.unary(lookup("Relu"), x)[1])
    assert np.isnan(cpu.reduce("max", x, (0,), False))
    assert np.isnan(cpu.reduce("min", x, (0,), False))
    assert cpu.argmax(x, 0, np.int64) == 1


def test_empty_reductions_and_zero_d():
    e = np.zeros((0, 3), np.float32)
    assert cpu.reduce("max", e, (0,), False).tolist() == [-np.inf] * 3
    assert cpu.reduce("min", e.astype(np.int32), (0,), False).tolist() == [2**31 - 1] * 3
    assert cpu.reduce("prod", e, (0,), False).tolist() == [1, 1, 1]
    assert cpu.reduce("all", e.astype(bool), (0, 1), False).dtype == np.bool_
    s = cpu.binary(lookup("AddV2"), np.array(1, np.int32), np.array(2, np.int32))
    assert type(s) is np.ndarray and s.shape == () and s.dtype == np.int32 and s == 3
    r = cpu.reduce("sum", np.ones((2, 3), np.int32), (0, 1), False)
    assert type(r) is np.ndarray and r.shape == () and r.dtype == np.int32 and r == 6


def test_int32_sum_wraps_like_tf():
    x = np.full(4, 2**30, np.int32)
    assert cpu.reduce("sum", x, (0,), False) == ref.reduce("sum", x, (0,), False) == 0
    assert cpu.reduce("mean", np.array([-7, 0], np.int32), (0,), False) == -3


@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "reference"])
def test_integer_mean_sums_in_64_bits_as_tf(backend):
    # Checked on TF 2.21: an int8 mean of 300 x 100 is 100 (its int8 sum wraps to 48);
    # int32 max gives int32 max; an int64 sum wraps, so int64 max gives -1.
    assert backend.reduce("mean", np.full(300, 100, np.int8), (0,), False) == 100
    assert backend.reduce("sum", np.full(300, 100, np.int8), (0,), False) == 48
    top = np.iinfo(np.int32).max
    assert backend.reduce("mean", np.full(4, top, np.int32), (0,), False) == top
    assert backend.reduce("mean", np.full(4, 2**63 - 1, np.int64), (0,), False) == -1
    assert backend.reduce("mean", np.full(4, 255, np.uint8), (0,), False) == 255


# ------------------------------------------------------- parallel kernels ----

@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    return rng.standard_normal(BIG).astype(np.float32)


@pytest.mark.parametrize("op", ["AddV2", "Mul", "Maximum", "Less", "FloorMod"])
def test_parallel_binary(big, op):
    y = big[::-1].copy()
    assert_same(cpu.binary(lookup(op), big, y), ref.binary(lookup(op), big, y))
    assert_same(cpu.binary(lookup(op), big, np.float32(0.5)),
                ref.binary(lookup(op), big, np.float32(0.5)))
    m = big[:BIG // 7 * 7].reshape(-1, 7)
    row = np.arange(7, dtype=np.float32)        # broadcast: the serial path
    assert_same(cpu.binary(lookup(op), m, row), ref.binary(lookup(op), m, row))


@pytest.mark.parametrize("op", ["Relu", "Exp", "Neg"])
def test_parallel_unary(big, op):
    assert_same(cpu.unary(lookup(op), big), ref.unary(lookup(op), big))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape,axes", [((BIG,), (0,)), ((3, BIG // 3), (0,)),
                                        ((BIG // 8, 8), (1,)), ((4, BIG // 40, 10), (1,)),
                                        ((4, BIG // 40, 10), (0, 2))])
def test_parallel_reduce(big, dtype, op, shape, axes):
    x = (big[:int(np.prod(shape))] * 100).astype(dtype).reshape(shape)
    got, want = cpu.reduce(op, x, axes, False), ref.reduce(op, x, axes, False)
    if np.dtype(dtype) == np.float32 and op in ("sum", "mean"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-2)
    else:
        assert_same(got, want)


# ------------------------------------------- float Max/Min on the float bits ----
# cpu.reduce computes float Max/Min on integer keys of the bits
# (reductions.float_extreme_kernel); these pin the corners of that trick, on
# inputs big enough for the parallel kernel (split into chunks) and small ones.

FLOAT_NATIVE = [np.dtype(np.float32), np.dtype(np.float64)]
EXTREMES = [("max", np.max), ("min", np.min)]


def nan_bits(dtype, negative=False, smallest=False):
    """A NaN of ``dtype``: numpy's quiet one, or the one just above inf's bits."""
    it = np.dtype("i%d" % np.dtype(dtype).itemsize)
    bits = np.array(np.inf if smallest else np.nan, dtype).view(it) + (1 if smallest else 0)
    x = bits.view(dtype)
    return -x if negative else x


@pytest.mark.parametrize("dtype", FLOAT_NATIVE, ids=str)
@pytest.mark.parametrize("op,np_fn", EXTREMES)
@pytest.mark.parametrize("where", [0, BIG // 3, BIG // 2 + 1, BIG - 1])
@pytest.mark.parametrize("negative,smallest", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_nan_anywhere_in_a_big_reduction(big, dtype, op, np_fn, where, negative, smallest):
    x = big.astype(dtype)                         # parallel: several chunks
    x[where] = nan_bits(dtype, negative, smallest)
    r = cpu.reduce(op, x, (0,), False)
    assert r.dtype == dtype and r.shape == () and np.isnan(r) and np.isnan(np_fn(x))
    assert np.isnan(cpu.reduce(op, x[:7], (0,), False)) == (where < 7)    # serial


@pytest.mark.parametrize("dtype", FLOAT_NATIVE, ids=str)
@pytest.mark.parametrize("op,np_fn", EXTREMES)
@pytest.mark.parametrize("row", [0, 5, 16386])
def test_nan_in_one_column_of_a_row_reduction(dtype, op, np_fn, row):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16387, 8)).astype(dtype)   # B > 1; 16387 rows: not 4k
    x[row, 3] = nan_bits(dtype, negative=row == 5)
    got = cpu.reduce(op, x, (0,), False)
    np.testing.assert_array_equal(np.isnan(got), np.arange(8) == 3)
    np.testing.assert_array_equal(got, np_fn(x, axis=0))
    y = rng.standard_normal((4, 9001, 5)).astype(dtype)  # A > 1 and B > 1
    y[2, row % 9001, 1] = np.nan
    got = cpu.reduce(op, y, (1,), True)
    assert got.shape == (4, 1, 5)
    np.testing.assert_array_equal(got, np_fn(y, axis=1, keepdims=True))
    assert np.isnan(got).sum() == 1 and np.isnan(got[2, 0, 1])
    small = x[:6]                                          # serial row reduction
    np.testing.assert_array_equal(cpu.reduce(op, small, (0,), False), np_fn(small, axis=0))


@pytest.mark.parametrize("dtype", FLOAT_NATIVE, ids=str)
@pytest.mark.parametrize("n", [9, BIG])
def test_max_min_of_infinities_zeros_and_equal_values(dtype, n):
    def check(x, want_max, want_min):
        rows = x[:n // 3 * 3].reshape(-1, 3)
        for (op, np_fn), want in zip(EXTREMES, (want_max, want_min)):
            assert cpu.reduce(op, x, (0,), False) == want                      # a run
            np.testing.assert_array_equal(cpu.reduce(op, rows, (0,), False),   # rows
                                          np_fn(rows, axis=0))

    x = np.linspace(-5, 5, n).astype(dtype)
    x[n // 2], x[-2] = np.inf, -np.inf
    check(x, np.inf, -np.inf)
    check(np.full(n, -np.inf, dtype), -np.inf, -np.inf)
    check(np.full(n, np.inf, dtype), np.inf, np.inf)
    check(np.full(n, -2.25, dtype), -2.25, -2.25)
    check(np.full(n, 3.5, dtype), 3.5, 3.5)
    zeros = np.zeros(n, dtype)
    zeros[::2] = -0.0
    for op in ("max", "min"):
        r = cpu.reduce(op, zeros, (0,), False)
        assert r == 0 and not np.isnan(r)
    tiny = np.finfo(dtype).smallest_subnormal
    check(np.where(np.arange(n) % 2 == 0, -tiny, tiny).astype(dtype), tiny, -tiny)


@pytest.mark.parametrize("n", [9, BIG])
def test_float64_max_min_keep_every_bit(n):
    for base in (1.0, -1.0, 2.0 ** 60, -(2.0 ** -1000), 5e-324):
        x = np.full(n, base)
        up, down = np.nextafter(base, np.inf), np.nextafter(base, -np.inf)
        x[n // 3], x[2 * n // 3] = up, down
        assert cpu.reduce("max", x, (0,), False) == up
        assert cpu.reduce("min", x, (0,), False) == down
        m = x[:n // 3 * 3].reshape(-1, 3)
        np.testing.assert_array_equal(cpu.reduce("max", m, (0,), False), m.max(axis=0))
        np.testing.assert_array_equal(cpu.reduce("min", m, (0,), False), m.min(axis=0))


@pytest.mark.parametrize("dtype", FLOAT_NATIVE, ids=str)
@pytest.mark.parametrize("op,np_fn", EXTREMES)
def test_big_float_max_min_equal_numpy_exactly(dtype, op, np_fn):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1_000_003) * 10.0 ** rng.integers(-30, 30, 1_000_003)).astype(dtype)
    np.testing.assert_array_equal(cpu.reduce(op, x, (0,), False), np_fn(x))
    m = x[:1000 * 1000].reshape(1000, 1000)
    for axes in ((0,), (1,), (0, 1)):
        np.testing.assert_array_equal(cpu.reduce(op, m, axes, False), np_fn(m, axis=axes))
    t = x[:100 * 200 * 50].reshape(100, 200, 50)          # a transposed (copied) block
    np.testing.assert_array_equal(cpu.reduce(op, t, (0, 2), False), np_fn(t, axis=(0, 2)))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", ["max", "min"])
@FEW
@given(data=st.data())
def test_max_min_with_nan_inf_and_subnormals(dtype, op, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    axes = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    width = 64 if dtype == np.float64 else 32
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(
        allow_nan=True, allow_infinity=True, allow_subnormal=True, width=width)))
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    assert_same(cpu.reduce(op, x, axes, False), ref.reduce(op, x, axes, False))


def test_empty_float_max_min_give_the_identity():
    for dtype in FLOAT_NATIVE:
        for shape, axes in (((0, 3), (0,)), ((3, 0), (1,)), ((2, 0, 4), (1,)), ((0,), (0,))):
            e = np.zeros(shape, dtype)
            np.testing.assert_array_equal(cpu.reduce("max", e, axes, False),
                                          np.full(ref.reduce("max", e, axes, False).shape,
                                                  -np.inf, dtype))
            np.testing.assert_array_equal(cpu.reduce("min", e, axes, False),
                                          np.full(ref.reduce("min", e, axes, False).shape,
                                                  np.inf, dtype))


def test_parallel_argmax_softmax_select_add_n(big):
    m = big.reshape(-1, 7)[:, :5] if BIG % 7 == 0 else big[:BIG // 5 * 5].reshape(-1, 5)
    assert_same(cpu.argmax(m, 1, np.int64), ref.argmax(m, 1, np.int64))
    assert_same(cpu.argmin(big, 0, np.int32), ref.argmin(big, 0, np.int32))
    assert_same(cpu.argmax(m, 0, np.int32), ref.argmax(m, 0, np.int32))
    assert_same(cpu.softmax(m), ref.softmax(m))
    labels = (np.abs(m[:, 0] * 100).astype(np.int64)) % 5
    for got, want in zip(cpu.sparse_softmax_xent(m, labels), ref.sparse_softmax_xent(m, labels)):
        assert_same(got, want)
    cond = big > 0
    assert_same(cpu.select(cond, big, -big), ref.select(cond, big, -big))
    assert_same(cpu.add_n([big, big, big]), ref.add_n([big, big, big]))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_parallel_int_matmul(dtype):
    rng = np.random.default_rng(1)
    a = rng.integers(-9, 9, (70, 50), dtype=dtype)
    b = rng.integers(-9, 9, (3, 60, 50), dtype=dtype)
    assert_same(cpu.matmul(a, b, transpose_b=True), ref.matmul(a, b, transpose_b=True))


def test_parallel_kernels_from_many_threads(big):
    """The executor runs devices on threads; parallel launches must not collide."""
    want = ref.reduce("sum", big, (0,), False)
    errors = []

    def work():
        try:
            for _ in range(5):
                np.testing.assert_allclose(cpu.reduce("sum", big, (0,), False), want,
                                           rtol=1e-5)
                assert_same(cpu.binary(lookup("AddV2"), big, big), ref.binary(lookup("AddV2"), big, big))
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ----------------------------------------------------- lazy, cached compile ----

_CHILD = textwrap.dedent("""
    import numpy as np
    import minitf.kernels.cpu as cpu
    from minitf.kernels.cpu import compile, reductions
    assert compile.compiled_count() == 0, "import compiled something"
    cpu.reduce("sum", np.ones((2, 3), np.float64), (1,), False)
    k = compile.jit_kernel(reductions.reduce_kernel, reductions.reduce_signature,
                           (np.dtype(np.float64), np.dtype(np.float64)))
    print(sum(k.stats.cache_hits.values()), compile.compiled_count())
""")


def test_import_compiles_nothing_and_second_process_hits_cache():
    runs = [subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    hits, count = runs[1].stdout.split()
    assert int(hits) >= 1 and int(count) == 1
