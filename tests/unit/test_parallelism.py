"""In-graph replication, model parallelism and one net per device, on two
CPU devices of one local session."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf import datasets
from minitf.train.parallel import (average_gradients, in_graph_replicas,
                                   independent_models, split_mlp)

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})
DEVICES = ["/cpu:0", "/cpu:1"]


def test_spiral_dataset_shapes_and_balance():
    x, y = datasets.spiral(points_per_class=50, classes=3, seed=1)
    assert x.shape == (150, 2) and x.dtype == np.float32 and y.dtype == np.int32
    assert np.bincount(y).tolist() == [50, 50, 50]
    assert np.abs(x).max() <= 1.5
    x2, _ = datasets.spiral(points_per_class=50, classes=3, seed=1)
    assert np.array_equal(x, x2)


def test_average_gradients_is_the_mean_per_variable():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0)
        avg = average_gradients([[(tf.constant(1.0), v)], [(tf.constant(3.0), v)]])
        with tf.Session() as sess:
            assert sess.run(avg[0][0]) == 2.0 and avg[0][1] is v


def test_two_towers_give_the_full_batch_step():
    x_np, y_np, _, _ = datasets.linear_regression(n=64, seed=3)

    def make_variables():
        return {"w": tf.Variable(tf.zeros([3, 1]), name="w"),
                "b": tf.Variable(0.0, name="b")}

    def build_loss(params, x, y):
        return tf.reduce_mean(tf.square(tf.matmul(x, params["w"]) + params["b"] - y))

    results = []
    for towers in (DEVICES, DEVICES[:1]):
        g = tf.Graph()
        with g.as_default():
            x = tf.constant(x_np)
            y = tf.constant(y_np)
            train, losses, params = in_graph_replicas(
                make_variables, build_loss, [x, y], towers,
                tf.train.GradientDescentOptimizer(0.5))
            md = tf.RunMetadata()
            with tf.Session(config=TWO_CPUS) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(20):
                    sess.run(train, run_metadata=md)
                results.append(sess.run(params["w"]).ravel())
            used_second_cpu = any(d.endswith("CPU:1") for d in md.placement.values())
            assert used_second_cpu == (len(towers) == 2)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def _train_split_mlp(devices):
    x_np, y_np = datasets.spiral(points_per_class=60, classes=3, seed=0)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(x_np)
        logits = split_mlp(x, [32, 32, 3], devices)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=tf.constant(y_np), logits=logits)
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        md = tf.RunMetadata()
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(150):
                sess.run(train, run_metadata=md)
            return first, sess.run(loss), md


def test_model_parallel_mlp_splits_layers_and_learns():
    first, last, md = _train_split_mlp(DEVICES)
    assert md.placement["layer_0/kernel"].endswith("CPU:0")
    assert md.placement["layer_1/kernel"].endswith("CPU:1")
    assert md.placement["layer_2/kernel"].endswith("CPU:0")
    assert last < 0.2 * first
    # Split over two devices running in parallel, the arithmetic is the same
    # as on one device: gradients are gated (GATE_OP), so no weight is
    # updated while a gradient that reads it is still being computed.
    _, last_one_device, _ = _train_split_mlp(DEVICES[:1])
    assert last == last_one_device


def test_independent_models_train_concurrently_like_separately():
    x_np, y_np, _, _ = datasets.linear_regression(n=32, seed=5)
    rates = [0.05, 0.3]

    def build(rate, i):
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x_np), w) - y_np))
        return tf.train.GradientDescentOptimizer(rate).minimize(loss), loss

    g = tf.Graph()
    with g.as_default():
        train_all, losses = independent_models(build, rates, DEVICES)
        md = tf.RunMetadata()
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(30):
                sess.run(train_all, run_metadata=md)
            together = sess.run(losses)
    assert md.placement["model_0/w"].endswith("CPU:0")
    assert md.placement["model_1/w"].endswith("CPU:1")
    alone = []
    for rate in rates:
        g = tf.Graph()
        with g.as_default():
            train, loss = build(rate, 0)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(30):
                    sess.run(train)
                alone.append(sess.run(loss))
    assert together == pytest.approx(alone, rel=1e-5)
    assert together[1] < together[0]          # the search found the better rate


def test_colocate_gradients_with_ops_keeps_each_gradient_on_its_layers_device():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.ones((4, 3), np.float32))
        logits = split_mlp(x, [5, 2], DEVICES)
        loss = tf.reduce_sum(logits)
        opt = tf.train.GradientDescentOptimizer(0.1)
        train = opt.minimize(loss, colocate_gradients_with_ops=True)
        md = tf.RunMetadata()
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, run_metadata=md)
    grad_of_layer_1 = [n for n in md.placement if n.startswith("gradients/layer_1/MatMul_grad/")
                       and "gate" not in n]
    assert grad_of_layer_1
    assert all(md.placement[n].endswith("CPU:1") for n in grad_of_layer_1)
