"""The random ops wired to TF's streams: state per op and session, devices, queues.

The numbers themselves are compared with live TF by the conformance programs
(tests/conformance/programs/random_*.py) and, kernel by kernel, by
test_philox.py; here: what the runtime adds. A stream lives as long as its
session, on whichever task or device runs the op; a virtual GPU draws the
CPU's numbers, through the CUDA kernels too (under numba's simulator); the
session's intra-op thread count reaches Multinomial's work split; a
RandomShuffleQueue restores and redraws as TF's does.
"""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import errors
from minitf.kernels import random_streams as rs
from minitf.kernels.random_streams import PhiloxWords, ShuffleQueuePicker
from minitf.ops import queues
from minitf.runtime.step import StepState

GPU_CONFIG = dict(device_count={"GPU": 1})


def _draws(device=None, config=None, runs=2):
    """Two draws of a few random ops in one session, and a first one in another."""
    g = tf.Graph()
    with g.as_default(), g.device(device):
        tf.set_random_seed(1)
        ops = [tf.random_uniform([3, 4]), tf.random_uniform([5], -1.0, 1.0, dtype=tf.float64),
               tf.random_uniform([6], dtype=tf.float16),
               tf.random_normal([7]), tf.truncated_normal([2, 3], dtype=tf.float64),
               tf.random_uniform([5], -9, 9, dtype=tf.int32),
               tf.random_uniform([3], -2**40, 2**40, dtype=tf.int64)]
    with tf.Session(graph=g, config=config) as sess:
        first = [sess.run(ops) for _ in range(runs)]
    with tf.Session(graph=g, config=config) as sess:
        again = sess.run(ops)
    return first, again


def test_a_stream_continues_in_its_session_and_restarts_in_a_new_one():
    (first, second), again = _draws()
    for a, b, c in zip(first, second, again):
        assert not np.array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_a_second_run_is_tfs_second_draw():
    # random_uniform([3, 4]) reserves 256 blocks per element: the second run
    # starts 12 * 256 blocks into the stream (TF's ReserveRandomOutputs).
    (first, second), _ = _draws()
    gen = rs.GuardedPhiloxRandom(1, 0)
    np.testing.assert_array_equal(first[0], rs.random_uniform(gen, [3, 4], np.float32))
    np.testing.assert_array_equal(second[0], rs.random_uniform(gen, [3, 4], np.float32))
    assert gen.position.counter == 2 * 12 * 256


def test_fetching_a_random_tensor_twice_in_one_run_draws_once():
    with tf.Graph().as_default():
        r = tf.random_uniform([4], seed=3)
        doubled = r * 2.0
        with tf.Session() as sess:
            a, b, c = sess.run([r, r, doubled])
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(c, a * 2)


def test_a_virtual_gpu_draws_the_cpus_numbers():
    cpu = _draws()
    gpu = _draws("/device:GPU:0", tf.ConfigProto(**GPU_CONFIG))
    for xs, ys in zip(cpu[0] + [cpu[1]], gpu[0] + [gpu[1]]):
        for x, y in zip(xs, ys):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


def test_the_cuda_kernels_draw_the_cpus_numbers_under_the_simulator():
    # A virtual GPU under NUMBA_ENABLE_CUDASIM runs small ops through the CUDA
    # kernels (minitf/kernels/cuda/random.py): counted, then compared.
    script = textwrap.dedent("""
        import numpy as np
        import minitf.compat.v1 as tf
        from minitf.kernels.cuda import random as cuda_random
        launched = []
        for name in ("uniform", "normal", "truncated_normal", "uniform_int"):
            def counted(*args, _f=getattr(cuda_random, name), _n=name):
                launched.append(_n)
                return _f(*args)
            setattr(cuda_random, name, counted)
        def draw(device, config=None):
            g = tf.Graph()
            with g.as_default(), g.device(device):
                ops = [tf.random_uniform([3, 5], seed=1), tf.random_normal([9], seed=2),
                       tf.truncated_normal([6], seed=3, dtype=tf.float64),
                       tf.random_uniform([4], 0, 7, dtype=tf.int32, seed=4),
                       tf.random_uniform([200, 200], seed=5)]
            with tf.Session(graph=g, config=config) as sess:
                return sess.run(ops) + sess.run(ops)
        cpu = draw(None)
        gpu = draw("/device:GPU:0", tf.ConfigProto(device_count={"GPU": 1}))
        for i, (a, b) in enumerate(zip(cpu, gpu)):
            if a.dtype.kind in "iu" or i % 5 in (0, 4):
                assert np.array_equal(a, b), i
            else:
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        print(sorted(set(launched)), launched.count("uniform"))
        """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    # 40,000 elements are too many for the simulator: only the small uniform
    # went through CUDA (twice), the big one took the CPU kernels.
    assert out.stdout.split("\n")[0] == \
        "['normal', 'truncated_normal', 'uniform', 'uniform_int'] 2"


def test_shuffle_and_multinomial_have_no_gpu_kernel_as_in_tf():
    for make in (lambda: tf.random_shuffle(tf.range(5), seed=1),
                 lambda: tf.multinomial([[1.0, 2.0]], 3, seed=1)):
        with tf.Graph().as_default():
            with tf.device("/device:GPU:0"):
                t = make()
            with tf.Session(config=tf.ConfigProto(**GPU_CONFIG)) as sess:
                with pytest.raises(errors.InvalidArgumentError, match="Cannot assign a device"):
                    sess.run(t)
            soft = tf.ConfigProto(allow_soft_placement=True, **GPU_CONFIG)
            cpu_only = tf.ConfigProto(allow_soft_placement=True)
            with tf.Session(config=soft) as sess, tf.Session(config=cpu_only) as plain:
                np.testing.assert_array_equal(sess.run(t), plain.run(t))


@pytest.mark.parametrize("threads", [1, 2])
def test_multinomial_splits_its_work_as_tf_does_for_the_sessions_threads(threads):
    # A batch big enough for TF's Shard() to cut: the numbers depend on the cut.
    logits = np.log(np.full((64, 50), 1 / 50.0)).astype(np.float32)
    with tf.Graph().as_default():
        t = tf.multinomial(logits, 300, seed=9)
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            got = sess.run(t)
    want = rs.multinomial(rs.GuardedPhiloxRandom(87654321, 9), logits, 300,
                          num_threads=threads)
    np.testing.assert_array_equal(got, want)
    assert rs.tf_work_shards(64, 50 * (300 * np.log2(50) + 50), 2) != [0]


def _step():
    s = StepState()
    s.deadline = time.monotonic() + 5
    return s


def _ints(taken):
    return taken[0].tolist()


def test_a_random_shuffle_queue_restores_and_redraws_on_close_as_tf():
    # Recorded from TF 2.21: RandomShuffleQueue(10, 0, seed=1), enqueue 1, 2, 3,
    # dequeue_up_to(5) blocks with all three taken; close: TF puts them back
    # (last taken first) and draws all three afresh.
    q = queues.RandomShuffleQueue("q", 10, [tf.int32], [],
                                  picker=ShuffleQueuePicker(87654321, 1))
    q.enqueue((np.array([1, 2, 3], np.int32),), _step())
    out = []
    t = threading.Thread(target=lambda: out.append(_ints(q.dequeue(5, _step(), True))))
    t.start()
    time.sleep(0.2)
    q.close(False, _step())
    t.join(5)
    assert out == [[2, 1, 3]]


def test_a_random_shuffle_queue_takes_word_mod_size_and_fills_the_hole_from_the_end():
    words = PhiloxWords(5, 6)
    expect = list(range(8))
    order = []
    for _ in range(8):
        i = words() % len(expect)
        expect[i], expect[-1] = expect[-1], expect[i]
        order.append(expect.pop())
    q = queues.RandomShuffleQueue("q", 10, [tf.int32], [], picker=ShuffleQueuePicker(5, 6))
    q.enqueue((np.arange(8, dtype=np.int32),), _step())
    assert _ints(q.dequeue(8, _step())) == order


def test_philox_words_are_the_streams_words_in_order():
    from minitf.kernels import reference_random as ref
    w = PhiloxWords(2**40 + 3, 2**63 + 5)
    key, counter = ref.key_counter_from_seeds(2**40 + 3, 2**63 + 5)
    assert [w() for _ in range(11)] == ref.words(key, counter, 11).tolist()
