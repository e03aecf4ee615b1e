"""One worker's client program for the chaos test (tests/unit/chaos.py).

    python recovering_worker_program.py CLUSTER_JSON TASK_INDEX CHECKPOINT_DIR LAST_STEP

Between-graph async training of a small linear model: variables on the ps
(replica_device_setter), a MonitoredTrainingSession on this worker's own
target; task 0 is the chief and checkpoints every 10 steps. It writes one
JSON line per event to stdout, flushed at once so the test can follow it:

    {"event": "session", "task": 0, "step": 354, "t": ...}   a session was (re)created
    {"event": "progress", "task": 0, "step": 420, "t": ...}  every 20 steps of the chief
    {"event": "done", "task": 0, "steps": 1012, "last": 2000, "t": ...}
"""

import json
import os
import sys
import time

import numpy as np

import minitf.compat.v1 as tf


def emit(**record):
    record["t"] = time.time()
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class Report(tf.train.SessionRunHook):
    """Says when a session is (re)created and where the global step is."""

    def __init__(self, task, step):
        self.task = task
        self.step = step
        self.runs = 0

    def after_create_session(self, session, coord):
        emit(event="session", task=self.task, step=int(session.run(self.step)))

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.step)

    def after_run(self, run_context, run_values):
        self.runs += 1
        if self.task == 0 and self.runs % 20 == 0:
            emit(event="progress", task=0, step=int(run_values.results))


def main():
    import faulthandler
    faulthandler.dump_traceback_later(float(os.environ.get("MINITF_HANG_DUMP", "170")),
                                      exit=True)
    cluster = json.loads(sys.argv[1])
    task = int(sys.argv[2])
    checkpoint_dir = sys.argv[3]
    last_step = int(sys.argv[4])
    rng = np.random.RandomState(task)
    true_w = np.array([[2.0], [-1.0], [0.5]], np.float32)

    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % task, cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        b = tf.Variable(0.0, name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)

    report = Report(task, step)
    hooks = [tf.train.StopAtStepHook(last_step=last_step), report]
    my_steps = 0
    last = None
    with tf.train.MonitoredTrainingSession(
            master="grpc://" + cluster["worker"][task], is_chief=(task == 0),
            checkpoint_dir=checkpoint_dir if task == 0 else None,
            save_checkpoint_steps=10, hooks=hooks) as sess:
        while not sess.should_stop():
            xs = rng.uniform(-1, 1, (16, 3)).astype(np.float32)
            _, last = sess.run([train, step], {x: xs, y: xs.dot(true_w) + 0.3})
            my_steps += 1
    emit(event="done", task=task, steps=my_steps, last=int(last))


if __name__ == "__main__":
    main()
