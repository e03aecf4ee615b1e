# How tf.gradients adds up the gradients of a tensor that several ops read
# (TF's _AggregatedGrads and _MultiDeviceAddN): one AddN per device the
# contributions asked for, placed with its first contribution, then one AddN of
# the partial sums. With colocate_gradients_with_ops=True that last AddN is
# colocated with the op that made the tensor (lesson 14: a split model adds
# its gradients where the tensor was made); without it, it is not pinned.
from engine import tf


def aggregation(colocate):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:w/task:0"):
            x = tf.Variable(1.0, name="x")
            a = tf.multiply(x, 2.0, name="a")
            c1 = tf.multiply(a, 4.0, name="c1")
            c2 = tf.multiply(a, 5.0, name="c2")
        with tf.device("/job:w/task:1"):
            b1 = tf.multiply(a, 3.0, name="b1")
            b2 = tf.multiply(a, 6.0, name="b2")
        with tf.device("/job:w/task:2"):
            loss = tf.add_n([b1, b2, c1, c2], name="loss")
        [gx] = tf.gradients(loss, [x], colocate_gradients_with_ops=colocate)
        print("colocate_gradients_with_ops=%s" % colocate)
        for op in g.get_operations():
            if op.type == "AddN" and op.name.startswith("gradients"):
                inputs = sorted(i.name.replace("_grad/Mul", "_grad/mul") for i in op.inputs)
                groups = [c.decode().split("@")[1] for c in op.colocation_groups()]
                print("  %-18s device=%-14r adds %s" % (op.name, op.device, inputs))
                if colocate:
                    print("  %-18s colocated with %s" % ("", groups))



aggregation(False)
aggregation(True)

# tf.tuple (and so gate_gradients=GATE_OP) keeps each gated copy with its tensor.
with tf.Graph().as_default():
    with tf.device("/job:w/task:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/job:w/task:0"):
        b = tf.constant(2.0, name="b")
        ta, tb = tf.tuple([a, b])
    print("tuple copies:", ta.op.colocation_groups(), repr(ta.device),
          tb.op.colocation_groups(), repr(tb.device))
