# Every TF1 loss with weights and reductions: values, op names, collections,
# gradients, against TF's.
import numpy as np

from engine import tf

labels = tf.constant([[1.0, 0.0], [0.5, 2.0], [0.0, 1.0]])
predictions = tf.constant([[0.8, 0.3], [1.5, 1.0], [0.1, 0.4]])
probabilities = tf.constant([[0.9, 0.2], [0.6, 0.3], [0.1, 0.7]])
binary = tf.constant([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
logits = tf.constant([[2.0, -1.0, 0.5], [0.0, 3.0, -2.0], [1.0, 1.0, 1.0]])
onehot = tf.constant([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
classes = tf.constant([0, 2, 1])
per_example = tf.constant([1.0, 0.0, 2.0])
per_element = tf.constant([[1.0, 0.5], [0.0, 2.0], [1.0, 1.0]])
unit = tf.nn.l2_normalize(predictions, axis=1)
unit_labels = tf.nn.l2_normalize(labels + 0.1, axis=1)

R = tf.losses.Reduction
losses = {
    "absolute_difference": tf.losses.absolute_difference(labels, predictions),
    "absolute_difference weights": tf.losses.absolute_difference(
        labels, predictions, weights=tf.reshape(per_example, [3, 1])),
    "cosine_distance": tf.losses.cosine_distance(unit_labels, unit, axis=1),
    "hinge_loss": tf.losses.hinge_loss(binary, predictions - 0.5),
    "huber_loss": tf.losses.huber_loss(labels, predictions),
    "huber_loss delta": tf.losses.huber_loss(labels, predictions, delta=0.5),
    "log_loss": tf.losses.log_loss(binary, probabilities),
    "mean_pairwise_squared_error": tf.losses.mean_pairwise_squared_error(labels, predictions),
    "mean_pairwise weights": tf.losses.mean_pairwise_squared_error(
        labels, predictions, weights=tf.reshape(per_example, [3, 1])),
    "mean_squared_error": tf.losses.mean_squared_error(labels, predictions),
    "mse element weights": tf.losses.mean_squared_error(labels, predictions,
                                                        weights=per_element),
    "mse SUM": tf.losses.mean_squared_error(labels, predictions, reduction=R.SUM),
    "mse MEAN": tf.losses.mean_squared_error(labels, predictions, weights=per_element,
                                             reduction=R.MEAN),
    "mse SUM_OVER_BATCH_SIZE": tf.losses.mean_squared_error(
        labels, predictions, weights=per_element, reduction=R.SUM_OVER_BATCH_SIZE),
    "mse NONE": tf.losses.mean_squared_error(labels, predictions, weights=2.0,
                                             reduction=R.NONE, loss_collection="per_element"),
    "mse all weights zero": tf.losses.mean_squared_error(labels, predictions, weights=0.0),
    "sigmoid_cross_entropy": tf.losses.sigmoid_cross_entropy(binary, predictions),
    "sigmoid smoothing": tf.losses.sigmoid_cross_entropy(binary, predictions,
                                                         label_smoothing=0.2),
    "softmax_cross_entropy": tf.losses.softmax_cross_entropy(onehot, logits),
    "softmax smoothing weights": tf.losses.softmax_cross_entropy(
        onehot, logits, weights=per_example, label_smoothing=0.1),
    "sparse_softmax_cross_entropy": tf.losses.sparse_softmax_cross_entropy(classes, logits),
    "sparse labels [3, 1] weights": tf.losses.sparse_softmax_cross_entropy(
        tf.reshape(classes, [3, 1]), logits, weights=per_example),
    "compute_weighted_loss": tf.losses.compute_weighted_loss(per_element, weights=per_element),
    "scoped": tf.losses.mean_squared_error(labels, predictions, scope="my_mse"),
}
not_collected = tf.losses.mean_squared_error(labels, predictions, loss_collection=None)
for name, t in losses.items():
    print("op:", name, t.op.name, t.op.type, t.shape)
print("not collected:", not_collected.op.name, not_collected in tf.losses.get_losses())
print("collected:", len(tf.losses.get_losses()), len(tf.get_collection(tf.GraphKeys.LOSSES)),
      [t.op.name for t in tf.losses.get_losses(scope="my_mse")])
print("regularization loss with none:", tf.losses.get_regularization_loss().op.type)
w = tf.Variable([[1.0, 2.0], [3.0, -1.0]], name="w")
tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, 0.1 * tf.nn.l2_loss(w))
tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, 0.01 * tf.reduce_sum(tf.abs(w)))
model_loss = tf.losses.mean_squared_error(tf.constant([[1.0, 1.0]]), tf.matmul([[1.0, 1.0]], w))
regularization = tf.losses.get_regularization_loss()
total = tf.losses.get_total_loss()
without = tf.losses.get_total_loss(add_regularization_losses=False, name="without_reg")
print("totals:", regularization.op.name, total.op.name, total.op.type, without.op.name)
grad = tf.gradients(total, w)[0]
grad_huber = tf.gradients(tf.losses.huber_loss(labels, predictions * tf.reduce_sum(w)), w)[0]
try:
    tf.losses.mean_squared_error(labels, predictions, weights=tf.ones([2]))
except ValueError as e:
    print("ValueError:", "weights can not be broadcast to values" in str(e))
try:
    tf.losses.mean_squared_error(labels, predictions, reduction="average")
except ValueError as e:
    print("ValueError:", str(e).startswith("Invalid Reduction Key average."))

with tf.Session() as sess:
    sess.run(w.initializer)
    for name, value in sess.run(losses).items():
        print(name, np.round(value, 5).tolist())
    print("regularization, total, without:",
          np.round(sess.run([regularization, total, without]), 5).tolist())
    print("d total / d w:", np.round(sess.run(grad), 5).tolist())
    print("d huber / d w:", np.round(sess.run(grad_huber), 5).tolist())
