"""Distributed training with 1 ps + N workers, in the style of TF's mnist_replica.py.

One program, started once per task: the parameter server holds the weights,
every worker trains its own copy of the model on its own batches and sends
its gradients to the ps (between-graph replication). Open three terminals::

    python examples/replica_training.py --job_name=ps --task_index=0
    python examples/replica_training.py --job_name=worker --task_index=0
    python examples/replica_training.py --job_name=worker --task_index=1

(the defaults are ``--ps_hosts=localhost:2222`` and
``--worker_hosts=localhost:2223,localhost:2224``). Worker 0 is the chief: it
initializes the model, the other worker waits for it. Add
``--sync_replicas`` to every worker for synchronous training: a
SyncReplicasOptimizer averages one gradient from each worker per step. The
ps runs until you stop it (Ctrl-C). The data is synthetic: ten classes of
points around ten centres, so the program needs nothing to download.

The program is plain TF1: change the import to
``import tensorflow.compat.v1 as tf`` (and call ``tf.disable_v2_behavior()``)
and it runs on TensorFlow.
"""

import shutil
import tempfile

import numpy as np

import minitf.compat.v1 as tf

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "job name: worker or ps")
flags.DEFINE_integer("task_index", None, "Worker task index, should be >= 0. task_index=0 is "
                     "the master worker task the performs the variable initialization ")
flags.DEFINE_string("ps_hosts", "localhost:2222", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "localhost:2223,localhost:2224",
                    "Comma-separated list of hostname:port pairs")
flags.DEFINE_boolean("sync_replicas", False, "Use the sync_replicas (synchronized replicas) "
                     "mode, wherein the parameter updates from workers are aggregated before "
                     "applied to avoid stale gradients")
flags.DEFINE_integer("replicas_to_aggregate", None, "Number of replicas to aggregate before "
                     "parameter update is applied (sync_replicas mode only; default: "
                     "num_workers)")
flags.DEFINE_integer("hidden_units", 32, "Number of units in the hidden layer of the NN")
flags.DEFINE_integer("train_steps", 200, "Number of (global) training steps to perform")
flags.DEFINE_integer("batch_size", 50, "Training batch size")
flags.DEFINE_float("learning_rate", 0.01, "Learning rate")
flags.DEFINE_string("train_dir", None, "Directory for checkpoints (default: a temporary one)")
FLAGS = flags.FLAGS

FEATURES, CLASSES = 20, 10


def synthetic_data(n, seed):
    """``n`` points around ten fixed centres: features [n, 20], one-hot labels [n, 10]."""
    centres = np.random.RandomState(0).normal(0.0, 2.0, (CLASSES, FEATURES))
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, CLASSES, n)
    features = centres[labels] + rng.normal(0.0, 1.0, (n, FEATURES))
    return features.astype(np.float32), np.eye(CLASSES, dtype=np.float32)[labels]


def main(unused_argv):
    if FLAGS.job_name is None or FLAGS.job_name == "":
        raise ValueError("Must specify an explicit `job_name`")
    if FLAGS.task_index is None or FLAGS.task_index == "":
        raise ValueError("Must specify an explicit `task_index`")
    print("job name = %s" % FLAGS.job_name)
    print("task index = %d" % FLAGS.task_index)

    ps_spec = FLAGS.ps_hosts.split(",")
    worker_spec = FLAGS.worker_hosts.split(",")
    num_workers = len(worker_spec)
    cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
        return

    is_chief = FLAGS.task_index == 0
    worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
    # Variables go to the ps, everything else to this worker.
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device,
                                                  ps_device="/job:ps/cpu:0", cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        hid_w = tf.Variable(tf.truncated_normal([FEATURES, FLAGS.hidden_units],
                                                stddev=1.0 / FEATURES, seed=1), name="hid_w")
        hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([FLAGS.hidden_units, CLASSES],
                                               stddev=1.0 / np.sqrt(FLAGS.hidden_units),
                                               seed=2), name="sm_w")
        sm_b = tf.Variable(tf.zeros([CLASSES]), name="sm_b")

        x = tf.placeholder(tf.float32, [None, FEATURES])
        y_ = tf.placeholder(tf.float32, [None, CLASSES])
        hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
        y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
        cross_entropy = -tf.reduce_mean(tf.reduce_sum(
            y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)), axis=1))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1)),
                                          tf.float32))

        opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
        if FLAGS.sync_replicas:
            replicas_to_aggregate = FLAGS.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=replicas_to_aggregate,
                                                 total_num_replicas=num_workers,
                                                 name="replica_sync_replicas")
        train_step = opt.minimize(cross_entropy, global_step=global_step)

        if FLAGS.sync_replicas:
            local_init_op = opt.chief_init_op if is_chief else opt.local_step_init_op
            ready_for_local_init_op = opt.ready_for_local_init_op
            # The chief's queue runner applies the averaged gradients and hands
            # out the tokens that let every worker start its next step.
            chief_queue_runner = opt.get_chief_queue_runner()
            sync_init_op = opt.get_init_tokens_op()
            release_tokens = opt.get_init_tokens_op(num_workers)
        init_op = tf.global_variables_initializer()

    made_train_dir = FLAGS.train_dir is None
    train_dir = tempfile.mkdtemp() if made_train_dir else FLAGS.train_dir
    if FLAGS.sync_replicas:
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                 local_init_op=local_init_op,
                                 ready_for_local_init_op=ready_for_local_init_op,
                                 recovery_wait_secs=1, global_step=global_step)
    else:
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                 recovery_wait_secs=1, global_step=global_step)
    # This worker talks to the ps and to itself, never to the other workers.
    sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                 device_filters=["/job:ps",
                                                 "/job:worker/task:%d" % FLAGS.task_index])
    if is_chief:
        print("Worker %d: Initializing session..." % FLAGS.task_index)
    else:
        print("Worker %d: Waiting for session to be initialized..." % FLAGS.task_index)
    sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
    print("Worker %d: Session initialization complete." % FLAGS.task_index)
    print("Worker %d: devices %s" % (FLAGS.task_index,
                                     sorted({d.name.rsplit("/", 1)[0]
                                             for d in sess.list_devices()})))
    if FLAGS.sync_replicas and is_chief:
        sess.run(sync_init_op)
        sv.start_queue_runners(sess, [chief_queue_runner])

    features, labels = synthetic_data(5000, seed=100 + FLAGS.task_index)
    val_x, val_y = synthetic_data(1000, seed=7)
    first_xent = sess.run(cross_entropy, {x: val_x, y_: val_y})
    local_step = 0
    while True:
        start = (local_step * FLAGS.batch_size) % (len(features) - FLAGS.batch_size)
        batch = {x: features[start:start + FLAGS.batch_size],
                 y_: labels[start:start + FLAGS.batch_size]}
        _, step = sess.run([train_step, global_step], feed_dict=batch)
        local_step += 1
        if local_step % 50 == 0:
            print("Worker %d: training step %d done (global step: %d)"
                  % (FLAGS.task_index, local_step, step))
        if step >= FLAGS.train_steps:
            break
    if FLAGS.sync_replicas:
        # A worker still waiting for a token of the last step gets one, sees
        # the global step is done and ends too.
        sess.run(release_tokens)
    print("Worker %d: training finished after %d local steps" % (FLAGS.task_index, local_step))
    val_xent, val_accuracy = sess.run([cross_entropy, accuracy], {x: val_x, y_: val_y})
    print("After %d training step(s), validation cross entropy = %g (was %g), accuracy = %g"
          % (FLAGS.train_steps, val_xent, first_xent, val_accuracy))
    sv.stop()
    sess.close()
    if made_train_dir:
        shutil.rmtree(train_dir, ignore_errors=True)


if __name__ == "__main__":
    tf.app.run()
