"""Benchmark: training steps per second of a 2-layer MLP (batch 256).

Run on demand (not collected by pytest)::

    python tests/benchmarks/bench_training.py

Side by side in one run:

* locally, in one session;
* asynchronously on 1 ps + 2 workers (each worker its own client process,
  variables on the ps), with and without bfloat16 transfer compression
  (minitf only: TF has no such switch), counting global steps per second;
* synchronously on the same cluster: ``SyncReplicasOptimizer`` aggregating
  both workers' gradients into one update per global step, in a
  ``MonitoredTrainingSession`` with the optimizer's hook;
* real TensorFlow running the same programs when $MINITF_TF_PYTHON is set.

Medians on a noisy 2-core machine (local: of 5 runs of 200 steps; a cluster:
of 3 runs of 4 seconds, each on a fresh cluster): compare ratios.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BATCH, FEATURES, HIDDEN, CLASSES = 256, 64, 128, 10
LOCAL_STEPS = 200

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import free_port, run_under_tf, wait_for_ports  # noqa: E402
DIST_SECONDS = 4.0
DIST_RUNS = 3          # a fresh cluster each time; the median is reported


def _engine(name):
    if name == "tf":
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        return tf
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import minitf.compat.v1 as tf
    return tf


def _model(tf, sync_replicas=0):
    x = tf.placeholder(tf.float32, [BATCH, FEATURES])
    y = tf.placeholder(tf.int32, [BATCH])
    # Explicit variables (TF 2.21's tf.compat.v1.layers needs Keras 2).
    w1 = tf.Variable(tf.random_normal([FEATURES, HIDDEN], stddev=0.1, seed=1), name="w1")
    b1 = tf.Variable(tf.zeros([HIDDEN]), name="b1")
    w2 = tf.Variable(tf.random_normal([HIDDEN, CLASSES], stddev=0.1, seed=2), name="w2")
    b2 = tf.Variable(tf.zeros([CLASSES]), name="b2")
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    step = tf.train.get_or_create_global_step()
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    if sync_replicas:
        optimizer = tf.train.SyncReplicasOptimizer(optimizer, replicas_to_aggregate=sync_replicas,
                                                   total_num_replicas=sync_replicas)
    train = optimizer.minimize(loss, global_step=step)
    return x, y, train, step, optimizer


def _batch(rng):
    return (rng.standard_normal((BATCH, FEATURES)).astype(np.float32),
            rng.randint(0, CLASSES, BATCH).astype(np.int32))


def local_steps_per_second(tf):
    rates = []
    g = tf.Graph()
    with g.as_default():
        x, y, train, _, _ = _model(tf)
        rng = np.random.RandomState(0)
        xs, ys = _batch(rng)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(20):
                sess.run(train, {x: xs, y: ys})
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(LOCAL_STEPS):
                    sess.run(train, {x: xs, y: ys})
                rates.append(LOCAL_STEPS / (time.perf_counter() - start))
    return statistics.median(rates)


def serve(engine, cluster, job, task):
    tf = _engine(engine)
    tf.train.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=task).join()


def worker(engine, cluster, task, compression, seconds, sync):
    tf = _engine(engine)
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % task, cluster=cluster)):
        x, y, train, step, optimizer = _model(tf, len(cluster["worker"]) if sync else 0)
    config = tf.ConfigProto()
    if compression:
        config.graph_options.transfer_compression = compression
    rng = np.random.RandomState(task)
    xs, ys = _batch(rng)
    target = "grpc://" + cluster["worker"][task]
    if sync:
        hooks = [optimizer.make_session_run_hook(task == 0)]
        sess = tf.train.MonitoredTrainingSession(master=target, is_chief=task == 0,
                                                 hooks=hooks, config=config,
                                                 save_checkpoint_secs=None,
                                                 save_summaries_steps=None,
                                                 log_step_count_steps=None)
    else:
        sess = tf.Session(target, config=config)
        if task == 0:
            sess.run(tf.global_variables_initializer())
        else:
            while len(sess.run(tf.report_uninitialized_variables())):
                time.sleep(0.05)
    with sess:
        for _ in range(10):
            sess.run(train, {x: xs, y: ys})
        first = sess.run(step)
        start = time.perf_counter()
        # sync: the chief's step needs both workers' gradients, so the other
        # worker never stops by itself (if it left first, the chief's last step
        # would wait for ever); the parent kills it once the chief has counted.
        keep_going = sync and task != 0
        while keep_going or time.perf_counter() - start < seconds:
            sess.run(train, {x: xs, y: ys})
        print(json.dumps({"first": int(first), "last": int(sess.run(step)),
                          "seconds": time.perf_counter() - start}), flush=True)
        if sync:
            # The other worker may be waiting for this one's next gradient:
            # leave without closing (the parent kills it).
            os._exit(0)


def cluster_steps_per_second(engine, compression="", sync=False):
    """Global steps per second: the median of DIST_RUNS runs, each on a new cluster."""
    return statistics.median(_cluster_run(engine, compression, sync) for _ in range(DIST_RUNS))


def _cluster_run(engine, compression, sync):
    cluster = {"ps": ["localhost:%d" % free_port()],
               "worker": ["localhost:%d" % free_port() for _ in range(2)]}
    python = sys.executable if engine == "minitf" else os.environ["MINITF_TF_PYTHON"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    servers = [subprocess.Popen([python, __file__, "--serve", engine, json.dumps(cluster),
                                 job, str(i)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
               for job in ("ps", "worker") for i in range(len(cluster[job]))]
    workers = []
    try:
        wait_for_ports(cluster["ps"] + cluster["worker"])
        workers = [subprocess.Popen([python, __file__, "--worker", engine, json.dumps(cluster),
                                     str(i), compression, str(DIST_SECONDS),
                                     "sync" if sync else "async"], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for i in range(2)]
        outs = []
        for w in workers[:1] if sync else workers:   # sync: the chief's count
            out, err = w.communicate(timeout=300)
            if w.returncode != 0:
                raise RuntimeError(err[-2000:])
            outs.append(json.loads(out.strip().splitlines()[-1]))
        for w in workers:
            if w.poll() is None:
                w.kill()
            w.communicate()
        steps = max(o["last"] for o in outs) - min(o["first"] for o in outs)
        return steps / max(o["seconds"] for o in outs)
    finally:
        for p in workers + servers:     # a worker too, if the run failed or timed out
            if p.poll() is None:
                p.kill()
            p.wait()


def main():
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
        return
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
               float(sys.argv[6]), sys.argv[7] == "sync")
        return
    if sys.argv[1:] == ["--local", "tf"]:
        print(json.dumps(local_steps_per_second(_engine("tf"))))
        return
    real = os.environ.get("MINITF_TF_PYTHON")
    rows = [("local, one session", local_steps_per_second(_engine("minitf")), None)]
    if real:
        rows[0] = (rows[0][0], rows[0][1], run_under_tf(__file__, ("--local", "tf"), 600))
    rows.append(("async 1 ps + 2 workers", cluster_steps_per_second("minitf"),
                 cluster_steps_per_second("tf") if real else None))
    rows.append(("sync (SyncReplicasOptimizer)", cluster_steps_per_second("minitf", sync=True),
                 cluster_steps_per_second("tf", sync=True) if real else None))
    rows.append(("async, bfloat16 transfers", cluster_steps_per_second("minitf", "bfloat16"),
                 None))
    rows.append(("async, int8 transfers", cluster_steps_per_second("minitf", "int8"), None))
    print("2-layer MLP, batch %d, %d -> %d -> %d, steps per second (median)"
          % (BATCH, FEATURES, HIDDEN, CLASSES))
    print("%-30s %10s %10s" % ("", "minitf", "real TF"))
    for label, mine, theirs in rows:
        print("%-30s %10.0f %10s" % (label, mine, "%.0f" % theirs if theirs else "n/a"))


if __name__ == "__main__":
    main()
