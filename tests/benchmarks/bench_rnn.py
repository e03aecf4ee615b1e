"""Benchmark: one training step of an LSTM (batch 64, 50 time steps, 128 units).

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_rnn.py

``tf.nn.dynamic_rnn`` over a ``BasicLSTMCell``, a dense layer on the last
output, softmax cross-entropy, one ``GradientDescentOptimizer`` step: the
forward loop and the backward loop (issue 17's benchmark). minitf and real
TensorFlow (when $MINITF_TF_PYTHON is set) run the same program in one run;
medians of a few repeats on a noisy 2-core machine: compare the ratio.
"""

import json
import os
import statistics
import sys
import time

import numpy as np

BATCH, STEPS, UNITS, FEATURES, CLASSES = 64, 50, 128, 32, 10
REPEATS, WARMUP = 15, 3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_under_tf  # noqa: E402


def _engine(name):
    if name == "tf":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        return tf
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import minitf.compat.v1 as tf
    return tf


def measure(tf):
    """Median milliseconds of one forward (the loss) and one training step."""
    rng = np.random.RandomState(0)
    xs = rng.standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)
    ys = rng.randint(0, CLASSES, BATCH).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [BATCH, STEPS, FEATURES])
        y = tf.placeholder(tf.int32, [BATCH])
        cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        w = tf.Variable(tf.random_normal([UNITS, CLASSES], stddev=0.1, seed=1))
        logits = tf.matmul(outputs[:, -1], w)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: xs, y: ys}
            result = {}
            for name, fetch in (("forward", loss), ("train", train)):
                for _ in range(WARMUP):
                    sess.run(fetch, feed)
                times = []
                for _ in range(REPEATS):
                    start = time.perf_counter()
                    sess.run(fetch, feed)
                    times.append(time.perf_counter() - start)
                result[name] = 1e3 * statistics.median(times)
    return result


def main():
    if "--engine" in sys.argv:
        print(json.dumps(measure(_engine(sys.argv[sys.argv.index("--engine") + 1]))))
        return
    mine = measure(_engine("minitf"))
    theirs = run_under_tf(os.path.abspath(__file__))
    print("LSTM, batch %d, %d steps, %d units, %d features: median ms of %d"
          % (BATCH, STEPS, UNITS, FEATURES, REPEATS))
    print("%-28s %10s %10s %10s" % ("", "minitf", "TF", "minitf/TF"))
    for name, label in (("forward", "forward (loss)"), ("train", "training step (fwd+bwd)")):
        tf_ms = theirs[name] if theirs else float("nan")
        print("%-28s %10.1f %10.1f %10.2f" % (label, mine[name], tf_ms, mine[name] / tf_ms))


if __name__ == "__main__":
    main()
