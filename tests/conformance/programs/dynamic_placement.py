# Device scopes: device functions, nested string scopes, and the canonical
# form TF stores in op.device.
from engine import tf


def by_type(op):
    # Variables on the parameter server's CPU, everything else on worker 0.
    if op.type == "VariableV2":
        return "/job:ps/task:0/cpu:0"
    return "/job:worker/task:0"


with tf.device(by_type):
    w = tf.Variable(1.0, name="w")
    y = tf.multiply(w, 3.0, name="y")

for op in tf.get_default_graph().get_operations():
    print(f"{op.name:16} {op.type:12} {op.device!r}")

print("--- nested string scopes")
with tf.device("/job:a"):
    p = tf.constant(1, name="p")
    with tf.device("/task:1"):
        q = tf.constant(2, name="q")             # merged with the outer /job:a
        with tf.device("/cpu:0"):
            r = tf.constant(3, name="r")         # lower case normalised
        with tf.device("/device:CPU:0"):
            s = tf.constant(4, name="s")         # same as /cpu:0
        with tf.device("/job:b/gpu:1"):
            t = tf.constant(5, name="t")         # inner job overrides outer
    with tf.device(None):
        u = tf.constant(6, name="u")             # None clears every scope
with tf.device("/replica:0/task:2/device:GPU:3"):
    z = tf.constant(7, name="z")
with tf.device("/job:a/task:1"):
    with tf.device("/job:b"):
        zz = tf.constant(8, name="zz")           # job replaced, task kept
with tf.device("/gpu:0"):
    with tf.device(""):
        e = tf.constant(9, name="e")             # "" keeps the outer device
for x in [p, q, r, s, t, u, z, zz, e]:
    print(f"{x.op.name:3} {x.device!r}")

print("--- a device function inside a string scope")
with tf.device("/job:worker/task:3"):
    with tf.device(lambda op: "/cpu:0" if op.type == "Const" else "/gpu:0"):
        m = tf.constant(1.0, name="m")
        n = tf.square(m, name="n")
for x in [m, n]:
    print(f"{x.op.name:3} {x.device!r}")
