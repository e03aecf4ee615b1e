"""Initializers: objects that make a variable's first value from its shape.

``tf.get_variable("w", [784, 256], initializer=tf.glorot_uniform_initializer())``
calls the initializer with the shape and dtype and uses the tensor it returns
as the variable's ``initial_value``. An initializer only *builds ops* (a
random draw, a fill); nothing runs until ``sess.run(tf.global_variables_initializer())``.

The Glorot ("Xavier") initializers scale the random draw by the number of
inputs and outputs of a layer (its *fans*), so that activations neither
blow up nor fade out as they pass through many layers::

    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    uniform: limit = sqrt(6 / (fan_in + fan_out)),  w ~ U(-limit, limit)
    normal:  stddev = sqrt(2 / (fan_in + fan_out)), truncated at 2 stddevs

(``receptive`` is the product of any leading dimensions, e.g. a conv kernel's
height x width; it is 1 for a matrix.)

Each initializer builds exactly the ops TF's ``init_ops`` builds (a
``random_uniform``/``random_normal``/``truncated_normal`` with TF's limits
computed in Python doubles), so with the same seeds a variable starts with
TF's numbers.
"""

import abc
import math

import numpy as np

from minitf.framework import dtypes
from minitf.ops import array_ops, random_ops
from minitf.ops.core import constant

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal",
           "TruncatedNormal", "VarianceScaling", "GlorotUniform", "GlorotNormal"]


class Initializer(abc.ABC):
    """Base class: ``initializer(shape, dtype=None, partition_info=None)`` -> Tensor.

    A subclass says how it draws by defining ``__call__``."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    @abc.abstractmethod
    def __call__(self, shape, dtype=None, partition_info=None):
        """The ops that make a tensor of ``shape`` and ``dtype``."""

    def get_config(self):
        return {}

    def _dtype(self, dtype):
        return dtypes.as_dtype(dtype if dtype is not None else self.dtype).base_dtype


class Zeros(Initializer):
    """All zeros (``tf.zeros_initializer()``)."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, self._dtype(dtype))


class Ones(Initializer):
    """All ones (``tf.ones_initializer()``)."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, self._dtype(dtype))


class Constant(Initializer):
    """A given value: a scalar fills the shape, a list must have the shape's size."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        value = np.asarray(self.value, dtype=dtype.np_dtype)
        shape = [int(d) for d in shape]
        if value.size == 1:
            value = np.full(shape, value.reshape(()), dtype=dtype.np_dtype)
        elif value.size != int(np.prod(shape)):
            raise TypeError("Eager execution of tf.constant with unsupported shape. Tensor "
                            "%s (converted from %s) has %d elements, but got `shape` %s with "
                            "%d elements)." % (value, self.value, value.size, tuple(shape),
                                               int(np.prod(shape))))
        return constant(value.reshape(shape), dtype=dtype, name="Const")

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform in ``[minval, maxval)``."""

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        # maxval None: random_uniform's own default (1 for floats; an error for ints).
        return random_ops.random_uniform(shape, self.minval, self.maxval, self._dtype(dtype),
                                         seed=self.seed)


class RandomNormal(Initializer):
    """Normal with ``mean`` and ``stddev``."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(_assert_float_dtype(dtypes.as_dtype(dtype)))
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                        seed=self.seed)


class TruncatedNormal(RandomNormal):
    """Normal, redrawn until within two standard deviations of the mean."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                           seed=self.seed)


def _assert_float_dtype(dtype):
    if not dtype.is_floating:
        raise ValueError("Argument `dtype` is expected to be floating point. Received: %s."
                         % dtype)
    return dtype


def compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight shape (see the module docstring)."""
    shape = [int(d) for d in shape]
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Random values with variance ``scale / n``, ``n`` = fan_in, fan_out or their mean."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.:
            raise ValueError("Argument `scale` must be a positive float. Received: %s" % scale)
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Argument `mode` should be one of ('fan_in', 'fan_out', "
                             "'fan_avg'). Received: %s" % mode)
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Argument `distribution` should be one of ('normal', uniform', "
                             "'truncated_normal', 'untruncated_normal'). Received: %s"
                             % distribution)
        super().__init__(_assert_float_dtype(dtypes.as_dtype(dtype)))
        # "normal" is TF's old name for the truncated normal.
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        # A partition of a partitioned variable scales by the whole variable's fans.
        fan_in, fan_out = compute_fans(partition_info.full_shape if partition_info is not None
                                       else shape)
        n = {"fan_in": fan_in, "fan_out": fan_out,
             "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)
        if self.distribution in ("normal", "truncated_normal"):
            # 0.8796...: the stddev of a unit normal truncated at +-2, undone here.
            stddev = math.sqrt(variance) / .87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        return random_ops.random_normal(shape, 0.0, math.sqrt(variance), dtype, seed=self.seed)


class GlorotUniform(VarianceScaling):
    """``U(-limit, limit)``, ``limit = sqrt(6 / (fan_in + fan_out))``."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    """Truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out))``."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)
