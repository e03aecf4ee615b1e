"""``tf.nn``: activations, softmax and the cross-entropy losses."""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import math_ops
from minitf.ops.core import convert_to_tensor, make_op, name_scope
from minitf.ops.math_ops import _FLOAT_TYPES, _NUMBER_TYPES, _check_dtype

sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


def relu(features, name=None):
    return math_ops._unary("Relu", features, name or "Relu", _NUMBER_TYPES)


def _softmax(op_type, logits, axis, name):
    with name_scope(name, op_type, [logits]) as scope:
        x = convert_to_tensor(logits, name="logits")
        _check_dtype(op_type, x, _FLOAT_TYPES, arg="logits")
        if axis not in (None, -1) and x.shape.ndims is not None and axis != x.shape.ndims - 1:
            raise ValueError("minitf's %s works over the last axis; transpose first "
                             "(axis=%s was asked)." % (op_type, axis))
        if x.shape.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0 for '{{node %s}}'"
                             % scope[:-1])
        op = make_op(op_type, [x], [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def softmax(logits, axis=None, name=None, dim=None):
    return _softmax("Softmax", logits, axis if axis is not None else dim, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return _softmax("LogSoftmax", logits, axis if axis is not None else dim, name)


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=-1, name=None, dim=None):
    """Per-example ``-sum(labels * log_softmax(logits))`` over the last axis."""
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        x = convert_to_tensor(logits, name="logits")
        y = convert_to_tensor(labels, dtype=x.dtype.base_dtype, name="labels")
        _check_dtype("SoftmaxCrossEntropyWithLogits", x, _FLOAT_TYPES, arg="features")
        if x.shape.ndims is not None and x.shape.ndims != 2:
            raise ValueError("minitf's softmax cross-entropy takes [batch, classes] logits; "
                             "got shape %s." % x.shape)
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (x.shape, y.shape))
        batch = x.shape[0].value if x.shape.ndims is not None else None
        op = make_op("SoftmaxCrossEntropyWithLogits", [x, y],
                     [x.dtype.base_dtype, x.dtype.base_dtype],
                     [TensorShape([batch]), x.shape.merge_with(y.shape)], name=scope,
                     attrs={"T": x.dtype.base_dtype})
    return op.outputs[0]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    from minitf.ops.array_ops import stop_gradient
    labels = stop_gradient(convert_to_tensor(labels), name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name=name)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Like the dense loss, with labels given as class indices [batch]."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        x = convert_to_tensor(logits, name="logits")
        y = convert_to_tensor(labels, name="labels")
        _check_dtype("SparseSoftmaxCrossEntropyWithLogits", x, _FLOAT_TYPES, arg="features")
        if y.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'labels' has DataType %s not in list "
                            "of allowed values: int32, int64" % y.dtype.name)
        if x.shape.ndims is not None and y.shape.ndims is not None and \
                y.shape.ndims != x.shape.ndims - 1:
            raise ValueError("Rank mismatch: Rank of labels (received %d) should equal rank "
                             "of logits minus 1 (received %d)."
                             % (y.shape.ndims, x.shape.ndims))
        batch = x.shape[0].value if x.shape.ndims is not None else None
        op = make_op("SparseSoftmaxCrossEntropyWithLogits", [x, y],
                     [x.dtype.base_dtype, x.dtype.base_dtype],
                     [TensorShape([batch]), x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "Tlabels": y.dtype.base_dtype})
    return op.outputs[0]
