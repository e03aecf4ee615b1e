"""``tf.layers.flatten`` and ``tf.layers.dropout`` (``dense`` is in ``__init__.py``)."""

import functools
import operator

from minitf.layers._common import smart_cond
from minitf.ops import array_ops, nn_ops
from minitf.ops.core import constant, convert_to_tensor, name_scope


def flatten(inputs, name=None, data_format="channels_last"):
    """``[N, d1, d2, ...]`` -> ``[N, d1*d2*...]``, as Keras' Flatten: a ``Reshape`` to
    ``[-1, d1*d2*...]`` when those dims are known. ``channels_first`` inputs are
    put channels-last first, so the order of the features does not depend on it."""
    x = convert_to_tensor(inputs)
    fmt = (data_format or "channels_last").lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: %s" % data_format)
    with name_scope(name, "flatten", [x]):
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("minitf's tf.layers.flatten needs inputs of known rank.")
        if fmt == "channels_first" and rank > 1:
            x = array_ops.transpose(x, [0] + list(range(2, rank)) + [1])
        if rank == 1:
            return array_ops.expand_dims(x, axis=1)
        dims = x.shape.as_list()
        if all(d is not None for d in dims[1:]):
            shape = constant([-1, int(functools.reduce(operator.mul, dims[1:], 1))])
        elif dims[0] is not None:
            shape = constant([int(dims[0]), -1])
        else:
            shape = [array_ops.shape(x)[0], -1]
        return array_ops.reshape(x, shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """While ``training`` (a bool or a bool tensor), zero each element with
    probability ``rate`` and scale the rest by ``1 / (1 - rate)``
    (``tf.nn.dropout``, TF's random stream); otherwise pass ``inputs`` through."""
    x = convert_to_tensor(inputs)
    with name_scope(name, "dropout", [x]):
        return smart_cond(training,
                          lambda: nn_ops.dropout(x, noise_shape=noise_shape, seed=seed,
                                                 rate=rate),
                          lambda: array_ops.identity(x))
