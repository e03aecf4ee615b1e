"""One worker's client program for the between-graph training tests.

    python train_worker_program.py CLUSTER_JSON TASK_INDEX MODE STEPS

Builds the model with replica_device_setter (variables on the ps), trains
with a MonitoredTrainingSession on its own worker's target, and prints one
JSON line with what it saw. MODE is "async" or "sync".
"""

import json
import sys

import numpy as np

import minitf.compat.v1 as tf


def main():
    import faulthandler
    import os
    if os.environ.get("MINITF_HANG_DUMP"):
        faulthandler.dump_traceback_later(float(os.environ["MINITF_HANG_DUMP"]), exit=True)
    cluster = json.loads(sys.argv[1])
    task = int(sys.argv[2])
    mode = sys.argv[3]
    last_step = int(sys.argv[4])
    n_workers = len(cluster["worker"])
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
        opt = tf.train.GradientDescentOptimizer(0.1)
        hooks = [tf.train.StopAtStepHook(last_step=last_step)]
        if mode == "sync":
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=n_workers,
                                                 total_num_replicas=n_workers)
            hooks.append(opt.make_session_run_hook(is_chief=(task == 0)))
        train = opt.minimize(loss, global_step=step)

    my_steps = 0
    seen = []
    with tf.train.MonitoredTrainingSession(master="grpc://" + cluster["worker"][task],
                                           is_chief=(task == 0), hooks=hooks) as sess:
        while not sess.should_stop():
            xs = rng.uniform(-1, 1, (16, 3)).astype(np.float32)
            ys = xs.dot(true_w) + 0.3
            _, g = sess.run([train, step], {x: xs, y: ys})
            seen.append(int(g))
            my_steps += 1
        final_w = None
    with tf.Session("grpc://" + cluster["worker"][task]) as plain:
        final_w = plain.run(w).ravel().tolist()
        final_step = int(plain.run(step))
        if mode == "sync":
            from minitf.distributed.inspect import cluster_state
            staleness = {}
            dropped = 0
            for t in cluster_state(cluster, values=False):
                for containers in t.get("resources", {}).values():
                    for res in containers.values():
                        for r in res.values():
                            if r.get("kind") == "ConditionalAccumulator":
                                dropped += r["dropped_stale"]
                                for k, n in r["staleness"].items():
                                    staleness[k] = staleness.get(k, 0) + n
        else:
            # Async: the variables themselves count how stale each update was.
            from minitf.distributed.inspect import cluster_state
            staleness, dropped = {}, None
            for t in cluster_state(cluster, values=False):
                for containers in t.get("resources", {}).values():
                    for res in containers.values():
                        w_summary = res.get("w")
                        if w_summary is not None:
                            staleness = w_summary.get("staleness", {})
    print(json.dumps({"task": task, "steps": my_steps, "final_step": final_step,
                      "w": final_w, "staleness": staleness, "dropped": dropped}))


if __name__ == "__main__":
    main()
