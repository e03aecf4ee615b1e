# reduce_logsumexp (stable, -inf rows) and count_nonzero, with shapes and gradients.
import numpy as np

from engine import tf

x = tf.constant([[1.0, 2.0, 0.0], [-np.inf, -np.inf, -np.inf], [1000.0, 1000.0, -5.0]])
words = tf.constant([["a", ""], ["", ""]])
outputs = [
    tf.reduce_logsumexp(x),
    tf.reduce_logsumexp(x, 1),
    tf.reduce_logsumexp(x, axis=1, keepdims=True),
    tf.count_nonzero(x),
    tf.count_nonzero(x, 0),
    tf.count_nonzero(words, axis=1, keepdims=True),
    tf.count_nonzero(tf.constant([0, 3, 0, 4]), dtype=tf.int32),
]
for t in outputs:
    print(t.shape, t.dtype.name)
w = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
grad = tf.gradients(tf.reduce_sum(tf.reduce_logsumexp(w, axis=1)), w)[0]
with tf.Session() as sess:
    sess.run(w.initializer)
    for value in sess.run(outputs):
        print(np.round(value, 5).tolist())
    print("grad", np.round(sess.run(grad), 5).tolist())
