# tf.train.replica_device_setter: variables round robin over the ps tasks,
# everything else on the worker, explicit requests merged on top. (TF 2.21
# dropped tf.contrib's GreedyLoadBalancingStrategy: its unit test lives in
# tests/unit/test_device_setter.py.)
from engine import tf


def show(title):
    print("---", title)
    for op in tf.get_default_graph().get_operations():
        if op.type in ("VariableV2", "MatMul", "AddV2", "Const", "Mul"):
            print("  %-14s %-11s %r" % (op.name, op.type, op.device))


print("no ps tasks ->", tf.train.replica_device_setter(ps_tasks=0))
print("cluster without ps ->",
      tf.train.replica_device_setter(cluster={"worker": ["localhost:1"]}))

with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    v1 = tf.Variable(1.0, name="v1")
    v2 = tf.Variable(2.0, name="v2")
    v3 = tf.Variable(3.0, name="v3")
    v4 = tf.Variable(4.0, name="v4")
    v5 = tf.Variable(5.0, name="v5")
    total = v1 + v5
show("round robin over 2 ps tasks")

tf.reset_default_graph()
cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2", "h:3"], "worker": ["h:4", "h:5"]})
with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                              worker_device="/job:worker/task:1")):
    a = tf.Variable(tf.zeros([10, 10]), name="a")
    with tf.device("/job:ps/task:2"):
        pinned = tf.Variable(0.0, name="pinned")
    with tf.device("/cpu:0"):
        b = tf.Variable(tf.zeros([10]), name="b")
        prod = tf.matmul(a, tf.reshape(b, [10, 1]))
    c = tf.Variable(1.0, name="c")
show("from a ClusterSpec, with explicit devices merged")
