# conformance: placement-log
# log_device_placement=True makes the session report where each op runs.
# The harness collects those lines (sorted) and compares them too.
from engine import tf

a = tf.constant(2.0, name="a")
b = tf.add(a, 3.0, name="b")
v = tf.Variable(1.0, name="v")
total = tf.add(b, v, name="total")

config = tf.ConfigProto(log_device_placement=True)
with tf.Session(config=config) as sess:
    sess.run(v.initializer)
    print("total:", sess.run(total))
