# Kill -9 the parameter server in the middle of training and start it again:
# the chief's MonitoredTrainingSession notices (UnavailableError or
# AbortedError), creates a new session, restores the newest checkpoint and
# trains on to the last step by itself.
import multiprocessing
import os
import socket
import sys
import tempfile
import time

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(cluster, job):
    from engine import tf
    tf.train.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=0).join()


def wait_for(address, timeout=60.0):
    host, port = address.split(":")
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("server at %s did not come up" % address)


class Watch(tf.train.SessionRunHook):
    """Prints the global step each time a session is (re)created, and reads
    it after every step (``last``)."""

    def __init__(self, step):
        self.step = step
        self.created = 0
        self.last = None

    def after_create_session(self, session, coord):
        self.created += 1
        print("session %d starts at global step %d" % (self.created, session.run(self.step)))

    def after_run(self, run_context, run_values):
        self.last = int(run_context.session.run(self.step))


if __name__ == "__main__":
    cluster = {"ps": ["localhost:%d" % free_port()], "worker": ["localhost:%d" % free_port()]}
    ctx = multiprocessing.get_context("spawn")
    procs = {job: ctx.Process(target=serve, args=(cluster, job), daemon=True)
             for job in ("ps", "worker")}
    for p in procs.values():
        p.start()
    try:
        for addresses in cluster.values():
            wait_for(addresses[0])
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                      cluster=cluster)):
            w = tf.Variable(4.0, name="w")
            step = tf.train.get_or_create_global_step()
            train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w),
                                                                     global_step=step)
        watch = Watch(step)
        with tempfile.TemporaryDirectory() as ckpt:
            with tf.train.MonitoredTrainingSession(
                    master="grpc://" + cluster["worker"][0], is_chief=True,
                    checkpoint_dir=ckpt, save_checkpoint_steps=10,
                    hooks=[watch, tf.train.StopAtStepHook(last_step=40)]) as sess:
                killed = False
                while not sess.should_stop():
                    sess.run(train)
                    if watch.last == 25 and not killed:
                        killed = True
                        procs["ps"].kill()
                        procs["ps"].join()
                        print("killed the ps after global step 25; newest checkpoint:",
                              os.path.basename(tf.train.latest_checkpoint(ckpt)))
                        time.sleep(1.0)
                        procs["ps"] = ctx.Process(target=serve, args=(cluster, "ps"),
                                                  daemon=True)
                        procs["ps"].start()
                print("training stopped at global step", watch.last)
            print("newest checkpoint:", os.path.basename(tf.train.latest_checkpoint(ckpt)))
        print("servers alive:", sorted(job for job, p in procs.items() if p.is_alive()))
    finally:
        for p in procs.values():
            p.terminate()
            p.join(10)
