# tf.logging and what TF1's training loop logs through it: the "tensorflow"
# logger's records (level and message; the seconds between two
# LoggingTensorHook lines and the temporary directory are replaced).
import logging
import re
import shutil
import tempfile

from engine import tf

print("names:", sorted(n for n in dir(tf.logging) if not n.startswith("_")))
print("levels:", tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
      tf.logging.FATAL)
print("the logger:", tf.get_logger() is logging.getLogger("tensorflow"))

records = []


class Capture(logging.Handler):
    def emit(self, record):
        records.append(record)


logger = logging.getLogger("tensorflow")
logger.addHandler(Capture())
tf.logging.set_verbosity(tf.logging.INFO)
print("after set_verbosity(INFO):", tf.logging.get_verbosity())
logger.propagate = False
for handler in list(logger.handlers):        # keep stderr quiet; the records are printed
    if not isinstance(handler, Capture):
        logger.removeHandler(handler)

workdir = tempfile.mkdtemp()


def show(title):
    print("---", title)
    for r in records:
        if r.levelno < tf.logging.INFO or "is deprecated" in r.getMessage():
            continue   # TF's own deprecation notices
        text = r.getMessage().replace(workdir, "DIR")
        print(r.levelname, "|", re.sub(r"\(\d+\.\d+ sec\)", "(N sec)", text))
    records.clear()


def program(last_step, hooks):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(2.0, name="w")
        loss = tf.square(w - 1.0, name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        all_hooks = [h(loss, step) for h in hooks] + [tf.train.StopAtStepHook(last_step=last_step)]
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=workdir, hooks=all_hooks, save_checkpoint_steps=4,
                save_summaries_steps=None, save_summaries_secs=None,
                log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train)


program(5, [lambda loss, step: tf.train.LoggingTensorHook(
    {"loss": loss, "step": step}, every_n_iter=2)])
show("a first run: LoggingTensorHook every 2 steps, checkpoints every 4")

program(7, [lambda loss, step: tf.train.LoggingTensorHook([loss], every_n_iter=5, at_end=True)])
show("a second run restores step 5")


class Listener(tf.train.CheckpointSaverListener):
    def after_save(self, session, global_step_value):
        print("listener: saved", global_step_value)


with tf.Graph().as_default():
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    tf.Variable(1.0, name="v")
    hook = tf.train.CheckpointSaverHook(workdir + "/listened", save_steps=3,
                                        listeners=[Listener()])
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=4)]) as sess:
        while not sess.should_stop():
            sess.run(train)
show("a CheckpointSaverHook with a listener")

coord = tf.train.Coordinator()
try:
    raise ValueError("the data ran out")
except ValueError as e:
    coord.request_stop(e)
for i in range(4):   # (TF counts every such call of a script together: one call site only)
    tf.logging.log_first_n(tf.logging.INFO, "first_n %d", 2, i)
tf.logging.vlog(1, "hidden at INFO")
tf.logging.warn("warn %s", "works")
show("the coordinator and the module's functions")
shutil.rmtree(workdir)
