"""Kernels of the ConditionalAccumulator ops (see runtime/accumulators.py)."""

import numpy as np

from minitf.kernels.registry import register
from minitf.runtime.accumulators import AccumulatorResource


@register("ConditionalAccumulator", ("CPU",))
def _accumulator(op, device):
    name = op.get_attr("shared_name") or op.name
    container = op.get_attr("container")
    dtype, shape = op.get_attr("dtype"), op.get_attr("shape")

    def compute(ctx, inputs):
        return [ctx.resources.lookup_or_create(
            container, name, lambda: AccumulatorResource(name, dtype, shape))]
    return compute


@register("AccumulatorApplyGradient", ("CPU",))
def _apply(op, device):
    def compute(ctx, inputs):
        acc, local_step, grad = inputs
        acc.apply(int(local_step), grad)
        return []
    return compute


@register("AccumulatorTakeGradient", ("CPU",))
def _take(op, device):
    def compute(ctx, inputs):
        acc, num_required = inputs
        return [acc.take(int(num_required), ctx.step)]
    return compute


@register("AccumulatorSetGlobalStep", ("CPU",))
def _set_step(op, device):
    def compute(ctx, inputs):
        inputs[0].set_global_step(int(inputs[1]))
        return []
    return compute


@register("AccumulatorNumAccumulated", ("CPU",))
def _num(op, device):
    return lambda ctx, inputs: [np.array(inputs[0].count, dtype=np.int32)]
