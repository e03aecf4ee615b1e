# RunOptions(output_partition_graphs=True): run_metadata.partition_graphs holds
# one GraphDef per device that ran part of the step. Printed as a learner
# would read them: how many, each one's device and op types, and the
# _Send/_Recv pairs (their tensor_name is TF's "edge_<id>_<producer>"; the id
# numbers an edge of a graph only the runtime sees, so it is printed as "*").
import re

from engine import tf

OPTIONS = tf.RunOptions(output_partition_graphs=True)


def edge(name):
    return re.sub(r"^edge_\d+_", "edge_*_", name)


def short(device):
    return device.replace("/replica:0", "").replace("/device:", "/")


def show(title, md):
    graphs = sorted(md.partition_graphs, key=lambda g: g.node[0].device)
    print(title, "-", len(graphs), "partition(s)")
    for g in graphs:
        print("  devices:", sorted({short(n.device) for n in g.node}))
        print("  ops:", sorted(n.op for n in g.node))
        for n in sorted(g.node, key=lambda n: (n.op, edge(n.attr["tensor_name"].s.decode()))):
            if n.op in ("_Send", "_Recv"):
                a = n.attr
                print("    %-5s %-16s %s -> %s client_terminated=%s" % (
                    n.op, edge(a["tensor_name"].s.decode()), short(a["send_device"].s.decode()),
                    short(a["recv_device"].s.decode()), a["client_terminated"].b))
    pairs = {}
    for g in graphs:
        for n in g.node:
            if n.op in ("_Send", "_Recv") and not n.attr["client_terminated"].b:
                key = (n.attr["tensor_name"].s, n.attr["send_device"].s, n.attr["recv_device"].s)
                pairs.setdefault(key, []).append(n.op)
    print("  every _Send has its _Recv:", all(sorted(v) == ["_Recv", "_Send"]
                                             for v in pairs.values()))


two_cpus = tf.ConfigProto(device_count={"CPU": 2})

# A local session, everything on one device: one partition; the feed is an
# _Arg, the fetch a _Retval.
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:0"):
        y = tf.multiply(x, 2.0, name="y")
    unused = tf.square(x, name="unused")
    with tf.Session(config=two_cpus) as sess:
        md = tf.RunMetadata()
        print("y =", sess.run(y, {x: [1.0, 2.0]}, options=OPTIONS, run_metadata=md))
        show("local, one device", md)
        print("names:", sorted(n.name for g in md.partition_graphs for n in g.node))
        plain = tf.RunMetadata()
        sess.run(y, {x: [1.0, 2.0]}, run_metadata=plain)
        print("without the option:", len(plain.partition_graphs))

# A local session over two CPUs: a value goes to CPU:1 and the result comes
# back to the client's device, CPU:0; a control dependency crosses as a tiny
# constant, received through an Identity.
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:0"):
        a = tf.add(x, 1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.multiply(a, 3.0, name="b")
        with tf.control_dependencies([a]):
            done = tf.no_op(name="done")
    with tf.Session(config=two_cpus) as sess:
        md = tf.RunMetadata()
        print("b =", sess.run([b, done], {x: [1.0, 2.0]}, options=OPTIONS, run_metadata=md)[0])
        show("local, two devices", md)
        print("send/recv names:", sorted(n.name for g in md.partition_graphs for n in g.node
                                         if n.op in ("_Send", "_Recv")))
        print("GraphDef versions:", [g.versions.producer > 0 for g in md.partition_graphs])

# A two-task cluster: the master (task 0) receives the feed from the client
# and sends the fetch back (client-terminated pairs); a value goes to task 1
# and back, and task 1's update tells task 0 it is done.
workers, _ = tf.test.create_local_cluster(num_workers=2, num_ps=0)
with tf.Graph().as_default():
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [2], name="x")
        a = tf.add(x, 1.0, name="a")
    with tf.device("/job:worker/task:1"):
        v = tf.Variable([0.0, 0.0], name="v")
        b = tf.multiply(a, 3.0, name="b")
        update = tf.assign_add(v, b, name="update")
    with tf.device("/job:worker/task:0"):
        with tf.control_dependencies([update]):
            c = tf.subtract(b, a, name="c")
    with tf.Session(workers[0].target) as sess:
        sess.run(v.initializer)
        md = tf.RunMetadata()
        print("c =", sess.run(c, {x: [1.0, 2.0]}, options=OPTIONS, run_metadata=md))
        show("two tasks", md)
        print("placed:", sorted((n.name, short(n.device)) for g in md.partition_graphs
                                for n in g.node if n.name in ("a", "b", "c", "v", "update")))
        print("send/recv names:", sorted(n.name for g in md.partition_graphs for n in g.node
                                         if n.op in ("_Send", "_Recv")))
