# tf.nn activations, cross-entropies and embedding lookups (one table, or shards
# on two parameter servers with the "mod" and "div" strategies): values,
# gradients and where the lookups run, against TF's.
import socket

import numpy as np

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def show(label, value):
    value = np.asarray(value)
    if value.dtype.kind == "f":
        value = np.round(value.astype(np.float64), 4) + 0.0
    print(label, value.tolist())


x = tf.constant([-20.0, -3.0, -0.5, 0.0, 0.5, 7.0, 30.0], name="x")
outputs = {name: getattr(tf.nn, name)(x) for name in
           ("relu6", "elu", "selu", "softplus", "softsign", "relu", "leaky_relu", "sigmoid")}
outputs["log_softmax"] = tf.nn.log_softmax(tf.constant([[1.0, 2.0, 3.0], [0.0, 0.0, 9.0]]))
outputs["relu6 int"] = tf.nn.relu6(tf.constant([-2, 3, 9]))
logits = tf.constant([[-30.0, 0.0, 2.0], [40.0, -1.0, 0.5]])
labels = tf.constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.3]])
outputs["sigmoid xent"] = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
outputs["weighted xent"] = tf.nn.weighted_cross_entropy_with_logits(
    labels=labels, logits=logits, pos_weight=3.0)
outputs["weighted xent targets="] = tf.nn.weighted_cross_entropy_with_logits(
    targets=labels, logits=logits, pos_weight=0.5)
w = tf.constant([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]])
outputs["xw_plus_b"] = tf.nn.xw_plus_b(logits, w, [0.5, -0.5])
for label in ("relu6", "elu", "selu", "softplus", "softsign", "sigmoid xent", "weighted xent",
              "xw_plus_b"):
    print("op:", label, outputs[label].op.type, outputs[label].op.name)

grads = {name: tf.gradients(tf.reduce_sum(outputs[name] * tf.range(7.0)), x)[0]
         for name in ("relu6", "elu", "selu", "softplus", "softsign")}
grads["sigmoid xent"] = tf.gradients(tf.reduce_sum(outputs["sigmoid xent"]), logits)[0]
grads["weighted xent"] = tf.gradients(tf.reduce_sum(outputs["weighted xent"]),
                                      [logits, labels])
grads["xw_plus_b"] = tf.gradients(tf.reduce_sum(outputs["xw_plus_b"]), w)[0]

table = tf.Variable(np.arange(12.0).reshape(6, 2).astype(np.float32), name="table")
ids = tf.constant([[4, 0], [4, 5]])
outputs["lookup"] = tf.nn.embedding_lookup(table, ids)
print("lookup:", outputs["lookup"].shape, outputs["lookup"].op.type,
      [c.decode() if isinstance(c, bytes) else c
       for c in outputs["lookup"].op.inputs[0].op.colocation_groups()])
grads["lookup"] = tf.convert_to_tensor(tf.gradients(
    tf.reduce_sum(outputs["lookup"] * [[[1.0], [2.0]], [[3.0], [4.0]]]), table)[0])

cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % free_port() for _ in range(2)],
                                "worker": ["localhost:%d" % free_port()]})
servers = [tf.train.Server(cluster, job_name=job, task_index=i)
           for job, i in (("ps", 0), ("ps", 1), ("worker", 0))]
sharded = tf.Graph()
with sharded.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster)):
    shards = [tf.Variable(np.arange(i * 10.0, i * 10.0 + 6).reshape(3, 2).astype(np.float32),
                          name="shard%d" % i) for i in range(2)]
    mod = tf.nn.embedding_lookup(shards, [5, 0, 3, 2, 3], name="by_mod")
    div = tf.nn.embedding_lookup(shards, [5, 0, 3, 2, 3], partition_strategy="div",
                                 name="by_div")
    loss = tf.reduce_sum(mod * tf.constant([[1.0], [2.0], [3.0], [4.0], [5.0]])) + \
        tf.reduce_sum(div)
    shard_grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, shards)]
print("shards on:", [s.device for s in shards])
gathers = sorted((op for op in sharded.get_operations()
                  if op.type == "GatherV2" and op.name.startswith("by_mod")),
                 key=lambda op: op.name)
print("mod lookups:", [(op.name, sorted(c.decode() if isinstance(c, bytes) else c
                                        for c in op.colocation_groups())) for op in gathers])
print("stitched:", mod.op.type, mod.shape, div.shape)
try:
    tf.nn.embedding_lookup([table, table], [0], partition_strategy="hash")
except ValueError as e:
    print("ValueError:", str(e).startswith("Unrecognized partition strategy: hash."))

with tf.Session() as sess:
    sess.run(table.initializer)
    for name, value in sess.run(outputs).items():
        show(name, value)
    for name, value in sess.run(grads).items():
        for i, g in enumerate(value if isinstance(value, list) else [value]):
            show("d %s%s" % (name, " [%d]" % i if isinstance(value, list) else ""), g)
with sharded.as_default(), tf.Session(servers[2].target) as sess:
    sess.run(tf.global_variables_initializer())
    show("mod", sess.run(mod))
    show("div", sess.run(div))
    for i, g in enumerate(sess.run(shard_grads)):
        show("d shard%d" % i, g)
