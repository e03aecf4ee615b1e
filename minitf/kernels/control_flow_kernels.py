"""Kernels of ``Switch`` and ``Merge``, the two ops ``tf.cond`` is built from
(see minitf/ops/control_flow_ops.py and minitf/runtime/deadness.py).

They only route values, so they run on every device type: a Switch sends its
input to one output and :data:`DEAD` to the other; a Merge forwards the one
input that is alive (the executor skips it when none is). On a GPU the value
stays where it is (``_minitf_gpu``: no round trip through host memory); the
Switch's predicate is a host-memory input (runtime/copies.py)."""

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

ALL_DEVICES = ("CPU", "GPU")
from minitf.runtime.deadness import DEAD


@register(("Switch", "RefSwitch"), ALL_DEVICES)
def _switch(op, device):
    def compute(ctx, inputs):
        data, pred = inputs
        pred = np.asarray(pred)
        if pred.shape != ():
            raise errors.InvalidArgumentError(
                None, None, "The second input must be a scalar, but it has shape %s"
                % list(pred.shape))
        return [DEAD, data] if bool(pred) else [data, DEAD]
    return compute


_switch._minitf_gpu = True


@register(("Merge", "RefMerge"), ALL_DEVICES)
def _merge(op, device):
    def compute(ctx, inputs):
        for i, value in enumerate(inputs):
            if value is not DEAD:
                return [value, np.int32(i)]
        raise errors.InternalError(None, None, "Merge ran with every input dead")
    return compute


_merge._minitf_gpu = True
