"""``tf.layers.conv2d``: a convolution with its own kernel and bias variables."""

from minitf.layers._common import data_format_attr, pair, padding_attr, refuse
from minitf.ops import conv_ops, init_ops, nn_ops
from minitf.ops.core import convert_to_tensor
from minitf.ops.variable_scope import get_variable, variable_scope


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """``activation(conv2d(inputs, kernel) + bias)`` with the variables ``NAME/kernel``
    ``[KH, KW, C, filters]`` (Glorot-uniform) and ``NAME/bias`` ``[filters]``
    (zeros), in the variable scope ``NAME`` (``conv2d``, ``conv2d_1``... when
    unnamed), as TF's layer makes them. ``padding`` is ``"valid"`` or
    ``"same"``; ``data_format="channels_first"`` builds NCHW ops, which (as in
    TF) only a GPU runs."""
    refuse("conv2d", kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
           activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
           bias_constraint=bias_constraint)
    x = convert_to_tensor(inputs)
    fmt = data_format_attr(data_format)
    kh, kw = pair(kernel_size, "kernel_size")
    strides = pair(strides, "strides")
    dilation = pair(dilation_rate, "dilation_rate")
    if max(strides) > 1 and max(dilation) > 1:
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         "Received: strides=%s and dilation_rate=%s" % (strides, dilation))
    if x.shape.ndims != 4:
        raise ValueError("Input 0 of layer \"conv2d\" is incompatible with the layer: expected "
                         "min_ndim=4, found ndim=%s. Full shape received: %s"
                         % (x.shape.ndims, x.shape))
    channels = x.shape[1 if fmt == "NCHW" else 3].value
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. The input_"
                         "shape received is %s, where axis %d (0-based) is the channel "
                         "dimension, which found to be `None`." % (x.shape,
                                                                  1 if fmt == "NCHW" else -1))
    dtype = x.dtype.base_dtype
    with variable_scope(name, default_name="conv2d", values=[x], reuse=reuse):
        kernel = get_variable("kernel", [kh, kw, channels, filters], dtype=dtype,
                              trainable=trainable,
                              initializer=kernel_initializer or init_ops.GlorotUniform())
        y = conv_ops.conv2d(x, kernel, strides=list(strides), padding=padding_attr(padding),
                            data_format=fmt, dilations=list(dilation), name="Conv2D")
        if use_bias:
            bias = get_variable("bias", [filters], dtype=dtype, trainable=trainable,
                                initializer=bias_initializer or init_ops.Zeros())
            y = nn_ops.bias_add(y, bias, data_format=fmt, name="BiasAdd")
        if activation is not None:
            y = activation(y)
    return y
