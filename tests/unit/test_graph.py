"""Graph building: names, name scopes, op types, dtypes, collections, lookup,
control dependencies.

Every expected name, type and message below was printed by TensorFlow 2.21
(``tensorflow.compat.v1`` with v2 behaviour disabled) for the same program.
"""

import pytest

import minitf.compat.v1 as tf


@pytest.fixture
def g():
    graph = tf.Graph()
    with graph.as_default():
        yield graph


# -- unique names ------------------------------------------------------------------------
def test_operator_names_are_unique_and_constants_live_in_the_op_scope(g):
    x = tf.constant(3, name="x")
    a = x + 300
    b = x + 1
    assert (a.op.name, b.op.name) == ("add", "add_1")
    assert a.name == "add:0"
    assert [t.name for t in a.op.inputs] == ["x:0", "add/y:0"]
    assert a.op.inputs[1].op.type == "Const"
    assert [t.name for t in b.op.inputs] == ["x:0", "add_1/y:0"]


def test_names_collide_case_insensitively(g):
    assert tf.constant(1, name="Foo").op.name == "Foo"
    assert tf.constant(1, name="foo").op.name == "foo_1"
    # "foo_1" is taken now, so an explicit "foo_1" becomes "foo_1_1".
    assert tf.constant(1, name="foo_1").op.name == "foo_1_1"
    m = tf.constant([[1.0]])
    assert tf.matmul(m, m).op.name == "MatMul"
    assert (m @ m).op.name == "matmul_1"  # "matmul" collides with "MatMul"


def test_default_names_count_up(g):
    names = [tf.constant(1.0).op.name for _ in range(3)]
    assert names == ["Const", "Const_1", "Const_2"]
    assert tf.placeholder(tf.float32).op.name == "Placeholder"
    assert tf.no_op().name == "NoOp"


# -- name scopes --------------------------------------------------------------------------
def test_name_scope_nesting_reentry_and_reset(g):
    with tf.name_scope("s") as sc:
        assert sc == "s/"
        assert tf.constant(1).op.name == "s/Const"
        with tf.name_scope("t") as sc2:
            assert sc2 == "s/t/"
            assert tf.constant(1).op.name == "s/t/Const"
            with tf.name_scope(None) as sc3:
                assert sc3 == ""
                assert tf.constant(1).op.name == "Const"
        assert g.get_name_scope() == "s"
    assert g.get_name_scope() == ""
    with tf.name_scope("s") as sc:
        assert sc == "s_1/"  # entering "s" again makes a new scope
    with tf.name_scope("s/") as sc:
        assert sc == "s/"    # a trailing slash re-enters the existing one
        assert tf.constant(1).op.name == "s/Const_1"


def test_name_scope_default_name_and_op_taking_the_scope_name(g):
    with tf.name_scope(None, "layer") as sc:
        assert sc == "layer/"
    with tf.name_scope("", "layer") as sc:
        assert sc == ""
    with tf.name_scope(None, "layer") as sc:
        assert sc == "layer_1/"
    y = tf.add(tf.constant(1.0), 2.0, name="myadd")
    assert y.op.name == "myadd"
    assert y.op.inputs[1].name == "myadd/y:0"


def test_op_names_inside_scope_get_scope_prefix_on_inputs(g):
    x = tf.placeholder(tf.float32, name="x")
    with tf.name_scope("layer"):
        y = x * 2.0
    assert y.op.name == "layer/mul"
    assert y.op.inputs[1].op.name == "layer/mul/y"


# -- op types and dtypes -----------------------------------------------------------------
@pytest.mark.parametrize("expr, op_type, name", [
    ("x + 1", "AddV2", "add"),
    ("x - 1", "Sub", "sub"),
    ("x * 2", "Mul", "mul"),
    ("x // 2", "FloorDiv", "floordiv"),
    ("x % 2", "FloorMod", "mod"),
    ("x ** 2", "Pow", "pow"),
    ("-x", "Neg", "Neg"),
    ("abs(x)", "Abs", "Abs"),
    ("1 - x", "Sub", "sub"),
    ("2 * x", "Mul", "mul"),
])
def test_operator_op_types_and_names(g, expr, op_type, name):
    x = tf.constant(3, name="x")
    y = eval(expr)
    assert y.op.type == op_type
    assert y.op.name == name
    assert y.dtype == tf.int32


def test_reversed_operator_puts_python_number_first(g):
    x = tf.constant(3.0, name="x")
    y = 1.0 - x
    assert [t.name for t in y.op.inputs] == ["sub/x:0", "x:0"]


def test_float_division_and_matmul_types(g):
    f = tf.constant([[1.0, 2.0]])
    q = f / 2.0
    assert (q.op.type, q.op.name) == ("RealDiv", "truediv")
    assert tf.matmul(f, tf.transpose(f)).op.type == "MatMul"
    assert tf.matmul(tf.ones([2, 2, 2]), tf.ones([2, 2])).op.type == "BatchMatMulV2"


def test_int32_true_division_casts_to_float64(g):
    x = tf.constant(3, name="x")
    y = tf.constant(2, name="y")
    r = x / y
    assert r.dtype == tf.float64
    assert r.op.type == "RealDiv"
    assert [i.op.type for i in r.op.inputs] == ["Cast", "Cast"]
    assert [i.op.name for i in r.op.inputs] == ["truediv/Cast", "truediv/Cast_1"]
    assert (tf.constant(3, tf.int64) / tf.constant(2, tf.int64)).dtype == tf.float64
    assert (tf.constant(3, tf.int16) / tf.constant(2, tf.int16)).dtype == tf.float32
    with tf.Session() as sess:
        assert sess.run(r) == 1.5


def test_int_plus_float_is_a_type_error_with_tf_message(g):
    x = tf.constant(3)
    with pytest.raises(TypeError, match=r"^Input 'y' of 'AddV2' Op has type float32 that "
                                        r"does not match type int32 of argument 'x'\.$"):
        x + 2.5
    with pytest.raises(TypeError, match=r"Input 'b' of 'MatMul' Op has type float64 that "
                                        r"does not match type float32 of argument 'a'\."):
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))


def test_python_constants_take_tf_dtypes(g):
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant("s").dtype == tf.string
    # A Python number next to a float64 tensor becomes float64.
    y = tf.constant(1.0, tf.float64) + 1
    assert y.dtype == tf.float64 and y.op.inputs[1].dtype == tf.float64


# -- graphs -----------------------------------------------------------------------------
def test_graph_as_default_and_reset_default_graph():
    tf.reset_default_graph()
    outer = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default() as entered:
        assert entered is g
        assert tf.get_default_graph() is g
        c = tf.constant(1.0)
        assert c.graph is g
        with pytest.raises(AssertionError, match="Do not use tf.reset_default_graph"):
            tf.reset_default_graph()
    assert tf.get_default_graph() is outer
    assert c not in outer.get_operations()
    tf.constant(1.0, name="leftover")
    tf.reset_default_graph()
    fresh = tf.get_default_graph()
    assert fresh is not outer
    assert fresh.get_operations() == []
    assert tf.constant(1.0, name="leftover").op.name == "leftover"


def test_tensor_from_another_graph_cannot_be_an_input():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with g2.as_default():
        b = tf.constant(1.0)
        with pytest.raises(ValueError, match="must be from the same graph"):
            tf.add_n([b, a])


def test_finalized_graph_rejects_new_ops(g):
    g.finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
        tf.constant(1)


# -- lookup -------------------------------------------------------------------------------
def test_get_tensor_and_operation_by_name(g):
    x = tf.constant(3, name="x")
    assert g.get_tensor_by_name("x:0") is x
    assert g.get_operation_by_name("x") is x.op
    with pytest.raises(KeyError, match=r"The name 'nope:0' refers to a Tensor which does not "
                                       r"exist\. The operation, 'nope', does not exist in the "
                                       r"graph\."):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError, match=r"The name 'x:3' refers to a Tensor which does not "
                                       r"exist\. The operation, 'x', exists but only has 1 "
                                       r"outputs\."):
        g.get_tensor_by_name("x:3")
    with pytest.raises(ValueError, match=r"The name 'x' refers to an Operation, not a Tensor\. "
                                         r"Tensor names must be of the form "
                                         r"\"<op_name>:<output_index>\"\."):
        g.get_tensor_by_name("x")
    with pytest.raises(KeyError, match=r"The name 'nope' refers to an Operation not in the "
                                       r"graph\."):
        g.get_operation_by_name("nope")
    with pytest.raises(ValueError, match=r"Name 'x:0' appears to refer to a Tensor, not a "
                                         r"Operation\."):
        g.get_operation_by_name("x:0")
    with pytest.raises(TypeError):
        g.get_tensor_by_name(3)


def test_tensor_is_not_a_bool_or_array(g):
    t = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="`tf.Tensor` as a Python `bool` is not allowed"):
        bool(t)
    with pytest.raises(TypeError, match=r"^len is not well defined for a symbolic Tensor \(Const:0\)\. "):
        len(t)


# -- collections --------------------------------------------------------------------------
def test_graph_keys_and_variable_collections(g):
    assert tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    assert tf.GraphKeys.TRAINABLE_VARIABLES == "trainable_variables"
    assert tf.GraphKeys.LOCAL_VARIABLES == "local_variables"
    assert tf.GraphKeys.QUEUE_RUNNERS == "queue_runners"
    v = tf.Variable(1.0, name="v")
    lv = tf.Variable(1.0, name="lv", trainable=False,
                     collections=[tf.GraphKeys.LOCAL_VARIABLES])
    nt = tf.Variable(1.0, name="nt", trainable=False)
    assert sorted(g.get_all_collection_keys()) == ["local_variables", "trainable_variables",
                                                   "variables"]
    assert tf.global_variables() == [v, nt]
    assert tf.local_variables() == [lv]
    assert tf.trainable_variables() == [v]
    assert [o.name for o in g.get_operations() if o.name.startswith("v")] == [
        "v/initial_value", "v", "v/Assign", "v/read"]
    assert [o.type for o in g.get_operations()[:4]] == ["Const", "VariableV2", "Assign",
                                                        "Identity"]
    assert v.name == "v:0" and v.op.name == "v"
    assert v.dtype == tf.float32._as_ref


def test_collection_api_and_scope_filter(g):
    with tf.name_scope("a"):
        a = tf.constant(1, name="c")
    b = tf.constant(2, name="c")
    tf.add_to_collection("mine", a)
    tf.add_to_collections(["mine", "other"], b)
    assert tf.get_collection("mine") == [a, b]
    assert tf.get_collection("mine", scope="a") == [a]
    assert tf.get_collection("other") == [b]
    ref = tf.get_collection_ref("mine")
    ref.append(3)
    assert tf.get_collection("mine")[-1] == 3
    copy = tf.get_collection("mine")
    copy.append(4)
    assert 4 not in tf.get_collection("mine")
    assert tf.get_collection("never") == []


# -- control dependencies ------------------------------------------------------------------
def test_control_dependencies_follow_tf_rules(g):
    a = tf.constant(1.0, name="a")
    b = tf.constant([1, 2], name="b")
    noop = tf.no_op(name="noop")
    before = tf.constant(0.0, name="before")
    with tf.control_dependencies([a]):
        c1 = tf.constant(5.0, name="c1")
        with tf.control_dependencies([b]):
            c2 = tf.identity(a, name="c2")
            with tf.control_dependencies(None):
                c3 = tf.constant(1, name="c3")
            c5 = tf.constant(1, name="c5")
        c4 = tf.identity(a, name="c4")
    after = tf.constant(7.0, name="after")
    assert [o.name for o in c1.op.control_inputs] == ["a"]
    # a is already a data input of c2: only b is added.
    assert [o.name for o in c2.op.control_inputs] == ["b"]
    assert c3.op.control_inputs == []
    assert [o.name for o in c5.op.control_inputs] == ["a", "b"]
    assert c4.op.control_inputs == []
    assert [t.name for t in c4.op.inputs] == ["a:0"]
    assert before.op.control_inputs == [] and after.op.control_inputs == []
    # Tensors and ops both work; the same op listed twice is added once.
    with tf.control_dependencies([a.op, noop, a]):
        q = tf.identity(b, name="q")
    assert [o.name for o in q.op.control_inputs] == ["a", "noop"]


def test_control_dependency_is_not_repeated_when_an_input_already_waits(g):
    a = tf.constant(1.0, name="a")
    noop = tf.no_op(name="noop")
    with tf.control_dependencies([noop]):
        w = a + 1.0   # the new constant add/y waits for noop, so add need not
    assert w.op.control_inputs == []
    assert [o.name for o in w.op.inputs[1].op.control_inputs] == ["noop"]
    with tf.control_dependencies([noop]):
        z = tf.identity(a, name="z")  # a was made outside: z gets the edge
    assert [o.name for o in z.op.control_inputs] == ["noop"]


def test_control_dependencies_rejects_non_ops(g):
    with pytest.raises(TypeError, match=r"^Can not convert a int into a Tensor or Operation\.$"):
        with tf.control_dependencies([3]):
            pass


def test_control_dependencies_order_runs(g):
    v = tf.Variable(0, name="counter")
    inc = tf.assign_add(v, 1)
    with tf.control_dependencies([inc]):
        read_after = tf.identity(v.value(), name="read_after")
    plain = tf.identity(v.value(), name="plain")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(plain) == 0
        assert sess.run(read_after) == 1
        assert sess.run(read_after) == 2
        assert sess.run(plain) == 2
        grouped = tf.group(inc, inc.op, name="twice")
        assert grouped.type == "NoOp" and grouped.name == "twice"
        assert sess.run(grouped) is None
        assert sess.run(v) == 3
