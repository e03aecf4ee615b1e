"""The chaos run: train on a cluster while its tasks are killed and restarted.

1 ps + 2 worker servers run as separate processes (LocalCluster); two client
programs (recovering_worker_program.py) train one model asynchronously with
MonitoredTrainingSession, the chief checkpointing every 10 steps, both
stopping at global step LAST_STEP. Meanwhile the ps and worker 1 are each
killed with SIGKILL twice, at random moments (random global steps of the
chief, in a random order), and restarted a second later.

What must hold (checked by test_chaos.py): both clients finish by themselves,
the last step is reached, and after each ps restart the chief's new session
starts at or above the newest checkpoint written before the kill.

Run it by hand for several seeds::

    python tests/unit/chaos.py 5          # five runs, seeds 1..5
    python tests/unit/chaos.py 3 17       # three runs from seed 17
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "recovering_worker_program.py")
LAST_STEP = 2000
RESTART_AFTER = 1.0     # seconds between a kill and the restart
TIMEOUT = 150.0         # seconds for the whole run


class _Client:
    """One client program, its events read as they come."""

    def __init__(self, spec, task, checkpoint_dir):
        self.task = task
        self.events = []
        self.stderr = []
        self.cond = threading.Condition()
        env = dict(os.environ, MINITF_HANG_DUMP=str(int(TIMEOUT + 20)))
        self.proc = subprocess.Popen(
            [sys.executable, PROGRAM, spec, str(task), checkpoint_dir, str(LAST_STEP)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self._threads = [threading.Thread(target=self._read_events, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()

    def _read_events(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                self.events.append(event)
                self.cond.notify_all()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def step(self):
        """The newest global step this client reported."""
        with self.cond:
            for e in reversed(self.events):
                if "step" in e:
                    return e["step"]
        return -1

    def wait_for_step(self, target, deadline, since=0):
        """Block until the client reports a step >= ``target`` in an event
        after the first ``since`` (True), it exits, or ``deadline`` passes
        (False)."""
        with self.cond:
            while True:
                if any(e.get("step", -1) >= target for e in self.events[since:]):
                    return True
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    return False
                self.cond.wait(0.05)

    def finish(self, deadline):
        try:
            self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        for t in self._threads:
            t.join(5)
        return self.proc.returncode


def _newest_checkpoint_step(checkpoint_dir):
    from minitf.train.saver import latest_checkpoint
    path = latest_checkpoint(checkpoint_dir)
    return None if path is None else int(path.rsplit("-", 1)[1])


def run_chaos(seed, log=None):
    """One chaos run; returns a report (a dict) for the test to check."""
    from minitf.distributed.launcher import LocalCluster
    log = log or (lambda line: None)
    rng = random.Random(seed)
    kills = [("ps", 0)] * 2 + [("worker", 1)] * 2
    rng.shuffle(kills)
    # Random global steps of the chief, early enough that the last kill comes
    # well before the end (the restarts below do not wait for the task).
    targets = sorted(rng.sample(range(150, int(LAST_STEP * 0.65)), len(kills)))
    report = {"seed": seed, "kills": [], "ps_restarts": []}
    start = time.monotonic()
    deadline = start + TIMEOUT
    with tempfile.TemporaryDirectory() as checkpoint_dir, \
            LocalCluster({"ps": 1, "worker": 2}, echo=False) as cluster:
        spec = json.dumps(cluster.spec.as_dict())
        clients = [_Client(spec, task, checkpoint_dir) for task in (0, 1)]
        chief = clients[0]
        try:
            since = 0   # each kill waits for news of the chief after the previous one
            for (job, task), target in zip(kills, targets):
                if not chief.wait_for_step(target, deadline, since):
                    break
                at = chief.step()
                n_sessions = sum(1 for e in chief.events if e["event"] == "session")
                cluster.kill_task(job, task)
                time.sleep(RESTART_AFTER)
                # Nothing can be saved while the ps is down: this is the
                # newest checkpoint the chief can restore from.
                newest = _newest_checkpoint_step(checkpoint_dir)
                cluster.start_task(job, task, wait=False)
                with chief.cond:
                    since = len(chief.events)
                kill = {"task": "%s/%d" % (job, task), "at_step": at,
                        "t": round(time.monotonic() - start, 2), "newest_checkpoint": newest}
                report["kills"].append(kill)
                log("killed %s at global step %d, restarted it (newest checkpoint %s)"
                    % (kill["task"], at, newest))
                if job == "ps":
                    report["ps_restarts"].append({"newest_checkpoint": newest,
                                                  "sessions_before": n_sessions,
                                                  "at_step": at})
            codes = [c.finish(deadline) for c in clients]
        finally:
            for c in clients:
                if c.proc.poll() is None:
                    c.proc.kill()
                    c.proc.wait(10)
        report["returncodes"] = codes
        report["final_checkpoint"] = _newest_checkpoint_step(checkpoint_dir)
    report["seconds"] = round(time.monotonic() - start, 1)
    report["done"] = {c.task: next((e for e in c.events if e["event"] == "done"), None)
                      for c in clients}
    sessions = [e for e in chief.events if e["event"] == "session"]
    report["chief_sessions"] = [e["step"] for e in sessions]
    report["worker1_sessions"] = [e["step"] for e in clients[1].events
                                  if e["event"] == "session"]
    for restart in report["ps_restarts"]:
        # The first session the chief created after this ps kill.
        after = sessions[restart["sessions_before"]:restart["sessions_before"] + 1]
        restart["resumed_at"] = after[0]["step"] if after else None
    report["stderr_tail"] = {c.task: c.stderr[-40:] for c in clients}
    return report


def summary(report):
    """One line per run, for people."""
    resumes = ", ".join("ckpt %s -> resumed %s" % (r["newest_checkpoint"], r["resumed_at"])
                        for r in report["ps_restarts"])
    kills = ", ".join("%s@%d" % (k["task"], k["at_step"]) for k in report["kills"])
    return ("seed %s: %.1f s, kills %s; ps restarts: %s; final checkpoint %s; exit codes %s"
            % (report["seed"], report["seconds"], kills, resumes, report["final_checkpoint"],
               report["returncodes"]))


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for seed in range(first, first + runs):
        r = run_chaos(seed, log=lambda line: print("   ", line, flush=True))
        print(summary(r), flush=True)
