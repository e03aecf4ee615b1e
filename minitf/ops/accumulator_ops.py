"""``tf.ConditionalAccumulator``: the conditional accumulator behind synchronous training.

Workers *apply* gradients, each stamped with the global step it was computed
at (``local_step``). The accumulator keeps a running sum of the gradients
that are not stale (``local_step >= its own global step``) and drops the
stale ones, counting them. The chief *takes* the average once
``num_required`` gradients have arrived (blocking until then); taking
resets the sum and advances the accumulator's step, so gradients computed
before this update are stale from now on.

Every accepted gradient's staleness (current step minus ``local_step``) is
recorded, so lessons can show how old the gradients were.

The accumulator is a resource in its device's resource manager, like a queue:
the ``ConditionalAccumulator`` op outputs it, and the other ops take it.
"""

import collections
import threading
import time

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import math_ops
from minitf.ops.core import convert_to_tensor, make_op

_POLL = 0.05


class AccumulatorResource:
    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.global_step = 0
        self.count = 0
        self.sum = None
        self.dropped = 0
        self.accepted = 0
        self.staleness = collections.Counter()
        self.cond = threading.Condition()

    def apply(self, local_step, grad):
        with self.cond:
            if self.shape is not None and self.shape.ndims is not None and \
                    not self.shape.is_compatible_with(grad.shape):
                raise errors.InvalidArgumentError(
                    None, None, "Shape mismatch: expected %s, got %s for accumulator %s"
                    % (self.shape, list(grad.shape), self.name))
            if local_step < self.global_step:
                self.dropped += 1  # stale: computed from variables older than allowed
                return False
            self.staleness[int(self.global_step - local_step)] += 1
            self.sum = grad.astype(self.dtype.np_dtype, copy=True) if self.sum is None \
                else self.sum + grad
            self.count += 1
            self.accepted += 1
            self.cond.notify_all()
            return True

    def take(self, num_required, step):
        with self.cond:
            while self.count < num_required:
                if step is not None and step.cancelled.is_set():
                    raise errors.CancelledError(None, None, "TakeGrad operation was cancelled")
                left = None if step is None or step.deadline is None else \
                    step.deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise errors.DeadlineExceededError(None, None,
                                                       "Timed out waiting for notification")
                self.cond.wait(_POLL if left is None else min(_POLL, left))
            average = self.sum / self.count
            self.sum = None
            self.count = 0
            self.global_step += 1
            return np.asarray(average, dtype=self.dtype.np_dtype)

    def set_global_step(self, step):
        with self.cond:
            if step >= self.global_step:
                self.global_step = int(step)
            self.cond.notify_all()

    def summary(self):
        return {"kind": self.kind, "name": self.name, "global_step": self.global_step,
                "accumulated": self.count, "accepted": self.accepted,
                "dropped_stale": self.dropped, "staleness": dict(self.staleness),
                "initialized": True}

    def nbytes(self):
        return 0 if self.sum is None else int(self.sum.nbytes)


# -- the ops --------------------------------------------------------------------------------------
def _accumulator_kernel(op, backend):
    name = op.get_attr("shared_name") or op.name
    container = op.get_attr("container")
    dtype, shape = op.get_attr("dtype"), op.get_attr("shape")

    def compute(ctx, inputs):
        return [ctx.resources.lookup_or_create(
            container, name, lambda: AccumulatorResource(name, dtype, shape))]
    return compute


def _apply_kernel(op, backend):
    def compute(ctx, inputs):
        acc, local_step, grad = inputs
        acc.apply(int(local_step), grad)
        return []
    return compute


def _take_kernel(op, backend):
    def compute(ctx, inputs):
        acc, num_required = inputs
        return [acc.take(int(num_required), ctx.step)]
    return compute


def _set_step_kernel(op, backend):
    def compute(ctx, inputs):
        inputs[0].set_global_step(int(inputs[1]))
        return []
    return compute


def _num_accumulated_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].count, dtype=np.int32)]


def _row(name, kernel, inputs=("handle",), attrs=(), **flags):
    return declare(OpDef(name, inputs=inputs, attrs=attrs, gradient=NOT_DIFFERENTIABLE,
                         stateful=True, kernel=kernel, **flags))


CONDITIONAL_ACCUMULATOR = _row("ConditionalAccumulator", _accumulator_kernel, inputs=(),
                               attrs=("dtype", "shape", "container", "shared_name"),
                               resource=True)
ACCUMULATOR_APPLY_GRADIENT = _row("AccumulatorApplyGradient", _apply_kernel,
                                  inputs=("handle", "local_step", "gradient"),
                                  attrs=("dtype",), ref_inputs=(0,))
#: Blocks until ``num_required`` gradients have arrived.
ACCUMULATOR_TAKE_GRADIENT = _row("AccumulatorTakeGradient", _take_kernel,
                                 inputs=("handle", "num_required"), attrs=("dtype",),
                                 ref_inputs=(0,), blocking=True)
ACCUMULATOR_SET_GLOBAL_STEP = _row("AccumulatorSetGlobalStep", _set_step_kernel,
                                   inputs=("handle", "new_global_step"), ref_inputs=(0,))
ACCUMULATOR_NUM_ACCUMULATED = _row("AccumulatorNumAccumulated", _num_accumulated_kernel,
                                   ref_inputs=(0,))


# -- the Python class -----------------------------------------------------------------------------
class ConditionalAccumulator:
    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        if reduction_type != "MEAN":
            raise ValueError("minitf's ConditionalAccumulator averages (reduction_type MEAN)")
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._shape = as_shape(shape)
        self._handle = make_op(CONDITIONAL_ACCUMULATOR, [], [_dtypes.resource],
                               [TensorShape([])], name=name,
                               attrs={"dtype": self._dtype, "shape": self._shape,
                                      "container": "", "shared_name": shared_name or ""},
                               graph=get_default_graph()).outputs[0]

    dtype = property(lambda self: self._dtype)
    accumulator_ref = property(lambda self: self._handle)
    name = property(lambda self: self._handle.op.name)

    def apply_grad(self, grad, local_step=0, name=None):
        grad = convert_to_tensor(grad, dtype=self._dtype)
        step = math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)   # (as TF)
        return make_op(ACCUMULATOR_APPLY_GRADIENT, [self._handle, step, grad], [], [],
                       name=name or "AccumulatorApplyGradient",
                       attrs={"dtype": self._dtype})

    def take_grad(self, num_required, name=None):
        n = convert_to_tensor(num_required, dtype=_dtypes.int32)
        return make_op(ACCUMULATOR_TAKE_GRADIENT, [self._handle, n], [self._dtype],
                       [self._shape], name=name or "AccumulatorTakeGradient",
                       attrs={"dtype": self._dtype}).outputs[0]

    def set_global_step(self, new_global_step, name=None):
        step = math_ops.cast(convert_to_tensor(new_global_step), _dtypes.int64)
        return make_op(ACCUMULATOR_SET_GLOBAL_STEP, [self._handle, step], [], [],
                       name=name or "AccumulatorSetGlobalStep")

    def num_accumulated(self, name=None):
        return make_op(ACCUMULATOR_NUM_ACCUMULATED, [self._handle], [_dtypes.int32],
                       [TensorShape([])], name=name or "AccumulatorNumAccumulated").outputs[0]
