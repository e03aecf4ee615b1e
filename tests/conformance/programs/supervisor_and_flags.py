# tf.train.Supervisor for a chief and a worker on one server, restoring from
# logdir, stopping on OutOfRangeError; tf.app.flags and tf.app.run.
import os
import shutil
import tempfile
import threading

from engine import tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 10, "training steps")
flags.DEFINE_boolean("sync", False, "synchronous")
flags.DEFINE_string("job_name", "", "ps or worker")
flags.DEFINE_float("rate", 0.5, "learning rate")
FLAGS = flags.FLAGS

logdir = tempfile.mkdtemp()
server = tf.train.Server.create_local_server()


def build(graph):
    with graph.as_default(), tf.device("/job:localhost/task:0"):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
    return step, w, train


def main(argv):
    print("flags:", FLAGS.steps, FLAGS.sync, FLAGS.job_name, FLAGS.rate, "rest:", argv[1:])
    chief_graph, worker_graph = tf.Graph(), tf.Graph()
    step, w, train = build(chief_graph)
    worker_step, worker_w, _ = build(worker_graph)
    with worker_graph.as_default():
        worker_sv = tf.train.Supervisor(is_chief=False, logdir=logdir, recovery_wait_secs=0.2)
    seen = {}

    def worker():
        sess = worker_sv.prepare_or_wait_for_session(server.target)
        seen["w"] = sess.run(worker_w)
        worker_sv.stop()

    with chief_graph.as_default():
        sv = tf.train.Supervisor(is_chief=True, logdir=logdir, save_model_secs=0)
    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    print("chief:", sv.is_chief, "global_step:", sv.global_step.op.name,
          "ready_op:", sv.ready_op.dtype, "saver:", type(sv.saver).__name__,
          "save_path:", os.path.basename(sv.save_path), "finalized:", chief_graph.finalized)
    with sv.managed_session(server.target) as sess:
        for _ in range(FLAGS.steps):
            sess.run(train)
        print("trained: w", sess.run(w), "step", sess.run(step), "should_stop:",
              sv.should_stop())
        sv.saver.save(sess, sv.save_path, global_step=step)
    thread.join(60)
    print("the worker waited, then saw w >= 1:", seen["w"] >= 1.0)
    try:
        tf.train.Supervisor(is_chief=False, graph=_unplaced())
    except ValueError as e:
        print("ValueError:", str(e).startswith("When using replicas, all Variables must have "
                                               "their device set"))

    tf.Session.reset(server.target)
    again = tf.Graph()
    step, w, train = build(again)
    with again.as_default():
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0)
        with sv.managed_session(server.target) as sess:
            print("restored from logdir: w", sess.run(w), "step", sess.run(step))
        print("should_stop after the block:", sv.should_stop())

    drained = tf.Graph()
    with drained.as_default():
        q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
        fill = q.enqueue_many([[1.0, 2.0, 3.0]])
        close = q.close()
        take = q.dequeue()
        sv = tf.train.Supervisor(logdir=None)
        taken = []
        with sv.managed_session() as sess:
            sess.run(fill)
            sess.run(close)
            while not sv.should_stop():
                taken.append(float(sess.run(take)))
        print("OutOfRangeError ended the loop quietly:", taken, sv.should_stop())
    shutil.rmtree(logdir)
    server.stop() if hasattr(server, "stop") else None


def _unplaced():
    graph = tf.Graph()
    with graph.as_default():
        tf.Variable(0.0, name="nowhere")
    return graph


tf.app.run(main, argv=["program", "--steps=3", "--nosync", "--job_name", "worker", "rest"])
