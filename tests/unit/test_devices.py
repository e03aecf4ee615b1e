"""Device names and device scopes.

``DeviceSpec`` parsing, printing and merging, and the ``op.device`` string that
nested ``tf.device`` scopes give an op. Every expected string and message was
printed by TensorFlow 2.21 for the same program.
"""

import pytest

import minitf.compat.v1 as tf
from minitf.framework.device_spec import DeviceSpec as SpecV2
from minitf.framework.device_spec import canonical_name


# -- parsing and printing ------------------------------------------------------------------
@pytest.mark.parametrize("text, printed, parts", [
    ("/cpu:0", "/device:CPU:0", (None, None, None, "CPU", 0)),
    ("/gpu:1", "/device:GPU:1", (None, None, None, "GPU", 1)),
    ("/job:a/task:1/gpu:2", "/job:a/task:1/device:GPU:2", ("a", None, 1, "GPU", 2)),
    ("/job:ps", "/job:ps", ("ps", None, None, None, None)),
    ("/device:GPU:*", "/device:GPU:*", (None, None, None, "GPU", None)),
    ("/gpu:*", "/device:GPU:*", (None, None, None, "GPU", None)),
    ("GPU:0", "/device:GPU:0", (None, None, None, "GPU", 0)),
    ("cpu:1", "/device:CPU:1", (None, None, None, "CPU", 1)),
    ("/job:worker/replica:0/task:1/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0",
     ("worker", 0, 1, "CPU", 0)),
    ("/replica:2", "/replica:2", (None, 2, None, None, None)),
    ("/job:a/device:cpu:0", "/job:a/device:CPU:0", ("a", None, None, "CPU", 0)),
    ("/device:XLA_CPU:0", "/device:XLA_CPU:0", (None, None, None, "XLA_CPU", 0)),
    ("/task:1/CPU:0", "/task:1/device:CPU:0", (None, None, 1, "CPU", 0)),
    ("", "", (None, None, None, None, None)),
])
def test_parse_and_print(text, printed, parts):
    for cls in (tf.DeviceSpec, SpecV2):
        d = cls.from_string(text)
        assert d.to_string() == printed
        assert (d.job, d.replica, d.task, d.device_type, d.device_index) == parts
    assert canonical_name(text) == printed


@pytest.mark.parametrize("text, message", [
    ("/foo:bar", "Unknown attribute 'foo' is encountered while parsing the device spec: "
                 "'/foo:bar'."),
    ("/job:a/task:x", "invalid literal for int() with base 10: 'x'"),
    ("/cpu:0/gpu:0", "Multiple device types are not allowed while parsing the device spec: "
                     "/cpu:0/gpu:0."),
    ("/device:CPU", "Unknown attribute 'device' is encountered while parsing the device "
                    "spec: '/device:CPU'."),
    ("/gpu:0:1", "Unknown attribute 'gpu' is encountered while parsing the device spec: "
                 "'/gpu:0:1'."),
    ("bogus", "Unknown attribute 'bogus' is encountered while parsing the device spec: "
              "'bogus'."),
    ("/job:a:b", "Unknown attribute 'job' is encountered while parsing the device spec: "
                 "'/job:a:b'."),
])
def test_malformed_strings_raise_tf_messages(text, message):
    with pytest.raises(ValueError) as info:
        tf.DeviceSpec.from_string(text)
    assert str(info.value) == message
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            with tf.device(text):
                tf.constant(1)
        assert str(info.value) == message


def test_constructor_merge_and_equality():
    d = tf.DeviceSpec(job="w", replica=0, task=2, device_type="gpu", device_index=1)
    assert d.to_string() == "/job:w/replica:0/task:2/device:GPU:1"
    a = tf.DeviceSpec.from_string("/job:ps/task:0")
    b = tf.DeviceSpec.from_string("/device:CPU:0")
    assert a.make_merged_spec(b).to_string() == "/job:ps/task:0/device:CPU:0"
    assert b.make_merged_spec(a).to_string() == "/job:ps/task:0/device:CPU:0"
    # The argument's parts win.
    merged = tf.DeviceSpec.from_string("/job:a/gpu:1").make_merged_spec(
        tf.DeviceSpec.from_string("/job:b/cpu:0"))
    assert merged.to_string() == "/job:b/device:CPU:0"
    m = tf.DeviceSpec(job="ps", task=0)
    m.merge_from(b)
    assert m.to_string() == "/job:ps/task:0/device:CPU:0"
    assert tf.DeviceSpec.from_string("/cpu:0") == tf.DeviceSpec.from_string("/device:CPU:0")
    assert tf.DeviceSpec.from_string("/cpu:0") != tf.DeviceSpec.from_string("/cpu:1")
    assert a.to_string() == "/job:ps/task:0"  # make_merged_spec does not mutate


# -- device scopes -------------------------------------------------------------------------------
def to_cpu0(op):
    return "/cpu:0"


def to_worker3(op):
    return "/job:worker/task:3"


def to_gpu1_spec(op):
    return tf.DeviceSpec(device_type="GPU", device_index=1)


def dev(fn=None):
    return tf.constant(1).op.device


@pytest.fixture
def g():
    graph = tf.Graph()
    with graph.as_default():
        yield graph


def test_string_scopes_merge_inner_parts_winning(g):
    with tf.device("/job:ps/task:0"):
        assert dev() == "/job:ps/task:0"
        with tf.device("/cpu:0"):
            assert dev() == "/job:ps/task:0/device:CPU:0"
        with tf.device("/job:worker"):
            assert dev() == "/job:worker/task:0"
        with tf.device("/gpu:1"):
            with tf.device("/task:3"):
                assert dev() == "/job:ps/task:3/device:GPU:1"
        with tf.device(""):
            assert dev() == "/job:ps/task:0"
    with tf.device("/job:a"):
        with tf.device("/job:b/task:1"):
            with tf.device("/device:GPU:2"):
                assert dev() == "/job:b/task:1/device:GPU:2"
    with tf.device("/cpu:0"):
        assert dev() == "/device:CPU:0"
    with tf.device(tf.DeviceSpec(job="x", device_type="CPU")):
        assert dev() == "/job:x/device:CPU:*"
    assert dev() == ""


def test_function_scopes(g):
    with tf.device("/job:ps/task:0"):
        with tf.device(to_cpu0):
            assert dev() == "/job:ps/task:0/device:CPU:0"   # function in string
        with tf.device(to_worker3):
            assert dev() == "/job:worker/task:3"
        with tf.device(to_gpu1_spec):
            assert dev() == "/job:ps/task:0/device:GPU:1"
    with tf.device(to_worker3):
        assert dev() == "/job:worker/task:3"
        with tf.device("/gpu:0"):                            # string in function
            assert dev() == "/job:worker/task:3"
        with tf.device("/job:a/task:1"):
            assert dev() == "/job:worker/task:3"
    with tf.device(to_cpu0):
        assert dev() == "/cpu:0"   # a function's string is kept verbatim
        with tf.device(to_worker3):
            assert dev() == "/cpu:0"


def test_device_function_sees_each_new_op(g):
    seen = []

    def fn(op):
        seen.append((op.name, op.type))
        return "/cpu:0" if op.type == "Const" else "/job:ps"
    with tf.device(fn):
        y = tf.constant(1.0, name="c") * 2.0
    assert seen == [("c", "Const"), ("mul/y", "Const"), ("mul", "Mul")]
    assert y.op.device == "/job:ps"


def test_device_function_returning_none_is_a_type_error(g):
    with pytest.raises(TypeError, match="^Expected binary or unicode string, got None$"):
        with tf.device(lambda op: None):
            tf.constant(1)


def test_device_none_ignores_enclosing_scopes(g):
    with tf.device("/job:ps/task:0"):
        with tf.device(None):
            assert dev() == ""
            with tf.device("/gpu:1"):
                assert dev() == "/device:GPU:1"
    with tf.device(to_worker3):
        with tf.device(None):
            assert dev() == ""


def test_variables_and_colocate_with(g):
    with tf.device("/job:ps/task:0/cpu:0"):
        v = tf.Variable(1.0, name="v")
    assert [(o.name, o.device) for o in g.get_operations()] == [
        ("v/initial_value", "/job:ps/task:0/device:CPU:0"),
        ("v", "/job:ps/task:0/device:CPU:0"),
        ("v/Assign", "/job:ps/task:0/device:CPU:0"),
        ("v/read", "/job:ps/task:0/device:CPU:0")]
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert v.initializer.colocation_groups() == [b"loc:@v"]
    with tf.device("/gpu:1"):
        with tf.colocate_with(v.op):
            c = tf.identity(v, name="colo")
            with tf.device("/cpu:3"):
                c2 = tf.identity(v, name="colo_dev")
        free = tf.identity(v, name="free")
    assert c.op.device == "/job:ps/task:0/device:CPU:0"
    assert c.op.colocation_groups() == [b"loc:@v"]
    assert c2.op.device == "/job:ps/task:0/device:CPU:0"
    assert c2.op.colocation_groups() == [b"loc:@v"]
    assert free.op.device == "/device:GPU:1"
    assert free.op.colocation_groups() == [b"loc:@free"]
    assert c.op.get_attr("_class") == [b"loc:@v"]
    with pytest.raises(ValueError):
        free.op.get_attr("_class")


def test_device_scope_is_per_graph(g):
    other = tf.Graph()
    with tf.device("/job:ps"):
        with other.as_default():
            assert tf.constant(1).op.device == ""
        assert tf.constant(1).op.device == "/job:ps"
