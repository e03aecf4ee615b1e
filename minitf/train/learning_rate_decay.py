"""Learning rates that change with the global step, built as graph ops.

The rate is a tensor computed from ``global_step`` each time the training op
runs, so the optimizer sees the new value without any Python in the loop::

    lr = tf.train.exponential_decay(0.1, global_step, decay_steps=1000,
                                    decay_rate=0.5, staircase=True)
    # steps 0-999: 0.1, 1000-1999: 0.05, 2000-2999: 0.025 ...
"""

from minitf.ops import array_ops, math_ops
from minitf.ops.core import convert_to_tensor, name_scope

__all__ = ["exponential_decay", "piecewise_constant"]


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """``learning_rate * decay_rate ** (global_step / decay_steps)``; with
    ``staircase`` the exponent is floored, so the rate drops in steps."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    with name_scope(name, "ExponentialDecay",
                    [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype.base_dtype
        steps = math_ops.cast(global_step, dtype)
        p = math_ops.truediv(steps, math_ops.cast(decay_steps, dtype))
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(learning_rate, math_ops.pow(
            math_ops.cast(decay_rate, dtype), p), name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """``values[0]`` while ``x <= boundaries[0]``, ``values[1]`` while ``x <=
    boundaries[1]``, ..., ``values[-1]`` after the last boundary."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of boundaries should be 1 less than the length of "
                         "values")
    with name_scope(name, "PiecewiseConstant", [x]) as scope:
        x = convert_to_tensor(x)
        values = [convert_to_tensor(v) for v in values]
        result = values[-1]
        for b, v in reversed(list(zip(boundaries, values[:-1]))):
            below = math_ops.less_equal(x, math_ops.cast(b, x.dtype.base_dtype))
            result = array_ops.where(below, v, result)
        return array_ops.identity(result, name=scope)


