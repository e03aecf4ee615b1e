# conformance: placement-log
# Ops pinned to a GPU that does not exist (or has no kernel for the dtype).
from engine import tf

with tf.device("/gpu:0"):
    counter = tf.Variable(7, name="counter")   # int32: no GPU variable kernel
    doubled = tf.multiply(tf.constant(1.5), 2.0, name="doubled")

print("requested:", counter.op.device, doubled.op.device)

# Without soft placement TF refuses to place the variable.
with tf.Session() as sess:
    try:
        sess.run(counter.initializer)
        print("no error?!")
    except tf.errors.InvalidArgumentError as e:
        print("error:", type(e).__name__)
        print("cannot assign:", "Cannot assign a device for operation" in e.message)
        print("names the op:", "counter" in e.message)
        print("names the device:", "/device:GPU:0" in e.message)

# With soft placement the placer falls back to the CPU (the log shows it).
config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
with tf.Session(config=config) as sess:
    sess.run(counter.initializer)
    print("counter:", sess.run(counter), "plus one:", sess.run(counter + 1))
    print("doubled:", repr(sess.run(doubled)))
    print("requested device unchanged:", doubled.op.device)
