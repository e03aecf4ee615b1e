"""``tf.layers.batch_normalization``: TF's layer, its variables and its update ops.

The layer keeps four variables in the scope ``batch_normalization`` (``_1``...):
``gamma`` and ``beta`` (trained) and ``moving_mean``/``moving_variance`` (not
trained: averages of the batch statistics seen while training, used for
inference). While ``training``, each step adds ops that move the averages
towards the batch's values::

    moving -= (moving - batch_value) * (1 - momentum)      # AssignMovingAvg

and puts them in ``tf.GraphKeys.UPDATE_OPS``: nothing runs them unless you do,
which is why TF1 training code wraps its train op in
``tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))``.

As in TF, a 4-D input normalized over axis 3 (or 1: NCHW) whose dtype is
float16/bfloat16/float32 takes the fused path (one ``FusedBatchNormV3`` op,
whose reported variance is unbiased) unless ``fused=False``; anything else
(``fused=True`` too: it means "if possible") takes ``tf.nn.moments`` and
``tf.nn.batch_normalization`` (biased variance).
"""

from minitf.framework import dtypes, errors
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.layers._common import constant_value, refuse, smart_cond
from minitf.ops import array_ops, batch_norm_ops, init_ops, math_ops, nn_ops, variables
from minitf.ops.core import constant, convert_to_tensor, name_scope
from minitf.ops.variable_scope import get_variable, variable_scope

_FUSED_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Normalize ``inputs`` per channel (the ``axis``), as TF's layer does (see the
    module docstring). ``training`` is a Python bool or a bool tensor."""
    refuse("batch_normalization", beta_regularizer=beta_regularizer,
           gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
           gamma_constraint=gamma_constraint, renorm=renorm, renorm_clipping=renorm_clipping,
           virtual_batch_size=virtual_batch_size, adjustment=adjustment)
    x = convert_to_tensor(inputs)
    ndims = x.shape.ndims
    if ndims is None:
        raise ValueError("Input has undefined rank.")
    axes = [axis] if isinstance(axis, int) else list(axis)
    if len(axes) != 1:
        raise errors.UnimplementedError(
            None, None, "minitf's tf.layers.batch_normalization normalizes over one channel "
            "axis; axis=%s was asked." % (axis,))
    ax = axes[0] + ndims if axes[0] < 0 else axes[0]
    if not 0 <= ax < ndims:
        raise ValueError("Invalid axis: %s" % (axis,))
    channels = x.shape[ax].value
    if channels is None:
        raise ValueError("Input has undefined `axis` dimension. Received input with shape %s "
                         "and axis=%s" % (x.shape, axis))
    dtype = x.dtype.base_dtype
    # TF1's layer: fused None or True means "fused if possible".
    use_fused = ndims == 4 and ax in (1, 3) and dtype in _FUSED_TYPES and fused is not False
    param_dtype = dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype
    with variable_scope(name, default_name="batch_normalization", values=[x], reuse=reuse):
        gamma = get_variable("gamma", [channels], dtype=param_dtype, trainable=trainable,
                             initializer=gamma_initializer or init_ops.Ones()) if scale else None
        beta = get_variable("beta", [channels], dtype=param_dtype, trainable=trainable,
                            initializer=beta_initializer or init_ops.Zeros()) if center else None
        moving_mean = get_variable("moving_mean", [channels], dtype=param_dtype,
                                   trainable=False,
                                   initializer=moving_mean_initializer or init_ops.Zeros())
        moving_variance = get_variable(
            "moving_variance", [channels], dtype=param_dtype, trainable=False,
            initializer=moving_variance_initializer or init_ops.Ones())
        if use_fused:
            return _fused(x, gamma, beta, moving_mean, moving_variance, momentum, epsilon,
                          training, "NCHW" if ax == 1 else "NHWC", channels, param_dtype)
        return _unfused(x, ax, gamma, beta, moving_mean, moving_variance, momentum, epsilon,
                        training, channels, param_dtype)


def _assign_moving_average(variable, value, momentum):
    """``variable -= (variable - value) * (1 - momentum)`` (TF's AssignMovingAvg), made
    next to the variable."""
    graph = get_default_graph()
    with name_scope(None, "AssignMovingAvg", [variable, value, momentum]) as scope:
        with graph.colocate_with(variable.op):
            decay = momentum_decay(momentum)
            if decay.dtype.base_dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            return variables.assign_sub(variable, delta, name=scope)


def momentum_decay(momentum):
    """``1 - momentum``: a ``Sub`` op for a momentum tensor, a constant for a number."""
    if isinstance(momentum, (int, float)):
        return constant(1.0 - momentum, name="decay")
    return 1.0 - momentum


def _add_updates(updates):
    """The update ops go to ``tf.GraphKeys.UPDATE_OPS`` (the ops, as TF keeps them)."""
    graph = get_default_graph()
    for update in updates:
        graph.add_to_collection(GraphKeys.UPDATE_OPS, getattr(update, "op", update))


def _fused(x, gamma, beta, moving_mean, moving_variance, momentum, epsilon, training, fmt,
           channels, param_dtype):
    if gamma is None:
        gamma = constant(1.0, dtype=param_dtype, shape=[channels])
    if beta is None:
        beta = constant(0.0, dtype=param_dtype, shape=[channels])

    def train():
        return batch_norm_ops.fused_batch_norm(x, gamma, beta, mean=moving_mean,
                                               variance=moving_variance, epsilon=epsilon,
                                               is_training=True, data_format=fmt)

    def infer():
        return batch_norm_ops.fused_batch_norm(x, gamma, beta, mean=moving_mean,
                                               variance=moving_variance, epsilon=epsilon,
                                               is_training=False, data_format=fmt)

    known = constant_value(training)
    y, mean, variance = smart_cond(training, train, infer)
    if known is False:
        return y
    if known is None:
        momentum_t = smart_cond(training, lambda: constant(float(momentum)),
                                lambda: constant(1.0))
    else:
        momentum_t = constant(float(momentum))
    _add_updates([_assign_moving_average(moving_mean, mean, momentum_t),
                  _assign_moving_average(moving_variance, variance, momentum_t)])
    return y


def _unfused(x, ax, gamma, beta, moving_mean, moving_variance, momentum, epsilon, training,
             channels, param_dtype):
    ndims = x.shape.ndims
    reduction_axes = [i for i in range(ndims) if i != ax]
    broadcast_shape = [1] * ndims
    broadcast_shape[ax] = channels

    def broadcast(v):
        if v is not None and ax != ndims - 1:
            return array_ops.reshape(v, broadcast_shape)
        return v

    scale_t, offset_t = broadcast(gamma), broadcast(beta)
    known = constant_value(training)
    if known is False:
        mean, variance = moving_mean, moving_variance
    else:
        batch_mean, batch_variance = nn_ops.moments(math_ops.cast(x, param_dtype),
                                                    reduction_axes)
        mean = smart_cond(training, lambda: batch_mean,
                          lambda: convert_to_tensor(moving_mean))
        variance = smart_cond(training, lambda: batch_variance,
                              lambda: convert_to_tensor(moving_variance))
        updates = []
        for var, value in ((moving_mean, mean), (moving_variance, variance)):
            updates.append(smart_cond(
                training, lambda var=var, value=value: _assign_moving_average(var, value,
                                                                              momentum),
                lambda var=var: convert_to_tensor(var)))
        _add_updates(updates)
    dtype = x.dtype.base_dtype
    mean = math_ops.cast(mean, dtype)
    variance = math_ops.cast(variance, dtype)
    offset_t = math_ops.cast(offset_t, dtype) if offset_t is not None else None
    scale_t = math_ops.cast(scale_t, dtype) if scale_t is not None else None
    return batch_norm_ops.batch_normalization(x, broadcast(mean), broadcast(variance),
                                              offset_t, scale_t, epsilon)
