"""``tf.errors`` and what bad input raises: TF's exception types and messages.

Messages were printed by TensorFlow 2.21 for the same programs. TF 2.x puts
"Graph execution error:" and a traceback before a run-time message; minitf
gives TF 1.x's form (the kernel's message, then ``[[{{node name}}]]``), so the
run-time tests check the kernel's words, which both share.
"""

import numpy as np
import pytest

import minitf.compat.v1 as tf

CODES = [
    ("CancelledError", 1, "CANCELLED"), ("UnknownError", 2, "UNKNOWN"),
    ("InvalidArgumentError", 3, "INVALID_ARGUMENT"),
    ("DeadlineExceededError", 4, "DEADLINE_EXCEEDED"), ("NotFoundError", 5, "NOT_FOUND"),
    ("AlreadyExistsError", 6, "ALREADY_EXISTS"),
    ("PermissionDeniedError", 7, "PERMISSION_DENIED"),
    ("ResourceExhaustedError", 8, "RESOURCE_EXHAUSTED"),
    ("FailedPreconditionError", 9, "FAILED_PRECONDITION"), ("AbortedError", 10, "ABORTED"),
    ("OutOfRangeError", 11, "OUT_OF_RANGE"), ("UnimplementedError", 12, "UNIMPLEMENTED"),
    ("InternalError", 13, "INTERNAL"), ("UnavailableError", 14, "UNAVAILABLE"),
    ("DataLossError", 15, "DATA_LOSS"), ("UnauthenticatedError", 16, "UNAUTHENTICATED"),
]


@pytest.mark.parametrize("cls_name, code, const", CODES)
def test_error_classes_and_codes(cls_name, code, const):
    cls = getattr(tf.errors, cls_name)
    assert issubclass(cls, tf.errors.OpError)
    assert issubclass(cls, Exception)
    assert getattr(tf.errors, const) == code
    e = cls(None, None, "boom")
    assert e.error_code == code
    assert e.message == "boom"
    assert str(e) == "boom"
    assert e.op is None and e.node_def is None
    with pytest.raises(tf.errors.OpError):
        raise e


def test_op_error_base_and_ok():
    assert tf.errors.OK == 0
    e = tf.errors.OpError(None, None, "m", tf.errors.ABORTED)
    assert e.error_code == 10 and e.message == "m"


# -- errors raised by a kernel carry their op -------------------------------------------------
@pytest.fixture(scope="module")
def bad():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        i = tf.placeholder(tf.int32, [None, 3], name="i")
        m = tf.placeholder(tf.float32, [None, None], name="m")
        n = tf.placeholder(tf.float32, [None], name="n")
        ops = dict(x=x, y=x * 2.0, i=i, m=m, n=n,
                   mm=tf.matmul(m, m, name="mm"),
                   r=tf.reshape(m, [3, -1], name="r"),
                   r2=tf.reshape(m, [3], name="r2"),
                   bb=tf.add(m, n, name="bb"),
                   vv=tf.Variable(3.0, name="vv"))
        ops["read"] = ops["vv"] * 2.0
        ops["inc"] = ops["vv"].assign_add(1.0)
    sess = tf.Session(graph=g)
    yield g, ops, sess
    sess.close()


def test_placeholder_not_fed(bad):
    g, o, sess = bad
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(o["y"])
    e = info.value
    assert "You must feed a value for placeholder tensor 'x' with dtype float and shape [2]" \
        in e.message
    assert e.op is o["x"].op
    assert e.error_code == tf.errors.INVALID_ARGUMENT
    assert "[[{{node x}}]]" in e.message
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"You must feed a value for placeholder tensor 'i' with dtype "
                             r"int32 and shape \[\?,3\]"):
        sess.run(o["i"])


def test_kernel_error_carries_op_and_node_def(bad):
    g, o, sess = bad
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(o["mm"], {o["m"]: [[1, 2, 3]]})
    e = info.value
    assert e.op is o["mm"].op
    assert e.node_def["name"] == "mm"  # a dict in minitf, a NodeDef proto in TF
    assert e.node_def["op"] == "MatMul"
    assert "[[{{node mm}}]]" in e.message
    assert str(e) == e.message


def test_run_time_shape_errors(bad):
    g, o, sess = bad
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Matrix size-incompatible: In\[0\]: \[1,3\], In\[1\]: \[1,3\]"):
        sess.run(o["mm"], {o["m"]: [[1, 2, 3]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input to reshape is a tensor with 2 values, but the requested "
                             r"shape requires a multiple of 3"):
        sess.run(o["r"], {o["m"]: [[1, 2]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input to reshape is a tensor with 2 values, but the requested "
                             r"shape has 3"):
        sess.run(o["r2"], {o["m"]: [[1, 2]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Incompatible shapes: \[1,3\] vs\. \[2\]") as info:
        sess.run(o["bb"], {o["m"]: [[1, 2, 3]], o["n"]: [1, 2]})
    assert info.value.op is o["bb"].op


def test_uninitialized_variable(bad):
    g, o, sess = bad
    for fetch in (o["vv"], o["read"], o["inc"]):
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value vv"):
            sess.run(fetch)


# -- bad feeds and fetches -------------------------------------------------------------------------
def test_bad_feed_shapes_and_values(bad):
    g, o, sess = bad
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(3,\) for Tensor x:0, "
                                         r"which has shape \(2,\)$"):
        sess.run(o["y"], {o["x"]: [1, 2, 3]})
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(1, 2\) for Tensor "
                                         r"i:0, which has shape \(\?, 3\)$"):
        sess.run(o["i"], {o["i"]: [[1, 2]]})
    with pytest.raises(ValueError, match="could not convert string to float"):
        sess.run(o["y"], {o["x"]: ["a", "b"]})
    with pytest.raises(TypeError, match=r"^The value of a feed cannot be a tf\.Tensor object\. "
                                        r"Acceptable feed values include Python scalars, "
                                        r"strings, lists, numpy ndarrays, or TensorHandles\."):
        sess.run(o["y"], {o["x"]: o["y"]})


def test_big_python_int_for_int32_feed():
    with tf.Graph().as_default():
        big = tf.placeholder(tf.int32, name="big")
        with tf.Session() as sess:
            with pytest.raises(TypeError) as info:
                sess.run(big, {big: 2**40})
    assert str(info.value) == (
        "Type of feed value 1099511627776 with type <class 'int'> is not compatible with "
        "Tensor type <class 'numpy.int32'>. Try explicitly setting the type of the feed "
        "tensor to a larger type (e.g. int64).")


def test_bad_feed_keys(bad):
    g, o, sess = bad
    with pytest.raises(TypeError, match=r"^Cannot interpret feed_dict key as Tensor: The name "
                                        r"'nope:0' refers to a Tensor which does not exist\. "
                                        r"The operation, 'nope', does not exist in the graph\.$"):
        sess.run(o["y"], {"nope:0": 1})
    with pytest.raises(TypeError, match=r"^Cannot interpret feed_dict key as Tensor: Can not "
                                        r"convert a int into a Tensor\.$"):
        sess.run(o["y"], {3: 1})
    other = tf.Graph()
    with other.as_default():
        foreign = tf.placeholder(tf.float32)
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(o["y"], {foreign: 1.0})


def test_non_feedable_tensor():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = a + 1.0
    g.prevent_feeding(a)
    assert not g.is_feedable(a) and g.is_feedable(b)
    with tf.Session(graph=g) as sess:
        with pytest.raises(ValueError, match=r"^Tensor a:0 may not be fed\.$"):
            sess.run(b, {a: 3.0})
        assert sess.run(b, {b: 5.0}) == 5.0


def test_bad_fetches(bad):
    g, o, sess = bad
    with pytest.raises(TypeError, match=r'^Argument `fetch` = None has invalid type '
                                        r'"NoneType"\. Cannot be None$'):
        sess.run(None)
    with pytest.raises(TypeError, match=r'^Argument `fetch` = 3 has invalid type "int" must '
                                        r'be a string or Tensor\. \(Can not convert a int '
                                        r'into a Tensor or Operation\.\)$'):
        sess.run(3)
    with pytest.raises(ValueError, match=r"^Argument `fetch` = nope:0 cannot be interpreted "
                                         r"as a Tensor\. \(\"The name 'nope:0' refers to a "
                                         r"Tensor which does not exist\. The operation, "
                                         r"'nope', does not exist in the graph\.\"\)$"):
        sess.run("nope:0")
    with pytest.raises(ValueError, match=r"^Argument `fetch` = nope cannot be interpreted as "
                                         r"a Tensor\. \(\"The name 'nope' refers to an "
                                         r"Operation not in the graph\.\"\)$"):
        sess.run("nope")
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1, name="Const")
    with pytest.raises(ValueError, match=r'is not an element of this graph'):
        sess.run(foreign)
    with pytest.raises(ValueError, match=r'^Argument `fetch` = Tensor\("Const:0", shape=\(\), '
                                         r'dtype=int32\) cannot be interpreted as a Tensor\.'):
        sess.run([foreign])


# -- build-time shape errors ----------------------------------------------------------------------
P = tf.placeholder


@pytest.mark.parametrize("build, message", [
    (lambda: tf.matmul(P(tf.float32, [2, 3]), P(tf.float32, [2, 3])),
     r"^Dimensions must be equal, but are 3 and 2 for '\{\{node MatMul\}\} = "
     r"MatMul\[T=DT_FLOAT, "),
    (lambda: tf.matmul(P(tf.float32, [3]), P(tf.float32, [3, 2])),
     r"^Shape must be rank 2 but is rank 1 for '\{\{node MatMul\}\} = MatMul\[T=DT_FLOAT, "),
    (lambda: tf.add(P(tf.float32, [2, 3]), P(tf.float32, [4])),
     r"^Dimensions must be equal, but are 3 and 4 for '\{\{node Add\}\}"),
    (lambda: tf.reshape(P(tf.float32, [2, 3]), [4]),
     r"^Cannot reshape a tensor with 6 elements to shape \[4\] \(4 elements\) for "
     r"'\{\{node Reshape\}\} = Reshape\[T=DT_FLOAT, Tshape=DT_INT32\]"),
    (lambda: tf.reshape(P(tf.float32, [2, 3]), [4, -1]),
     r"^Dimension size must be evenly divisible by 4 but is 6 for '\{\{node Reshape\}\} = "
     r"Reshape\[T=DT_FLOAT, Tshape=DT_INT32\]"),
    (lambda: tf.reduce_sum(P(tf.float32, [2, 3]), axis=2),
     r"^Invalid reduction dimension 2 for input with 2 dimensions\. for '\{\{node Sum\}\}"),
    (lambda: tf.concat([P(tf.float32, [2, 3]), P(tf.float32, [3, 5])], 1),
     r"^Dimension 0 in both shapes must be equal, but are 2 and 3\. Shapes are \[2\] and "
     r"\[3\]\. for '\{\{node concat\}\}"),
    (lambda: tf.stack([P(tf.float32, [2, 3]), P(tf.float32, [3, 3])]),
     r"^Dimension 0 in both shapes must be equal, but are 2 and 3\. Shapes are \[2,3\] and "
     r"\[3,3\]\.\n\tFrom merging shape 0 with other shapes\."),
    (lambda: tf.argmax(P(tf.float32, [2, 3]), axis=2),
     r"^Dimension \(2\) must be in the range \[-2, 2\), where 2 is the number of dimensions "
     r"in the input\. for '\{\{node ArgMax\}\}"),
    (lambda: tf.transpose(P(tf.float32, [2, 3]), [0]),
     r"^Dimension must be 2 but is 1 for '\{\{node transpose\}\}"),
])
def test_build_time_shape_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            build()


def test_build_time_dtype_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=r"^Value passed to parameter 'x' has DataType int32 "
                                            r"not in list of allowed values: "):
            tf.sqrt(P(tf.int32, [2]))
        with pytest.raises(TypeError, match=r"^Input 'y' of 'AddV2' Op has type float32 that "
                                            r"does not match type int32 of argument 'x'\.$"):
            P(tf.int32, [2]) + 2.5
        v = tf.Variable([1.0, 2.0])
        with pytest.raises(ValueError):
            v.assign([1.0, 2.0, 3.0])
        np.testing.assert_array_equal(v.shape.as_list(), [2])
