"""The chaos test: training survives its parameter server and a worker being
killed twice each (see chaos.py for the set-up). The seed is random; set
MINITF_CHAOS_SEED to replay one, and run ``python tests/unit/chaos.py N`` for
N runs in a row."""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos  # noqa: E402


def test_training_survives_ps_and_worker_kills():
    seed = int(os.environ.get("MINITF_CHAOS_SEED") or random.randrange(1 << 30))
    report = chaos.run_chaos(seed)
    where = "\n%s\n%s" % (chaos.summary(report), json.dumps(report, indent=1))
    # Both clients finished by themselves, at the last step.
    assert report["returncodes"] == [0, 0], where
    assert len(report["kills"]) == 4, where
    for task, done in report["done"].items():
        assert done is not None and done["steps"] > 0, where
    assert report["final_checkpoint"] >= chaos.LAST_STEP, where
    # Each ps restart made the chief create a new session, restored from
    # at least the newest checkpoint written before the kill.
    assert len(report["ps_restarts"]) == 2, where
    for restart in report["ps_restarts"]:
        assert restart["newest_checkpoint"] is not None, where
        assert restart["resumed_at"] is not None, where
        assert restart["resumed_at"] >= restart["newest_checkpoint"], where
    # Worker 1's client recovered by itself: it made a new session after the
    # kills, and its last one began after the last kill (at or above the
    # newest checkpoint then). Kills that come while it is still recovering
    # from the previous one (it waits for the chief to restore the model)
    # are handled by that same recovery, so there may be fewer new sessions
    # than kills.
    sessions = report["worker1_sessions"]
    assert len(sessions) >= 2, where
    assert sessions[-1] >= report["kills"][-1]["newest_checkpoint"], where
    assert report["seconds"] < chaos.TIMEOUT, where
