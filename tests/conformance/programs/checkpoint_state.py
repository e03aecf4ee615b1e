# Checkpoints and the `checkpoint` state file: Saver's ops and SaverDef, saves
# with max_to_keep, the text of the state file, get_checkpoint_state,
# latest_checkpoint, checkpoint_exists, list_variables, load_variable, and
# what restoring a checkpoint max_to_keep deleted raises.
import os
import tempfile


from engine import tf

root = tempfile.mkdtemp()
os.chdir(root)             # relative paths too, as a learner writes them
os.makedirs("ckpt")


def show(path):
    return None if path is None else path.replace(root, "<dir>")


w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
b = tf.Variable(0.5, name="b")
step = tf.train.get_or_create_global_step()
bump = tf.group(tf.assign_add(w, tf.ones([2, 2])), tf.assign_add(step, 1))
saver = tf.train.Saver(max_to_keep=2)
print(saver.saver_def)
for op in tf.get_default_graph().get_operations():
    if op.name.startswith("save/"):
        print(op.name, op.type, [i.name for i in op.inputs], repr(op.device))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(4):
        sess.run(bump)
        print("saved", show(saver.save(sess, "ckpt/model.ckpt", global_step=step)))
    print("last_checkpoints", saver.last_checkpoints)
    print("no step:", show(saver.save(sess, os.path.join(root, "ckpt", "final"))))
with open("ckpt/checkpoint") as f:
    print("--- ckpt/checkpoint ---")
    print(show(f.read()))
state = tf.train.get_checkpoint_state("ckpt")
print(type(state).__name__)
print(show(str(state)))
print("latest:", show(tf.train.latest_checkpoint("ckpt")))
for p in ["ckpt/model.ckpt-1", "ckpt/model.ckpt-3", "ckpt/model.ckpt-4", "ckpt/final"]:
    print("exists", p, tf.train.checkpoint_exists(p))
print("list_variables:", tf.train.list_variables("ckpt/model.ckpt-4"))
print("load_variable w:", tf.train.load_variable("ckpt/model.ckpt-4", "w").tolist())
print("load_variable from dir:", tf.train.load_variable("ckpt", "global_step"))

with tf.Session() as sess:
    saver.restore(sess, "ckpt/model.ckpt-4")
    print("restored", sess.run(w).tolist(), sess.run(b), sess.run(step))
    for gone in ["ckpt/model.ckpt-1", "ckpt/nothing"]:
        try:
            saver.restore(sess, gone)
        except Exception as e:
            print("restore", gone, type(e).__name__, show(str(e)))
    try:
        saver.restore(sess, None)
    except ValueError as e:
        print("restore None: ValueError", e)

# The state file written by hand, and its rules for relative paths.
tf.train.update_checkpoint_state("ckpt", "ckpt/model.ckpt-4", ["ckpt/model.ckpt-3"])
print(show(open("ckpt/checkpoint").read()))
print(show(str(tf.train.generate_checkpoint_state_proto(
    os.path.join(root, "ckpt"), "a", ["b", "a"]))))
print("no dir:", tf.train.get_checkpoint_state("missing"), tf.train.latest_checkpoint("missing"))
with open("ckpt/checkpoint", "w") as f:
    f.write("this is not a checkpoint state")
print("garbage:", tf.train.get_checkpoint_state("ckpt"))
try:
    saver.save(tf.Session(), "nowhere/model")
except ValueError as e:
    print("save into a missing directory: ValueError", show(str(e)))
