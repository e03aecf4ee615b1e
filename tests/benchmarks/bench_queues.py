"""Queue throughput: float32 rows per second through a FIFOQueue.

One producer thread runs ``enqueue_many`` of 1,000 rows, one consumer runs
``dequeue_many(1000)``, for ROUNDS rounds: locally, and through a queue on a
server in another process (minitf: LocalCluster; TF: a tf.train.Server in a
subprocess). The same program runs on real TensorFlow when
MINITF_TF_PYTHON (or the oracle venv) is there, and its figure is printed
beside ours.

    python3 tests/benchmarks/bench_queues.py [--rounds N] [--width W]
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

ROWS = 1000


def measure(tf, target, rounds, width):
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(4 * ROWS, tf.float32, shapes=[[width]], shared_name="bench_q")
        rows = tf.placeholder(tf.float32, [ROWS, width])
        put = q.enqueue_many([rows])
        take = q.dequeue_many(ROWS)
    data = np.random.rand(ROWS, width).astype(np.float32)
    with tf.Session(target, graph=g) as prod, tf.Session(target, graph=g) as cons:
        share = prod if not target else None   # a local queue is private to a session
        cons = share or cons
        prod.run(put, {rows: data})             # warm up both paths
        cons.run(take)
        errors = []

        def producer():
            try:
                for _ in range(rounds):
                    prod.run(put, {rows: data})
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        t = threading.Thread(target=producer)
        start = time.perf_counter()
        t.start()
        total = 0
        for _ in range(rounds):
            total += cons.run(take).shape[0]
        t.join()
        elapsed = time.perf_counter() - start
        assert not errors, errors
    return total / elapsed


def run_engine(engine, rounds, width):
    """Both figures for one engine, in this process (servers in subprocesses)."""
    if engine == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        local = measure(tf, "", rounds, width)
        port_file = "/tmp/_bench_queues_tf_port"
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
            remote = measure(tf, open(port_file).read(), rounds, width)
        finally:
            proc.kill()
            proc.wait()
        return {"local": local, "remote": remote}
    import minitf.compat.v1 as tf
    from minitf.distributed.launcher import LocalCluster
    local = measure(tf, "", rounds, width)
    with LocalCluster({"local": 1}, echo=False) as cluster:
        remote = measure(tf, cluster.target("local"), rounds, width)
    return {"local": local, "remote": remote}


def oracle():
    python = os.environ.get("MINITF_TF_PYTHON")
    default = os.path.expanduser("~/.cache/minitf/tf-venv/bin/python")
    return python or (default if os.path.exists(default) else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--engine", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        print(json.dumps(run_engine(args.engine, args.rounds, args.width)))
        return
    ours = run_engine("minitf", args.rounds, args.width)
    theirs = None
    python = oracle()
    if python:
        out = subprocess.run([python, __file__, "--engine", "tf", "--rounds", str(args.rounds),
                              "--width", str(args.width)], capture_output=True, text=True,
                             timeout=600)
        if out.returncode == 0:
            theirs = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            print("real TF run failed:\n" + out.stderr[-2000:])
    print("FIFOQueue, enqueue_many / dequeue_many of %d float32 rows of width %d, %d rounds"
          % (ROWS, args.width, args.rounds))
    print("%-28s %16s %16s" % ("", "minitf rows/s", "real TF rows/s"))
    for key, label in (("local", "local session"), ("remote", "queue on a server")):
        tf_fig = "%16.0f" % theirs[key] if theirs else "%16s" % "(no oracle)"
        print("%-28s %16.0f %s" % (label, ours[key], tf_fig))


if __name__ == "__main__":
    main()
