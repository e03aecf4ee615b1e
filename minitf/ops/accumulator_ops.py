"""``tf.ConditionalAccumulator``: averages gradients from several workers,
dropping stale ones (see ``minitf/runtime/accumulators.py``)."""

from minitf.framework import dtypes as _dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops.core import convert_to_tensor, make_op
from minitf.ops.op_def import register_op

register_op("ConditionalAccumulator", stateful=True)
register_op("AccumulatorApplyGradient", ref_inputs=(0,), stateful=True)
register_op("AccumulatorTakeGradient", ref_inputs=(0,), stateful=True, blocking=True)
register_op("AccumulatorSetGlobalStep", ref_inputs=(0,), stateful=True)
register_op("AccumulatorNumAccumulated", ref_inputs=(0,), stateful=True)


class ConditionalAccumulator:
    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        if reduction_type != "MEAN":
            raise ValueError("minitf's ConditionalAccumulator averages (reduction_type MEAN)")
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._shape = as_shape(shape)
        self._handle = make_op("ConditionalAccumulator", [], [_dtypes.resource],
                               [TensorShape([])], name=name,
                               attrs={"dtype": self._dtype, "shape": self._shape,
                                      "container": "", "shared_name": shared_name or ""},
                               graph=get_default_graph()).outputs[0]

    dtype = property(lambda self: self._dtype)
    accumulator_ref = property(lambda self: self._handle)
    name = property(lambda self: self._handle.op.name)

    def apply_grad(self, grad, local_step=0, name=None):
        grad = convert_to_tensor(grad, dtype=self._dtype)
        step = convert_to_tensor(local_step, dtype=_dtypes.int64)
        return make_op("AccumulatorApplyGradient", [self._handle, step, grad], [], [],
                       name=name or "AccumulatorApplyGradient",
                       attrs={"dtype": self._dtype})

    def take_grad(self, num_required, name=None):
        n = convert_to_tensor(num_required, dtype=_dtypes.int32)
        return make_op("AccumulatorTakeGradient", [self._handle, n], [self._dtype],
                       [self._shape], name=name or "AccumulatorTakeGradient",
                       attrs={"dtype": self._dtype}).outputs[0]

    def set_global_step(self, new_global_step, name=None):
        step = convert_to_tensor(new_global_step, dtype=_dtypes.int64)
        return make_op("AccumulatorSetGlobalStep", [self._handle, step], [], [],
                       name=name or "AccumulatorSetGlobalStep")

    def num_accumulated(self, name=None):
        return make_op("AccumulatorNumAccumulated", [self._handle], [_dtypes.int32],
                       [TensorShape([])], name=name or "AccumulatorNumAccumulated").outputs[0]
