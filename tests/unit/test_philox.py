"""TF's random streams: Philox4x32-10, its distributions, per-op state and seeds.

Three oracles, strongest first:

* live TensorFlow (the venv of scripts/setup_tf_oracle.sh or $MINITF_TF_PYTHON),
  run in a subprocess by tf_random_oracle.py: every case, two draws of one
  op in a session and a first draw in a new one, including sizes that take
  the multi-threaded path;
* data/philox_golden.npz: what TF printed for the small cases, so the
  numbers are checked without TF too;
* minitf.kernels.reference_random, plain numpy, against the Numba kernels.

Uniform floats, integers, shuffles and multinomial samples must be TF's bit
for bit; normal-based floats within 1e-6 relative (the C library's log/sin/cos
may differ between platforms; on Linux they are TF's exactly, and tested so).
"""

import json
import math
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tf_random_oracle as oracle
from minitf.framework.graph import Graph
from minitf.framework import random_seed
from minitf.framework.errors import InvalidArgumentError
from minitf.kernels import random_streams as rs
from minitf.kernels import reference_random as ref
from minitf.kernels.cpu import philox, random_fill
from minitf.kernels.cpu.compile import jit_kernel

BF16 = np.dtype(ml_dtypes.bfloat16)
MAXINT32 = 2**31 - 1
NORMAL_OPS = ("normal", "truncated")

# (seed, seed2) attribute pairs: tf.random_uniform(seed=42) without a graph
# seed; (0, 0) turned into (0, 2**31 - 1); small; large; negative (raw attrs
# are int64, so the key takes the two's complement).
SEEDS = [(87654321, 42), (0, MAXINT32), (1, 1), (MAXINT32 - 1, 123456789), (-1, -5)]


# ----------------------------------------------------------------- cases ----

def _case(name, op, shape, seeds=SEEDS[0], runs=2, **extra):
    return dict(name=name, op=op, shape=list(shape), seed=seeds[0], seed2=seeds[1],
                runs=runs, **extra)


def golden_cases():
    """Small cases: recorded in the golden file, and compared with live TF."""
    cases = []
    for i, seeds in enumerate(SEEDS):
        cases += [
            _case("uniform_f32_%d" % i, "uniform", [4, 3], seeds, dtype="float32"),
            _case("uniform_f64_%d" % i, "uniform", [5], seeds, dtype="float64"),
            _case("int32_%d" % i, "uniform_int", [9], seeds, dtype="int32",
                  minval=-5, maxval=17),
            _case("normal_f32_%d" % i, "normal", [7], seeds, dtype="float32"),
            _case("normal_f64_%d" % i, "normal", [5], seeds, dtype="float64"),
            _case("truncated_f32_%d" % i, "truncated", [9], seeds, dtype="float32"),
            _case("shuffle_%d" % i, "shuffle", [10], seeds),
        ]
    for size in (0, 1, 2, 3, 4, 5, 6, 7, 8, 13):
        cases.append(_case("uniform_f32_n%d" % size, "uniform", [size], dtype="float32"))
        cases.append(_case("normal_f32_n%d" % size, "normal", [size], dtype="float32"))
        cases.append(_case("truncated_f32_n%d" % size, "truncated", [size], dtype="float32"))
    for size in (0, 1, 2, 3, 5):
        cases.append(_case("uniform_f64_n%d" % size, "uniform", [size], dtype="float64"))
        cases.append(_case("normal_f64_n%d" % size, "normal", [size], dtype="float64"))
        cases.append(_case("truncated_f64_n%d" % size, "truncated", [size], dtype="float64"))
        cases.append(_case("int64_n%d" % size, "uniform_int", [size], dtype="int64",
                           minval=-(2**40), maxval=2**50 + 3))
    for dtype in ("float16", "bfloat16"):
        for op in ("uniform", "normal", "truncated"):
            cases.append(_case("%s_%s" % (op, dtype), op, [2, 5], dtype=dtype))
    cases += [
        _case("int32_full", "uniform_int", [7], dtype="int32", minval=-2**31, maxval=MAXINT32),
        _case("int64_full", "uniform_int", [7], dtype="int64", minval=-2**63,
              maxval=2**63 - 1),
        _case("int32_empty_equal_bounds", "uniform_int", [0], dtype="int32", minval=5,
              maxval=5),
        _case("shuffle_2d", "shuffle", [6, 2]),
        _case("shuffle_one_row", "shuffle", [1, 5]),
        _case("shuffle_no_elements", "shuffle", [5, 0]),
        _case("shuffle_two", "shuffle", [2]),
        _case("multinomial", "multinomial", [], batch=3, classes=4, num_samples=5),
        _case("multinomial_odd", "multinomial", [], batch=2, classes=7, num_samples=3,
              output_dtype="int32"),
        _case("multinomial_f64", "multinomial", [], batch=2, classes=3, num_samples=6,
              dtype="float64"),
        _case("multinomial_f16", "multinomial", [], batch=2, classes=3, num_samples=6,
              dtype="float16"),
        _case("multinomial_special", "multinomial", [], batch=3, classes=3, num_samples=6,
              special=[[0, 1, "nan"], [0, 2, "inf"], [1, 0, "-inf"], [1, 1, "-inf"],
                       [1, 2, "-inf"]]),
        _case("multinomial_no_samples", "multinomial", [], batch=2, classes=3, num_samples=0),
    ]
    return cases


def live_cases():
    """Everything above, plus sizes big enough for the threaded kernels and
    multinomial batches that TF splits across 1, 2, 3 or 8 threads."""
    cases = golden_cases()
    # Sizes past random_fill's thresholds for threads (output size x cost).
    for dtype, size in (("float32", 700_001), ("float64", 700_003)):
        cases.append(_case("big_uniform_" + dtype, "uniform", [size], dtype=dtype))
    for dtype, size in (("float32", 150_001), ("float64", 110_003)):
        cases.append(_case("big_normal_" + dtype, "normal", [size], dtype=dtype))
        cases.append(_case("big_truncated_" + dtype, "truncated", [size], dtype=dtype))
    cases += [
        _case("big_int32", "uniform_int", [700_003], dtype="int32", minval=-1000, maxval=7),
        _case("big_int64", "uniform_int", [700_001], dtype="int64", minval=3, maxval=2**62),
        _case("big_normal_f16", "normal", [150_001], dtype="float16"),
        _case("big_shuffle", "shuffle", [10_007]),
    ]
    for threads in (1, 3, 8):
        for batch, classes, samples in ((32, 10, 100), (200, 50, 30), (7, 1000, 3)):
            cases.append(_case("multinomial_%d_%d_%d_t%d" % (batch, classes, samples, threads),
                               "multinomial", [], batch=batch, classes=classes,
                               num_samples=samples, threads=threads))
    return cases


#: Seed derivation scenarios: ["set", graph seed], ["get", op seed], ["graph"] (a new graph).
SEED_SCENARIOS = [
    [["get", None]],
    [["set", 42], ["get", None], ["get", None], ["get", 7], ["get", None]],
    [["get", 5], ["set", 3], ["get", None], ["graph"], ["set", 3], ["get", None]],
    [["get", None], ["set", 5], ["get", None]],
    [["set", 1], ["get", None], ["set", 2], ["get", None]],
    [["set", 3], ["get", None], ["set", None], ["get", None], ["set", 3], ["get", None]],
    [["set", 0], ["get", 0]],
    [["set", 0], ["get", None]],
    [["get", 0]],
    [["set", MAXINT32], ["get", None], ["get", MAXINT32]],
    [["get", -5]],
    [["get", 2**40]],
    [["set", -7], ["get", None]],
    [["get", 1.5]],
    [["set", 2.5], ["get", 4]],
    [["get", True]],
    [["get", "x"]],
    [["set", "a"], ["get", None]],
    [["get", "%d"]],
    [["get", [1]]],
]


# ---------------------------------------------------------- minitf's side ----

def _np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def draw(case, generator):
    """One run of ``case``'s op with ``generator``, through the op-level API."""
    op = case["op"]
    if op in ("uniform", "normal", "truncated"):
        fn = {"uniform": rs.random_uniform, "normal": rs.random_standard_normal,
              "truncated": rs.truncated_normal}[op]
        return fn(generator, case["shape"], _np_dtype(case["dtype"]))
    if op == "uniform_int":
        dtype = _np_dtype(case["dtype"])
        return rs.random_uniform_int(generator, case["shape"], dtype.type(case["minval"]),
                                     dtype.type(case["maxval"]))
    if op == "shuffle":
        return rs.random_shuffle(generator, oracle.shuffle_input(case))
    logits = oracle.logits_for(case).astype(_np_dtype(case.get("dtype", "float32")))
    return rs.multinomial(generator, logits, case["num_samples"],
                          _np_dtype(case.get("output_dtype", "int64")),
                          num_threads=case.get("threads") or None)


def minitf_runs(case):
    """``{"NAME/run0": ..., "NAME/restart": ...}`` as minitf computes them."""
    out = {}
    gen = rs.GuardedPhiloxRandom(case["seed"], case["seed2"])
    for run in range(case["runs"]):
        out["%s/run%d" % (case["name"], run)] = draw(case, gen)
    out["%s/restart" % case["name"]] = draw(case, rs.GuardedPhiloxRandom(case["seed"],
                                                                         case["seed2"]))
    return out


#: How close normal-based values must be where the C library may differ from TF's.
NORMAL_RTOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-6,
               np.dtype(np.float16): 1e-3, BF16: 8e-3}     # 1e-6, or one ulp of a half


def assert_same(case, key, mine, theirs, exact_normals):
    """``mine`` is TF's ``theirs``: bit for bit, or normals within NORMAL_RTOL."""
    dtype = mine.dtype
    if dtype == BF16:
        theirs = theirs.view(BF16)          # the npz files keep bfloat16 as bits
    assert mine.shape == theirs.shape and dtype == theirs.dtype, key
    if case["op"] in NORMAL_OPS and not exact_normals:
        np.testing.assert_allclose(mine.astype(np.float64), theirs.astype(np.float64),
                                   rtol=NORMAL_RTOL[dtype], atol=0, err_msg=key)
    elif dtype.kind == "f":
        np.testing.assert_array_equal(mine.view("u%d" % dtype.itemsize),
                                      theirs.view("u%d" % dtype.itemsize), err_msg=key)
    else:
        np.testing.assert_array_equal(mine, theirs, err_msg=key)


def seed_scenario_results(scenarios):
    """What minitf's get_seed answers, in tf_random_oracle's format."""
    results = []
    for steps in scenarios:
        out = []
        graph = Graph()
        for step in steps:
            try:
                if step[0] == "graph":
                    graph = Graph()
                    out.append(None)
                elif step[0] == "set":
                    random_seed.set_random_seed(step[1], graph)
                    out.append(None)
                else:
                    out.append(["ok", [None if s is None else repr(s)
                                       for s in random_seed.get_seed(step[1], graph)]])
            except Exception as e:
                out.append(["error", type(e).__name__, str(e)])
        results.append(out)
    return results


# ------------------------------------------------------------- live TF ----

@pytest.fixture(scope="module")
def live_tf():
    python = oracle.oracle_python()
    if python is None:
        pytest.skip("real TensorFlow not available: set MINITF_TF_PYTHON "
                    "(scripts/setup_tf_oracle.sh)")
    if not os.path.exists(python):
        pytest.fail("MINITF_TF_PYTHON=%s does not exist" % python, pytrace=False)
    return oracle.run(live_cases(), SEED_SCENARIOS, python=python)


@pytest.mark.slow
@pytest.mark.parametrize("case", live_cases(), ids=lambda c: c["name"])
def test_draws_equal_live_tensorflow(case, live_tf):
    arrays, _ = live_tf
    for key, mine in minitf_runs(case).items():
        # Same platform as the oracle: the C library's log/sin/cos are TF's.
        assert_same(case, key, mine, arrays[key], exact_normals=sys.platform == "linux")


def test_seed_derivation_equals_live_tensorflow(live_tf):
    _, scenarios = live_tf
    assert seed_scenario_results(SEED_SCENARIOS) == scenarios


def test_multinomial_numbers_depend_on_tf_shards(live_tf):
    """Why tf_work_shards exists: one shard instead of TF's gives other samples."""
    arrays, _ = live_tf
    case = [c for c in live_cases() if c["name"] == "multinomial_32_10_100_t8"][0]
    gen = rs.GuardedPhiloxRandom(case["seed"], case["seed2"])
    one_shard = rs.multinomial(gen, oracle.logits_for(case), 100, num_threads=1)
    assert not np.array_equal(one_shard, arrays[case["name"] + "/run0"])


# --------------------------------------------------------- golden file ----

@pytest.fixture(scope="module")
def golden():
    with np.load(oracle.GOLDEN) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c["name"])
def test_draws_equal_recorded_tensorflow(case, golden):
    for key, mine in minitf_runs(case).items():
        assert_same(case, key, mine, golden[key], exact_normals=False)


def test_seed_derivation_equals_recorded_tensorflow(golden):
    assert seed_scenario_results(SEED_SCENARIOS) == json.loads(str(golden["seed_scenarios"]))


def test_first_draws_as_tf_prints_them():
    """A few of TF's numbers written out: tf.random_uniform([4], seed=42) without a
    graph seed is RandomUniform(seed=87654321, seed2=42)."""
    gen = rs.GuardedPhiloxRandom(87654321, 42)
    first = rs.random_uniform(gen, [4], np.float32)
    second = rs.random_uniform(gen, [4], np.float32)
    assert first.tolist() == [0.9522714614868164, 0.6774077415466309,
                              0.7953182458877563, 0.7557817697525024]
    assert second.tolist() == [0.06347668170928955, 0.7422536611557007,
                               0.37226736545562744, 0.2566572427749634]


# ------------------------------------------------- reference vs kernels ----

def _stream(seeds=(42, 7), skip=0):
    key, counter = ref.key_counter_from_seeds(*seeds)
    return rs.PhiloxRandom.from_seeds(*seeds).skip(skip), key, ref.skip(counter, skip)


def test_philox_known_answers():
    """Random123's known-answer vectors for Philox4x32-10 (counter, key -> block)."""
    vectors = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for counter, key, block in vectors:
        assert tuple(ref.philox(key, counter, 1)[0]) == block
        stream = rs.PhiloxRandom(key[0] | key[1] << 32, ref.counter_to_int(counter))
        assert tuple(random_fill.words(stream, 4)) == block


@pytest.mark.parametrize("low", [2**32 - 3, 2**64 - 5, 2**96 - 2, 2**128 - 3])
def test_counter_carries_across_words(low):
    """Block g is philox(counter + g) with a full 128-bit carry, also in the kernels."""
    stream = rs.PhiloxRandom(0x1234567890ABCDEF, low)
    key = (stream.key & 0xFFFFFFFF, stream.key >> 32)
    np.testing.assert_array_equal(random_fill.words(stream, 40),
                                  ref.words(key, ref.int_to_counter(low), 40))
    assert stream.skip(5).counter == (low + 5) % 2**128


SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 1001]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16], ids=str)
@pytest.mark.parametrize("size", SIZES)
def test_uniform_kernels_equal_reference(size, dtype):
    stream, key, counter = _stream(skip=3)
    np.testing.assert_array_equal(random_fill.uniform(stream, size, dtype),
                                  ref.uniform(key, counter, size, dtype))


@pytest.mark.parametrize("dtype,lo,hi", [(np.int32, -5, 17), (np.int32, -2**31, MAXINT32),
                                         (np.int32, 7, 8), (np.int64, -2**40, 2**50 + 3),
                                         (np.int64, -2**63, 2**63 - 1), (np.int64, 0, 3)])
@pytest.mark.parametrize("size", SIZES)
def test_uniform_int_kernels_equal_reference(size, dtype, lo, hi):
    stream, key, counter = _stream()
    np.testing.assert_array_equal(random_fill.uniform_int(stream, size, lo, hi, dtype),
                                  ref.uniform_int(key, counter, size, lo, hi, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize("size", SIZES)
def test_normal_kernels_equal_reference(size, dtype):
    stream, key, counter = _stream()
    # numpy's float32 log/sin/cos are not the C library's: agree to ~1 ulp.
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(random_fill.normal(stream, size, dtype),
                               ref.normal(key, counter, size, dtype), rtol=tol, atol=tol)
    np.testing.assert_allclose(random_fill.truncated_normal(stream, size, dtype),
                               ref.truncated_normal(key, counter, size, dtype),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 64, 1000])
def test_shuffle_kernel_equals_reference(size):
    stream, key, counter = _stream()
    np.testing.assert_array_equal(random_fill.shuffle_permutation(stream, size),
                                  ref.shuffle_permutation(key, counter, size))


@pytest.mark.parametrize("shards", [[0], [0, 2, 4, 6], [0, 3], [0, 1, 2, 3, 4, 5, 6]])
def test_multinomial_kernel_equals_reference(shards):
    stream, key, counter = _stream()
    logits = np.random.default_rng(0).standard_normal((7, 5))
    logits[2, 1], logits[3, :], logits[4, 0] = np.nan, -np.inf, np.inf
    np.testing.assert_array_equal(random_fill.multinomial(stream, logits, 9, shards),
                                  ref.multinomial(key, counter, logits, 9, shards))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(-2**63, 2**64 - 1), seed2=st.integers(-2**63, 2**64 - 1),
       skip=st.integers(0, 2**64), size=st.integers(0, 70),
       lo=st.integers(-2**31, 2**31 - 2), width=st.integers(1, 2**32 - 1))
def test_kernels_equal_reference_anywhere_in_a_stream(seed, seed2, skip, size, lo, width):
    hi = min(lo + width, MAXINT32)
    stream, key, counter = _stream((seed, seed2), skip)
    np.testing.assert_array_equal(random_fill.uniform(stream, size, np.float32),
                                  ref.uniform(key, counter, size, np.float32))
    np.testing.assert_array_equal(random_fill.uniform(stream, size, np.float64),
                                  ref.uniform(key, counter, size, np.float64))
    np.testing.assert_array_equal(random_fill.uniform_int(stream, size, lo, hi, np.int32),
                                  ref.uniform_int(key, counter, size, lo, hi, np.int32))


# ------------------------------------------------- parallel == serial ----

FILLS = [
    (philox.words_kernel, philox.fill_signature, np.uint32, ()),
    (philox.uniform_f32_kernel, philox.fill_signature, np.float32, ()),
    (philox.uniform_f64_kernel, philox.fill_signature, np.float64, ()),
    (philox.uniform_int32_kernel, philox.uniform_int_signature, np.int32,
     (-1000, np.uint64(1003))),
    (philox.uniform_int64_kernel, philox.uniform_int_signature, np.int64,
     (-2**62, np.uint64(2**63 + 11))),
    (philox.normal_f32_kernel, philox.fill_signature, np.float32, ()),
    (philox.normal_f64_kernel, philox.fill_signature, np.float64, ()),
    (philox.truncated_normal_f32_kernel, philox.fill_signature, np.float32, ()),
    (philox.truncated_normal_f64_kernel, philox.fill_signature, np.float64, ()),
]


@pytest.mark.parametrize("size", [300_001, 1027])
@pytest.mark.parametrize("fill", FILLS, ids=lambda f: f[0].__name__ + "_" + f[2].__name__)
def test_parallel_fill_equals_serial_bit_for_bit(fill, size):
    py_kernel, signature, dtype, extra = fill
    kernel = jit_kernel(py_kernel, signature, (np.dtype(dtype),))
    args = (np.uint64(2**64 - 9), np.uint64(2**64 - 100), np.uint64(5)) + extra
    serial, threaded = np.empty(size, dtype), np.empty(size, dtype)
    kernel(*args, serial, False)
    kernel(*args, threaded, True)
    np.testing.assert_array_equal(serial.view(np.uint8), threaded.view(np.uint8))


def test_parallel_multinomial_equals_serial():
    kernel = jit_kernel(philox.multinomial_kernel, philox.multinomial_signature,
                        (np.dtype(np.int64),))
    logits = np.random.default_rng(1).standard_normal((300, 20))
    shards = np.arange(0, 300, 7, dtype=np.int64)
    serial, threaded = np.empty((300, 50), np.int64), np.empty((300, 50), np.int64)
    kernel(np.uint64(1), np.uint64(2), np.uint64(3), logits, 50, shards, serial, False)
    kernel(np.uint64(1), np.uint64(2), np.uint64(3), logits, 50, shards, threaded, True)
    np.testing.assert_array_equal(serial, threaded)


# ------------------------------------------------ per-op stream state ----

def test_each_op_reserves_what_tf_reserves():
    """The second draw starts where TF's does: see the table in random_streams."""
    def moved(fn):
        gen = rs.GuardedPhiloxRandom(3, 4)
        start = gen.position.counter
        fn(gen)
        return gen.position.counter - start

    assert moved(lambda g: rs.random_uniform(g, [5], np.float64)) == 5 * 256
    assert moved(lambda g: rs.random_standard_normal(g, [2, 3], np.float16)) == 6 * 256
    assert moved(lambda g: rs.truncated_normal(g, [0], np.float32)) == 0
    assert moved(lambda g: rs.random_uniform_int(g, [7], np.int32(0), np.int32(9))) == 7 * 256
    assert moved(lambda g: rs.random_uniform_int(g, [0], np.int64(5), np.int64(5))) == 0
    assert moved(lambda g: rs.random_shuffle(g, np.arange(10))) == 3          # ceil(9 / 4)
    assert moved(lambda g: rs.random_shuffle(g, np.arange(5))) == 1
    assert moved(lambda g: rs.random_shuffle(g, np.zeros((1, 5)))) == 0
    assert moved(lambda g: rs.random_shuffle(g, np.zeros((5, 0)))) == 0
    assert moved(lambda g: rs.multinomial(g, np.zeros((3, 4)), 5)) == 3 * 16 * 256
    assert moved(lambda g: rs.multinomial(g, np.zeros((3, 4)), 0)) == 0


def test_seeds_make_key_and_counter():
    gen = rs.GuardedPhiloxRandom(87654321, 42)
    assert gen.position == rs.PhiloxRandom(87654321, 42 << 64)
    assert rs.PhiloxRandom.from_seeds(-1, -5) == rs.PhiloxRandom(2**64 - 1, (2**64 - 5) << 64)


def test_zero_seeds_give_a_fresh_random_stream_each_time():
    a, b = rs.GuardedPhiloxRandom(0, 0), rs.GuardedPhiloxRandom(0, 0)
    assert a.position != b.position
    assert not np.array_equal(rs.random_uniform(a, [8], np.float32),
                              rs.random_uniform(b, [8], np.float32))


def test_concurrent_runs_get_disjoint_stretches():
    import threading
    gen = rs.GuardedPhiloxRandom(5, 6)
    starts = []
    threads = [threading.Thread(target=lambda: starts.append(
        gen.reserve_random_outputs(10, 256).counter)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(starts) == [(6 << 64) + 2560 * i for i in range(8)]


def test_tf_work_shards():
    """Eigen's parallelFor blocks, as checked against TF's multinomial above."""
    def cost(classes, samples):
        return int(50 * (samples * math.log(classes) / math.log(2) + classes))
    assert rs.tf_work_shards(32, cost(10, 100), 1) == [0]
    assert rs.tf_work_shards(4, cost(10, 100), 8) == [0]
    assert rs.tf_work_shards(32, cost(10, 100), 2) == list(range(0, 32, 4))
    assert rs.tf_work_shards(32, cost(10, 100), 3) == list(range(0, 32, 6))
    assert rs.tf_work_shards(32, cost(10, 100), 8) == list(range(0, 32, 2))
    assert rs.tf_work_shards(200, cost(50, 30), 3) == list(range(0, 200, 17))
    assert rs.tf_work_shards(1000, cost(5, 5), 16) == list(range(0, 1000, 63))
    assert rs.tf_work_shards(0, 100, 4) == []


def test_kernel_errors_are_tfs():
    gen = rs.GuardedPhiloxRandom(1, 2)
    cases = [
        (lambda: rs.random_uniform_int(gen, [3], np.int32(5), np.int32(3)),
         "Need minval < maxval, got 5 >= 3"),
        (lambda: rs.random_uniform_int(gen, [3], np.array([0]), 4),
         "minval must be 0-D, got shape [1]"),
        (lambda: rs.multinomial(gen, np.zeros((2, 0)), 3), "num_classes should be positive, got 0"),
        (lambda: rs.multinomial(gen, np.zeros(3), 3), "logits should be a matrix, got shape [3]"),
        (lambda: rs.multinomial(gen, np.zeros((1, 2)), -1),
         "num_samples should be non-negative, got -1"),
        (lambda: rs.output_shape(np.array([-1, 2])), "Dimension -1 must be >= 0"),
        (lambda: rs.output_shape(np.array([[1, 2]])),
         "shape must be a vector of {int32,int64}, got shape [1,2]"),
        (lambda: rs.output_shape(np.array(3)),
         "shape must be a vector of {int32,int64}, got shape []"),
    ]
    for fn, message in cases:
        with pytest.raises(InvalidArgumentError) as info:
            fn()
        assert info.value.message == message
    assert rs.output_shape(np.array([2, 3], np.int64)) == (2, 3)


def test_seed_attrs_convert_like_tf():
    assert random_seed.seed_attrs(None, None) == (0, 0)
    assert random_seed.seed_attrs(1.5, np.float32(2.0)) == (1, 2)
    with pytest.raises(TypeError, match=r"^Expected int for argument 'seed' not '2147483647'\.$"):
        random_seed.seed_attrs(random_seed.get_seed("%d", Graph())[1], 0)
    with pytest.raises(TypeError, match=r"^Expected int for argument 'seed2' not \[1\]\.$"):
        random_seed.seed_attrs(0, [1])


def test_seed_counter_reads_the_default_graph():
    g = Graph()
    with g.as_default():
        random_seed.set_random_seed(9)
        assert random_seed.get_seed(None) == (9, 0)
        assert random_seed.get_seed(None) == (9, 1)
    assert g.seed == 9 and g._random_seed_count == 2


# ------------------------------------------------------- lazy compiling ----

def test_importing_compiles_nothing():
    code = textwrap.dedent("""
        import numba
        import minitf
        import minitf.compat.v1
        from minitf.framework import random_seed
        from minitf.kernels import random_streams, reference_random
        from minitf.kernels.cpu import compile, philox, random_fill
        gen = random_streams.GuardedPhiloxRandom(1, 2)
        gen.reserve_random_outputs(10, 256)
        jitted = [v for v in vars(philox).values()
                  if isinstance(v, numba.core.registry.CPUDispatcher)]
        assert jitted, "philox has its helpers as numba dispatchers"
        compiled = [d.py_func.__name__ for d in jitted if d.signatures]
        print(compile.compiled_count(), compiled)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
        + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "[]"]
