# tf.metrics as TF1 evaluation code uses them: local variables, update ops run
# once per batch, the value read at the end; names and collections too.
import numpy as np

from engine import tf

labels = tf.placeholder(tf.int64, [None])
predictions = tf.placeholder(tf.int64, [None])
scores = tf.placeholder(tf.float32, [None])
weights = tf.placeholder(tf.float32, [None])

acc, acc_update = tf.metrics.accuracy(labels, predictions)
wacc, wacc_update = tf.metrics.accuracy(labels, predictions, weights=weights, name="weighted")
avg, avg_update = tf.metrics.mean(scores)
wavg, wavg_update = tf.metrics.mean(scores, weights=weights)
prec, prec_update = tf.metrics.precision(labels, predictions)
rec, rec_update = tf.metrics.recall(labels, predictions, weights=weights)
auc, auc_update = tf.metrics.auc(labels, scores, num_thresholds=50)
pr_auc, pr_auc_update = tf.metrics.auc(labels, scores, curve="PR", num_thresholds=20,
                                       summation_method="minoring")
tp, tp_update = tf.metrics.true_positives(labels, predictions)
fn, fn_update = tf.metrics.false_negatives(labels, predictions)
collected, collected_update = tf.metrics.mean(scores, metrics_collections=["my_metrics"],
                                              updates_collections=["my_updates"])

print("value/update:", acc.op.name, acc_update.op.name, prec.op.name, auc.op.name,
      auc_update.op.name, tp.op.type, tp_update.op.type)
print("local variables:", [v.op.name for v in tf.local_variables()])
print("metric variables:", len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)),
      "global:", tf.global_variables(), "trainable:", tf.trainable_variables())
print("collections:", [t.op.name for t in tf.get_collection("my_metrics")],
      [t.op.name for t in tf.get_collection("my_updates")])

batches = [
    {labels: [1, 0, 1, 1], predictions: [1, 0, 0, 1], scores: [0.9, 0.2, 0.4, 0.7],
     weights: [1.0, 1.0, 2.0, 0.0]},
    {labels: [0, 0, 1], predictions: [1, 0, 1], scores: [0.6, 0.1, 0.8],
     weights: [0.5, 1.0, 1.0]},
]
updates = [acc_update, wacc_update, avg_update, wavg_update, prec_update, rec_update,
           auc_update, pr_auc_update, tp_update, fn_update, collected_update]
values = [acc, wacc, avg, wavg, prec, rec, auc, pr_auc, tp, fn, collected]
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    print("before any batch:", np.round(sess.run(values), 5).tolist())
    for i, batch in enumerate(batches):
        print("update %d:" % i, np.round(sess.run(updates, batch), 5).tolist())
    print("after both:", np.round(sess.run(values), 5).tolist())
    sess.run(tf.local_variables_initializer())
    print("reset:", np.round(sess.run([acc, tp]), 5).tolist())
    try:
        sess.run(auc_update, {labels: [1], scores: [1.5]})
    except tf.errors.InvalidArgumentError as e:
        print("auc of a score above 1:", type(e).__name__,
              "predictions must be in [0, 1]" in e.message)
