# What a traced step received from other tasks, read the way TF records it: one
# NodeExecStats named "RecvTensor" per tensor, on the receiving device, labelled
# "[<bytes>B] [<rate>Mb/s] edge_<n>_<producer> from <src> to <dst>", with the bytes in
# output[0].tensor_description.allocation_description.requested_bytes. Lessons 14-16
# count the bytes between tasks this way on both engines. A control edge carries 0
# bytes; a fetch made on another task travels to the master's task.
import re

import numpy as np
from engine import tf

LABEL = re.compile(r"^\[(\d+)B\] \[[^\]]*\] edge_\d+_(.+) from (\S+) to (\S+)$")


def task(device):
    return "/".join(p for p in device.split("/") if p.startswith(("job:", "task:")))


workers, _ = tf.test.create_local_cluster(2, 0)
x = tf.placeholder(tf.float32, [4, 3], name="x")
with tf.device("/job:worker/task:0"):
    w = tf.Variable(tf.ones([3, 5]), name="w")
    h = tf.matmul(x, w, name="h")
with tf.device("/job:worker/task:1"):
    out = tf.reduce_sum(h * 2.0, name="out")
    with tf.control_dependencies([out]):
        done = tf.no_op(name="done")
with tf.device("/job:worker/task:0"):
    with tf.control_dependencies([done]):
        final = tf.identity(h, name="final")


def received_in(md):
    received = []
    for dev in md.step_stats.dev_stats:
        for node in dev.node_stats:
            if node.node_name == "RecvTensor":
                nbytes, producer, src, dst = LABEL.match(node.timeline_label).groups()
                alloc = node.output[0].tensor_description.allocation_description.requested_bytes
                received.append((task(src), task(dst), int(nbytes),
                                 producer if int(nbytes) else "(control edge)", alloc,
                                 task(dev.device) == task(dst)))
    return received


with tf.Session(workers[0].target) as sess:
    sess.run(tf.global_variables_initializer())
    # On a busy machine TF's trace of a step now and then misses a RecvTensor
    # record (the tensor was asked for before the receiver's tracing began): a
    # few traced steps, the first with all three of this graph's transfers.
    for _ in range(5):
        md = tf.RunMetadata()
        sess.run([out, final], {x: np.ones([4, 3])},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        received = received_in(md)
        if len(received) == 3:
            break
    plain = tf.RunMetadata()
    sess.run(out, {x: np.ones([4, 3])}, run_metadata=plain)

for r in sorted(received):
    print("%s -> %s  %3d bytes  %-15s requested_bytes=%d  recorded on the receiver: %s" % r)
print("untraced step records nothing:",
      sum(1 for d in plain.step_stats.dev_stats for n in d.node_stats) == 0)
