# Gradient clipping, small tf.nn helpers and learning-rate schedules.
import numpy as np

from engine import tf

g1 = tf.constant([[3.0, 4.0], [0.0, 0.0]])
g2 = tf.constant([12.0])
clipped, norm = tf.clip_by_global_norm([g1, None, g2], 6.5)
unclipped, big_norm = tf.clip_by_global_norm([g1, g2], 100.0)
x = tf.constant([[-2.0, 0.5], [3.0, -0.25]])
logits = tf.constant([[-30.0, 0.0, 2.0], [40.0, -1.0, 0.5]])
labels = tf.constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.3]])
global_step = tf.Variable(2500, dtype=tf.int64, trainable=False, name="global_step")
outputs = {
    "clip_by_value": tf.clip_by_value(x, -1.0, 1.0),
    "clip_by_norm": tf.clip_by_norm(x, 1.0),
    "clip_by_norm rows": tf.clip_by_norm(x, 1.0, axes=[1]),
    "global_norm": tf.global_norm([g1, g2]),
    "clipped": [c for c in clipped if c is not None],
    "norm": norm,
    "unclipped": unclipped,
    "l2_loss": tf.nn.l2_loss(x),
    "bias_add": tf.nn.bias_add(x, tf.constant([10.0, 20.0])),
    "leaky_relu": tf.nn.leaky_relu(x, alpha=0.1),
    "sigmoid xent": tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
    "exponential_decay": tf.train.exponential_decay(0.1, global_step, 1000, 0.5),
    "staircase": tf.train.exponential_decay(0.1, global_step, 1000, 0.5, staircase=True),
    "piecewise": tf.train.piecewise_constant(global_step, [1000, 2000, 3000],
                                             [1.0, 0.5, 0.25, 0.125]),
}
print("clipped[1] is None:", clipped[1] is None, [c.shape for c in clipped if c is not None])
print(outputs["sigmoid xent"].op.name, outputs["l2_loss"].shape, outputs["bias_add"].shape)

w = tf.Variable([[1.0, -2.0], [3.0, 4.0]])
loss = tf.reduce_sum(tf.clip_by_value(w, -1.5, 2.0) * 2.0) + tf.nn.l2_loss(w)
grad = tf.gradients(loss, w)[0]

p = tf.placeholder(tf.float32, [None, 1000])
keep = tf.placeholder(tf.float32, [])
dropped = tf.nn.dropout(p, keep_prob=keep)
print("dropout shape", dropped.shape)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for name, value in sess.run(outputs).items():
        value = [np.round(v, 5).tolist() for v in value] if isinstance(value, list) \
            else np.round(value, 5).tolist()
        print(name, value)
    print("grad", sess.run(grad).tolist())
    ones = np.ones((200, 1000), np.float32)
    d = sess.run(dropped, {p: ones, keep: 0.25})
    print("dropout values", sorted(set(np.round(d.ravel(), 4).tolist())),
          "kept fraction ~0.25:", bool(abs((d > 0).mean() - 0.25) < 0.01),
          "mean ~1:", bool(abs(d.mean() - 1.0) < 0.03))
    print("keep_prob 1:", bool((sess.run(dropped, {p: ones, keep: 1.0}) == 1).all()))
