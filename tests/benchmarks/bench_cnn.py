"""Benchmark: one training step of a small CNN, minitf against real TensorFlow.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_cnn.py             # step times, minitf vs real TF
    python tests/benchmarks/bench_cnn.py --kernels   # im2col + BLAS vs the direct loop nest

The model is TF's classic MNIST network without its big hidden layer: batch 64
of 28x28x1 images, ``conv2d`` 5x5x32 (SAME, ReLU), 2x2 max-pool, ``conv2d``
5x5x64 (SAME, ReLU), 2x2 max-pool, ``dense`` 10, softmax cross-entropy, one
gradient-descent step (forward and backward: about 4.2 GFLOP, 90% of it in the
second convolution and its two gradients). Built with ``tf.layers`` as TF1
code does (real TF needs ``TF_USE_LEGACY_KERAS=1``, set here).

minitf and real TF ($MINITF_TF_PYTHON) take turns, several rounds each, and the
medians are compared: the machine is shared and noisy, so read the ratio.
``--kernels`` times each convolution of the model (forward, input gradient,
filter gradient) both ways, which is how minitf's CPU backend chooses.
"""

import json
import os
import statistics
import sys
import time

import numpy as np

BATCH = 64
STEPS = 5          # steps per sample
SAMPLES = 7        # samples per round
ROUNDS = 3         # minitf and TF take turns this many times

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import median, run_under_tf  # noqa: E402


def _engine(name):
    if name == "tf":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        return tf
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import minitf.compat.v1 as tf
    return tf


def _model(tf):
    x = tf.placeholder(tf.float32, [BATCH, 28, 28, 1], name="images")
    y = tf.placeholder(tf.int32, [BATCH], name="labels")
    h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return x, y, train


def step_samples(tf, samples=SAMPLES):
    """Milliseconds per training step, ``samples`` samples of STEPS steps each."""
    rng = np.random.RandomState(0)
    images = rng.rand(BATCH, 28, 28, 1).astype(np.float32)
    labels = rng.randint(0, 10, BATCH).astype(np.int32)
    graph = tf.Graph()
    with graph.as_default():
        x, y, train = _model(tf)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: images, y: labels}
            for _ in range(5):
                sess.run(train, feed)
            out = []
            for _ in range(samples):
                start = time.perf_counter()
                for _ in range(STEPS):
                    sess.run(train, feed)
                out.append((time.perf_counter() - start) / STEPS * 1e3)
    return out


#: The model's convolutions: (name, input NHWC, filter HWCO).
CONVS = [("conv 1 (5x5, 1 -> 32)", (BATCH, 28, 28, 1), (5, 5, 1, 32)),
         ("conv 2 (5x5, 32 -> 64)", (BATCH, 14, 14, 32), (5, 5, 32, 64))]


def kernels():
    """Each convolution's three kernels, im2col + BLAS against the direct loop nest."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from minitf.kernels import cpu
    rng = np.random.RandomState(0)
    geometry = ((1, 1), (1, 1), (2, 2, 2, 2))
    print("%-24s %-16s %10s %10s" % ("convolution", "kernel", "im2col", "direct"))
    for name, xs, ws in CONVS:
        x = rng.rand(*xs).astype(np.float32)
        w = rng.rand(*ws).astype(np.float32)
        dy = rng.rand(*xs[:3], ws[3]).astype(np.float32)
        times = {}
        for way, limit in (("im2col", 0), ("direct", 1 << 30)):
            cpu.DIRECT_MAX_K = cpu.DIRECT_MAX_O = limit
            times[way] = median(lambda: cpu.conv2d(x, w, *geometry), repeats=15)
        print("%-24s %-16s %8.2f ms %8.2f ms" % (name, "forward", times["im2col"] * 1e3,
                                                times["direct"] * 1e3))
        cpu.DIRECT_MAX_K = cpu.DIRECT_MAX_O = 0
        for label, fn in (("input gradient", lambda: cpu.conv2d_backprop_input(
                xs, w, dy, *geometry)), ("filter gradient", lambda: cpu.conv2d_backprop_filter(
                    x, ws, dy, *geometry))):
            print("%-24s %-16s %8.2f ms %10s" % (name, label, median(fn, repeats=15) * 1e3,
                                                  "-"))


def main():
    if sys.argv[1:] == ["--step", "tf"]:
        print(json.dumps(step_samples(_engine("tf"))))
        return
    if sys.argv[1:] == ["--kernels"]:
        kernels()
        return
    mine, theirs = [], []
    tf = _engine("minitf")
    real = os.environ.get("MINITF_TF_PYTHON")
    for _ in range(ROUNDS):
        mine += step_samples(tf)
        if real:
            got = run_under_tf(__file__, ("--step", "tf"), 600)
            theirs += got or []
    m = statistics.median(mine)
    print("CNN training step, batch %d of 28x28x1, conv 5x5x32 + pool, conv 5x5x64 + pool, "
          "dense 10 (median of %d samples of %d steps)" % (BATCH, len(mine), STEPS))
    print("%-10s %10s" % ("minitf", "%.1f ms" % m))
    if theirs:
        t = statistics.median(theirs)
        print("%-10s %10s" % ("real TF", "%.1f ms" % t))
        print("%-10s %10s" % ("ratio", "%.2fx" % (m / t)))
    else:
        print("real TF: not measured (set MINITF_TF_PYTHON)")


if __name__ == "__main__":
    main()
