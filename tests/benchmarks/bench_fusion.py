"""Benchmark: elementwise fusion, matmul and cold start, side by side in one run.

    python tests/benchmarks/bench_fusion.py [--quick]

* ``reduce_sum(relu(a * 2 + 1) - b)`` over 10M float32: minitf fused, minitf
  unfused (``GraphOptions(fuse_elementwise=False)``) and the numpy expression
  (targets: fused >= 2.5x numpy), beside the memory-bandwidth limit of any
  pass over the same 80 MB: numpy's ``dot(a, b)``, which reads ``a`` and
  ``b`` once and writes nothing (target: fused <= 1.3x that). The fused
  step and the limit take turns, one sample each, so that both see the
  machine in the same state: on these shared 2-core hosts a core's memory
  bandwidth moves by 2x within a minute, and the two measured one after the
  other could read 0.9x or 1.4x for the same code;
* a 1024x1024 float32 matmul against numpy;
* cold start: a fresh process imports minitf and runs a small graph, once
  with an empty numba cache (``NUMBA_CACHE_DIR`` = a new temporary
  directory) and once with a warm one (targets: cold <= 20 s, warm <= 1.5 s).

Figures are medians of several repeats on a noisy machine; compare ratios.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

N = 10_000_000
REPEATS = 9

SMALL_GRAPH = r"""
import time
t0 = time.perf_counter()
import minitf.compat.v1 as tf
import numpy as np
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(np.ones((4, 3), np.float32))
    y = tf.reduce_mean(tf.nn.softmax(tf.matmul(x, w)) * 2.0 + 1.0)
    with tf.Session() as s:
        s.run(w.initializer)
        s.run(y, {x: np.ones((2, 4), np.float32)})
print(time.perf_counter() - t0)
"""


def median(fn, repeats=REPEATS):
    return common.median(fn, repeats)


def chain(fuse, a, b, beside=None):
    """Median seconds of the chain's step, fused or not, and its value.
    ``beside``: a function to time in turn with each step (the bandwidth
    limit); then its median is returned too."""
    import minitf.compat.v1 as tf
    g = tf.Graph()
    with g.as_default():
        pa = tf.placeholder(tf.float32, [N])
        pb = tf.placeholder(tf.float32, [N])
        va, vb = tf.Variable(pa), tf.Variable(pb)
        out = tf.reduce_sum(tf.nn.relu(va * 2.0 + 1.0) - vb)
        config = tf.ConfigProto(graph_options=tf.GraphOptions(fuse_elementwise=fuse))
        sess = tf.Session(graph=g, config=config)
        sess.run([va.initializer, vb.initializer], {pa: a, pb: b})
        if beside is None:
            t = median(lambda: sess.run(out))
            value = sess.run(out)
            sess.close()
            return t, value
        turns = [lambda: sess.run(out), beside]
        for fn in turns:
            fn()
        times = ([], [])
        for _ in range(3 * REPEATS):
            for fn, got in zip(turns, times):
                start = time.perf_counter()
                fn()
                got.append(time.perf_counter() - start)
        value = sess.run(out)
        sess.close()
    return statistics.median(times[0]), value, statistics.median(times[1])


def matmul(m1, m2):
    import minitf.compat.v1 as tf
    g = tf.Graph()
    with g.as_default():
        v1, v2 = tf.Variable(m1), tf.Variable(m2)
        prod = tf.matmul(v1, v2)
        sess = tf.Session(graph=g)
        sess.run([v1.initializer, v2.initializer])
        t = median(lambda: sess.run(prod))
        sess.close()
    return t


def start_time(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SMALL_GRAPH], env=env, check=True,
                         capture_output=True, text=True)
    return time.perf_counter() - start, float(out.stdout.strip().splitlines()[-1])


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    rows = []
    t_np = median(lambda: np.sum(np.maximum(a * np.float32(2) + np.float32(1), 0) - b))
    t_fused, v1, t_limit = chain(True, a, b, beside=lambda: np.dot(a, b))
    t_unfused, v2 = chain(False, a, b)
    want = np.sum(np.maximum(a * 2.0 + 1.0, 0) - b, dtype=np.float64)
    assert abs(v1 - want) <= 1e-4 * abs(want) + 1 and abs(v2 - want) <= 1e-4 * abs(want) + 1
    rows.append(("chain 10M numpy", t_np, 1.0))
    rows.append(("chain 10M minitf fused", t_fused, t_np / t_fused))
    rows.append(("chain 10M minitf unfused", t_unfused, t_np / t_unfused))
    rows.append(("bandwidth limit: numpy dot(a, b), same 80 MB", t_limit, t_np / t_limit))
    m1 = rng.standard_normal((1024, 1024)).astype(np.float32)
    m2 = rng.standard_normal((1024, 1024)).astype(np.float32)
    t_mnp = median(lambda: m1 @ m2)
    t_mtf = matmul(m1, m2)
    rows.append(("matmul 1024 numpy", t_mnp, 1.0))
    rows.append(("matmul 1024 minitf", t_mtf, t_mnp / t_mtf))
    with tempfile.TemporaryDirectory() as cold:
        cold_wall, cold_in = start_time(cold)
        warm = [start_time(cold) for _ in range(3)]
    warm_wall = statistics.median(w[0] for w in warm)
    rows.append(("start, empty numba cache", cold_wall, None))
    rows.append(("start, warm numba cache", warm_wall, None))
    print("| benchmark | median | speed vs numpy |")
    print("|---|---|---|")
    for name, t, ratio in rows:
        print("| %s | %s | %s |" % (name, "%.1f ms" % (t * 1e3) if t < 1 else "%.2f s" % t,
                                    "%.2fx" % ratio if ratio is not None else "-"))
    print("fused chain / bandwidth limit: %.2fx (target <= 1.3x; the two measured in turn, "
          "%d samples each)" % (t_fused / t_limit, 3 * REPEATS))


if __name__ == "__main__":
    main()
