"""Queue throughput: rows per second through enqueue_many / dequeue_many.

One producer thread runs ``enqueue_many`` of 1,000 float32 rows, one consumer
runs ``dequeue_many(1000)``, for ROUNDS rounds: through a FIFOQueue locally
and through one on a server in another process (minitf: LocalCluster; TF: a
tf.train.Server in a subprocess), then locally through the other kinds of
queue (a RandomShuffleQueue that keeps 1,000 rows, a PaddingFIFOQueue, a
PriorityQueue with an int64 priority per row). The same program runs on real
TensorFlow when MINITF_TF_PYTHON (or the oracle venv) is there, and its figure
is printed beside ours. Each figure is the median of REPEATS runs (2 noisy
cores: compare the ratios).

    python3 tests/benchmarks/bench_queues.py [--rounds N] [--width W] [--repeats R]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

ROWS = 1000
KINDS = ("fifo", "shuffle", "padding", "priority")
LABELS = {"fifo": "FIFOQueue", "shuffle": "RandomShuffleQueue", "padding": "PaddingFIFOQueue",
          "priority": "PriorityQueue"}


def _queue(tf, kind, width):
    if kind == "fifo":
        return tf.FIFOQueue(4 * ROWS, tf.float32, shapes=[[width]], shared_name="bench_q")
    if kind == "shuffle":
        return tf.RandomShuffleQueue(4 * ROWS, ROWS, tf.float32, shapes=[[width]], seed=1,
                                     shared_name="bench_q")
    if kind == "padding":
        return tf.PaddingFIFOQueue(4 * ROWS, tf.float32, shapes=[[None]], shared_name="bench_q")
    return tf.PriorityQueue(4 * ROWS, [tf.float32], shapes=[[width]], shared_name="bench_q")


def measure(tf, target, rounds, width, kind="fifo"):
    g = tf.Graph()
    with g.as_default():
        q = _queue(tf, kind, width)
        rows = tf.placeholder(tf.float32, [ROWS, width])
        if kind == "priority":
            priorities = tf.placeholder(tf.int64, [ROWS])
            put = q.enqueue_many([priorities, rows])
        else:
            put = q.enqueue_many([rows])
        take = q.dequeue_many(ROWS)
    data = np.random.rand(ROWS, width).astype(np.float32)
    feed = {rows: data}
    if kind == "priority":
        feed[priorities] = np.random.RandomState(0).randint(0, 100, ROWS).astype(np.int64)
    first = (lambda out: out[1]) if kind == "priority" else (lambda out: out)
    with tf.Session(target, graph=g) as prod, tf.Session(target, graph=g) as cons:
        share = prod if not target else None   # a local queue is private to a session
        cons = share or cons
        prod.run(put, feed)                     # warm up both paths
        if kind == "shuffle":
            prod.run(put, feed)                 # it keeps ROWS rows back
        cons.run(take)
        errors = []

        def producer():
            try:
                for _ in range(rounds):
                    prod.run(put, feed)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        t = threading.Thread(target=producer)
        start = time.perf_counter()
        t.start()
        total = 0
        for _ in range(rounds):
            total += first(cons.run(take)).shape[0]
        t.join()
        elapsed = time.perf_counter() - start
        assert not errors, errors
    return total / elapsed


def _median(fn, repeats):
    return statistics.median(fn() for _ in range(repeats))


def _figures(tf, local_fn, remote_target, rounds, width, repeats):
    out = {"fifo-local": _median(lambda: local_fn("fifo"), repeats),
           "fifo-remote": _median(lambda: measure(tf, remote_target, rounds, width), repeats)}
    for kind in KINDS[1:]:
        out[kind + "-local"] = _median(lambda kind=kind: local_fn(kind), repeats)
    return out


def run_engine(engine, rounds, width, repeats):
    """Every figure for one engine, in this process (servers in subprocesses)."""
    if engine == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        port_file = "/tmp/_bench_queues_tf_port_%d" % os.getpid()
        script = ("import os,sys,time;os.environ['TF_CPP_MIN_LOG_LEVEL']='2';"
                  "import tensorflow.compat.v1 as tf;tf.disable_v2_behavior();"
                  "s=tf.train.Server.create_local_server();"
                  "open(%r,'w').write(s.target);time.sleep(600)" % port_file)
        if os.path.exists(port_file):
            os.remove(port_file)
        proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                if os.path.exists(port_file) and open(port_file).read():
                    break
                time.sleep(0.1)
            target = open(port_file).read()
            return _figures(tf, lambda kind: measure(tf, "", rounds, width, kind), target,
                            rounds, width, repeats)
        finally:
            proc.kill()
            proc.wait()
            os.remove(port_file)
    import minitf.compat.v1 as tf
    from minitf.distributed.launcher import LocalCluster
    with LocalCluster({"local": 1}, echo=False) as cluster:
        return _figures(tf, lambda kind: measure(tf, "", rounds, width, kind),
                        cluster.target("local"), rounds, width, repeats)


def oracle():
    python = os.environ.get("MINITF_TF_PYTHON")
    default = os.path.expanduser("~/.cache/minitf/tf-venv/bin/python")
    return python or (default if os.path.exists(default) else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--engine", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        print(json.dumps(run_engine(args.engine, args.rounds, args.width, args.repeats)))
        return
    ours = run_engine("minitf", args.rounds, args.width, args.repeats)
    theirs = None
    python = oracle()
    if python:
        out = subprocess.run([python, __file__, "--engine", "tf", "--rounds", str(args.rounds),
                              "--width", str(args.width), "--repeats", str(args.repeats)],
                             capture_output=True, text=True, timeout=1200)
        if out.returncode == 0:
            theirs = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            print("real TF run failed:\n" + out.stderr[-2000:])
    print("enqueue_many / dequeue_many of %d float32 rows of width %d, %d rounds, "
          "median of %d runs" % (ROWS, args.width, args.rounds, args.repeats))
    print("%-36s %16s %16s %8s" % ("", "minitf rows/s", "real TF rows/s", "ratio"))
    rows = [("fifo-local", "FIFOQueue, local session"),
            ("fifo-remote", "FIFOQueue on a server")]
    rows += [(kind + "-local", LABELS[kind] + ", local") for kind in KINDS[1:]]
    for key, label in rows:
        if theirs:
            tf_fig = "%16.0f %7.2fx" % (theirs[key], ours[key] / theirs[key])
        else:
            tf_fig = "%16s" % "(no oracle)"
        print("%-36s %16.0f %s" % (label, ours[key], tf_fig))


if __name__ == "__main__":
    main()
