"""Between-graph training on a real cluster: 1 ps + 2 workers, each worker a
separate client process (tests/unit/train_worker_program.py)."""

import json
import os
import subprocess
import sys

import pytest

from minitf.distributed.launcher import LocalCluster

PROGRAM = os.path.join(os.path.dirname(__file__), "train_worker_program.py")
TRUE_W = [2.0, -1.0, 0.5]


def _train(mode, last_step):
    with LocalCluster({"ps": 1, "worker": 2}, echo=False) as cluster:
        spec = json.dumps(cluster.spec.as_dict())
        env = dict(os.environ, MINITF_HANG_DUMP="100")
        procs = [subprocess.Popen([sys.executable, PROGRAM, spec, str(i), mode, str(last_step)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env) for i in range(2)]
        results = []
        for p in procs:
            out, err = p.communicate(timeout=150)
            assert p.returncode == 0, err[-3000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
            results[-1]["stderr"] = err
        return results


def test_asynchronous_training_counts_every_step_and_converges():
    results = _train("async", 150)
    steps = sum(r["steps"] for r in results)
    for r in results:
        # global_step counts every update of every worker: nothing is lost.
        assert r["final_step"] == steps
        assert r["w"] == pytest.approx(TRUE_W, abs=1e-2)
    assert all(r["steps"] > 0 for r in results)
    # Staleness is measured: one entry per update of w, each the number of
    # other updates between this step's read of w and its update.
    staleness = results[-1]["staleness"]
    assert sum(staleness.values()) == steps
    # An update can have seen at most every other update of the run in between.
    assert all(0 <= int(k) < steps for k in staleness)


def test_sync_replicas_drop_stale_gradients_and_stop_cleanly():
    results = _train("sync", 100)
    for r in results:
        assert r["final_step"] == 100          # one averaged update per step
        assert r["w"] == pytest.approx(TRUE_W, abs=1e-2)
        # Every gradient the accumulators accepted was fresh: staleness 0.
        # 100 updates averaged 2 gradients for each of 2 variables; a last
        # round may have been accepted after the chief stopped taking.
        assert set(r["staleness"]) == {"0"}
        assert 2 * 100 * 2 <= r["staleness"]["0"] <= 2 * 100 * 2 + 4
    # Each finished step of a worker gave one gradient per variable, and each
    # gradient was either accepted or dropped as stale.
    applied = results[0]["staleness"]["0"] + results[0]["dropped"]
    assert sum(r["steps"] for r in results) * 2 <= applied
