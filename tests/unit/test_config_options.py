"""Every ConfigProto / RunOptions field is honoured or refused with a message.

Graph optimizations (constant folding, fusion, opt_level), the thread options
(inter-op pool width, per-session pools, the per-kernel thread budget), the
ones minitf refuses, and the same options on a remote session.
"""

import threading

import numba
import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed.launcher import LocalCluster
from minitf.kernels import threads
from minitf.runtime import executor

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def traced(sess, fetches, feed_dict=None):
    md = tf.RunMetadata()
    value = sess.run(fetches, feed_dict, options=FULL, run_metadata=md)
    return value, sorted(n.node_name for d in md.step_stats.dev_stats for n in d.node_stats)


def folding(on=True, **options):
    return tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(do_constant_folding=on, **options)))


# -- constant folding -----------------------------------------------------------------------------
L0 = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))


def test_constant_folding_computes_constant_subgraphs_once():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, name="x")
        k = tf.add(tf.constant(2.0, name="two") * 3.0, 1.0, name="k")
        y = tf.multiply(x, k, name="y")
        for config in (None, folding(), folding(on=False)):   # on at L1, the default, as in TF
            with tf.Session(config=config) as sess:
                value, ran = traced(sess, y, {x: 2.0})
                # two, mul, k: computed once, at plan time; k, still read, stays as a Const
                assert value == 14.0 and ran == ["k", "y"]
                assert traced(sess, k) == (7.0, ["k"])
        with tf.Session(config=L0) as sess:             # L0: every op runs
            value, ran = traced(sess, y, {x: 2.0})
            assert value == 14.0 and {"two", "k", "y"} <= set(ran)
        # L0 with do_constant_folding=True folds, as TF's GraphOptimizer reads the two fields.
        with tf.Session(config=folding(opt_level=tf.OptimizerOptions.L0)) as sess:
            assert traced(sess, y, {x: 2.0}) == (14.0, ["k", "y"])


def test_folded_values_are_shared_and_read_only_so_fetches_are_copies():
    with tf.Graph().as_default():
        k = tf.add(tf.constant([1.0, 2.0]), 1.0, name="k")
        with tf.Session() as sess:
            first = sess.run(k)
            first += 100.0                               # the caller's own copy
            again, ran = traced(sess, k)
            assert again.tolist() == [2.0, 3.0] and ran == ["k"]


def test_a_read_value_over_10_mib_is_computed_in_every_step():
    with tf.Graph().as_default():
        ramp = tf.range(3 * 2 ** 20, name="ramp")              # 12 MiB of int32
        filled = tf.fill([1024, 1024, 3], 1.0, name="filled")  # 12 MiB, all equal
        ramp1 = tf.add(ramp, 1, name="ramp1")
        total = tf.reduce_sum(ramp, name="total")
        with tf.Session() as sess:
            # Between the constants and the value read, any size folds.
            assert traced(sess, total) == (sum(range(3 * 2 ** 20)) % 2 ** 32 - 2 ** 32, ["total"])
            (fill_value, ramp_value), ran = traced(sess, [filled, ramp1])
            assert fill_value.shape == (1024, 1024, 3) and ramp_value[-1] == 3 * 2 ** 20
            # filled is kept (one element stored); ramp1 and ramp are not: they run, from
            # the Consts that feed ramp.
            assert ran == ["filled", "ramp", "ramp/delta", "ramp/limit", "ramp/start", "ramp1",
                           "ramp1/y"]


def test_stateful_ops_and_variables_never_fold():
    with tf.Graph().as_default():
        r = tf.random_uniform([3], seed=1, name="r") * 2.0
        v = tf.Variable(1.0, name="v")
        w = v * 10.0
        with tf.Session(config=folding()) as sess:
            first, second = sess.run(r), sess.run(r)
            assert not np.array_equal(first, second)     # a new draw each step
            sess.run(v.initializer)
            assert sess.run(w) == 10.0
            sess.run(v.assign(2.0))
            assert sess.run(w) == 20.0                   # reads the variable every step


def test_a_failing_op_is_not_folded_and_fails_in_the_step():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="p")
        y = p + tf.constant([1.0, 2.0])
        with tf.Session(config=folding()) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="You must feed a value for placeholder tensor 'p'"):
                sess.run(y)
            assert sess.run(y, {p: [1.0, 1.0]}).tolist() == [2.0, 3.0]


def test_opt_level_l0_runs_every_op_as_built():
    def ran_with(config):
        with tf.Graph().as_default():
            a = tf.placeholder(tf.float32, [4], name="a")
            y = tf.reduce_sum(tf.nn.relu(a * 2.0 + 1.0), name="total")
            with tf.Session(config=config) as sess:
                md = tf.RunMetadata()
                sess.run(y, {a: np.ones(4, np.float32)}, options=FULL, run_metadata=md)
        return [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
    assert any("[fused:" in label for label in ran_with(None))
    assert not any("[fused:" in label for label in ran_with(L0))
    # Folding asked for at L0 folds (test above), but fusion stays off.
    folded_l0 = folding(opt_level=tf.OptimizerOptions.L0)
    assert not any("[fused:" in label for label in ran_with(folded_l0))


# -- refused options ------------------------------------------------------------------------------
@pytest.mark.parametrize("config,message", [
    (tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(
        do_common_subexpression_elimination=True))),
     "minitf does not support common subexpression elimination"),
    (tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(
        opt_level=2))), r"minitf does not support optimizer_options.opt_level=2"),
    (tf.ConfigProto(graph_options=tf.GraphOptions(infer_shapes=True)),
     "minitf does not support graph_options.infer_shapes"),
    (tf.ConfigProto(inter_op_parallelism_threads=-1),
     "minitf does not support a negative thread count"),
])
def test_options_minitf_cannot_honour_are_refused(config, message):
    with pytest.raises(tf.errors.UnimplementedError, match=message):
        tf.Session(graph=tf.Graph(), config=config)


def test_run_options_inter_op_thread_pool_is_refused():
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.UnimplementedError,
                               match="RunOptions.inter_op_thread_pool=1"):
                sess.run(c, options=tf.RunOptions(inter_op_thread_pool=1))


def test_isolate_session_state_is_local_but_refused_on_a_server():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        config = tf.ConfigProto(isolate_session_state=True)
        with tf.Session(config=config) as a, tf.Session(config=config) as b:
            a.run(v.initializer)
            with pytest.raises(tf.errors.FailedPreconditionError):
                b.run(v)                                 # local sessions never share
        server = tf.train.Server.create_local_server()
        try:
            with pytest.raises(tf.errors.UnimplementedError,
                               match="isolate_session_state on a server"):
                tf.Session(server.target, config=config)
        finally:
            server.stop()


# -- threads ----------------------------------------------------------------------------------------
def test_inter_op_width_and_per_session_pools():
    with tf.Graph().as_default() as g:
        shared = [tf.Session(graph=g, config=tf.ConfigProto(inter_op_parallelism_threads=3))
                  for _ in range(2)]
        own = [tf.Session(graph=g, config=tf.ConfigProto(inter_op_parallelism_threads=3,
                                                         use_per_session_threads=True))
               for _ in range(2)]
        try:
            assert shared[0]._runtime.pools is shared[1]._runtime.pools   # TF's default
            assert own[0]._runtime.pools is not own[1]._runtime.pools
            for s in shared + own:
                assert s._runtime.pools.width == 3
            inter_op, _ = shared[0]._runtime.pools.get()
            assert inter_op.width == 3
        finally:
            for s in shared + own:
                s.close()


def test_intra_op_threads_is_every_kernel_threads_budget():
    seen = {}
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(np.ones(1 << 17, np.float32))
        with tf.device("/cpu:1"):
            b = tf.constant(np.ones(1 << 17, np.float32))
        total = tf.reduce_sum(a) + tf.reduce_sum(b)      # two devices: the pool's threads
        config = tf.ConfigProto(intra_op_parallelism_threads=1, device_count={"CPU": 2})
        with tf.Session(config=config) as sess:
            assert sess.run(total) == 2 * (1 << 17)
            inter_op, _ = sess._runtime.pools.get()
            seen["pool"] = inter_op.call(
                lambda: (threads.kernel_threads(), numba.get_num_threads()))
            seen["caller"] = (threads.kernel_threads(), numba.get_num_threads())
    assert seen["pool"] == (1, 1) and seen["caller"] == (1, 1)


def _threads_of(fetch, config, names):
    """Which thread ran each named op in a traced step, after two steps in
    which the executor timed its expensive ops."""
    md = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fetch)
        sess.run(fetch)
        sess.run(fetch, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
    return {ns.node_name: ns.thread_id for d in md.step_stats.dev_stats
            for ns in d.node_stats if ns.node_name in names}


def _two_products(n):
    # Variables, not constants: a product of constants is folded at plan time.
    a = tf.Variable(np.ones((n, n), np.float32))
    b = tf.Variable(np.full((n, n), 2.0, np.float32))
    return tf.matmul(a, a, name="first") + tf.matmul(b, b, name="second")


_CHAIN_MATRIX = (np.arange(400 * 400, dtype=np.float32).reshape(400, 400) % 7 - 3) / 400


def _two_chains():
    """Two chains of three 400x400 products (a0-a2, b0-b2) that share
    nothing, each summed (sum_a, sum_b), added up (total)."""
    m = _CHAIN_MATRIX
    ends = []
    for chain in "ab":
        x = tf.Variable(m + (chain == "b"))
        for k in range(3):
            x = tf.matmul(x, m, name="%s%d" % (chain, k))
        ends.append(tf.reduce_sum(x, name="sum_" + chain))
    return tf.add(ends[0], ends[1], name="total")


@pytest.mark.parametrize("width", [2, 1])
def test_independent_big_products_on_one_device_go_to_the_pool(width):
    """TF's executor hands ready expensive ops to its inter-op pool whatever
    their device; minitf does the same for products that took long enough
    (a 400x400 one: milliseconds) while another op is ready or running. With
    a one-thread pool all run in the caller's thread."""
    caller = threading.get_ident() % 100000        # how the trace names a thread
    with tf.Graph().as_default():
        total = _two_products(400)
        ran = _threads_of(total, tf.ConfigProto(inter_op_parallelism_threads=width,
                                                intra_op_parallelism_threads=1),
                          {"first", "second", "add"})
    assert len(ran) == 3
    if width == 2:
        assert ran["first"] != caller                 # handed over: "second" was ready
        assert ran["add"] == caller
    else:
        assert set(ran.values()) == {caller}


def test_a_chain_of_products_stays_on_the_pool_thread_that_started_it(monkeypatch):
    """Of two chains of products, the first one ready goes to a pool thread
    and the last one ready runs in the caller's thread (one thread to wake,
    not two). The pool thread that finishes a product goes on with the next
    product of its chain when that waits for nothing else (TF's executor
    threads do the same), instead of reporting to the scheduler and waiting
    for it to hand the next one over; the cheap ops stay the caller's."""
    caller = threading.get_ident() % 100000
    claims = []

    def claim(nodes, pending, i):
        j = real_claim(nodes, pending, i)
        claims.append((nodes[i].op.name, nodes[j].op.name if j is not None else None,
                       threading.get_ident() % 100000))
        return j
    real_claim = executor._claim_successor
    monkeypatch.setattr(executor, "_claim_successor", claim)
    m = _CHAIN_MATRIX
    with tf.Graph().as_default():
        total = _two_chains()
        config = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(total)
            sess.run(total)                 # both steps time the products
            del claims[:]
            md = tf.RunMetadata()
            value = sess.run(total, options=FULL, run_metadata=md)
    m64 = m.astype(np.float64)
    expected = sum(float(np.sum((m64 + k) @ m64 @ m64 @ m64)) for k in (0, 1))
    np.testing.assert_allclose(value, expected, rtol=1e-3)
    ran = {ns.node_name: ns.thread_id for d in md.step_stats.dev_stats for ns in d.node_stats}
    assert sorted((i, j) for i, j, _ in claims) == [("a0", "a1"), ("a1", "a2"), ("a2", None)]
    assert {t for _, _, t in claims} == {ran["a0"]} and ran["a0"] != caller
    assert ran["a1"] == ran["a2"] == ran["a0"]
    assert ran["b0"] == ran["b1"] == ran["b2"] == caller
    assert ran["sum_a"] == ran["sum_b"] == ran["total"] == caller


def test_two_chains_of_products_run_on_one_blas_thread_each(monkeypatch):
    """With no intra-op budget a lone product may use every BLAS thread, but
    when the executor runs two chains side by side, each of their products
    keeps to one (minitf/kernels/threads.py: four BLAS threads on two cores
    wait for each other), the first product of the caller's chain too:
    the executor counts the handed-over chain before the caller starts its own."""
    seen = []

    def use_threads_for(multiply_adds, beside=0):
        seen.append((multiply_adds, beside))
        return real(multiply_adds, beside)
    real = threads.use_threads_for
    monkeypatch.setattr(threads, "use_threads_for", use_threads_for)
    m = _CHAIN_MATRIX
    with tf.Graph().as_default():
        total = _two_chains()
        lone = tf.matmul(tf.Variable(m), m)
        with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(total)
            sess.run(total)                 # both steps time the products
            del seen[:]
            sess.run(total)
            assert len(seen) == 6 and all(beside > 0 for _, beside in seen)
            del seen[:]
            sess.run(lone)
    assert seen == [(400 ** 3, 0)]
    assert threads._beside == 0 and threads._running == 0


def test_small_or_dependent_products_stay_in_the_callers_thread():
    with tf.Graph().as_default():
        small = _two_products(20)
        a = tf.Variable(np.ones((200, 200), np.float32))
        chain = tf.matmul(tf.matmul(a, a, name="inner"), a, name="outer")
        config = tf.ConfigProto(inter_op_parallelism_threads=2)
        caller = threading.get_ident() % 100000
        assert set(_threads_of(small, config, {"first", "second"}).values()) == {caller}
        assert set(_threads_of(chain, config, {"inner", "outer"}).values()) == {caller}


def test_products_measured_short_stay_in_the_callers_thread():
    """Shapes unknown until run time: the first steps time the products and
    find them far too short to be worth a thread."""
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        total = tf.matmul(a, a, name="first") + tf.matmul(b, b, name="second")
        feed = {a: np.ones((8, 8), np.float32), b: np.ones((8, 8), np.float32)}
        md = tf.RunMetadata()
        with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
            for _ in range(3):
                sess.run(total, feed)
            sess.run(total, feed, options=FULL, run_metadata=md)
    ran = {ns.thread_id for d in md.step_stats.dev_stats for ns in d.node_stats
           if ns.node_name in ("first", "second")}
    assert ran == {threading.get_ident() % 100000}


# -- on a server ------------------------------------------------------------------------------------
def test_a_remote_session_ships_its_graph_options_to_the_workers():
    with LocalCluster({"worker": 1}) as cluster:
        with tf.Graph().as_default():
            a = tf.placeholder(tf.float32, [4], name="a")
            y = tf.reduce_sum(tf.nn.relu(a * 2.0 + 1.0), name="total")
            k = tf.constant(3.0, name="three") * 2.0
            feeds = {a: np.ones(4, np.float32)}
            labels = {}
            for name, config in (
                    ("default", None),
                    ("unfused", tf.ConfigProto(graph_options=tf.GraphOptions(
                        fuse_elementwise=False))),
                    ("L0", L0)):
                with tf.Session(cluster.target("worker", 0), config=config) as sess:
                    md = tf.RunMetadata()
                    sess.run([y, k], feeds, options=FULL, run_metadata=md)
                    labels[name] = [n.timeline_label for d in md.step_stats.dev_stats
                                    for n in d.node_stats]
    assert any("[fused:" in label for label in labels["default"])
    assert not any("[fused:" in label for label in labels["unfused"])
    assert not any(label.startswith("three ") for label in labels["default"])   # folded
    assert any(label.startswith("three ") for label in labels["L0"])
    assert not any("[fused:" in label for label in labels["L0"])
