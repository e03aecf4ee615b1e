"""``tf.layers.max_pooling2d`` and ``average_pooling2d``: pooling in a named scope."""

from minitf.layers._common import data_format_attr, pair, padding_attr
from minitf.ops import conv_ops
from minitf.ops.core import convert_to_tensor, name_scope


def _pool(fn, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = convert_to_tensor(inputs)
    fmt = data_format_attr(data_format)
    if x.shape.ndims != 4:
        raise ValueError("Input 0 of layer \"%s\" is incompatible with the layer: expected "
                         "ndim=4, found ndim=%s. Full shape received: %s"
                         % (default_name, x.shape.ndims, x.shape))
    size = pair(pool_size, "pool_size")
    steps = pair(strides if strides is not None else size, "strides")
    with name_scope(name, default_name, [x]):
        op_name = "MaxPool" if fn is conv_ops.max_pool else "AvgPool"
        return fn(x, list(size), list(steps), padding_attr(padding), data_format=fmt,
                  name=op_name)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """The largest value of each ``pool_size`` window, moved by ``strides``."""
    return _pool(conv_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding,
                 data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """The mean of each ``pool_size`` window, moved by ``strides``."""
    return _pool(conv_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding,
                 data_format, name)
