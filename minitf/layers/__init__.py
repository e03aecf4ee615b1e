"""``tf.layers``: ``dense`` (here), ``conv2d``, ``max_pooling2d``/``average_pooling2d``,
``flatten``, ``dropout`` and ``batch_normalization``, with TF's variable names.

Each layer function opens a variable scope named after the layer (``dense``,
``conv2d_1``...), makes its variables there with ``tf.get_variable`` and
builds the ops from ``tf.nn``; call it again with the same ``name`` and
``reuse=True`` to share the variables.
"""

from minitf.layers.convolutional import conv2d  # noqa: F401
from minitf.layers.core import dropout, flatten  # noqa: F401
from minitf.layers.normalization import batch_normalization  # noqa: F401
from minitf.layers.pooling import average_pooling2d, max_pooling2d  # noqa: F401
from minitf.ops import init_ops, math_ops
from minitf.ops.core import convert_to_tensor
from minitf.ops.variable_scope import get_variable, variable_scope


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, trainable=True, name=None, reuse=None, seed=None):
    """``activation(inputs @ kernel + bias)`` with variables ``NAME/kernel``
    (Glorot-uniform) and ``NAME/bias`` (zeros), made by ``tf.get_variable`` in
    the variable scope ``NAME`` (``dense``, ``dense_1``... when unnamed): call
    it again with the same name and ``reuse=True`` to share the weights."""
    x = convert_to_tensor(inputs)
    if x.shape.ndims is None or x.shape[-1].value is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    fan_in = x.shape[-1].value
    dtype = x.dtype.base_dtype
    with variable_scope(name, default_name="dense", values=[x], reuse=reuse):
        kernel = get_variable("kernel", [fan_in, units], dtype=dtype, trainable=trainable,
                              initializer=kernel_initializer or
                              init_ops.GlorotUniform(seed=seed))
        y = math_ops.matmul(x, kernel)
        if use_bias:
            bias = get_variable("bias", [units], dtype=dtype, trainable=trainable,
                                initializer=bias_initializer or init_ops.Zeros())
            y = math_ops.add(y, bias, name="BiasAdd")
        if activation is not None:
            y = activation(y)
    return y
