"""GraphDefs in and out of minitf: tensors and attrs as TF's protos, graphs
written with ``write_graph`` and read back with ``import_graph_def``, and the
errors a learner meets when a GraphDef holds what minitf cannot run.
"""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.framework import dtypes
from minitf.framework.graph_def import (attr_from_proto, attr_to_proto, tensor_from_proto,
                                        tensor_to_proto)
from minitf.framework.tensor_shape import TensorShape

graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")


@pytest.mark.parametrize("value", [
    np.float32(2.5), np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2], np.int64),
    np.array([True, False]), np.array([[1, 2]], np.uint8), np.array(3, np.int16),
    np.array([0.5, 1.5], np.float16), np.array([1.0, -1.0], np.float64),
    np.array([b"a", b"bb", b""], dtype=object), np.zeros((0, 3), np.float32)])
def test_tensors_round_trip(value):
    pb = tensor_to_proto(value)
    back = tensor_from_proto(pb)
    assert back.shape == np.asarray(value).shape
    assert back.dtype == np.asarray(value).dtype
    assert back.tolist() == np.asarray(value).tolist()


def test_tensor_packing_is_tfs():
    assert tensor_to_proto(np.float32(1)).float_val == [1.0]
    assert tensor_to_proto(np.array([1, 2], np.int32)).tensor_content == \
        b"\x01\x00\x00\x00\x02\x00\x00\x00"
    assert tensor_to_proto(np.array(["x"], dtype=object)).string_val == [b"x"]
    # one value for a bigger shape (how TF writes tf.zeros) fills the shape
    pb = tensor_to_proto(np.float32(7))
    pb.tensor_shape.dim.add(size=3)
    assert tensor_from_proto(pb).tolist() == [7.0, 7.0, 7.0]


@pytest.mark.parametrize("value", [
    True, 3, -1, 0.5, "text", dtypes.float32, TensorShape([None, 3]), TensorShape(None),
    [dtypes.int32, dtypes.string], [1, 2], ["a", "b"], [TensorShape([2])], [],
    [("slice", 0, None, 1)], {"k": (1, 2)}])
def test_attrs_round_trip(value):
    assert attr_from_proto(attr_to_proto(value)) == value


def test_write_graph_and_import_graph_def(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.constant([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        first, second = tf.split(y, 2, name="halves")       # minitf's own Split form
        tf.identity(x[:, 1:], name="z")                      # a slice spec attr
        tf.add(first, second, name="sum")
    text_path = tf.train.write_graph(graph, str(tmp_path), "g.pbtxt")
    binary_path = tf.train.write_graph(graph.as_graph_def(), str(tmp_path), "g.pb",
                                       as_text=False)
    assert text_path == str(tmp_path / "g.pbtxt") and 'op: "MatMul"' in open(text_path).read()
    gd = tf.GraphDef()
    gd.ParseFromString(open(binary_path, "rb").read())
    assert gd == graph.as_graph_def()
    for prefix in ("import", "copy"):
        with tf.Graph().as_default() as g2:
            feed = tf.placeholder(tf.float32, [None, 2], name="feed")
            y2, s2, z2 = tf.import_graph_def(
                gd, input_map={"x:0": feed}, return_elements=["y:0", "sum:0", "z:0"],
                name=None if prefix == "import" else prefix)
            # no _output_shapes in this GraphDef: minitf has no shape functions to infer them
            assert y2.name == prefix + "/y:0" and y2.shape.ndims is None
            assert g2.get_operation_by_name(prefix + "/halves").type == "Split"
            with tf.Session() as sess:
                out = sess.run([y2, s2, z2], {feed: [[1.0, 1.0], [2.0, 0.0]]})
            assert out[0].tolist() == [[3.0], [2.0]] and out[1].tolist() == [[5.0]]
            assert out[2].tolist() == [[1.0], [0.0]]
            # names stay unique after an import
            assert tf.constant(1.0, name=prefix).op.name == prefix + "_1"


def test_output_shapes_come_back_with_add_shapes():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.matmul(x, tf.ones([2, 4]), name="y")
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(graph.as_graph_def(add_shapes=True), return_elements=["y:0"])
        assert y.shape.as_list() == [None, 4] and y.dtype == tf.float32


def test_import_graph_def_errors():
    gd = tf.GraphDef()
    gd.node.add(name="a", op="Placeholder").attr["dtype"].type = 1
    with pytest.raises(ValueError, match="not found in graph_def: \\[nope:0\\]"):
        with tf.Graph().as_default():
            tf.import_graph_def(gd, input_map={"nope:0": tf.constant(1.0)})
    with pytest.raises(TypeError, match="GraphDef proto"):
        tf.import_graph_def(gd.SerializeToString())
    unknown = tf.GraphDef()
    unknown.node.add(name="c", op="Dilation2D")
    with tf.Graph().as_default(), pytest.raises(tf.errors.NotFoundError,
                                                 match="Op type not registered 'Dilation2D'"):
        tf.import_graph_def(unknown)
    # TF's StridedSlice takes begin/end/strides inputs; minitf's keeps its slice in an attr
    tf_slice = tf.GraphDef()
    for name in ("x", "b", "e", "s"):
        node = tf_slice.node.add(name=name, op="Const")
        node.attr["dtype"].type = 3
        node.attr["value"].tensor.CopyFrom(tensor_to_proto(np.array([1], np.int32)))
    node = tf_slice.node.add(name="slice", op="StridedSlice", input=["x", "b", "e", "s"])
    node.attr["T"].type = 3
    node.attr["Index"].type = 3
    with tf.Graph().as_default(), pytest.raises(ValueError, match="builds this op differently"):
        tf.import_graph_def(tf_slice)
    broken = tf.GraphDef()
    broken.node.add(name="a", op="Identity", input=["b"])
    broken.node.add(name="b", op="Identity", input=["a"])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="cycle"):
        tf.import_graph_def(broken)


def test_graph_def_writes_tfs_forms_of_minitf_ops():
    graph = tf.Graph()
    with graph.as_default():
        r = tf.random_uniform([2, 3], -1.0, 1.0, seed=1, name="r")
        c = tf.cast(tf.constant([1, 2]), tf.float32, name="c")
    nodes = {n.name: n for n in graph.as_graph_def().node}
    assert [nodes[k].op for k in ("r/shape", "r/min", "r/max", "r/RandomUniform", "r/sub",
                                  "r/mul", "r")] == \
        ["Const", "Const", "Const", "RandomUniform", "Sub", "Mul", "AddV2"]
    assert set(nodes["r/RandomUniform"].attr) == {"seed", "seed2", "dtype", "T"}
    assert set(nodes["c"].attr) == {"SrcT", "DstT", "Truncate"}
    # the TF form runs in minitf too, with the range minitf asked for
    with tf.Graph().as_default():
        (r2,) = tf.import_graph_def(graph.as_graph_def(), return_elements=["r:0"], name="")
        with tf.Session() as sess:
            values = sess.run(r2)
    assert values.shape == (2, 3) and (values >= -1).all() and (values < 1).all()
    del r, c
