"""Benchmark: 10M float32 random numbers, minitf's Philox kernels beside numpy and TF.

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_random.py

For ``random_uniform`` and ``random_normal`` (and ``truncated_normal``) of
10M float32 it prints the median wall time of one draw by

* minitf: one run of the op kernel (``random_streams``: reserve, fill a new
  array; the kernels threaded as they choose), and ``sess.run`` of the raw op
  through the runtime (like TF's column: computed, not fetched),
* numpy: ``Generator(Philox).random`` / ``.standard_normal`` (float32, one
  thread, a different Philox stream and a different normal algorithm),
* TensorFlow: ``sess.run`` of the raw op (its intra-op threads; the output is
  computed, not copied to Python), run in TF's venv ($MINITF_TF_PYTHON or
  ~/.cache/minitf/tf-venv) as a subprocess,

and minitf's time over TF's (below 1: minitf is faster). Kernels are compiled
(or loaded from the cache) before timing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

N = 10_000_000
REPEATS = 15
CASES = ("uniform", "normal", "truncated_normal")
DEFAULT_ORACLE = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"


def median_ms(fn, repeats=REPEATS):
    return 1e3 * common.median(fn, repeats)


def minitf_times():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from minitf.kernels import random_streams as rs
    gen = rs.GuardedPhiloxRandom(1, 2)
    draws = {"uniform": rs.random_uniform, "normal": rs.random_standard_normal,
             "truncated_normal": rs.truncated_normal}
    return {c: median_ms(lambda f=draws[c]: f(gen, [N], np.float32)) for c in CASES}


def minitf_session_times():
    import minitf.compat.v1 as mtf
    from minitf.ops import random_ops
    with mtf.Graph().as_default():
        shape = mtf.constant([N])
        rows = {"uniform": random_ops.RANDOM_UNIFORM,
                "normal": random_ops.RANDOM_STANDARD_NORMAL,
                "truncated_normal": random_ops.TRUNCATED_NORMAL}
        ops = {c: random_ops._raw_random(rows[c], shape, mtf.TensorShape([N]), mtf.float32,
                                         (1, 2)).op for c in CASES}
        with mtf.Session() as sess:
            return {c: median_ms(lambda op=ops[c]: sess.run(op)) for c in CASES}


def numpy_times():
    g = np.random.Generator(np.random.Philox(1))
    return {"uniform": median_ms(lambda: g.random(N, dtype=np.float32)),
            "normal": median_ms(lambda: g.standard_normal(N, dtype=np.float32)),
            "truncated_normal": None}


def tf_times():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    from tensorflow.python.ops import gen_random_ops as gen
    tf.disable_v2_behavior()
    with tf.Graph().as_default():
        ops = {"uniform": gen.random_uniform([N], tf.float32, seed=1, seed2=2),
               "normal": gen.random_standard_normal([N], tf.float32, seed=1, seed2=2),
               "truncated_normal": gen.truncated_normal([N], tf.float32, seed=1, seed2=2)}
        with tf.Session() as sess:
            return {c: median_ms(lambda op=ops[c].op: sess.run(op)) for c in CASES}


def tf_times_in_subprocess():
    python = os.environ.get("MINITF_TF_PYTHON") or (
        str(DEFAULT_ORACLE) if DEFAULT_ORACLE.exists() else None)
    if python is None:
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([python, __file__, "--engine", "tf"], capture_output=True,
                          text=True, env=env, timeout=900)
    if proc.returncode != 0:
        print("real TF failed:\n" + proc.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    if sys.argv[1:] == ["--engine", "tf"]:
        print(json.dumps(tf_times()))
        return
    tf = tf_times_in_subprocess()
    mine = minitf_times()
    session = minitf_session_times()
    numpy = numpy_times()

    def fmt(v):
        return "%10.1f" % v if v is not None else "%10s" % "-"
    print("10M float32, median of %d (ms)   minitf  minitf run      numpy         TF"
          "   run/TF" % REPEATS)
    for c in CASES:
        ratio = "%9.2f" % (session[c] / tf[c]) if tf else "%9s" % "-"
        print("%-32s%s  %s %s %s %s" % (c, fmt(mine[c]), fmt(session[c]), fmt(numpy[c]),
                                        fmt(tf[c] if tf else None), ratio))


if __name__ == "__main__":
    main()
