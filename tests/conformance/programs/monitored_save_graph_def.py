# MonitoredTrainingSession(save_graph_def=...): with True (TF's default) the
# checkpoint hook writes graph.pbtxt beside the checkpoints; with False it
# does not. The event file's kinds of records and the last checkpoint's step
# are TF's either way.
import os
import tempfile

from engine import tf

for save_graph_def in (True, False):
    d = tempfile.mkdtemp()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        inc = tf.assign_add(step, 1)
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=d, save_checkpoint_steps=2, save_summaries_steps=None,
                save_summaries_secs=None, log_step_count_steps=None,
                save_graph_def=save_graph_def) as sess:
            for _ in range(3):
                sess.run(inc)
    kinds = set()
    for name in os.listdir(d):
        if name.startswith("events"):
            kinds |= {e.WhichOneof("what") for e in tf.train.summary_iterator(os.path.join(d, name))}
    print("save_graph_def=%s: graph.pbtxt %s, events %s, last checkpoint step %s" % (
        save_graph_def, "graph.pbtxt" in os.listdir(d), sorted(kinds),
        tf.train.latest_checkpoint(d).rsplit("-", 1)[1]))
