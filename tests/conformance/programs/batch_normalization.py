# tf.layers.batch_normalization: variables, update ops, training and inference
# outputs, the moving averages after a few updates, gradients; the fused op
# (4-D) and the unfused path (2-D, fused=False); tf.nn.fused_batch_norm and
# tf.nn.batch_normalization directly.
import numpy as np

from engine import tf


def show(value, places=4):
    return (np.round(np.asarray(value, np.float64), places) + 0.0).tolist()


images = ((np.arange(2 * 3 * 3 * 2) * 7 % 13 - 4).reshape(2, 3, 3, 2) / 3).astype(np.float32)
rows = ((np.arange(4 * 3) * 5 % 7 - 2).reshape(4, 3) / 2).astype(np.float32)
x = tf.placeholder(tf.float32, [2, 3, 3, 2], name="x")
r = tf.placeholder(tf.float32, [4, 3], name="r")
training = tf.placeholder(tf.bool, [], name="training")

train_out = tf.layers.batch_normalization(x, training=True,
                                          gamma_initializer=tf.constant_initializer(1.5),
                                          beta_initializer=tf.constant_initializer(0.25))
infer_out = tf.layers.batch_normalization(x, training=False, name="frozen",
                                          moving_mean_initializer=tf.constant_initializer(0.5),
                                          moving_variance_initializer=tf.constant_initializer(2))
switch_out = tf.layers.batch_normalization(x, training=training, momentum=0.9, epsilon=0.01)
row_out = tf.layers.batch_normalization(r, training=True, center=False)
unfused = tf.layers.batch_normalization(x, training=True, fused=False, name="unfused")
nchw_style = tf.layers.batch_normalization(x, axis=1, training=True, name="axis1")

for v in tf.global_variables():
    print(v.name, v.shape, "trainable" if v in tf.trainable_variables() else "-")
updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
print("update ops", sorted(u.name for u in updates), {u.type for u in updates})
print("ops", train_out.op.type, infer_out.op.type, row_out.op.type, unfused.op.type,
      nchw_style.op.type)

loss = tf.reduce_sum(train_out * tf.constant(np.linspace(-1, 1, 36, dtype=np.float32)
                                             .reshape(2, 3, 3, 2)))
gamma, beta = tf.trainable_variables()[:2]
grads = tf.gradients(loss, [x, gamma, beta])
infer_grads = tf.gradients(tf.reduce_sum(infer_out * infer_out), [x])
with tf.control_dependencies(updates):
    step = tf.no_op(name="step")

fused_y, fused_mean, fused_var = tf.nn.fused_batch_norm(
    x, [1.0, 2.0], [0.0, 0.5], epsilon=0.001)
fused_infer = tf.nn.fused_batch_norm(x, [1.0, 2.0], [0.0, 0.5], mean=[0.5, -0.5],
                                     variance=[1.0, 4.0], is_training=False)[0]
manual = tf.nn.batch_normalization(r, mean=tf.constant([0.5, 0.0, -0.5]),
                                   variance=tf.constant([1.0, 2.0, 4.0]),
                                   offset=tf.constant([0.0, 1.0, 0.0]), scale=None,
                                   variance_epsilon=0.01)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    feed = {x: images, r: rows, training: True}
    a, b, c, d, e, f = sess.run([train_out, infer_out, switch_out, row_out, unfused, nchw_style],
                                feed)
    print("train", show(a[0, :, :, 0]), show(a[1, 2, :, 1]))
    print("infer", show(b[0, 1, :, :]))
    print("switch training", show(c[1, :, 0, 1]))
    print("rows", show(d))
    print("unfused", show(e[1, 1, :, :]))
    print("axis 1", show(f[0, :, 1, :]))
    print("switch inference", show(sess.run(switch_out, {x: images, training: False})[0, 0]))
    dx, dg, db = sess.run(grads, feed)
    print("dx", show(dx[0, :, :, 1]), "dgamma", show(dg), "dbeta", show(db))
    print("infer dx", show(sess.run(infer_grads, feed)[0][1, :, :, 0]))
    for _ in range(3):
        sess.run(step, feed)
    sess.run(step, {x: images, r: rows, training: False})      # no change: momentum 1
    for v in tf.global_variables():
        if "moving" in v.name:
            print(v.op.name, show(sess.run(v)))
    y, m, v = sess.run([fused_y, fused_mean, fused_var], feed)
    print("fused_batch_norm", show(y[1, 0]), "mean", show(m), "variance", show(v))
    print("fused inference", show(sess.run(fused_infer, feed)[0, 2]))
    print("batch_normalization", show(sess.run(manual, feed)))

# fused=True means "if possible": over axis 2 TF quietly builds the unfused ops.
print("fused axis 2:", tf.layers.batch_normalization(x, training=True, fused=True,
                                                     axis=2).op.type)
try:
    tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], is_training=False)
except ValueError as err:
    print("inference without statistics:", str(err).split(".")[0])
