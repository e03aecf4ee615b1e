"""Kernels that only gradients need: summing back over broadcast axes when
shapes are known only at run time, and scattering a slice's gradient."""

import numpy as np

from minitf.kernels.registry import register


@register("SumToShape", ("CPU", "GPU"))
def _sum_to_shape(op, device):
    """``grad`` summed down to ``shape`` (the inverse of numpy broadcasting)."""
    def compute(ctx, inputs):
        grad, shape = inputs
        shape = tuple(int(d) for d in shape)
        lead = grad.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                          if d == 1 and grad.shape[lead + i] != 1)
        out = grad.sum(axis=axes, dtype=grad.dtype) if axes else grad
        return [np.ascontiguousarray(out.reshape(shape))]
    return compute


@register("StridedSliceGrad", ("CPU", "GPU"))
def _strided_slice_grad(op, device):
    """Zeros of the sliced input's shape with the slice's gradient put back."""
    spec = op.get_attr("spec")
    key = tuple(slice(*s[1:]) if s[0] == "slice" else Ellipsis if s[0] == "ellipsis"
                else None if s[0] == "newaxis" else s[1] for s in spec)

    def compute(ctx, inputs):
        shape, grad = inputs
        out = np.zeros([int(d) for d in shape], dtype=grad.dtype)
        view = out[tuple(k for k in key if k is not None)]
        view[...] = grad.reshape(view.shape)
        return [out]
    return compute
