# A monitored session resumes from its checkpoint_dir: StopAtStepHook decides
# after a step (so asking again for the step already reached runs one more),
# hooks see the global step as it was *before* the step (a copy read at the
# start of the step: the checkpoints of save_steps=N land on multiples of N),
# and the restored run's Saver takes over the checkpoints the previous run
# kept (max_to_keep counts them). Also the global-step read tensor hooks use.
import os
import tempfile

import numpy as np
from engine import tf

rng = np.random.RandomState(0)
data_x = rng.uniform(-1, 1, size=(32, 1)).astype(np.float32)
data_y = (3.0 * data_x - 2.0 + 0.1 * rng.randn(32, 1)).astype(np.float32)


def build():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 1], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable([[0.5]], name="w")
        b = tf.Variable([0.0], name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return graph, train, {x: data_x, y: data_y}, loss


class Steps(tf.train.SessionRunHook):
    def begin(self):
        self.step = tf.train.get_global_step()
        self.seen = []

    def after_run(self, run_context, run_values):
        self.seen.append(int(run_context.session.run(self.step)))


def kept(directory):
    return [os.path.basename(p) for p in
            tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths]


def train(directory, hooks, **kwargs):
    graph, op, feed, _ = build()
    steps = Steps()
    with graph.as_default():
        with tf.train.MonitoredTrainingSession(
                hooks=hooks + [steps], save_summaries_steps=None, save_summaries_secs=None,
                log_step_count_steps=None, **kwargs) as mon:
            while not mon.should_stop():
                mon.run(op, feed)
        print("  ran", len(steps.seen), "steps:", steps.seen[:2], "...", steps.seen[-1:])
    return graph


d = tempfile.mkdtemp()
for last in (30, 30, 50):
    print("last_step", last)
    train(d, [tf.train.StopAtStepHook(last_step=last)], checkpoint_dir=d,
          save_checkpoint_steps=10)
    print("  latest", os.path.basename(tf.train.latest_checkpoint(d)), "kept", kept(d))
print("w at 50: %.4f" % tf.train.load_variable(d, "w")[0, 0])

e = tempfile.mkdtemp()
graph = train(e, [tf.train.StopAtStepHook(num_steps=12),
                  tf.train.CheckpointSaverHook(e, save_steps=5)])
print("CheckpointSaverHook(save_steps=5):", kept(e))
print("w at 12: %.4f" % tf.train.load_variable(e, "w")[0, 0])
reads = [t for t in graph.get_collection("global_step_read_op_cache")]
print("global step read:", [(t.name, t.dtype.name) for t in reads])
