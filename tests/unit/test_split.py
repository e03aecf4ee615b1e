"""minitf.kernels.split: a serial kernel run over parts of its arrays on
several threads at once, and how many parts a fused kernel takes."""

import multiprocessing
import threading

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.kernels import split, threads


def test_bounds_cut_n_into_contiguous_parts_that_cover_it():
    assert split.bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert split.bounds(2, 4) == [(0, 0), (0, 1), (1, 1), (1, 2)]
    assert split.bounds(0, 1) == [(0, 0)]


def test_parts_run_at_once_on_different_threads_and_come_back_in_order(monkeypatch):
    monkeypatch.setattr(split, "cores", lambda: 3)   # up to two helper threads
    parts = 3
    meet = threading.Barrier(parts, timeout=10)   # every part must be running at once

    def part(k):
        meet.wait()
        return k * 10, threading.current_thread().name

    results = split.run(part, [[k] for k in range(parts)])
    assert [r[0] for r in results] == [0, 10, 20]
    names = [r[1] for r in results]
    assert names[0] == threading.current_thread().name
    assert len(set(names)) == parts and all(n.startswith("minitf-split-") for n in names[1:])


def test_a_failing_part_raises_in_the_caller_after_every_part_has_finished():
    finished = []

    def part(k):
        if k == 1:
            raise ValueError("part 1 failed")
        finished.append(k)
        return k

    with pytest.raises(ValueError, match="part 1 failed"):
        split.run(part, [[0], [1], [2]])
    assert sorted(finished) == [0, 2]
    assert split.run(lambda k: -k, [[1], [2]]) == [-1, -2]    # the helpers still serve


def _run_parts_in_child(conn):
    conn.send([(k, name.startswith("minitf-split-")) for k, name in split.run(
        lambda k: (k, threading.current_thread().name), [[0], [1]])])
    conn.close()


def test_a_forked_child_starts_its_own_helpers():
    split.run(lambda k: k, [[0], [1]])             # the parent has helpers now
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_run_parts_in_child, args=(child,))
    p.start()
    try:
        assert parent.poll(20), "the forked child's split.run did not answer"
        assert parent.recv() == [(0, False), (1, True)]
    finally:
        p.join(10)
    assert p.exitcode == 0


def _fused_parts(monkeypatch, config, cores=4, n=1 << 17):
    """How many parts the fused chain's kernel ran in, and its value."""
    counts = []
    real_run = split.run

    def counting_run(fn, arg_lists):
        counts.append(len(arg_lists))
        return real_run(fn, arg_lists)
    monkeypatch.setattr(split, "run", counting_run)
    monkeypatch.setattr(split, "cores", lambda: cores)
    a = np.linspace(-2, 2, n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    with tf.Graph().as_default():
        pa = tf.placeholder(tf.float32, [n])
        pb = tf.placeholder(tf.float32, [n])
        y = tf.reduce_sum(tf.nn.relu(pa * 2.0 + 1.0) - pb)
        with tf.Session(config=config) as sess:
            value = sess.run(y, {pa: a, pb: b})
    want = np.sum(np.maximum(a.astype(np.float64) * 2 + 1, 0) - 0.5)
    np.testing.assert_allclose(value, want, rtol=1e-5)
    return counts


def test_a_large_fused_chain_runs_one_part_per_core(monkeypatch):
    # the suite lowers MINITF_PARALLEL_MIN_SIZE to 64K elements (tests/conftest.py)
    assert _fused_parts(monkeypatch, None) == [4]
    assert _fused_parts(monkeypatch, None, n=1000) == [1]      # small: one part


def test_intra_op_parallelism_threads_caps_the_parts(monkeypatch):
    two = tf.ConfigProto(intra_op_parallelism_threads=2)
    one = tf.ConfigProto(intra_op_parallelism_threads=1)
    assert _fused_parts(monkeypatch, two) == [2]
    assert _fused_parts(monkeypatch, one) == [1]
    # the budget is the session's, not left behind on the thread for the next one
    assert _fused_parts(monkeypatch, None) == [4]


def test_kernels_beside_others_keep_to_one_part(monkeypatch):
    monkeypatch.setattr(split, "cores", lambda: 4)
    threads.set_kernel_threads(0)                      # this thread: no budget
    assert threads.kernel_parts() == 4
    threads.begin_beside()
    try:
        assert threads.kernel_parts() == 1
    finally:
        threads.end_beside()
    with threads.product(1 << 30):
        assert threads.kernel_parts() == 1
    assert threads.kernel_parts() == 4
