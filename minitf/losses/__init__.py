"""``tf.losses``: TF1's losses, built from ops exactly as TF builds them.

Every loss does two steps:

1. compute one loss value per element (``squared_difference`` for
   ``mean_squared_error``, the cross-entropy ops for the classification
   losses...), in float32;
2. :func:`compute_weighted_loss`: multiply by ``weights`` (a scalar, or a
   tensor that broadcasts to the losses: one weight per example, or per
   element) and *reduce* as ``reduction`` says. The default,
   ``SUM_BY_NONZERO_WEIGHTS``, is the weighted sum divided by the number of
   elements whose weight is not zero, so a weight of 0 drops an example
   from the mean. The division is ``div_no_nan`` named ``value``: the
   result of ``tf.losses.mean_squared_error`` is the op
   ``mean_squared_error/value``.

The result is added to ``loss_collection`` (``tf.GraphKeys.LOSSES``), which
is what :func:`get_total_loss` sums, with the regularization losses.
"""

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import array_ops, control_flow_ops, math_ops, nn_ops, reduction_ops
from minitf.ops.core import constant, convert_to_tensor, name_scope

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "cosine_distance",
           "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy", "add_loss", "get_losses",
           "get_regularization_losses", "get_regularization_loss", "get_total_loss"]


class Reduction:
    """How a weighted loss becomes one number (or stays per element: NONE)."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s. Key should be one of %s."
                             % (key, cls.all()))


# -- the weighting and reduction every loss shares ---------------------------------------------
def _check_broadcastable(weights, values):
    """TF's build-time rule: ``weights`` is a scalar, or has the rank of ``values``
    with every dimension 1 or equal to that of ``values``. Returns the no-op TF
    makes when the shapes prove it (shapes known only at run time are checked
    when the multiply runs)."""
    ws, vs = weights.shape, values.shape
    if ws.ndims == 0:
        return control_flow_ops.no_op(name="static_scalar_check_success")
    if ws.ndims is None or vs.ndims is None:
        return None
    if ws.ndims != vs.ndims:
        raise ValueError("weights can not be broadcast to values. values.rank=%d. "
                         "weights.rank=%d. values.shape=%s. weights.shape=%s."
                         % (vs.ndims, ws.ndims, vs, ws))
    for w, v in zip(ws.as_list(), vs.as_list()):
        if w is None or v is None:
            return None
        if w not in (1, v):
            raise ValueError("weights can not be broadcast to values. values.shape=%s, "
                             "weights.shape=%s." % (vs, ws))
    return control_flow_ops.no_op(name="static_dims_check_success")


def _safe_mean(total, count):
    """``total / count``, 0 when nothing counts; the op is named ``value``."""
    return math_ops.div_no_nan(total, count, name="value")


def _num_elements(losses):
    with name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def _num_present(losses, weights, per_batch=False):
    """How many elements of ``losses`` have a non-zero weight (per example with
    ``per_batch``: summed over all but the first axis, kept as [batch, 1...])."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = present * array_ops.ones_like(losses)     # broadcast to the losses
        if per_batch:
            rank = present.shape.ndims
            return reduction_ops.reduce_sum(present, list(range(1, rank)), keepdims=True,
                                            name=scope)
        return reduction_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``losses * weights``, reduced as ``reduction`` says, added to
    ``loss_collection``."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype.base_dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights_t = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        check = _check_broadcastable(weights_t, losses)
        with get_default_graph().control_dependencies([check] if check is not None else []):
            weighted = math_ops.multiply(losses, weights_t)
            if reduction == Reduction.NONE:
                loss = weighted
            else:
                loss = reduction_ops.reduce_sum(weighted)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, reduction_ops.reduce_sum(
                        array_ops.ones_like(losses) * weights_t))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _float_pair(labels, predictions, names=("labels", "predictions")):
    for value, name in zip((labels, predictions), names):
        if value is None:
            raise ValueError("Argument `%s` must not be None." % name)
    predictions = math_ops.cast(convert_to_tensor(predictions), dtypes.float32)
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.float32)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape, labels.shape))
    return labels, predictions


# -- the losses ---------------------------------------------------------------------------------
def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``|predictions - labels|``, weighted and reduced."""
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim=None):
    """``1 - sum(labels * predictions, axis)`` for unit-length vectors along ``axis``."""
    axis = axis if axis is not None else dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        products = math_ops.multiply(predictions, labels)
        losses = 1 - reduction_ops.reduce_sum(products, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``max(0, 1 - y * logits)`` with labels 0/1 mapped to ``y`` = -1/+1."""
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as s:
        labels, logits = _float_pair(labels, logits, ("labels", "logits"))
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Quadratic for errors up to ``delta``, linear beyond:
    ``0.5 * min(|e|, d)**2 + d * (|e| - min(|e|, d))``."""
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        error = math_ops.subtract(predictions, labels)
        abs_error = math_ops.abs(error)
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(constant(0.5, dtype=quadratic.dtype.base_dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Binary cross-entropy of probabilities: ``-y log(p + e) - (1 - y) log(1 - p + e)``."""
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - \
            math_ops.multiply(1 - labels, math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """Per example, the mean over all pairs of elements ``(i, j)`` of
    ``((p_i - p_j) - (l_i - l_j)) ** 2`` (it ignores a constant offset), computed
    as TF does from the sum of squares and the square of the sum."""
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        for value, name in ((labels, "labels"), (predictions, "predictions")):
            if value is None:
                raise ValueError("Argument `%s` must not be None." % name)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        labels = math_ops.cast(convert_to_tensor(labels), dtypes.float32)
        predictions = math_ops.cast(convert_to_tensor(predictions), dtypes.float32)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape,
                                                                   labels.shape))
        check = _check_broadcastable(weights, labels)
        with get_default_graph().control_dependencies([check] if check is not None else []):
            diffs = math_ops.subtract(predictions, labels)
            rank = diffs.shape.ndims
            if rank is None:
                raise ValueError("minitf's mean_pairwise_squared_error needs the rank of "
                                 "predictions")
            axis = list(range(1, rank))
            sum_squares = reduction_ops.reduce_sum(math_ops.square(diffs), axis, keepdims=True)
            present = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * math_ops.div_no_nan(sum_squares, math_ops.maximum(present - 1, 0.0),
                                              name="value")
            sum_diff = reduction_ops.reduce_sum(diffs, axis, keepdims=True)
            term2 = 2.0 * math_ops.div_no_nan(
                math_ops.square(sum_diff),
                math_ops.maximum(math_ops.multiply(present, present - 1), 0.0), name="value")
            loss = reduction_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
            mean_loss = array_ops.where(reduction_ops.reduce_sum(present) > 0, loss,
                                        array_ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``(predictions - labels) ** 2``, weighted and reduced."""
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Independent binary cross-entropies (``multi_class_labels`` in [0, 1]);
    ``label_smoothing`` pulls the labels towards 0.5."""
    if multi_class_labels is None:
        raise ValueError("Argument `multi_class_labels` must not be None.")
    if logits is None:
        raise ValueError("Argument `logits` must not be None.")
    with name_scope(scope, "sigmoid_cross_entropy_loss",
                    [logits, multi_class_labels, weights]) as s:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(convert_to_tensor(multi_class_labels), logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (logits.shape, labels.shape))
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy with one-hot (or probability) labels; no gradient flows
    into the labels; ``label_smoothing`` mixes them with the uniform distribution."""
    if onehot_labels is None:
        raise ValueError("Argument `onehot_labels` must not be None.")
    if logits is None:
        raise ValueError("Argument `logits` must not be None.")
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as s:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(convert_to_tensor(onehot_labels), logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (logits.shape, labels.shape))
        if label_smoothing > 0:
            classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / classes
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def _squeeze_labels(labels, logits, weights):
    """TF's remove_squeezable_dimensions for sparse labels: labels of shape
    ``[batch, 1]`` lose their last axis (and so do weights of one more rank than
    the labels)."""
    lr, pr = labels.shape.ndims, logits.shape.ndims
    if lr is not None and pr is not None:
        if pr - lr == 2 and logits.shape[-1].value == 1:
            logits = array_ops.squeeze(logits, [-1])
        elif pr - lr == 0 and labels.shape[-1].value == 1:
            labels = array_ops.squeeze(labels, [-1])
    weights = convert_to_tensor(weights)
    wr = weights.shape.ndims
    if labels.shape.ndims is not None and wr is not None and wr - labels.shape.ndims == 1:
        weights = array_ops.squeeze(weights, [-1])
    return labels, logits, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy with integer class labels ``[batch]`` (or ``[batch, 1]``)."""
    if labels is None:
        raise ValueError("Argument `labels` must not be None.")
    if logits is None:
        raise ValueError("Argument `logits` must not be None.")
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as s:
        labels, logits, weights = _squeeze_labels(convert_to_tensor(labels),
                                                  convert_to_tensor(logits), weights)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


# -- the loss collections -----------------------------------------------------------------------
def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Add ``loss`` to ``loss_collection`` (no-op when the collection is None)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of every loss in LOSSES (and REGULARIZATION_LOSSES)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)
