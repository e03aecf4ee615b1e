"""``tf.layers``: just enough to build a small MLP (``tf.layers.dense``)."""

import math

import numpy as np

from minitf.framework.graph import get_default_graph
from minitf.ops import math_ops, random_ops
from minitf.ops.core import convert_to_tensor, name_scope
from minitf.ops.variables import Variable


def _glorot_uniform(shape, dtype, seed):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)): keeps activations' scale."""
    fan_in, fan_out = shape[0], shape[-1]
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return random_ops.random_uniform(shape, -limit, limit, dtype=dtype, seed=seed)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, trainable=True, name=None, reuse=None, seed=None):
    """``activation(inputs @ kernel + bias)`` with new variables ``NAME/kernel``
    (Glorot-uniform) and ``NAME/bias`` (zeros)."""
    x = convert_to_tensor(inputs)
    if x.shape.ndims is None or x.shape[-1].value is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    fan_in = x.shape[-1].value
    dtype = x.dtype.base_dtype
    graph = get_default_graph()
    with name_scope(name, "dense", [x]) as scope:
        with graph.name_scope(scope):
            init = kernel_initializer((fan_in, units), dtype) if kernel_initializer else \
                _glorot_uniform([fan_in, units], dtype, seed)
            kernel = Variable(init, name="kernel", trainable=trainable)
            y = math_ops.matmul(x, kernel)
            if use_bias:
                binit = bias_initializer((units,), dtype) if bias_initializer else \
                    np.zeros([units], dtype=dtype.np_dtype)
                bias = Variable(binit, name="bias", trainable=trainable)
                y = math_ops.add(y, bias, name="BiasAdd")
            if activation is not None:
                y = activation(y)
    return y
