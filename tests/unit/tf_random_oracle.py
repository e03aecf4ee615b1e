"""Ask real TensorFlow what its random ops draw, for test_philox.py.

Imported by the tests (no TensorFlow needed for that): :func:`run` writes the
cases as JSON, runs this file under the oracle's python, and loads the
``.npz`` it writes. Run as a script (under TF's python) it builds every case
as a raw op (``gen_random_ops``, so ``seed``/``seed2`` are exactly the given
attributes), runs it ``runs`` times in one session, once more in a fresh
session, and saves the arrays as ``NAME/run0``, ``NAME/run1``...,
``NAME/restart``. Seed-derivation scenarios (``tf.set_random_seed`` and
``get_seed`` calls) come back as JSON text under ``seed_scenarios``.

Record the golden file the tests check without TF::

    MINITF_TF_PYTHON=... python tests/unit/tf_random_oracle.py --record
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "data" / "philox_golden.npz"
DEFAULT_ORACLE = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"


def oracle_python():
    """$MINITF_TF_PYTHON, else the default oracle venv if it exists, else None."""
    explicit = os.environ.get("MINITF_TF_PYTHON")
    if explicit:
        return explicit
    return str(DEFAULT_ORACLE) if DEFAULT_ORACLE.exists() else None


# ------------------------------------------- inputs both sides build alike ----

def logits_for(case):
    """Deterministic float32 logits (exact arithmetic, same on every numpy)."""
    b, c = case["batch"], case["classes"]
    i = np.arange(b * c, dtype=np.int64)
    x = (((i * 7919 + 13) % 1000) / 125.0 - 4.0).astype(np.float32).reshape(b, c)
    for r, j, v in case.get("special", []):
        x[r, j] = float(v)
    return x


def shuffle_input(case):
    n = int(np.prod(case["shape"], dtype=np.int64))
    return np.arange(n, dtype=np.int32).reshape(case["shape"])


# ------------------------------------------------------- the TF side ----

def _build(tf, gen, case):
    dtype = getattr(tf, case.get("dtype", "float32"))
    seeds = dict(seed=case["seed"], seed2=case["seed2"])
    op = case["op"]
    if op == "uniform":
        return gen.random_uniform(case["shape"], dtype, **seeds)
    if op == "normal":
        return gen.random_standard_normal(case["shape"], dtype, **seeds)
    if op == "truncated":
        return gen.truncated_normal(case["shape"], dtype, **seeds)
    if op == "uniform_int":
        np_dtype = np.int64 if case["dtype"] == "int64" else np.int32
        return gen.random_uniform_int(case["shape"], np_dtype(case["minval"]),
                                      np_dtype(case["maxval"]), **seeds)
    if op == "shuffle":
        return gen.random_shuffle(shuffle_input(case), **seeds)
    if op == "multinomial":
        return gen.multinomial(tf.constant(logits_for(case), dtype=dtype), case["num_samples"],
                               output_dtype=getattr(tf, case.get("output_dtype", "int64")),
                               **seeds)
    raise ValueError(op)


def _seed_scenarios(tf, scenarios):
    from tensorflow.python.framework import random_seed
    results = []
    for steps in scenarios:
        out = []
        graph = tf.Graph()
        for step in steps:
            kind = step[0]
            try:
                if kind == "graph":
                    graph = tf.Graph()
                    out.append(None)
                    continue
                with graph.as_default():
                    if kind == "set":
                        tf.set_random_seed(step[1])
                        out.append(None)
                    else:
                        out.append(["ok", [None if s is None else repr(s)
                                           for s in random_seed.get_seed(step[1])]])
            except Exception as e:          # the error is the answer
                out.append(["error", type(e).__name__, str(e)])
        results.append(out)
    return results


def _main(spec_path, out_path):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    from tensorflow.python.ops import gen_random_ops as gen
    tf.disable_v2_behavior()
    spec = json.loads(Path(spec_path).read_text())
    arrays = {}
    by_threads = {}
    for case in spec["cases"]:
        by_threads.setdefault(case.get("threads", 0), []).append(case)
    assert len(by_threads) <= 1, "one intra-op thread count per process"
    for threads, cases in by_threads.items():
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Graph().as_default():
            ops = {c["name"]: _build(tf, gen, c) for c in cases}
            with tf.Session(config=config) as sess:
                for run in range(max(c.get("runs", 1) for c in cases)):
                    names = [c["name"] for c in cases if c.get("runs", 1) > run]
                    values = sess.run({n: ops[n] for n in names})
                    for n in names:
                        arrays["%s/run%d" % (n, run)] = np.asarray(values[n])
            with tf.Session(config=config) as sess:
                values = sess.run(ops)
                for n in ops:
                    arrays["%s/restart" % n] = np.asarray(values[n])
    for k, v in arrays.items():
        if v.dtype.name == "bfloat16":      # npz keeps bfloat16 as raw bits
            arrays[k] = v.view(np.uint16)
    arrays["seed_scenarios"] = np.array(json.dumps(_seed_scenarios(tf, spec["scenarios"])))
    np.savez_compressed(out_path, **arrays)


# ------------------------------------------------------- the test side ----

def run(cases, scenarios=(), python=None, timeout=300):
    """TF's arrays for ``cases`` (a dict ``NAME/runK`` -> array) and scenario results.

    One TF process per intra-op thread count: TF makes its CPU thread pool once
    per process, with the first session's setting.
    """
    python = python or oracle_python()
    groups = {}
    for case in cases:
        groups.setdefault(case.get("threads", 0), []).append(case)
    arrays, seeds = {}, None
    for threads, group in sorted(groups.items()):
        part, part_seeds = _run_process(python, group, scenarios if seeds is None else (),
                                        timeout)
        arrays.update(part)
        seeds = part_seeds if seeds is None else seeds
    if seeds is None:
        _, seeds = _run_process(python, [], scenarios, timeout)
    return arrays, seeds


def _run_process(python, cases, scenarios, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.json"
        out = Path(tmp) / "out.npz"
        spec.write_text(json.dumps({"cases": list(cases), "scenarios": list(scenarios)}))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        proc = subprocess.run([python, __file__, str(spec), str(out)], env=env,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError("the TF oracle failed:\n" + proc.stderr[-3000:])
        with np.load(out) as data:
            arrays = {k: data[k] for k in data.files}
    return arrays, json.loads(str(arrays.pop("seed_scenarios")))


def record(cases, scenarios, path=GOLDEN):
    """Write TF's answers for the small cases to the golden file."""
    arrays, seeds = run(cases, scenarios)
    path.parent.mkdir(exist_ok=True)
    arrays["seed_scenarios"] = np.array(json.dumps(seeds))
    np.savez_compressed(path, **arrays)
    return path


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        sys.path.insert(0, str(HERE))
        import test_philox
        print(record(test_philox.golden_cases(), test_philox.SEED_SCENARIOS))
    else:
        _main(*sys.argv[1:3])
