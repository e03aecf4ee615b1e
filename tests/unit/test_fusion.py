"""The fusion pass: same results as unfused, generated source, switches, fallback."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.kernels import generated
from minitf.ops import math_ops, nn_ops
from minitf.runtime import fusion

OFF = tf.ConfigProto(graph_options=tf.GraphOptions(fuse_elementwise=False))


def run(build, feeds, config=None):
    with tf.Graph().as_default() as g:
        fetches, placeholders = build()
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(graph=g, config=config) as sess:
            out = sess.run(fetches, dict(zip(placeholders, feeds)), options=opts,
                           run_metadata=md)
    # a fused op is listed with its chain: "mul = Mul() [fused: Mul+AddV2+...]"
    nodes = [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats
             if "[fused:" not in n.timeline_label]
    return out, nodes


def chain_graph(dtype=tf.float32, reduce=tf.reduce_sum, keepdims=False):
    def build():
        a = tf.placeholder(dtype, [None, 5], name="a")
        b = tf.placeholder(dtype, [None, 5], name="b")
        y = tf.nn.relu(a * 2.0 + 1.0) - b
        return (reduce(y, keepdims=keepdims) if reduce else y), [a, b]
    return build


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("reduce", [None, tf.reduce_sum, tf.reduce_mean, tf.reduce_max,
                                    tf.reduce_min])
def test_fused_equals_unfused(dtype, reduce):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 5)).astype(dtype.as_numpy_dtype)
    b = rng.standard_normal((7, 5)).astype(dtype.as_numpy_dtype)
    fused, nodes = run(chain_graph(dtype, reduce), [a, b])
    plain, plain_nodes = run(chain_graph(dtype, reduce), [a, b], OFF)
    assert np.asarray(fused).dtype == np.asarray(plain).dtype
    np.testing.assert_allclose(fused, plain, rtol=1e-6)
    assert len(nodes) < len(plain_nodes)           # the chain ran as one step
    assert "mul" not in nodes and "mul" in plain_nodes


def test_large_input_takes_the_parallel_kernel_and_keepdims():
    a = np.linspace(-3, 3, 200_000, dtype=np.float32).reshape(-1, 5)
    b = np.ones_like(a)
    fused, _ = run(chain_graph(keepdims=True), [a, b])
    want = np.sum(np.maximum(a.astype(np.float64) * 2 + 1, 0) - 1)
    assert fused.shape == (1, 1)
    np.testing.assert_allclose(fused, [[want]], rtol=1e-5)


def test_nan_and_inf_behave_like_the_unfused_ops():
    a = np.array([[np.nan, -np.inf, np.inf, -1.0, 0.0]], np.float32)
    b = np.zeros_like(a)
    for reduce in (None, tf.reduce_max, tf.reduce_min, tf.reduce_sum):
        fused, _ = run(chain_graph(reduce=reduce), [a, b])
        plain, _ = run(chain_graph(reduce=reduce), [a, b], OFF)
        np.testing.assert_array_equal(fused, plain)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_transcendental_chain_fuses_and_matches_unfused(dtype):
    """Exp/Log/Tanh/Sigmoid fuse through vector_math's versions, which the
    unfused kernels use too: the two runs agree to a couple of ulps."""
    def build():
        a = tf.placeholder(dtype, [None], name="a")
        b = tf.placeholder(dtype, [None], name="b")
        y = tf.sigmoid(tf.tanh(a) * tf.exp(b)) + tf.log(tf.abs(a) + 0.5)
        return tf.reduce_sum(y), [a, b]
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(1000) * 4).astype(dtype.as_numpy_dtype)
    b = rng.standard_normal(1000).astype(dtype.as_numpy_dtype)
    fused, nodes = run(build, [a, b])
    plain, plain_nodes = run(build, [a, b], OFF)
    assert len(nodes) < len(plain_nodes) and "Exp" not in nodes
    want = np.sum(1 / (1 + np.exp(-np.tanh(a) * np.exp(b))) + np.log(np.abs(a) + 0.5))
    np.testing.assert_allclose(fused, plain, rtol=1e-6)
    np.testing.assert_allclose(fused, want, rtol=1e-5)
    source = fusion.generate_source([("Exp", math_ops.EXP.elementwise.fusion, [("in", 0)])],
                                    dtype.name, [False], None)
    suffix = "f32" if dtype == tf.float32 else "f64"
    assert "exp_%s as exp_" % suffix in source and "t0 = exp_(x0)" in source


def test_broadcasting_falls_back_to_the_original_ops():
    def build():
        a = tf.placeholder(tf.float32, [None, 5])
        b = tf.placeholder(tf.float32, [5])
        return tf.reduce_sum(tf.exp(a) * b + 1.0), [a, b]
    a = np.ones((3, 5), np.float32)
    b = np.arange(5, dtype=np.float32)
    fused, _ = run(build, [a, b])
    np.testing.assert_allclose(fused, np.sum(np.exp(a) * b + 1.0), rtol=1e-6)


def test_partial_reduction_falls_back():
    def build():
        a = tf.placeholder(tf.float32, [None, 5])
        return tf.reduce_sum(tf.square(a) + 1.0, axis=1), [a]
    a = np.arange(10, dtype=np.float32).reshape(2, 5)
    fused, _ = run(build, [a])
    np.testing.assert_allclose(fused, np.sum(a ** 2 + 1, axis=1))


def test_fetched_intermediate_is_not_fused_away():
    def build():
        a = tf.placeholder(tf.float32, [3])
        t = a * 2.0
        return [t, tf.reduce_sum(t + 1.0)], [a]
    (t, s), _ = run(build, [np.array([1, 2, 3], np.float32)])
    np.testing.assert_allclose(t, [2, 4, 6])
    assert s == 15.0


def test_generated_source_is_a_cached_module_file():
    _, nodes = run(chain_graph(), [np.ones((2, 5), np.float32), np.ones((2, 5), np.float32)])
    files = [f for f in os.listdir(generated.cache_dir("minitf_fused"))
             if f.startswith("minitf_fused_") and f.endswith(".py")]
    assert files
    source = fusion.generate_source(
        (("Mul", math_ops.MUL.elementwise.fusion, (("in", 0), ("in", 1))),
         ("Relu", nn_ops.RELU.elementwise.fusion, (("t", 0),))),
        "float32", (False, True), "sum")
    assert "def reduce(a0, s1):" in source
    assert "cache=True" in source and "nogil=True" in source and "prange" not in source
    module = generated.load_source(source, "minitf_fused", "minitf_fused")
    x = np.array([-1.0, 2.0, 3.0], np.float32)
    x.flags.writeable = False
    assert module.reduce(x, np.float32(2.0)) == 10.0


def test_switches_turn_fusion_off(monkeypatch):
    feeds = [np.ones((2, 5), np.float32), np.ones((2, 5), np.float32)]
    _, off_nodes = run(chain_graph(), feeds, OFF)
    assert "mul" in off_nodes
    monkeypatch.setenv("MINITF_FUSION", "0")
    _, env_nodes = run(chain_graph(), feeds)
    assert "mul" in env_nodes
    assert not fusion.enabled(None)


def test_next_process_loads_the_fused_kernel_from_cache(tmp_path):
    script = textwrap.dedent("""
        import numba, numpy as np, time
        import minitf.compat.v1 as tf
        with tf.Graph().as_default():
            a = tf.placeholder(tf.float32, [4]); b = tf.placeholder(tf.float32, [4])
            y = tf.reduce_sum(tf.nn.relu(a * 3.0 - 1.0) + b)
            with tf.Session() as s:
                print(s.run(y, {a: np.ones(4, np.float32), b: np.ones(4, np.float32)}))
        from minitf.kernels import generated
        mods = [m for n, m in generated._loaded.items() if n.startswith("minitf_fused")]
        print(sum(len(m.reduce.stats.cache_hits) for m in mods))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True).stdout.split()
    assert first[0] == second[0] == "12.0"
    assert first[1] == "0" and int(second[1]) >= 1


def test_trace_lists_each_fused_op_with_its_chain():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [4], name="a")
        y = tf.reduce_sum(tf.nn.relu(a * 2.0 + 1.0), name="total")
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(graph=g) as sess:
            assert sess.run(y, {a: np.ones(4, np.float32)}, options=opts,
                            run_metadata=md) == 12.0
    labels = {n.node_name: n.timeline_label for d in md.step_stats.dev_stats
              for n in d.node_stats}
    chain = " [fused: Mul+AddV2+Relu+Sum]"
    assert labels["mul"] == "mul = Mul()" + chain
    assert labels["total"] == "total = Sum()" + chain
