"""The GPU kernel table: which ops a ``/device:GPU:N`` can run, and how.

Like TensorFlow's, the table is deliberately incomplete: the math ops run on
GPUs for float types only, and there is no integer variable kernel (see
``host_kernels``), so ``tf.Variable(1)`` pinned to a GPU fails to place
unless ``allow_soft_placement`` moves it to the CPU.

Each GPU kernel has two ways to compute, chosen per device:

* on a **real** GPU, inputs are numba device arrays and the CUDA kernels in
  :mod:`minitf.kernels.cuda` compute into new device arrays;
* on a **virtual** GPU, inputs are numpy arrays (the virtual card's memory is
  host memory) and the CPU kernels compute, except that under numba's CUDA
  simulator (``NUMBA_ENABLE_CUDASIM=1``) small tensors (at most
  :data:`SIMULATOR_MAX_ELEMENTS` elements) go through the CUDA kernels, run by
  the simulator, so a lesson can step through a real CUDA kernel.

Either way the checks and error messages are the CPU kernel's (the CPU
builder runs first and its validation is reused).

Ops that only move data (Const, Reshape, Identity...) are registered for
every device type in ``host_kernels``. On a real GPU minitf has no CUDA
version of them: :func:`_round_trip` runs them on host copies of their inputs
and puts the results back on the device.
"""

import numpy as np

from minitf.kernels import registry
from minitf.kernels.math_kernels import REDUCE
from minitf.kernels.registry import register

GPU_FLOATS = ("float16", "bfloat16", "float32", "float64")
GPU_UNARY = ("Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Relu", "Sigmoid",
             "Tanh", "Sign", "Reciprocal", "Floor", "Ceil", "Round")
GPU_BINARY = ("AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum",
              "Minimum", "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual",
              "Greater", "GreaterEqual")
GPU_REDUCE = tuple(r for r in REDUCE if r not in ("All", "Any"))
GPU_OTHER = ("MatMul", "BatchMatMulV2", "AddN", "Softmax", "LogSoftmax",
             "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
             "ArgMax", "ArgMin", "Select")
#: TF's optimizer updates; registered for GPUs when a CPU kernel exists for them.
GPU_OPTIMIZERS = ("ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyAdagrad",
                  "ApplyRMSProp")

#: Virtual GPUs under the CUDA simulator run CUDA kernels up to this size.
SIMULATOR_MAX_ELEMENTS = 4096


def _cpu_builder(op_type):
    kdef = registry._KERNELS.get((op_type, "CPU"))
    return kdef.builder if kdef is not None else None


def _simulating():
    from minitf.runtime import gpu
    return gpu.cuda_status().simulated


def _small(inputs):
    return all(getattr(x, "size", 1) <= SIMULATOR_MAX_ELEMENTS for x in inputs)


def _cuda_compute(op):
    """``compute(ctx, inputs)`` on device arrays (or numpy, uploaded), giving device arrays."""
    from minitf.kernels import cuda
    t = op.type
    if t in GPU_UNARY:
        return lambda ctx, ins: [cuda.unary(t, ins[0])]
    if t in GPU_BINARY:
        return lambda ctx, ins: [cuda.binary(t, ins[0], ins[1])]
    if t in GPU_REDUCE:
        keep = op.get_attr("keep_dims")

        def reduce_(ctx, ins):
            x = ins[0]
            axes = [int(a) % max(x.ndim, 1) for a in np.asarray(ins[1]).reshape(-1)]
            return [cuda.reduce(t, x, axes, keep)]
        return reduce_
    if t in ("MatMul", "BatchMatMulV2"):
        ta = op.get_attr("transpose_a") if t == "MatMul" else op.get_attr("adj_x")
        tb = op.get_attr("transpose_b") if t == "MatMul" else op.get_attr("adj_y")
        return lambda ctx, ins: [cuda.matmul(ins[0], ins[1], ta, tb)]
    if t == "AddN":
        return lambda ctx, ins: [cuda.add_n(ins)]
    if t == "Softmax":
        return lambda ctx, ins: [cuda.softmax(ins[0])]
    if t == "LogSoftmax":
        return lambda ctx, ins: [cuda.log_softmax(ins[0])]
    if t == "SoftmaxCrossEntropyWithLogits":
        return lambda ctx, ins: list(cuda.softmax_xent(ins[0], ins[1]))
    if t == "SparseSoftmaxCrossEntropyWithLogits":
        return lambda ctx, ins: list(cuda.sparse_softmax_xent(ins[0], ins[1]))
    if t in ("ArgMax", "ArgMin"):
        out = op.get_attr("output_type").np_dtype
        return lambda ctx, ins: [cuda.arg_reduce(t == "ArgMax", ins[0], int(ins[1]), out)]
    if t == "Select":
        return lambda ctx, ins: [cuda.select(ins[0], ins[1], ins[2])]
    return None


def _out_dtypes(op):
    return [t.dtype.base_dtype.np_dtype for t in op.outputs]


def gpu_math_builder(op, device):
    """The GPU kernel of a math op (see the module docstring for the two paths)."""
    cpu_compute = _cpu_builder(op.type)(op, device)
    cuda_compute = _cuda_compute(op)
    if not device.virtual:
        return cuda_compute
    if cuda_compute is None or not _simulating():
        return cpu_compute
    from minitf.kernels import cuda
    dtypes = _out_dtypes(op)

    def compute(ctx, inputs):
        if not _small(inputs):
            return cpu_compute(ctx, inputs)
        # The CUDA front raises the CPU kernels' errors (shapes, labels).
        outs = cuda_compute(ctx, inputs)
        return [np.asarray(cuda.to_host(o)).astype(dt, copy=False)
                for o, dt in zip(outs, dtypes)]
    return compute


register(GPU_UNARY + GPU_BINARY + GPU_REDUCE + GPU_OTHER, ("GPU",),
         dtypes=GPU_FLOATS)(gpu_math_builder)


def _round_trip(builder):
    """A host kernel on a GPU: on a virtual one as is; on a real one it computes
    on host copies of device inputs and uploads its array outputs."""
    def gpu_builder(op, device):
        compute = builder(op, device)
        if device.virtual:
            return compute
        from minitf.runtime import gpu

        def round_trip(ctx, inputs):
            host = [gpu.to_host(x) if gpu.is_device_array(x) else x for x in inputs]
            outs = compute(ctx, host)
            return [gpu.to_device(o, device) if isinstance(o, np.ndarray) and
                    o.dtype != np.dtype(object) else o for o in outs]
        return round_trip
    return gpu_builder


def _variable_memory(builder):
    """Assign/AssignAdd/AssignSub on a GPU: charge the variable's buffer to the
    device's allocator (before it is written, so an OOM leaves it untouched)."""
    def gpu_builder(op, device):
        compute = builder(op, device)
        allocator = device.allocator

        def charged(ctx, inputs):
            ref, value = inputs[0], inputs[1]
            if allocator is not None and hasattr(value, "nbytes"):
                allocator.charge_variable(ref, value.nbytes, value.shape, value.dtype.name)
            outs = compute(ctx, inputs)
            if allocator is not None and getattr(ref, "_buffer", None) is not None:
                from minitf.runtime.copies import buffer_key
                allocator.alias_variable(ref, buffer_key(ref._buffer))
            return outs
        return charged
    return gpu_builder


def _optimizer_builder(op, device):
    cpu_compute = _cpu_builder(op.type)(op, device)
    if device.virtual:
        return cpu_compute
    return _real_optimizer(op, device, cpu_compute)


def _real_optimizer(op, device, cpu_compute):
    """On a real GPU: update the variable's device buffers with the CUDA kernel."""
    from minitf.kernels import cuda
    from minitf.runtime.resource_manager import VariableResource

    def buf(x):
        return x._buffer if isinstance(x, VariableResource) else x

    t = op.type
    attrs = op._attrs

    def compute(ctx, inputs):
        var = inputs[0]
        args = [buf(x) for x in inputs]
        nesterov = bool(attrs.get("use_nesterov", False))
        if t == "ApplyGradientDescent":
            cuda.apply_gradient_descent(*args)
        elif t == "ApplyMomentum":
            cuda.apply_momentum(*args, use_nesterov=nesterov)
        elif t == "ApplyAdam":
            cuda.apply_adam(*args, use_nesterov=nesterov)
        elif t == "ApplyAdagrad":
            cuda.apply_adagrad(*args, update_slots=bool(attrs.get("update_slots", True)))
        else:
            cuda.apply_rms_prop(*args)
        return [var]
    return compute


def install():
    """Called by the registry after every other kernel module is loaded: wrap
    the data-movement kernels registered for GPUs, and register GPU optimizer
    kernels for the Apply* ops that have a CPU kernel."""
    for (op_type, device_type), kdef in list(registry._KERNELS.items()):
        if device_type == "GPU" and kdef.builder is not gpu_math_builder and \
                not getattr(kdef.builder, "_minitf_gpu", False):
            wrapped = _round_trip(kdef.builder)
            if op_type in ("Assign", "AssignAdd", "AssignSub"):
                wrapped = _variable_memory(wrapped)
            wrapped._minitf_gpu = True
            registry._KERNELS[(op_type, device_type)] = registry.KernelDef(
                op_type, device_type, kdef.dtypes, wrapped)
    for op_type in GPU_OPTIMIZERS:
        if _cpu_builder(op_type) is not None:
            register(op_type, ("GPU",), dtypes=GPU_FLOATS)(_optimizer_builder)
    _optimizer_builder._minitf_gpu = True
