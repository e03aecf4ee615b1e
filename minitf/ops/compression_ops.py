"""Encoding a float32 tensor in 8 bits for the trip between tasks.

8-bit *linear* quantization maps the range [lo, hi] of the tensor onto the
256 values of a byte: ``q = round((x - lo) / scale)`` with
``scale = (hi - lo) / 255``, and back: ``x' = lo + q * scale``. The error of
each element is at most ``scale / 2``; the wire carries a quarter of the
bytes (plus two floats). The partitioner splices these ops around
``_Send``/``_Recv`` when ``graph_options.transfer_compression = "int8"``
(bfloat16 compression is a plain ``Cast``). They are minitf's own ops.
"""

import numpy as np

from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.ops.core import EVERY_DEVICE


def _quantize_kernel(op, backend):
    def compute(ctx, inputs):
        x = inputs[0]
        if x.size == 0:
            return [np.zeros(x.shape, np.uint8), np.float32(0.0), np.float32(1.0)]
        lo, hi = np.float32(x.min()), np.float32(x.max())
        scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
        q = np.rint((x - lo) / scale).clip(0, 255).astype(np.uint8)
        return [q, np.array(lo), np.array(scale)]
    return compute


def _dequantize_kernel(op, backend):
    def compute(ctx, inputs):
        q, lo, scale = inputs
        return [(lo + q.astype(np.float32) * scale).astype(np.float32)]
    return compute


QUANTIZE_LINEAR8 = declare(OpDef("QuantizeLinear8", inputs=("input",), attrs=("T",),
                                 gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                                 kernel=_quantize_kernel))
DEQUANTIZE_LINEAR8 = declare(OpDef("DequantizeLinear8", inputs=("q", "lo", "scale"),
                                   attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                                   devices=EVERY_DEVICE, kernel=_dequantize_kernel))
