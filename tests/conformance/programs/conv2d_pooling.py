# tf.nn.conv2d, max_pool, avg_pool and conv2d_transpose: values, shapes and
# gradients for SAME and VALID padding and strides 1 and 2; the errors.
# Inputs are multiples of 1/4 and filters multiples of 1/8, so every sum of
# products is exact in float32 whatever order an engine adds in.
import numpy as np

from engine import tf


def show(value):
    return (np.round(np.asarray(value, np.float64), 4) + 0.0).tolist()


def error_text(e):
    """The line of an error that says what went wrong (TF's run-time errors wrap it
    in "Graph execution error:" and a traceback of where the op was made)."""
    if not isinstance(e, tf.errors.OpError):
        return str(e).splitlines()[0]
    lines = [line for line in e.message.splitlines() if line.strip() and not line.startswith(
        (" ", "\t", "Graph execution error", "Detected at node", "Node:"))]
    return lines[-1]


def attempt(label, action):
    try:
        result = action()
        print(label, "ok", getattr(result, "shape", result))
    except Exception as e:  # noqa: BLE001 - the class and text are the point
        print(label, type(e).__name__, error_text(e))


images = (np.arange(2 * 5 * 6 * 2) * 7 % 11 - 5).reshape(2, 5, 6, 2).astype(np.float32) / 4
kernel = (np.arange(3 * 3 * 2 * 3) * 5 % 9 - 4).reshape(3, 3, 2, 3).astype(np.float32) / 8
x = tf.placeholder(tf.float32, [2, 5, 6, 2], name="x")
w = tf.Variable(kernel, name="w")

cases = {}
for padding in ("SAME", "VALID"):
    for stride in (1, 2):
        name = "%s_%d" % (padding.lower(), stride)
        y = tf.nn.conv2d(x, w, strides=[1, stride, stride, 1], padding=padding, name="conv_" + name)
        mp = tf.nn.max_pool(x, ksize=[1, 3, 3, 1], strides=[1, stride, stride, 1],
                            padding=padding, name="max_" + name)
        ap = tf.nn.avg_pool(x, ksize=[1, 3, 3, 1], strides=[1, stride, stride, 1],
                            padding=padding, name="avg_" + name)
        # A weighted sum, so that every output position has its own gradient.
        weights = np.arange(1, 1 + y.shape.num_elements()).reshape(y.shape.as_list()) / 8
        loss = (tf.reduce_sum(y * weights.astype(np.float32)) + tf.reduce_sum(mp * mp)
                + tf.reduce_sum(ap * 3.0))
        dx, dw = tf.gradients(loss, [x, w])
        cases[name] = (y, mp, ap, dx, dw)
        print(name, y.op.type, y.shape, mp.shape, ap.shape, dx.op.type, dw.op.type)

dilated = tf.nn.conv2d(x, w, strides=1, padding="SAME", dilations=2, name="dilated")
explicit = tf.nn.conv2d(x, w, strides=[1, 1, 2, 1], padding=[[0, 0], [1, 0], [2, 1], [0, 0]])
pooled_2d = tf.nn.max_pool2d(x, 2, 2, "VALID")
avg_2d = tf.nn.avg_pool2d(x, [2, 3], [1, 2], "SAME")
transposed = tf.nn.conv2d_transpose(x, tf.constant(kernel[:, :, :, :2].transpose(0, 1, 3, 2)),
                                    output_shape=[2, 10, 12, 2], strides=[1, 2, 2, 1])
print("dilated", dilated.shape, "explicit", explicit.shape, "pool2d", pooled_2d.shape,
      avg_2d.shape, "transpose", transposed.op.type, transposed.shape)

with tf.Session() as sess:
    sess.run(w.initializer)
    feed = {x: images}
    for name, tensors in cases.items():
        y, mp, ap, dx, dw = sess.run(tensors, feed)
        print(name, "conv", show(y[1, :, :, 2]))
        print(name, "max", show(mp[0, :, :, 1]), "avg", show(ap[1, :, :, 0]))
        print(name, "dx", show(dx[0, :, :, 0]))
        print(name, "dw", show(dw[:, :, 1, 0]))
    d, e, p2, a2, t = sess.run([dilated, explicit, pooled_2d, avg_2d, transposed], feed)
    print("dilated", show(d[0, :, :, 1]))
    print("explicit", show(e[1, :, :, 0]))
    print("pool2d", show(p2[1, :, :, 1]), "avg2d", show(a2[0, :, :, 0]))
    print("transpose", show(t[0, :4, :5, 1]))

    # The window's first element wins a tie; NaN never wins the forward pass.
    ties = tf.placeholder(tf.float32, [1, 2, 4, 1])
    tie_pool = tf.nn.max_pool(ties, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    tie_grad = tf.gradients(tie_pool, ties)[0]
    value = np.array([[1, 3, 5, np.nan], [3, 2, 5, 4]], np.float32).reshape(1, 2, 4, 1)
    out, grad = sess.run([tie_pool, tie_grad], {ties: value})
    print("ties", out.ravel().tolist(), grad.reshape(2, 4).tolist())

    attempt("valid too big", lambda: tf.nn.conv2d(x, tf.zeros([6, 6, 2, 1]), [1, 1, 1, 1],
                                                  "VALID"))
    attempt("pool too big", lambda: tf.nn.avg_pool(x, [1, 6, 6, 1], [1, 1, 1, 1], "VALID"))
    attempt("bad padding", lambda: tf.nn.conv2d(x, w, [1, 1, 1, 1], "FULL"))
    attempt("bad strides", lambda: tf.nn.conv2d(x, w, [1, 2, 1], "SAME"))
    attempt("rank 3", lambda: tf.nn.conv2d(tf.zeros([5, 6, 2]), w, [1, 1, 1, 1], "SAME"))
    attempt("depth", lambda: tf.nn.conv2d(x, tf.zeros([3, 3, 3, 1]), [1, 1, 1, 1], "SAME"))
    nchw = tf.nn.conv2d(tf.zeros([1, 2, 5, 5]), w, [1, 1, 1, 1], "SAME", data_format="NCHW")
    print("nchw shape", nchw.shape)
    attempt("nchw on cpu", lambda: sess.run(nchw))
    pool_nchw = tf.nn.max_pool(tf.zeros([1, 2, 4, 4]), [1, 1, 2, 2], [1, 1, 2, 2], "VALID",
                               data_format="NCHW")
    attempt("nchw pool on cpu", lambda: sess.run(pool_nchw))
    batch_stride = tf.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
    attempt("batch stride", lambda: sess.run(batch_stride, feed))
