# tf.Print, tf.check_numerics and the NaN/Inf tests: what a learner sees.
import os
import sys
import tempfile

import numpy as np

from engine import tf

x = tf.constant([[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]], name="x")
v = tf.constant([1, 2, 3, 4, 5])
flags = tf.constant([True, False])
words = tf.constant(["ab", "c"])
odd = tf.constant([np.nan, np.inf, -1.0, 1 / 3.0])
printed = tf.Print(x, [x, v, tf.constant(7), flags, words, odd], "vals: ")
everything = tf.Print(x, [x, v, odd], "all: ", summarize=10)
twice = tf.Print(v, [v], "first two runs: ", first_n=2)
nothing = tf.Print(x, [tf.zeros([0])], "empty: ")
y = tf.reduce_sum(printed * 2.0)
print(printed.op.type, printed.shape, printed.dtype.name, twice.shape)

checked = tf.check_numerics(odd, "my tensor")
clean = tf.check_numerics(x, "fine")
w = tf.Variable([1.0, 2.0])
grad = tf.gradients(tf.reduce_sum(tf.check_numerics(w * 3.0, "w") ** 2), w)[0]

log_path = tempfile.mkstemp()[1]
saved = os.dup(2)
with open(log_path, "w") as log:
    os.dup2(log.fileno(), 2)                 # capture what the kernels write to stderr
    try:
        with tf.Session() as sess:
            sess.run(w.initializer)
            print("y", sess.run(y))
            sess.run(everything)          # (one at a time: two Prints in one run may
            sess.run(nothing)             # print in either order)
            for _ in range(3):
                sess.run(twice)
            print("clean", sess.run(clean).tolist())
            print("grad", sess.run(grad).tolist())
            try:
                sess.run(checked)
            except tf.errors.InvalidArgumentError as e:
                print("InvalidArgumentError", [line for line in e.message.splitlines()
                                               if "Tensor had" in line][0])
            tests = sess.run([tf.is_nan(odd), tf.is_inf(odd), tf.is_finite(odd)])
            print([t.tolist() for t in tests])
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
with open(log_path) as log:
    for line in log:
        if line.startswith(("vals:", "all:", "first two", "empty:")):
            print("stderr:", line.rstrip())
os.remove(log_path)
