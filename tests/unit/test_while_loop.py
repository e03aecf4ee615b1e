"""tf.while_loop's executor (runtime/frames.py): frames and iterations,
parallel_iterations, errors and deadlines inside loops, on one thread and on
the thread pools."""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.runtime import frames

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


def _slow_loop():
    """Each iteration multiplies a 600x600 matrix by itself, on a second device
    so the plan runs on the thread pools; the counter does not wait for the
    product, so iteration k+1 could start while k is busy."""
    m = tf.constant(np.random.RandomState(0).rand(600, 600).astype(np.float32) / 600)

    def body(i, acc):
        with tf.device("/cpu:1"):
            p = tf.reduce_sum(tf.matmul(m, m), name="product")
        return i + 1, acc + p
    return tf.while_loop(lambda i, a: i < 6, body, [0, tf.constant(0.0)],
                         parallel_iterations=1)


def test_one_parallel_iteration_runs_the_iterations_one_after_another():
    g = tf.Graph()
    with g.as_default():
        _, total = _slow_loop()
        with tf.Session(config=TWO_CPUS) as s:
            md = tf.RunMetadata()
            s.run(total, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                  run_metadata=md)
    matmuls = [ns for d in md.step_stats.dev_stats for ns in d.node_stats
               if ns.node_name == "while/MatMul"]
    assert len(matmuls) == 6                        # one per iteration
    spans = sorted((ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros)
                   for ns in matmuls)
    assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:])), spans


def _pairing_loop(parallel):
    """Each even iteration dequeues two items, its own and the next
    iteration's: it can finish only if the next iteration runs beside it."""
    q = tf.FIFOQueue(10, tf.int32, shapes=[])

    def body(i, acc):
        enq = q.enqueue(i)
        with tf.control_dependencies([enq]):
            got = tf.cond(tf.equal(i % 2, 0), lambda: tf.reduce_sum(q.dequeue_many(2)),
                          lambda: tf.constant(0))
        return i + 1, acc + got
    return tf.while_loop(lambda i, a: i < 6, body, [0, 0],
                         parallel_iterations=parallel)[1]


@pytest.mark.parametrize("config", [None, TWO_CPUS], ids=["one thread", "thread pools"])
def test_two_parallel_iterations_run_side_by_side(config):
    g = tf.Graph()
    with g.as_default():
        total = _pairing_loop(2)
        with tf.Session(config=config) as s:
            assert s.run(total, options=tf.RunOptions(timeout_in_ms=5000)) == 15


def test_one_parallel_iteration_never_starts_the_next_before_this_one_ends():
    g = tf.Graph()
    with g.as_default():
        total = _pairing_loop(1)
        with tf.Session() as s:
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(total, options=tf.RunOptions(timeout_in_ms=300))


@pytest.mark.parametrize("config", [None, TWO_CPUS], ids=["one thread", "thread pools"])
def test_an_error_in_an_iteration_names_the_op(config):
    g = tf.Graph()
    with g.as_default():
        table = tf.constant([1.0, 2.0, 3.0])

        def body(i, a):
            with tf.device("/cpu:1" if config else "/cpu:0"):
                return i + 1, a + tf.gather(table, i, name="lookup")
        _, total = tf.while_loop(lambda i, a: i < 5, body, [0, tf.constant(0.0)])
        with tf.Session(config=config) as s:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                s.run(total)
    assert "while/lookup" in str(e.value)


@pytest.mark.parametrize("config", [None, TWO_CPUS], ids=["one thread", "thread pools"])
def test_a_loop_that_never_ends_meets_the_deadline(config):
    g = tf.Graph()
    with g.as_default():
        def body(i):
            with tf.device("/cpu:1" if config else "/cpu:0"):
                return i + 1
        forever = tf.while_loop(lambda i: i >= 0, body, [0])
        with tf.Session(config=config) as s:
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(forever, options=tf.RunOptions(timeout_in_ms=300))


def test_one_thread_and_thread_pools_compute_the_same_loop():
    results = []
    for config in (None, TWO_CPUS):
        g = tf.Graph()
        with g.as_default():
            x = tf.constant(1.25)

            def body(i, a):
                with tf.device("/cpu:1" if config else "/cpu:0"):
                    b = tf.tanh(a * x) + tf.cast(i, tf.float32)
                return i + 1, tf.cond(i < 3, lambda: b, lambda: b * 0.5)
            _, out = tf.while_loop(lambda i, a: i < 7, body, [0, tf.constant(0.5)])
            grad = tf.gradients(out, x)[0]
            with tf.Session(config=config) as s:
                results.append(s.run([out, grad]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_frames_and_the_static_order_of_an_iteration():
    g = tf.Graph()
    with g.as_default():
        _, out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0),
                               [0, tf.constant(1.0)], name="loop")
        with tf.Session() as s:
            assert s.run(out) == 8.0
            plan = next(iter(s._runtime.plans.values()))
    layout = plan.frames
    names = {s.op.name: layout.frame_of[i] for i, s in enumerate(plan.nodes)}
    assert names["loop/Enter"] is None                       # runs outside, enters the loop
    assert names["loop/Merge"] == names["loop/Exit_1"] == "loop/while_context"
    order = [plan.nodes[i].op.name for i in layout.order["loop/while_context"]]
    # the Merge first (its back edge does not count), the NextIteration last of its chain
    assert order.index("loop/Merge") < order.index("loop/Switch") < \
        order.index("loop/Identity") < order.index("loop/NextIteration")
    assert ("loop", "loop/while_context") in layout.order[None]


def test_an_exit_outside_a_loop_is_refused():
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        frames.assign_frames([[]], ["exits"], [None], [0], lambda i: "stray/Exit")
    assert "stray/Exit is an Exit outside of any while loop" in str(e.value)


def test_a_loop_whose_counter_is_slow_runs_every_iteration_with_parallel_one():
    """parallel_iterations=1 holds iteration k+1's values until k is done; the
    slow counter's value then arrives after the fast accumulator's. Both must
    enter iteration k+1 before it can be retired (a Merge fires inline: with
    only the accumulator in, iteration k+1 had nothing scheduled and was
    retired half-filled, and the loop never ended)."""
    def body(i, acc):
        with tf.device("/cpu:1"):
            slow = tf.reduce_sum(tf.matmul(m, m))
        return i + 1 + tf.cast(slow * 0.0, tf.int32), acc + 2.0
    g = tf.Graph()
    with g.as_default():
        m = tf.constant(np.random.RandomState(1).rand(300, 300).astype(np.float32) / 300)
        _, total = tf.while_loop(lambda i, a: i < 6, body, [0, tf.constant(0.0)],
                                 parallel_iterations=1)
        with tf.Session(config=TWO_CPUS) as s:
            for _ in range(5):
                assert s.run(total) == 12.0
