"""What the tf.layers functions share: argument checks and TF's ``smart_cond``."""

from minitf.framework import errors
from minitf.framework.graph import Tensor
from minitf.ops import control_flow_ops


def refuse(layer, **options):
    """UnimplementedError for an option minitf's layer does not honour."""
    for option, value in options.items():
        if value is not None and value is not False:
            raise errors.UnimplementedError(
                None, None, "minitf's tf.layers.%s does not support %s=; build that part of "
                "the model from tf.get_variable and tf.nn ops instead." % (layer, option))


def pair(value, name):
    """An int or a pair of ints as a pair (Keras' ``normalize_tuple``)."""
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError("The `%s` argument must be a tuple of 2 integers. Received: %s"
                         % (name, value))
    return value


def padding_attr(padding):
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError("The `padding` argument must be a list/tuple or one of \"valid\", "
                         "\"same\" (or \"causal\", only for `Conv1D). Received: %s" % padding)
    return mode.upper()


def data_format_attr(data_format):
    """Keras' ``channels_last``/``channels_first`` as TF's NHWC/NCHW."""
    fmt = (data_format or "channels_last").lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: %s" % data_format)
    return "NHWC" if fmt == "channels_last" else "NCHW"


def constant_value(pred):
    """The Python value of ``training`` when it is known now (a bool or a Const)."""
    if isinstance(pred, bool):
        return pred
    if isinstance(pred, Tensor) and pred.op.type == "Const":
        return bool(pred.op.get_attr("value"))
    if pred is None:
        return False
    if isinstance(pred, Tensor):
        return None
    return bool(pred)


def smart_cond(pred, true_fn, false_fn):
    """``true_fn()`` or ``false_fn()`` now when ``pred`` is known, else a ``tf.cond``."""
    value = constant_value(pred)
    if value is None:
        return control_flow_ops.cond(pred, true_fn, false_fn)
    return true_fn() if value else false_fn()
