# MonitoredSession recreates its session on AbortedError and
# UnavailableError (a task was restarted or is gone) and runs the step
# again; every other error ends run(). Here a hook raises the errors itself,
# so the program needs no cluster.
import os
import tempfile

from engine import tf


class Probe(tf.train.SessionRunHook):
    """Counts the hook calls and raises one error at a chosen global step."""

    def __init__(self, step):
        self.step = step
        self.calls = {"begin": 0, "after_create_session": 0, "end": 0}
        self.to_raise = {}

    def begin(self):
        self.calls["begin"] += 1

    def after_create_session(self, session, coord):
        self.calls["after_create_session"] += 1
        print("  session created at global step", session.run(self.step))

    def end(self, session):
        self.calls["end"] += 1

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.step)

    def after_run(self, run_context, run_values):
        error = self.to_raise.pop(int(run_values.results), None)
        if error is not None:
            print("  raising %s after step %d" % (error.__name__, run_values.results))
            raise error(None, None, "raised by the probe")


with tempfile.TemporaryDirectory() as ckpt:
    w = tf.Variable(1.0, name="w")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=step)
    probe = Probe(step)
    probe.to_raise = {5: tf.errors.DeadlineExceededError, 13: tf.errors.AbortedError,
                      17: tf.errors.FailedPreconditionError, 27: tf.errors.UnavailableError,
                      31: tf.errors.InvalidArgumentError, 33: tf.errors.CancelledError,
                      35: tf.errors.InternalError}
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=10,
                                           hooks=[probe, tf.train.StopAtStepHook(last_step=40)]
                                           ) as sess:
        runs = 0
        while not sess.should_stop():
            try:
                _, g = sess.run([train, step])
            except tf.errors.OpError as e:
                print("  run() raised %s" % type(e).__name__)
            runs += 1
        print("runs:", runs, "last global step seen:", g)
    print("hook calls:", probe.calls)
    print("newest checkpoint:", os.path.basename(tf.train.latest_checkpoint(ckpt)))
