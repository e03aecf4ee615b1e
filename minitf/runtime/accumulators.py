"""The conditional accumulator behind synchronous training.

Workers *apply* gradients, each stamped with the global step it was computed
at (``local_step``). The accumulator keeps a running sum of the gradients
that are not stale (``local_step >= its own global step``) and drops the
stale ones, counting them. The chief *takes* the average once
``num_required`` gradients have arrived (blocking until then); taking
resets the sum and advances the accumulator's step, so gradients computed
before this update are stale from now on.

Every accepted gradient's staleness (current step minus ``local_step``) is
recorded, so lessons can show how old the gradients were.
"""

import collections
import threading
import time

import numpy as np

from minitf.framework import errors

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
