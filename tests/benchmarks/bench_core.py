"""Benchmark: the local runtime, side by side with numpy and real TensorFlow.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_core.py

Measures, in one run:

* a trivial ``sess.run`` (a scalar add, plan cached) in microseconds;
* ``reduce_sum(a * 2 + 1)`` over 10M float32 against the same numpy expression;
* a 1024x1024 float32 matmul against numpy;
* two independent chains of four 400x400 float32 matmuls, on one device and on
  two (``device_count={"CPU": 2}``), against numpy running them one after the
  other: TF's executor runs ready ops of one device side by side, and so does
  minitf's.

Real TensorFlow runs the same programs in a subprocess when
``$MINITF_TF_PYTHON`` names a python that has it (see
scripts/setup_tf_oracle.sh). Figures are medians of several repeats on a noisy
machine; compare ratios, not absolute numbers.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import median, run_under_tf  # noqa: E402


def measure(tf):
    """The three programs on ``tf`` (minitf or TensorFlow); seconds."""
    out = {}
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
        b = tf.constant(2.0)
        c = a + b
        sess = tf.Session(graph=g)
        out["trivial_run"] = median(lambda: sess.run(c), repeats=7, inner=2000)
        sess.close()

    rng = np.random.default_rng(0)
    x = rng.standard_normal(10_000_000).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [10_000_000])
        v = tf.Variable(p, name="a")
        chain = tf.reduce_sum(v * 2.0 + 1.0)
        sess = tf.Session(graph=g)
        sess.run(v.initializer, {p: x})
        out["chain_10M"] = median(lambda: sess.run(chain))
        sess.close()

    m1 = rng.standard_normal((1024, 1024)).astype(np.float32)
    m2 = rng.standard_normal((1024, 1024)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        v1 = tf.Variable(m1)
        v2 = tf.Variable(m2)
        prod = tf.reduce_sum(tf.matmul(v1, v2))
        sess = tf.Session(graph=g)
        sess.run([v1.initializer, v2.initializer])
        out["matmul_1024"] = median(lambda: sess.run(prod))
        sess.close()

    m = (rng.standard_normal((400, 400)) / 20).astype(np.float32)
    for key, devices in (("chains_one_device", ("/cpu:0", "/cpu:0")),
                         ("chains_two_devices", ("/cpu:0", "/cpu:1"))):
        g = tf.Graph()
        with g.as_default():
            ends = []
            for k, device in enumerate(devices):
                with tf.device(device):
                    x = tf.Variable(m + k, name="start%d" % k)
                    for _ in range(4):
                        x = tf.matmul(x, m)
                ends.append(tf.reduce_sum(x))
            total = tf.add_n(ends)
            sess = tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2}))
            sess.run(tf.global_variables_initializer())
            out[key] = median(lambda: sess.run(total), repeats=15)
            sess.close()
    return out


def measure_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10_000_000).astype(np.float32)
    m1 = rng.standard_normal((1024, 1024)).astype(np.float32)
    m2 = rng.standard_normal((1024, 1024)).astype(np.float32)
    one, two = np.float32(1.0), np.float32(2.0)
    m = (rng.standard_normal((400, 400)) / 20).astype(np.float32)

    def chains():
        total = 0.0
        for k in range(2):
            x = m + k
            for _ in range(4):
                x = x @ m
            total += np.sum(x)
        return total
    return {"trivial_run": median(lambda: one + two, repeats=7, inner=20000),
            "chain_10M": median(lambda: np.sum(x * 2.0 + 1.0)),
            "matmul_1024": median(lambda: np.sum(m1 @ m2)),
            "chains_one_device": median(chains, repeats=15),
            "chains_two_devices": median(chains, repeats=15)}


def main():
    if sys.argv[1:] == ["--engine", "tf"]:
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        print(json.dumps(measure(tf)))
        return
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import minitf.compat.v1 as tf
    mine = measure(tf)
    ref = measure_numpy()
    real = run_under_tf(__file__, timeout=600)
    rows = [("trivial sess.run (scalar add)", "trivial_run", 1e6, "us"),
            ("reduce_sum(a*2+1), 10M float32", "chain_10M", 1e3, "ms"),
            ("matmul 1024x1024 float32 (+sum)", "matmul_1024", 1e3, "ms"),
            ("2 chains of 4 matmuls, one device", "chains_one_device", 1e3, "ms"),
            ("the same, chains on two devices", "chains_two_devices", 1e3, "ms")]
    print("%-34s %12s %12s %12s %14s" % ("benchmark (median)", "minitf", "numpy", "real TF",
                                          "minitf/numpy"))
    for label, key, scale, unit in rows:
        tf_text = "%.1f %s" % (real[key] * scale, unit) if real else "n/a"
        print("%-34s %9.1f %s %9.1f %s %12s %14.2f" % (
            label, mine[key] * scale, unit, ref[key] * scale, unit, tf_text,
            mine[key] / ref[key]))


if __name__ == "__main__":
    main()
