"""RunOptions(output_partition_graphs=True): TF's GraphDefs, one per device.

The same program against live TF is tests/conformance/programs/partition_graphs.py;
these tests check what the conformance program cannot print the same on both
engines: the GraphDefs' classes and contents, GPU host memory, minitf's
compressed transfers, a task with two devices, and caching.
"""

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.distributed.launcher import free_port
from tensorboard.compat.proto import config_pb2, graph_pb2
from tensorboard.compat.proto.tensor_pb2 import TensorProto

OPTIONS = tf.RunOptions(output_partition_graphs=True)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def nodes(md):
    return {n.name: n for g in md.partition_graphs for n in g.node}


def by_device(md):
    return {g.node[0].device: sorted(n.op for n in g.node) for g in md.partition_graphs}


def test_a_local_step_gives_one_graphdef_per_device_with_the_pairs_between():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/cpu:1"):
            y = tf.multiply(x, 3.0, name="y")
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            md = tf.RunMetadata()
            assert sess.run(y, {x: [1.0, 2.0]}, options=OPTIONS,
                            run_metadata=md).tolist() == [3.0, 6.0]
    assert all(isinstance(g, graph_pb2.GraphDef) for g in md.partition_graphs)
    assert [g.node[0].device for g in md.partition_graphs] == [CPU0, CPU1]
    assert by_device(md) == {CPU0: ["_Arg", "_Recv", "_Retval", "_Send"],
                             CPU1: ["Const", "Mul", "_Recv", "_Send"]}
    n = nodes(md)
    # The feed comes in on the client's device and goes to CPU:1; the result comes back.
    assert n["_arg_x_0_0"].attr["index"].i == 0 and n["_retval_y_0_0"].input == ["y/_3"]
    send, recv = n["_arg_x_0_0/_0"], n["_arg_x_0_0/_1"]
    assert send.input == ["_arg_x_0_0"] and n["y"].input == ["_arg_x_0_0/_1", "y/y"]
    for node in (send, recv):
        assert node.attr["tensor_name"].s == b"edge_0__arg_x_0_0"
        assert node.attr["send_device"].s.decode() == CPU0
        assert node.attr["recv_device"].s.decode() == CPU1
        assert node.attr["client_terminated"].b is False
    assert send.attr["T"].type == recv.attr["tensor_type"].type == 1   # DT_FLOAT
    # An op of the graph keeps all its attrs: the constant's value is there.
    assert n["y/y"].attr["value"].tensor.float_val == [3.0]
    assert md.partition_graphs[0].versions.producer == 2474


def test_the_graphs_are_the_same_in_every_run_and_empty_without_the_option():
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            y = tf.constant(1.0) + 2.0
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            first, second = tf.RunMetadata(), tf.RunMetadata()
            sess.run(y, options=OPTIONS, run_metadata=first)
            sess.run(y, options=OPTIONS, run_metadata=second)
            # (deterministic: a NodeDef's attrs are a map, serialized in any order)
            assert [g.SerializeToString(deterministic=True) for g in first.partition_graphs] \
                == [g.SerializeToString(deterministic=True) for g in second.partition_graphs]
            # A learner may change what they got: the next run is not affected.
            first.partition_graphs[0].node[0].name = "changed"
            third = tf.RunMetadata()
            sess.run(y, options=OPTIONS, run_metadata=third)
            assert third.partition_graphs[0].node[0].name != "changed"
            sess.run(y, run_metadata=third)
            assert third.partition_graphs == []
            sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=third)
            assert third.partition_graphs == []


def test_run_metadata_to_proto_carries_the_graphdefs():
    with tf.Graph().as_default():
        y = tf.constant([1.0, 2.0], name="c") * 2.0
        with tf.Session() as sess:
            md = tf.RunMetadata()
            sess.run(y, options=OPTIONS, run_metadata=md)
    pb = md.to_proto()
    assert isinstance(pb, config_pb2.RunMetadata)
    assert [g.SerializeToString(deterministic=True) for g in pb.partition_graphs] == \
        [g.SerializeToString(deterministic=True) for g in md.partition_graphs]
    (graph,) = pb.partition_graphs
    const = [n for n in graph.node if n.name == "c"][0]
    assert isinstance(const.attr["value"].tensor, TensorProto) and const.device == CPU0


def test_a_control_dependency_between_devices_sends_a_tiny_constant():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1.0, name="a")
        with tf.device("/cpu:1"):
            with tf.control_dependencies([a]):
                done = tf.no_op(name="done")
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            md = tf.RunMetadata()
            sess.run(done, options=OPTIONS, run_metadata=md)
    n = nodes(md)
    dummy = n["a/ctrl/_0"]
    assert dummy.op == "Const" and dummy.input == ["^a"] and dummy.device == CPU0
    assert [d.size for d in dummy.attr["value"].tensor.tensor_shape.dim] == [0]
    assert n["a/_1"].op == "_Send" and n["a/_1"].input == ["a/ctrl/_0"]
    assert n["a/_2"].op == "_Recv" and n["a/_3"].op == "Identity"
    assert n["a/_3"].input == ["a/_2"] and n["done"].input == ["^a/_3"]


def test_host_memory_tensors_of_a_gpu_travel_with_host_send_and_recv():
    config = tf.ConfigProto(device_count={"GPU": 1}, allow_soft_placement=True)
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.constant(np.ones([2, 3], np.float32), name="x")
            axis = tf.constant(0, name="axis")
        with tf.device("/gpu:0"):
            total = tf.reduce_sum(x, axis, name="total")
        with tf.Session(config=config) as sess:
            md = tf.RunMetadata()
            assert sess.run(total, options=OPTIONS, run_metadata=md).tolist() == [2.0] * 3
    ops = by_device(md)
    assert set(ops) == {CPU0, GPU0}
    # The data goes to GPU memory (_Recv), the axis to the host memory the GPU
    # kernel reads it from (_HostRecv); the result comes back from GPU memory.
    assert ops[GPU0] == ["Sum", "_HostRecv", "_Recv", "_Send"]
    host = [n for n in md.partition_graphs[1].node if n.op == "_HostRecv"][0]
    assert host.attr["_src"].s == b"axis" and host.attr["tensor_type"].type == 3  # DT_INT32


@pytest.fixture()
def two_tasks():
    cluster = tf.train.ClusterSpec({"w": ["localhost:%d" % free_port() for _ in range(2)]})
    config = tf.ConfigProto(device_count={"CPU": 2})
    servers = [tf.train.Server(cluster, job_name="w", task_index=i, config=config)
               for i in range(2)]
    yield servers
    for s in servers:
        s.stop()


def _remote_step(servers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:w/task:0"):
            x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/job:w/task:1/cpu:0"):
            a = tf.add(x, 1.0, name="a")
        with tf.device("/job:w/task:1/cpu:1"):
            b = tf.multiply(a, 2.0, name="b")
        with tf.Session(servers[0].target, graph=g) as sess:
            md = tf.RunMetadata()
            got = sess.run(b, {x: [1.0, 2.0, 3.0]}, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
                run_metadata=md)
    return got, md


def test_a_remote_step_is_cut_per_task_then_per_device(two_tasks):
    got, md = _remote_step(two_tasks)
    assert got.tolist() == [4.0, 6.0, 8.0]
    t1 = "/job:w/replica:0/task:1/device:"
    # Task 0 runs nothing: minitf's master hands the fed value to task 1 itself
    # (TF would show a task 0 partition forwarding it from the client's device).
    assert by_device(md) == {t1 + "CPU:0": ["AddV2", "Const", "_Recv", "_Send"],
                             t1 + "CPU:1": ["Const", "Mul", "_Recv", "_Send"]}
    n = nodes(md)
    # The fed value comes straight from the master (client-terminated) ...
    fed = n["_recv_x_0"]
    assert fed.op == "_Recv" and fed.attr["client_terminated"].b
    assert fed.attr["tensor_name"].s == b"x:0" and n["a"].input[0] == "_recv_x_0"
    assert fed.attr["send_device"].s == b"/job:w/replica:0/task:0/device:CPU:0"
    # ... the task cuts its partition between its two devices (TF's worker names) ...
    assert n["a_G0"].op == "_Send" and n["a_G1"].op == "_Recv" and n["b"].input[0] == "a_G1"
    assert n["a_G0"].attr["tensor_name"].s == n["a_G1"].attr["tensor_name"].s
    # ... and the fetched value goes back to the master from the device that made it.
    out = n["_send_b_0"]
    assert out.attr["client_terminated"].b and out.device == t1 + "CPU:1"
    assert out.attr["recv_device"].s == b"/job:w/replica:0/task:0/device:CPU:0"


def test_a_compressed_transfer_shows_its_encoder_and_minitf_s_own_attrs(two_tasks):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:w/task:1"):
            y = tf.constant([1.0, 2.0, 3.0]) * 2.0
        with tf.device("/job:w/task:0"):
            out = tf.identity(y, name="out")
        config = tf.ConfigProto()
        config.graph_options.transfer_compression = "bfloat16"
        with tf.Session(two_tasks[0].target, graph=g, config=config) as sess:
            md = tf.RunMetadata()
            sess.run(out, options=OPTIONS, run_metadata=md)
            # The RecvTensor record names the edge as the pair does.
            traced = tf.RunMetadata()
            sess.run(out, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=traced)
    ops = {n.op for n in md.partition_graphs[0].node} | {
        n.op for n in md.partition_graphs[1].node}
    assert {"Cast", "_Send", "_Recv", "Identity"} <= ops
    (recv,) = [n for g in md.partition_graphs for n in g.node if n.op == "_Recv"]
    assert recv.attr["tensor_type"].type == 14   # DT_BFLOAT16: what crosses the wire
    assert recv.attr["_minitf_compression"].s == b"bfloat16"
    assert recv.attr["_minitf_key"].s.startswith(b"mul:0;/job:w/replica:0/task:1/")
    labels = [ns.timeline_label for d in traced.step_stats.dev_stats for ns in d.node_stats
              if ns.node_name == "RecvTensor"]
    assert len(labels) == 1 and recv.attr["tensor_name"].s.decode() in labels[0]
