# What a chief Supervisor with a logdir writes, as TF: graph.pbtxt, and an
# event file with the graph, the meta graph and START/STOP session logs (the
# START at the global step the session began with). Summaries and timed
# checkpoints are off, so the files do not depend on timing.
import glob
import os
import tempfile

from engine import tf

logdir = tempfile.mkdtemp()
with tf.Graph().as_default():
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(1.0, name="x")
    train = tf.group(tf.assign_add(x, 1.0), tf.assign_add(step, 1))
    sv = tf.train.Supervisor(logdir=logdir, save_summaries_secs=0, save_model_secs=0)
    print("default summary writer:", type(sv.summary_writer).__name__)
    with sv.managed_session("") as sess:
        for _ in range(3):
            sess.run(train)
        print("x after 3 steps:", sess.run(x))
print("files:", sorted(name.split(".")[0] for name in os.listdir(logdir)))
with open(os.path.join(logdir, "graph.pbtxt")) as f:
    text = f.read()
print("graph.pbtxt names the variable x:", 'name: "x"' in text)
for path in glob.glob(os.path.join(logdir, "events.*")):
    for event in tf.train.summary_iterator(path):
        kind = event.WhichOneof("what")
        detail = ""
        if kind == "session_log":
            detail = tf.SessionLog.SessionStatus.Name(event.session_log.status)
        if kind == "graph_def":
            graph_def = tf.GraphDef.FromString(event.graph_def)
            detail = "has x: %s" % any(n.name == "x" for n in graph_def.node)
        if kind == "meta_graph_def":
            meta = tf.MetaGraphDef.FromString(event.meta_graph_def)
            detail = "saver_def filename tensor: %s" % meta.saver_def.filename_tensor_name
        print(kind, event.step, detail)

