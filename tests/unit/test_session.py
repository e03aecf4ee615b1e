"""``tf.Session``: fetch structures, feeds, returned types, default sessions,
closing, state isolation and plan reuse.

Expected values and messages were printed by TensorFlow 2.21 for the same
program, except where a test says it checks a minitf internal.
"""

import collections
import warnings

import numpy as np
import pytest

import minitf.compat.v1 as tf

Pt = collections.namedtuple("Pt", "p q")


@pytest.fixture(scope="module")
def env():
    """One graph and session for the read-only tests of this module."""
    g = tf.Graph()
    with g.as_default():
        e = collections.namedtuple("Env", "g a b s ss x y i v noop")(
            g, tf.constant(1.0, name="a"), tf.constant([1, 2], name="b"),
            tf.constant("hi", name="s"), tf.constant(["x", "yy"], name="ss"),
            tf.placeholder(tf.float32, [2], name="x"), None,
            tf.placeholder(tf.int32, [None, 3], name="i"),
            tf.Variable([1.0, 2.0], name="v"), tf.no_op(name="noop"))
        e = e._replace(y=e.x * 2.0)
    sess = tf.Session(graph=g)
    sess.run(e.v.initializer)
    yield e, sess
    sess.close()


# -- fetch structures ------------------------------------------------------------------------
def test_fetch_structures(env):
    e, sess = env
    assert sess.run([e.a, e.b])[0] == 1.0
    np.testing.assert_array_equal(sess.run([e.a, e.b])[1], [1, 2])
    out = sess.run((e.a, e.noop))
    assert isinstance(out, tuple) and out == (1.0, None)
    out = sess.run({"k": e.a, "o": e.noop})
    assert out == {"k": 1.0, "o": None}
    od = sess.run(collections.OrderedDict([("z", e.a), ("y", e.b)]))
    assert isinstance(od, collections.OrderedDict) and list(od) == ["z", "y"]
    assert od["z"] == 1.0
    nt = sess.run(Pt(e.a, [e.b, {"r": e.a}]))
    assert isinstance(nt, Pt) and nt.p == 1.0
    assert isinstance(nt.q, list) and nt.q[1] == {"r": 1.0}
    np.testing.assert_array_equal(nt.q[0], [1, 2])
    assert sess.run([]) == []
    assert sess.run(()) == ()
    dd = sess.run(collections.defaultdict(int, {"a": e.a}))
    assert isinstance(dd, collections.defaultdict) and dd["a"] == 1.0


def test_fetch_ops_names_and_variables(env):
    e, sess = env
    assert sess.run(e.noop) is None
    assert sess.run([e.noop]) == [None]
    assert sess.run("a:0") == 1.0
    assert sess.run("a") is None              # an op name runs the op
    v = sess.run(e.v)
    assert isinstance(v, np.ndarray) and v.dtype == np.float32
    np.testing.assert_array_equal(v, [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(e.v.value()), [1.0, 2.0])
    assert sess.run([e.a, e.a]) == [1.0, 1.0]  # the same tensor twice


def test_returned_types(env):
    e, sess = env
    a = sess.run(e.a)
    assert type(a) is np.float32 and a == 1.0
    assert type(sess.run(e.b)) is np.ndarray and sess.run(e.b).dtype == np.int32
    assert sess.run(e.s) == b"hi" and type(sess.run(e.s)) is bytes
    ss = sess.run(e.ss)
    assert ss.dtype == object and ss.tolist() == [b"x", b"yy"]
    with e.g.as_default():
        assert type(sess.run(tf.constant(True))) is np.bool_
        assert type(sess.run(tf.constant(3, tf.int64))) is np.int64
        assert type(sess.run(tf.constant(3))) is np.int32
        assert type(sess.run(tf.constant(3.0, tf.float64))) is np.float64


def test_fetched_arrays_are_writable_copies(env):
    e, sess = env
    b = sess.run(e.b)
    assert b.flags.writeable
    b[0] = 99
    np.testing.assert_array_equal(sess.run(e.b), [1, 2])
    v = sess.run(e.v)
    assert v.flags.writeable
    v[0] = 99
    np.testing.assert_array_equal(sess.run(e.v), [1.0, 2.0])
    r = sess.run(e.v.value())
    assert r.flags.writeable
    r[1] = -1
    np.testing.assert_array_equal(sess.run(e.v), [1.0, 2.0])


def test_earlier_fetch_does_not_change_when_variable_is_assigned():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        assign = v.assign([7.0, 8.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            before = sess.run(v.value())
            read = sess.run(v)
            sess.run(assign)
            np.testing.assert_array_equal(before, [1.0, 2.0])
            np.testing.assert_array_equal(read, [1.0, 2.0])
            np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])


# -- feeds -------------------------------------------------------------------------------------
def test_feeds(env):
    e, sess = env
    np.testing.assert_array_equal(sess.run(e.y, {e.x: [1, 2]}), [2.0, 4.0])
    np.testing.assert_array_equal(sess.run(e.y, {"x:0": [1, 2]}), [2.0, 4.0])
    fed = np.array([3.0, 4.0], np.float32)
    np.testing.assert_array_equal(sess.run(e.x, {e.x: fed}), fed)
    # Feeding the output of a non-placeholder replaces it.
    np.testing.assert_array_equal(sess.run(e.y, {e.y: [5, 5]}), [5.0, 5.0])
    np.testing.assert_array_equal(sess.run(e.i, {e.i: [[1.5, 2, 3]]}), [[1, 2, 3]])
    assert sess.run(e.i, {e.i: np.zeros((4, 3))}).shape == (4, 3)
    # A variable can be fed: the fed value is used instead of its buffer.
    with e.g.as_default():
        doubled = e.v * 2.0
    np.testing.assert_array_equal(sess.run(doubled, {e.v: [10.0, 20.0]}), [20.0, 40.0])
    np.testing.assert_array_equal(sess.run(e.v), [1.0, 2.0])


def test_feeding_an_intermediate_tensor_skips_its_producer():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        inc = tf.assign_add(counter, 1)
        c = tf.constant([1.0, 2.0])
        with tf.control_dependencies([inc]):
            mid = tf.identity(c, name="mid")
        out = mid + 1.0
        with tf.Session() as sess:
            sess.run(counter.initializer)
            np.testing.assert_array_equal(sess.run(out, {mid: [10.0, 20.0]}), [11.0, 21.0])
            assert sess.run(counter) == 0
            np.testing.assert_array_equal(sess.run(out), [2.0, 3.0])
            assert sess.run(counter) == 1
            np.testing.assert_array_equal(sess.run(out, {mid: [0.0, 0.0]}), [1.0, 1.0])
            assert sess.run(counter) == 1


# -- default sessions, eval and run ----------------------------------------------------------------
def test_eval_and_run_need_a_default_session():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        noop = tf.no_op()
        with pytest.raises(ValueError, match=r"^Cannot evaluate tensor using `eval\(\)`: No "
                                             r"default session is registered\. Use `with "
                                             r"sess\.as_default\(\)` or pass an explicit "
                                             r"session to `eval\(session=sess\)`$"):
            a.eval()
        with pytest.raises(ValueError, match=r"^Cannot execute operation using `run\(\)`: No "
                                             r"default session is registered\. Use `with "
                                             r"sess\.as_default\(\):` or pass an explicit "
                                             r"session to `run\(session=sess\)`$"):
            noop.run()
        sess = tf.Session()
        assert a.eval(session=sess) == 1.0
        assert noop.run(session=sess) is None
        assert tf.get_default_session() is None
        with sess.as_default():
            assert tf.get_default_session() is sess
            assert a.eval() == 1.0
            x = tf.placeholder(tf.float32)
            assert (x + 1.0).eval({x: 2.0}) == 3.0
        assert tf.get_default_session() is None
        sess.close()


def test_with_session_makes_it_default_and_closes_it():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0)
    with tf.Session(graph=g) as sess:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is g
        assert a.eval() == 2.0
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError, match="^Attempted to use a closed Session.$"):
        sess.run(a)


def test_close_then_run_is_runtime_error():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        sess = tf.Session()
        assert sess.run(a) == 1.0
        sess.close()
        sess.close()  # closing twice is fine
        with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
            sess.run(a)


def test_interactive_session_is_default_until_closed():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sess = tf.InteractiveSession(graph=g)
    try:
        assert tf.get_default_session() is sess
        assert a.eval() == 3.0
        assert tf.get_default_graph() is g
    finally:
        sess.close()
    assert tf.get_default_session() is None
    assert tf.get_default_graph() is not g


def test_session_of_other_graph_cannot_eval():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with tf.Session(graph=g2) as sess:
        with pytest.raises(ValueError, match="graph"):
            a.eval(session=sess)


# -- state -------------------------------------------------------------------------------------------
def test_two_sessions_do_not_share_variables():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        inc = v.assign_add(1.0)
        s1, s2 = tf.Session(), tf.Session()
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        s1.run(inc)
        assert s1.run(v) == 3.0
        assert s2.run(v) == 1.0
        s3 = tf.Session()
        with pytest.raises(tf.errors.FailedPreconditionError, match="v"):
            s3.run(v)
        for s in (s1, s2, s3):
            s.close()


def test_variable_load_and_eval():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            v.load([5.0, 6.0], sess)
            np.testing.assert_array_equal(v.eval(), [5.0, 6.0])
            assert sess.run(tf.is_variable_initialized(v))
            assert sess.run(tf.report_uninitialized_variables()).tolist() == []


def test_report_uninitialized_variables():
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        report = tf.report_uninitialized_variables()
        with tf.Session() as sess:
            assert sess.run(report).tolist() == [b"a", b"b"]
            sess.run(a.initializer)
            assert sess.run(report).tolist() == [b"b"]


# -- plans (minitf internals) ---------------------------------------------------------------------
def test_repeated_run_reuses_the_plan_and_does_not_replace():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, name="x")
        y = x * 3.0
        z = y + 1.0
        with tf.Session() as sess:
            plans = sess._runtime.plans
            assert sess.run(y, {x: 1.0}) == 3.0
            assert len(plans) == 1
            plan = plans.values()[0]
            placed = dict(sess._runtime.placer.assigned)
            assert sess.run(y, {x: 2.0}) == 6.0
            assert len(plans) == 1 and plans.values()[0] is plan
            assert sess._runtime.placer.assigned == placed
            assert sess.run(z, {x: 1.0}) == 4.0      # another signature: a new plan
            assert len(plans) == 2
            assert sess.run(y, {y: 5.0}) == 5.0      # other feeds: another plan
            assert len(plans) == 3
            assert sess.run(z, {x: 2.0}) == 7.0
            assert len(plans) == 3


def test_make_callable():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        y = x * 2.0
        with tf.Session() as sess:
            f = sess.make_callable([y], feed_list=[x])
            assert f(3.0) == [6.0]
            assert f(4.0) == [8.0]
