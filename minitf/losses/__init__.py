"""``tf.losses``: mean losses over a batch, added to the LOSSES collection."""

from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import math_ops, nn_ops, reduction_ops
from minitf.ops.core import convert_to_tensor, name_scope


def _finish(loss, loss_collection):
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)
    return loss


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES):
    with name_scope(scope, "mean_squared_error", [labels, predictions]) as s:
        p = convert_to_tensor(predictions)
        y = math_ops.cast(convert_to_tensor(labels), p.dtype)
        loss = reduction_ops.reduce_mean(math_ops.squared_difference(p, y) * weights, name=s)
    return _finish(loss, loss_collection)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES):
    with name_scope(scope, "absolute_difference", [labels, predictions]) as s:
        p = convert_to_tensor(predictions)
        y = math_ops.cast(convert_to_tensor(labels), p.dtype)
        loss = reduction_ops.reduce_mean(math_ops.abs(p - y) * weights, name=s)
    return _finish(loss, loss_collection)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES):
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [labels, logits]) as s:
        per_example = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits)
        loss = reduction_ops.reduce_mean(per_example * weights, name=s)
    return _finish(loss, loss_collection)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, scope=None,
                          loss_collection=GraphKeys.LOSSES):
    with name_scope(scope, "softmax_cross_entropy_loss", [onehot_labels, logits]) as s:
        per_example = nn_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels,
                                                                  logits=logits)
        loss = reduction_ops.reduce_mean(per_example * weights, name=s)
    return _finish(loss, loss_collection)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_default_graph().get_collection(loss_collection, scope)


def get_total_loss(add_regularization_losses=True, name="total_loss"):
    losses = get_losses()
    if add_regularization_losses:
        losses += get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES)
    if not losses:
        raise ValueError("No losses to sum: add some with tf.losses.*")
    return math_ops.add_n(losses, name=name)
