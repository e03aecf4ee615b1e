"""``tf.TensorArray``: a list of tensors that a while loop fills or reads, one per step.

A loop that makes one output per iteration (an RNN: one output per time step)
cannot grow a tensor by concatenation cheaply, and its iterations may run at
the same time. TF1's answer is a per-step *resource*: ``TensorArrayV3`` makes
an empty array of ``size`` slots when the step runs and outputs its handle and
a **flow** (a float32 scalar, no real data). Every write takes the flow and
returns a new one, every read takes the latest flow: the flow is how the
graph orders writes before the reads that need them, and it is the loop
variable that carries a TensorArray through ``tf.while_loop``.

The Python :class:`TensorArray` is immutable, like TF's: ``ta.write(i, x)``
returns a new TensorArray object (same handle, new flow).

Gradients follow TF (tensor_array_grad.py): the gradient of a read is a write
into a *gradient TensorArray* (``TensorArrayGradV3``: one per forward array and
gradient call, made on first use), the gradient of a write is a read from it,
gather and scatter, stack and unstack, concat and split likewise. A gradient
array adds up several writes to one slot, and reading a slot nobody wrote
gives zeros (that element got no gradient).
"""

import threading

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.op_def import ANY_DTYPE, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from minitf.ops import array_ops
from minitf.ops.core import convert_to_tensor, make_op, name_scope


class TensorArrayState:
    """The resource behind one TensorArray in one step: its slots and their shape."""

    def __init__(self, dtype, size, dynamic_size, clear_after_read, element_shape, name,
                 is_gradient=False, infer_shape=True):
        self.dtype = dtype
        self.infer_shape = infer_shape   # False: elements may differ in shape
        self.values = [None] * size
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape
        self.name = name
        self.is_gradient = is_gradient
        self.closed = False
        self.lock = threading.Lock()
        self.gradients = {}

    def _check_index(self, index, writing):
        index = int(index)
        if index < 0:
            raise errors.InvalidArgumentError(None, None, "Tried to %s element index %d of "
                                              "TensorArray %s: indices must be >= 0"
                                              % ("write" if writing else "read", index,
                                                 self.name))
        if index >= len(self.values):
            if writing and self.dynamic_size:
                self.values.extend([None] * (index + 1 - len(self.values)))
            else:
                raise errors.InvalidArgumentError(
                    None, None, "Tried to %s element %d but array is not resizeable and size "
                    "is: %d (TensorArray %s)" % ("write" if writing else "read", index,
                                                 len(self.values), self.name))
        return index

    def write(self, index, value):
        value = np.asarray(value)
        with self.lock:
            if self.closed:
                raise errors.InvalidArgumentError(None, None, "TensorArray %s has already "
                                                  "been closed." % self.name)
            index = self._check_index(index, True)
            if self.element_shape is not None and not self.element_shape.is_compatible_with(
                    TensorShape(value.shape)):
                raise errors.InvalidArgumentError(
                    None, None, "TensorArray %s: Could not write to TensorArray index %d "
                    "because the value shape is %s which is incompatible with the "
                    "TensorArray's inferred element shape: %s (consider setting "
                    "infer_shape=False)." % (self.name, index, list(value.shape),
                                             self.element_shape.as_list()))
            old = self.values[index]
            if old is not None:
                if not self.is_gradient:
                    raise errors.InvalidArgumentError(
                        None, None, "Could not write to TensorArray index %d because it has "
                        "already been written to." % index)
                value = old + value        # a gradient array adds the contributions up
            self.values[index] = value
            if self.infer_shape and (self.element_shape is None or
                                     not self.element_shape.is_fully_defined()):
                self.element_shape = TensorShape(value.shape)

    def read(self, index):
        with self.lock:
            index = self._check_index(index, False)
            value = self.values[index]
            if value is None:
                if self.is_gradient and self.element_shape is not None \
                        and self.element_shape.is_fully_defined():
                    return np.zeros(self.element_shape.as_list(), self.dtype.as_numpy_dtype)
                raise errors.InvalidArgumentError(
                    None, None, "Could not read from TensorArray index %d because it has not "
                    "yet been written to." % index)
            if self.clear_after_read and not self.is_gradient:
                self.values[index] = None
            return value

    def size(self):
        with self.lock:
            return len(self.values)

    def gradient(self, source):
        """The gradient array for gradient call ``source`` (made on first use)."""
        with self.lock:
            g = self.gradients.get(source)
            if g is None:
                g = self.gradients[source] = TensorArrayState(
                    self.dtype, len(self.values), self.dynamic_size, False, self.element_shape,
                    "%s@%s" % (self.name, source), is_gradient=True,
                    infer_shape=self.infer_shape)
            return g


_FLOW = np.float32(0.0)


def _make_kernel(op, backend):
    attrs = op._attrs
    dtype = attrs["dtype"]
    element_shape = attrs.get("element_shape")
    element_shape = None if element_shape is None or element_shape.ndims is None \
        else element_shape

    def compute(ctx, inputs):
        size = int(np.asarray(inputs[0]))
        if size < 0:
            raise errors.InvalidArgumentError(None, None, "Size should be >= 0.")
        state = TensorArrayState(dtype, size, attrs["dynamic_size"],
                                 attrs["clear_after_read"], element_shape,
                                 attrs.get("tensor_array_name") or op.name,
                                 infer_shape=attrs.get("identical_element_shapes", True))
        return [state, _FLOW]
    return compute


def _grad_kernel(op, backend):
    source = op._attrs["source"]
    return lambda ctx, inputs: [inputs[0].gradient(source), _FLOW]


def _write_kernel(op, backend):
    def compute(ctx, inputs):
        handle, index, value, _ = inputs
        handle.write(index, value)
        return [_FLOW]
    return compute


def _read_kernel(op, backend):
    return lambda ctx, inputs: [inputs[0].read(inputs[1])]


def _gather_kernel(op, backend):
    dtype = op._attrs["dtype"]
    element_shape = op._attrs.get("element_shape")

    def compute(ctx, inputs):
        handle, indices = inputs[0], np.asarray(inputs[1]).reshape(-1)
        values = [handle.read(i) for i in indices]
        if not values:
            shape = element_shape.as_list() if element_shape is not None and \
                element_shape.is_fully_defined() else [0]
            return [np.zeros([0] + shape, dtype.as_numpy_dtype)]
        return [np.stack(values).astype(dtype.as_numpy_dtype, copy=False)]
    return compute


def _scatter_kernel(op, backend):
    def compute(ctx, inputs):
        handle, indices, value = inputs[0], np.asarray(inputs[1]).reshape(-1), \
            np.asarray(inputs[2])
        if value.shape[:1] != indices.shape:
            raise errors.InvalidArgumentError(
                None, None, "Expected len(indices) == values.shape[0], but saw: %d vs. %d"
                % (indices.shape[0], value.shape[0] if value.ndim else 0))
        for k, i in enumerate(indices):
            handle.write(i, value[k])
        return [_FLOW]
    return compute


def _concat_kernel(op, backend):
    dtype = op._attrs["dtype"]

    def compute(ctx, inputs):
        handle = inputs[0]
        values = [handle.read(i) for i in range(handle.size())]
        lengths = np.array([v.shape[0] for v in values], np.int64)
        if not values:
            return [np.zeros([0], dtype.as_numpy_dtype), lengths]
        return [np.concatenate(values).astype(dtype.as_numpy_dtype, copy=False), lengths]
    return compute


def _split_kernel(op, backend):
    def compute(ctx, inputs):
        handle, value, lengths = inputs[0], np.asarray(inputs[1]), np.asarray(inputs[2])
        if int(lengths.sum()) != value.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, "Expected sum of lengths to be equal to values.shape[0], but sum "
                "of lengths is %d and value's shape is: %s" % (lengths.sum(), list(value.shape)))
        start = 0
        for i, n in enumerate(lengths):
            handle.write(i, value[start:start + int(n)])
            start += int(n)
        return [_FLOW]
    return compute


def _size_kernel(op, backend):
    return lambda ctx, inputs: [np.int32(inputs[0].size())]


def _close_kernel(op, backend):
    def compute(ctx, inputs):
        with inputs[0].lock:
            inputs[0].closed = True
            inputs[0].values = [None] * len(inputs[0].values)
        return []
    return compute


# -- gradients (TF's tensor_array_grad.py) ---------------------------------------------------
def _grad_source(grad):
    """Which gradient call this is (``gradients``, ``gradients_1``...): each gets its own
    gradient arrays, named by the top name scope of the gradient ops."""
    name = grad.op.name if grad is not None else ""
    for part in name.split("/"):
        if part.startswith("gradients"):
            return part
    return "gradients"


def _read_grad(op, grad):
    handle, index, flow = op.inputs
    ta = TensorArray(op.get_attr("dtype"), handle=handle, flow=flow)
    g = ta.grad(_grad_source(grad), flow=flow)
    return [None, None, g.write(index, grad).flow]


def _write_grad(op, flow_grad):
    handle, index, value, flow = op.inputs
    ta = TensorArray(value.dtype.base_dtype, handle=handle, flow=flow)
    g = ta.grad(_grad_source(flow_grad), flow=flow_grad)
    return [None, None, g.read(index), flow_grad]


def _gather_grad(op, grad):
    handle, indices, flow = op.inputs
    ta = TensorArray(op.get_attr("dtype"), handle=handle, flow=flow)
    g = ta.grad(_grad_source(grad), flow=flow)
    return [None, None, g.scatter(indices, grad).flow]


def _scatter_grad(op, flow_grad):
    handle, indices, value, flow = op.inputs
    ta = TensorArray(value.dtype.base_dtype, handle=handle, flow=flow)
    g = ta.grad(_grad_source(flow_grad), flow=flow_grad)
    return [None, None, g.gather(indices), flow_grad]


def _concat_grad(op, grad, unused_lengths_grad):
    handle, flow = op.inputs
    ta = TensorArray(op.get_attr("dtype"), handle=handle, flow=flow)
    g = ta.grad(_grad_source(grad), flow=flow)
    return [None, g.split(grad, op.outputs[1]).flow]


def _split_grad(op, flow_grad):
    handle, value, lengths, flow = op.inputs
    ta = TensorArray(value.dtype.base_dtype, handle=handle, flow=flow)
    g = ta.grad(_grad_source(flow_grad), flow=flow_grad)
    return [None, g.concat(), None, flow_grad]


_CPU = {"CPU": ANY_DTYPE}
TENSOR_ARRAY_V3 = declare(OpDef(
    "TensorArrayV3", inputs=("size",), attrs=("dtype", "element_shape", "dynamic_size",
                                               "clear_after_read", "identical_element_shapes",
                                               "tensor_array_name"),
    gradient=NOT_DIFFERENTIABLE, stateful=True, devices=_CPU, kernel=_make_kernel))
TENSOR_ARRAY_GRAD_V3 = declare(OpDef(
    "TensorArrayGradV3", inputs=("handle", "flow_in"), attrs=("source",),
    gradient=NOT_DIFFERENTIABLE, stateful=True, devices=_CPU, kernel=_grad_kernel))
TENSOR_ARRAY_WRITE_V3 = declare(OpDef(
    "TensorArrayWriteV3", inputs=("handle", "index", "value", "flow_in"), attrs=("T",),
    gradient=_write_grad, stateful=True, devices=_CPU, kernel=_write_kernel))
TENSOR_ARRAY_READ_V3 = declare(OpDef(
    "TensorArrayReadV3", inputs=("handle", "index", "flow_in"), attrs=("dtype",),
    gradient=_read_grad, stateful=True, devices=_CPU, kernel=_read_kernel))
TENSOR_ARRAY_GATHER_V3 = declare(OpDef(
    "TensorArrayGatherV3", inputs=("handle", "indices", "flow_in"),
    attrs=("dtype", "element_shape"), gradient=_gather_grad, stateful=True, devices=_CPU,
    kernel=_gather_kernel))
TENSOR_ARRAY_SCATTER_V3 = declare(OpDef(
    "TensorArrayScatterV3", inputs=("handle", "indices", "value", "flow_in"), attrs=("T",),
    gradient=_scatter_grad, stateful=True, devices=_CPU, kernel=_scatter_kernel))
TENSOR_ARRAY_CONCAT_V3 = declare(OpDef(
    "TensorArrayConcatV3", inputs=("handle", "flow_in"),
    attrs=("dtype", "element_shape_except0"), gradient=_concat_grad, stateful=True,
    devices=_CPU, kernel=_concat_kernel))
TENSOR_ARRAY_SPLIT_V3 = declare(OpDef(
    "TensorArraySplitV3", inputs=("handle", "value", "lengths", "flow_in"), attrs=("T",),
    gradient=_split_grad, stateful=True, devices=_CPU, kernel=_split_kernel))
TENSOR_ARRAY_SIZE_V3 = declare(OpDef(
    "TensorArraySizeV3", inputs=("handle", "flow_in"), gradient=NOT_DIFFERENTIABLE,
    stateful=True, devices=_CPU, kernel=_size_kernel))
TENSOR_ARRAY_CLOSE_V3 = declare(OpDef(
    "TensorArrayCloseV3", inputs=("handle",), gradient=NOT_DIFFERENTIABLE, stateful=True,
    devices=_CPU, kernel=_close_kernel))


class TensorArray:
    """TF1's ``tf.TensorArray`` (see the module docstring).

    ``TensorArray(dtype, size)`` makes a new array; ``write``, ``scatter``,
    ``unstack`` and ``split`` return a new TensorArray object whose flow
    follows the write; ``read``, ``gather``, ``stack``, ``concat`` and
    ``size`` return tensors."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._infer_shape = infer_shape
        self._dynamic_size = bool(dynamic_size)
        self._size = None          # the size tensor, when it was given (TF: size() is it)
        self._element_shape = [as_shape(element_shape) if element_shape is not None
                               else unknown_shape()]
        if handle is not None:
            if size is not None:
                raise ValueError("Cannot provide both a handle and size at the same time")
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with name_scope(name, "TensorArray", [size]) as scope:
            size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
            self._size = size
            op = make_op(TENSOR_ARRAY_V3, [size], [_dtypes.resource, _dtypes.float32],
                         [TensorShape([]), TensorShape([])], name=scope,
                         attrs={"dtype": self._dtype, "element_shape": self._element_shape[0],
                                "dynamic_size": bool(dynamic_size),
                                "clear_after_read": True if clear_after_read is None
                                else bool(clear_after_read),
                                "identical_element_shapes": infer_shape,
                                "tensor_array_name": tensor_array_name or ""})
        self._handle, self._flow = op.outputs

    dtype = property(lambda self: self._dtype)
    handle = property(lambda self: self._handle)
    flow = property(lambda self: self._flow)

    @property
    def element_shape(self):
        return self._element_shape[0]

    def _with_flow(self, flow):
        """The same array after the writes ``flow`` stands for (while_loop's hook)."""
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow,
                         infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size, ta._size = self._dynamic_size, self._size
        return ta

    def _merge_shape(self, shape):
        if self._infer_shape:
            current = self._element_shape[0]
            if not current.is_compatible_with(shape):
                raise ValueError("Inconsistent shapes: saw %s but expected %s (and "
                                 "infer_shape=True)" % (shape, current))
            self._element_shape[0] = current.merge_with(shape)

    def identity(self):
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        flow = self._flow if flow is None else flow
        with name_scope(name, "TensorArrayGrad", [self._handle]) as scope:
            op = make_op(TENSOR_ARRAY_GRAD_V3, [self._handle, flow],
                         [_dtypes.resource, _dtypes.float32], [TensorShape([]), TensorShape([])],
                         name=scope, attrs={"source": source})
        g = TensorArray(self._dtype, handle=op.outputs[0], flow=op.outputs[1],
                        infer_shape=self._infer_shape)
        g._element_shape = self._element_shape
        return g

    def read(self, index, name=None):
        with name_scope(name, "TensorArrayReadV3", [self._handle, index]) as scope:
            index = convert_to_tensor(index, dtype=_dtypes.int32)
            op = make_op(TENSOR_ARRAY_READ_V3, [self._handle, index, self._flow], [self._dtype],
                         [self.element_shape], name=scope, attrs={"dtype": self._dtype})
        return op.outputs[0]

    def write(self, index, value, name=None):
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            index = convert_to_tensor(index, dtype=_dtypes.int32)
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_shape(value.shape)
            op = make_op(TENSOR_ARRAY_WRITE_V3, [self._handle, index, value, self._flow],
                         [_dtypes.float32], [TensorShape([])], name="TensorArrayWriteV3",
                         attrs={"T": self._dtype})
        return self._with_flow(op.outputs[0])

    def gather(self, indices, name=None):
        with name_scope(name, "TensorArrayGather", [self._handle, indices]):
            indices = convert_to_tensor(indices, dtype=_dtypes.int32)
            n = indices.shape[0] if indices.shape.ndims == 1 else None
            shape = TensorShape([n]).concatenate(self.element_shape)
            op = make_op(TENSOR_ARRAY_GATHER_V3, [self._handle, indices, self._flow],
                         [self._dtype], [shape], name="TensorArrayGatherV3",
                         attrs={"dtype": self._dtype, "element_shape": self.element_shape})
        return op.outputs[0]

    def stack(self, name=None):
        """All elements as one tensor (a new first dimension)."""
        with name_scope(name, "TensorArrayStack", [self._handle]):
            return self.gather(array_ops.range_(0, self.size()), name="TensorArrayGatherV3")

    def scatter(self, indices, value, name=None):
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            indices = convert_to_tensor(indices, dtype=_dtypes.int32)
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.ndims is not None and value.shape.ndims > 0:
                self._merge_shape(TensorShape(value.shape.as_list()[1:]))
            op = make_op(TENSOR_ARRAY_SCATTER_V3, [self._handle, indices, value, self._flow],
                         [_dtypes.float32], [TensorShape([])], name="TensorArrayScatterV3",
                         attrs={"T": self._dtype})
        return self._with_flow(op.outputs[0])

    def unstack(self, value, name=None):
        """Write ``value[i]`` to element ``i`` for every ``i``."""
        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            num = array_ops.shape(value)[0]
            return self.scatter(array_ops.range_(0, num), value, name="TensorArrayScatter")

    def concat(self, name=None):
        with name_scope(name, "TensorArrayConcat", [self._handle]):
            rest = self.element_shape.as_list()[1:] if self.element_shape.ndims else None
            shape = TensorShape([None] + rest) if rest is not None else unknown_shape()
            op = make_op(TENSOR_ARRAY_CONCAT_V3, [self._handle, self._flow],
                         [self._dtype, _dtypes.int64], [shape, TensorShape([None])],
                         name="TensorArrayConcatV3",
                         attrs={"dtype": self._dtype,
                                "element_shape_except0": TensorShape(rest) if rest is not None
                                else unknown_shape()})
        return op.outputs[0]

    def split(self, value, lengths, name=None):
        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths = convert_to_tensor(lengths, dtype=_dtypes.int64, name="lengths")
            op = make_op(TENSOR_ARRAY_SPLIT_V3, [self._handle, value, lengths, self._flow],
                         [_dtypes.float32], [TensorShape([])], name="TensorArraySplitV3",
                         attrs={"T": self._dtype})
        return self._with_flow(op.outputs[0])

    def size(self, name=None):
        """The number of elements: the size it was made with, unless it grows."""
        if not self._dynamic_size and self._size is not None:
            return self._size
        op = make_op(TENSOR_ARRAY_SIZE_V3, [self._handle, self._flow], [_dtypes.int32],
                     [TensorShape([])], name=name or "TensorArraySizeV3")
        return op.outputs[0]

    def close(self, name=None):
        return make_op(TENSOR_ARRAY_CLOSE_V3, [self._handle], [], [],
                       name=name or "TensorArrayCloseV3")
