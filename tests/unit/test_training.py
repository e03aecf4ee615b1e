"""Training pieces on their own: layers, losses, device setter strategies,
Saver, MonitoredSession and its hooks, the conditional accumulator."""

import logging
import os
import threading

import numpy as np
import pytest

import minitf.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_dense_layer_variables_shapes_and_gradients():
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
    out = tf.layers.dense(h, 3)
    names = [v.op.name for v in tf.trainable_variables()]
    assert names == ["hidden/kernel", "hidden/bias", "dense/kernel", "dense/bias"]
    assert out.shape.as_list() == [None, 3]
    loss = tf.losses.sparse_softmax_cross_entropy(labels=tf.constant([0, 2]), logits=out)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    grads = tf.gradients(loss, tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k = sess.run(tf.trainable_variables()[0])
        limit = np.sqrt(6.0 / (4 + 8))
        assert np.all(np.abs(k) <= limit) and k.std() > 0
        values = sess.run(grads, {x: np.ones((2, 4), np.float32)})
        assert [v.shape for v in values] == [(4, 8), (8,), (8, 3), (3,)]


def test_mean_squared_error_value():
    loss = tf.losses.mean_squared_error(labels=tf.constant([1.0, 2.0]),
                                        predictions=tf.constant([2.0, 4.0]))
    with tf.Session() as sess:
        assert sess.run(loss) == pytest.approx(2.5)


def test_greedy_load_balancing_puts_variables_on_the_lightest_ps():
    greedy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
        big = tf.Variable(tf.zeros([1000]), name="big")
        small1 = tf.Variable(tf.zeros([10]), name="small1")
        small2 = tf.Variable(tf.zeros([10]), name="small2")
        medium = tf.Variable(tf.zeros([500]), name="medium")
    assert [v.device for v in (big, small1, small2, medium)] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:1"]
    assert tf.train.byte_size_load_fn(big.op) == 4000


def test_saver_round_trip_latest_checkpoint_and_max_to_keep(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    s = tf.Variable(b"hello", name="s")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            sess.run(v.assign_add([1.0, 1.0]))
            sess.run(step.assign(i + 1))
            saver.save(sess, prefix, global_step=step)
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-3"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-2.meta",
                                            "model.ckpt-2.npz", "model.ckpt-3.meta",
                                            "model.ckpt-3.npz"]
    with tf.Session() as sess:
        saver.restore(sess, prefix + "-2")
        assert sess.run(v).tolist() == [3.0, 4.0]
        assert sess.run(s) == b"hello"
        assert sess.run(step) == 2
        # TF's error for a checkpoint that is not there (or max_to_keep deleted)
        with pytest.raises(ValueError, match="not a valid checkpoint: .*model.ckpt-9"):
            saver.restore(sess, prefix + "-9")


def test_monitored_session_stops_at_step_and_checkpoints(tmp_path):
    w = tf.Variable(5.0, name="w")
    loss = tf.square(w)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    seen = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=10,
                                           hooks=[tf.train.StopAtStepHook(last_step=25)]
                                           ) as sess:
        while not sess.should_stop():
            seen.append(sess.run([train, step])[1])
    assert seen[-1] == 25 and len(seen) == 25
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-25")
    # A new chief restores instead of initializing.
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(num_steps=5)]
                                           ) as sess:
        assert sess.run(step) == 25
        while not sess.should_stop():
            sess.run(train)
        # As in TF, a stopped MonitoredSession runs nothing more.
        with pytest.raises(RuntimeError, match="should_stop requested"):
            sess.run(step)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-30")


def test_out_of_range_ends_a_monitored_session_quietly():
    q = tf.FIFOQueue(5, tf.float32, shapes=[[]])
    fill = q.enqueue_many([[1.0, 2.0]])
    close = q.close()
    take = q.dequeue()
    tf.train.get_or_create_global_step()
    got = []
    with tf.train.MonitoredTrainingSession() as sess:
        sess.run([fill])
        sess.run(close)
        while not sess.should_stop():
            got.append(sess.run(take))
    assert got == [1.0, 2.0]


def test_non_chief_logs_while_waiting_for_the_chief(caplog, fresh_graph):
    caplog.set_level(logging.INFO, logger="tensorflow")
    server = tf.train.Server.create_local_server()
    try:
        v = tf.Variable(1.0, name="v")
        tf.train.get_or_create_global_step()
        init = tf.global_variables_initializer()
        timer = threading.Timer(0.8, lambda: tf.Session(server.target,
                                                        graph=fresh_graph).run(init))
        timer.start()
        creator = tf.train.WorkerSessionCreator(master=server.target)
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            assert sess.run(v) == 1.0
        timer.join()
        lines = [r.getMessage() for r in caplog.records if r.name == "tensorflow"
                 and r.getMessage().startswith("Waiting for model to be ready.")]
        assert lines and lines[0] == ("Waiting for model to be ready.  Ready_for_local_init_op:"
                                      "  Variables not initialized: v, global_step, ready: None")
    finally:
        server.stop()


def test_conditional_accumulator_averages_and_drops_stale():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="acc")
    g = tf.placeholder(tf.float32, [2])
    local = tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(g, local_step=local)
    take = acc.take_grad(2)
    count = acc.num_accumulated()
    set_step = acc.set_global_step(tf.constant(3, tf.int64))
    with tf.Session() as sess:
        sess.run(apply, {g: [1.0, 2.0], local: 0})
        sess.run(apply, {g: [3.0, 4.0], local: 0})
        assert sess.run(count) == 2
        assert sess.run(take).tolist() == [2.0, 3.0]
        sess.run(set_step)
        sess.run(apply, {g: [9.0, 9.0], local: 1})     # stale: dropped
        assert sess.run(count) == 0
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(take, options=tf.RunOptions(timeout_in_ms=200))
        summary = [r for c in sess._runtime.resource_managers().values()
                   for res in c.containers().values() for r in res.values()][0].summary()
        assert summary["dropped_stale"] == 1 and summary["accepted"] == 2
