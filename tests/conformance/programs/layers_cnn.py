# tf.layers.conv2d, max_pooling2d, average_pooling2d, flatten, dropout and dense:
# variable and op names, shapes, the default initializers, and a small CNN
# trained for a few steps (constant initializers, so the numbers do not depend
# on random streams). Needs TF_USE_LEGACY_KERAS=1 on TF 2.21 (engine.py).
import numpy as np

from engine import tf


def show(value, places=4):
    return (np.round(np.asarray(value, np.float64), places) + 0.0).tolist()


x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
labels = tf.placeholder(tf.int32, [None], name="labels")
training = tf.placeholder_with_default(False, [], name="training")

h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                     kernel_initializer=tf.constant_initializer(
                         (np.arange(36) % 5 - 2).reshape(3, 3, 1, 4) / 8),
                     bias_initializer=tf.constant_initializer(0.125))
p = tf.layers.max_pooling2d(h, 2, 2)
h2 = tf.layers.conv2d(p, 6, [2, 3], strides=(1, 1), activation=tf.nn.relu,
                      kernel_initializer=tf.constant_initializer(
                          (np.arange(2 * 3 * 4 * 6) % 7 - 3).reshape(2, 3, 4, 6) / 16))
a = tf.layers.average_pooling2d(h2, pool_size=[1, 2], strides=1, padding="same")
flat = tf.layers.flatten(a)
dropped = tf.layers.dropout(flat, rate=0.5, training=training, seed=3)
logits = tf.layers.dense(dropped, 3, kernel_initializer=tf.constant_initializer(
    (np.arange(flat.shape[1].value * 3) % 9 - 4).reshape(-1, 3) / 32))
named = tf.layers.conv2d(x, 2, 1, name="pointwise", use_bias=False)
shared = tf.layers.conv2d(x, 2, 1, name="pointwise", use_bias=False, reuse=True)
strided = tf.layers.conv2d(x, 3, 3, strides=2, padding="valid", name="strided")
dilated = tf.layers.conv2d(x, 3, 3, dilation_rate=2, padding="same", name="dilated")

for t in (h, p, h2, a, flat, dropped, logits, named, shared, strided, dilated):
    print(t.name, t.shape)
for v in tf.global_variables():
    print(v.name, v.shape)
print("shared weights:", shared.op.inputs[1].op.inputs[0].name)

loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
kernel = tf.global_variables()[0]
grads = tf.gradients(loss, [kernel, tf.global_variables()[2]])
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

rng_images = ((np.arange(2 * 64) * 37 % 17 - 8) / 4).reshape(2, 8, 8, 1).astype(np.float32)
feed = {x: rng_images, labels: [2, 0]}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("first conv", show(sess.run(h, feed)[1, 2, :, 1]))
    print("pooled", show(sess.run(p, feed)[0, :, 1, 3]))
    print("second conv", show(sess.run(h2, feed)[0, 1, :, 4]))
    print("flat", show(sess.run(flat, feed)[1, :8]))
    print("logits", show(sess.run(logits, feed)))
    print("loss", show(sess.run(loss, feed)))
    g_kernel, g_kernel2 = sess.run(grads, feed)
    print("d kernel", show(g_kernel[:, :, 0, 2]))
    print("d kernel 2", show(g_kernel2[1, :, 2, 4]))
    for _ in range(3):
        sess.run(train, feed)
    print("loss after 3 steps", show(sess.run(loss, feed)))
    print("bias after", show(sess.run(tf.global_variables()[1])))

    # Default initializers: Glorot-uniform kernels within +-sqrt(6 / (fan_in + fan_out)),
    # zero biases.
    w, b = sess.run([tf.global_variables()[-2], tf.global_variables()[-1]])
    limit = np.sqrt(6.0 / (3 * 3 * 1 + 3 * 3 * 3))
    print("glorot", w.shape, bool(np.all(np.abs(w) <= limit)), bool(np.abs(w).max() > limit / 4),
          "bias", b.tolist())

    # Dropout: off unless training; on, about half the units are zeroed (never -0.0),
    # the others scaled by 2.
    kept = sess.run(flat, feed)
    off = sess.run(dropped, feed)
    on = sess.run(dropped, {x: rng_images, training: True})
    print("dropout off", dropped.op.type, bool(np.array_equal(off, kept)))
    print("dropout on", bool(np.all((on == 0) | np.isclose(on, 2 * kept))))
    many = sess.run(tf.layers.dropout(-tf.ones([100, 100]), rate=0.5, training=True, seed=3))
    print("dropout of 10000 -1s: about half dropped", 0.45 < np.mean(many == 0) < 0.55,
          "the rest", sorted(set(many[many != 0].tolist())), "a -0.0:",
          bool(np.signbit(many[many == 0]).any()))
    fixed = tf.layers.dropout(x, 0.25, training=False)
    print("dropout training=False", fixed.op.type, fixed.name)
