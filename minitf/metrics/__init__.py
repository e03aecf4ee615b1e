"""``tf.metrics``: streaming evaluation metrics, as TF1 evaluation code uses them.

A metric is not one op but a pair, because an evaluation set is fed in
batches::

    acc, acc_update = tf.metrics.accuracy(labels, predictions)
    sess.run(tf.local_variables_initializer())     # the running totals start at 0
    for batch in batches:
        sess.run(acc_update, feed_dict=batch)       # add this batch to the totals
    print(sess.run(acc))                            # the metric over all batches

The running totals are *local* variables (``total``, ``count``,
``true_positives``...; collections LOCAL_VARIABLES and METRIC_VARIABLES) in a
variable scope named after the metric (``accuracy/total``); the update op adds
a batch to them and returns the metric so far; the value tensor reads them.
Everything is built from ordinary ops (``assign_add``, ``div_no_nan``...),
exactly as TF builds it, so op and variable names match TF's.
"""

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import array_ops, debug_ops, math_ops, reduction_ops
from minitf.ops import variables as _variables
from minitf.ops.core import constant, convert_to_tensor
from minitf.ops.variable_scope import variable_scope

__all__ = ["mean", "accuracy", "true_positives", "false_positives", "true_negatives",
           "false_negatives", "precision", "recall", "auc"]


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, non-trainable local variable holding a running total."""
    return _variables.Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                               collections=[GraphKeys.LOCAL_VARIABLES,
                                            GraphKeys.METRIC_VARIABLES],
                               validate_shape=validate_shape, name=name)


def _add_to(collections, value):
    if collections:
        get_default_graph().add_to_collections(collections, value)


def _squeezable(labels, predictions):
    """TF's remove_squeezable_dimensions: a trailing axis of size 1 on one side
    goes when the other side has one rank less."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        if pr - lr == 1 and predictions.shape[-1].is_compatible_with(1):
            predictions = array_ops.squeeze(predictions, [-1])
        elif lr - pr == 1 and labels.shape[-1].is_compatible_with(1):
            labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def _remove_squeezable_dimensions(predictions, labels, weights):
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = _squeezable(convert_to_tensor(labels), predictions)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape,
                                                                   labels.shape))
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr == 0 or wr is None or pr is None:
        return predictions, labels, weights
    if wr - pr == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif pr - wr == 1:
        weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def _broadcast_weights(weights, values):
    """``weights`` broadcast to ``values``'s shape (as TF: unchanged if equal)."""
    if weights.shape.is_fully_defined() and values.shape.is_fully_defined() and \
            weights.shape.is_compatible_with(values.shape):
        return weights
    return math_ops.multiply(weights, array_ops.ones_like(values), name="broadcast_weights")


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of ``values`` over every batch seen: ``total / count``."""
    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(convert_to_tensor(values), dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = reduction_ops.reduce_sum(weights)
        update_total = _variables.assign_add(total, reduction_ops.reduce_sum(values))
        with get_default_graph().control_dependencies([values]):
            update_count = _variables.assign_add(count, num_values)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0.0), name="value")
        _add_to(metrics_collections, value)
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                        name="update_op")
        _add_to(updates_collections, update_op)
        return value, update_op


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often ``predictions`` equals ``labels``: the mean of ``equal`` as 0/1."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def _count_condition(values, weights, metrics_collections, updates_collections):
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = array_ops.identity(count)
    _add_to(metrics_collections, value)
    update_op = _variables.assign_add(count, reduction_ops.reduce_sum(values))
    _add_to(updates_collections, update_op)
    return value, update_op


def _counter(default_name, want_label, want_prediction):
    def counter(labels, predictions, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(convert_to_tensor(predictions), dtypes.bool),
                math_ops.cast(convert_to_tensor(labels), dtypes.bool), weights)
            hit = math_ops.logical_and(math_ops.equal(labels, want_label),
                                       math_ops.equal(predictions, want_prediction))
            return _count_condition(hit, weights, metrics_collections, updates_collections)
    counter.__name__ = default_name
    counter.__doc__ = ("The (weighted) number of elements with label %s and prediction %s, "
                       "over every batch seen." % (want_label, want_prediction))
    return counter


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
true_negatives = _counter("true_negatives", False, False)
false_negatives = _counter("false_negatives", True, False)


def _ratio(default_name, other, labels, predictions, weights, metrics_collections,
           updates_collections, name):
    """``tp / (tp + other)``, 0 before there is anything to count."""
    with variable_scope(name, default_name, [predictions, labels, weights]):
        predictions, labels, weights = _remove_squeezable_dimensions(
            math_ops.cast(convert_to_tensor(predictions), dtypes.bool),
            math_ops.cast(convert_to_tensor(labels), dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        o, o_update = other(labels, predictions, weights)

        def compute(tp, o, name):
            return array_ops.where(math_ops.greater(tp + o, 0), math_ops.divide(tp, tp + o),
                                   0, name=name)
        value = compute(tp, o, "value")
        _add_to(metrics_collections, value)
        update_op = compute(tp_update, o_update, "update_op")
        _add_to(updates_collections, update_op)
        return value, update_op


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """Of the examples predicted positive, the fraction that are: ``tp / (tp + fp)``."""
    return _ratio("precision", false_positives, labels, predictions, weights,
                  metrics_collections, updates_collections, name)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """Of the positive examples, the fraction predicted positive: ``tp / (tp + fn)``."""
    return _ratio("recall", false_negatives, labels, predictions, weights,
                  metrics_collections, updates_collections, name)


def _confusion_at_thresholds(labels, predictions, thresholds, weights):
    """Running tp/fn/tn/fp counts at each threshold (a prediction is positive when
    it is above the threshold), with TF's check that predictions are in [0, 1]."""
    checks = [debug_ops.assert_greater_equal(predictions, math_ops.cast(0.0, predictions.dtype),
                                             message="predictions must be in [0, 1]"),
              debug_ops.assert_less_equal(predictions, math_ops.cast(1.0, predictions.dtype),
                                          message="predictions must be in [0, 1]")]
    with get_default_graph().control_dependencies(checks):
        predictions, labels, weights = _remove_squeezable_dimensions(
            math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool),
            weights)
    n = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(math_ops.cast(labels, dtypes.bool), [1, -1])
    count = predictions_2d.shape.as_list()[0]
    if count is None:
        count = array_ops.shape(predictions_2d)[0]
    thresh_tiled = array_ops.tile(array_ops.expand_dims(constant(thresholds), 1),
                                  array_ops.stack([1, count]) if not isinstance(count, int)
                                  else [1, count])
    pred_is_pos = math_ops.greater(array_ops.tile(array_ops.transpose(predictions_2d), [n, 1]),
                                   thresh_tiled)
    pred_is_neg = math_ops.logical_not(pred_is_pos)
    label_is_pos = array_ops.tile(labels_2d, [n, 1])
    label_is_neg = math_ops.logical_not(label_is_pos)
    weights_tiled = None
    if weights is not None:
        weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [n, 1])
    values, updates = {}, {}
    for key, name, a, b in (("tp", "true_positives", label_is_pos, pred_is_pos),
                            ("fn", "false_negatives", label_is_pos, pred_is_neg),
                            ("tn", "true_negatives", label_is_neg, pred_is_neg),
                            ("fp", "false_positives", label_is_neg, pred_is_pos)):
        var = metric_variable([n], dtypes.float32, name=name)
        hit = math_ops.cast(math_ops.logical_and(a, b), dtypes.float32)
        if weights_tiled is not None:
            hit = hit * weights_tiled
        updates[key] = _variables.assign_add(var, reduction_ops.reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC (or precision-recall) curve, approximated as TF does:
    counts at ``num_thresholds`` thresholds in [0, 1], then a Riemann sum
    (``trapezoidal``, ``minoring`` or ``majoring``)."""
    with variable_scope(name, "auc", [labels, predictions, weights]):
        if curve not in ("ROC", "PR"):
            raise ValueError("Curve must be either ROC or PR. Curve %s is unknown." % curve)
        if summation_method not in ("trapezoidal", "minoring", "majoring"):
            raise ValueError("minitf's auc supports summation_method 'trapezoidal', "
                             "'minoring' and 'majoring', not %r" % (summation_method,))
        kepsilon = 1e-7
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1)
                          for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + list(thresholds) + [1.0 + kepsilon]
        values, updates = _confusion_at_thresholds(convert_to_tensor(labels),
                                                   convert_to_tensor(predictions),
                                                   thresholds, weights)
        epsilon = 1.0e-6
        k = num_thresholds

        def compute(tp, fn, tn, fp, name):
            rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, math_ops.divide(tp + epsilon, tp + fp + epsilon)
            if summation_method == "trapezoidal":
                height = (y[:k - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                height = math_ops.minimum(y[:k - 1], y[1:])
            else:
                height = math_ops.maximum(y[:k - 1], y[1:])
            return reduction_ops.reduce_sum(math_ops.multiply(x[:k - 1] - x[1:], height),
                                            name=name)
        value = compute(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        _add_to(metrics_collections, value)
        update_op = compute(updates["tp"], updates["fn"], updates["tn"], updates["fp"],
                            "update_op")
        _add_to(updates_collections, update_op)
        return value, update_op
