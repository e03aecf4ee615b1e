"""CUDA kernels (numba.cuda): the functions the GPU kernel table calls.

This file is the *front* of every CUDA kernel, like ``minitf/kernels/cpu``:
it checks arguments the way TensorFlow does, works out shapes and strides,
allocates outputs on the device and launches the kernels, whose loop nests
and thread/block layouts are explained in one module per family:

* :mod:`.elementwise` -- unary/binary ops with broadcasting, select, cast;
* :mod:`.reductions`  -- tree reduction in shared memory, ArgMax/ArgMin;
* :mod:`.scans`       -- Cumsum/Cumprod, one thread per column;
* :mod:`.sorting`     -- TopKV2 and InTopKV2, one thread per row;
* :mod:`.matmul`      -- tiled shared-memory matmul (batched on the grid's z);
* :mod:`.linalg`      -- inverse, determinant, solves, Cholesky, transposes;
* :mod:`.nn`          -- softmax, log-softmax, the cross-entropy losses;
* :mod:`.optimizers`  -- TF's Apply* updates, in place;
* :mod:`.random`      -- TF's Philox streams and distributions (the random ops).
* :mod:`.conv`        -- convolutions, pooling, batch normalization (NHWC or NCHW,
  read through strides).

Every function takes numpy arrays or numba device arrays and returns device
arrays: on a GPU, tensors stay in device memory between ops (the executor
copies only on edges between host and device). :func:`to_host` brings a
result back. float32 and float64 run natively; float16/bfloat16 are widened
to float32 on the host first (numba has no bfloat16).

Importing this module imports ``numba.cuda`` (a driver probe) and compiles
nothing; each kernel is compiled (or loaded from numba's disk cache) on its
first launch for a given set of argument types. Under
``NUMBA_ENABLE_CUDASIM=1`` the same code runs in numba's simulator, which is
how the parity tests run on machines without a GPU.
"""

import math

import ml_dtypes
import numpy as np
from numba import cuda

from minitf.framework.errors import InvalidArgumentError
from minitf.kernels import is_device_array
from minitf.kernels import random_streams as _random_streams
from minitf.kernels.cuda import conv as _conv
from minitf.kernels.cuda import elementwise as _ew
from minitf.kernels.cuda import linalg as _la
from minitf.kernels.cuda import matmul as _mm
from minitf.kernels.cuda import nn as _nn
from minitf.kernels.cuda import optimizers as _opt
from minitf.kernels.cuda import random as _random
from minitf.kernels.cuda import reductions as _red
from minitf.ops.math_ops import ADD_V2
from minitf.kernels.cuda import scans as _scans
from minitf.kernels.cuda import sorting as _sorting

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

def to_host(x):
    return x.copy_to_host() if is_device_array(x) else np.asarray(x)


def to_device(value, device):
    """``value`` (a numpy array) copied into the memory of GPU ``device``."""
    if value.dtype == np.dtype(object):
        return value
    with cuda.gpus[device.physical_index]:
        return cuda.to_device(np.ascontiguousarray(value))


def _dev(x):
    """``x`` on the device, in a dtype the kernels compute in."""
    if is_device_array(x):
        return x
    x = np.asarray(x)
    if x.dtype in _HALF:
        x = x.astype(_F32)
    return cuda.to_device(np.require(x, requirements="C"))   # (keeps 0-d arrays 0-d)


def _ints(values):
    return cuda.to_device(np.asarray(list(values) or [1], dtype=np.int64))


def _flat(d):
    return d.reshape(d.size) if d.ndim != 1 else d


def _launch(n):
    return _ew.launch_config(n)


def _check_float(dtype, what):
    if np.dtype(dtype) not in (_F32, _F64):
        raise TypeError("minitf CUDA kernel %s does not support dtype %s" % (what, dtype))


# -- elementwise ------------------------------------------------------------------------------
def unary(row, x):
    """The elementwise op ``row`` applied to each element (float32/float64)."""
    d = _dev(x)
    _check_float(d.dtype, row.name)
    out = cuda.device_array(d.shape, d.dtype)
    if d.size:
        blocks, threads = _launch(d.size)
        _ew.kernel_for(row)[blocks, threads](_flat(d), _flat(out))
    return out


def broadcast_strides(shape, out_shape):
    """Element strides of a C-contiguous array of ``shape`` read as ``out_shape``:
    0 on broadcast (size-1 or missing) dimensions."""
    strides = []
    step = 1
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    for dim in reversed(padded):
        strides.append(0 if dim == 1 else step)
        step *= dim
    return list(reversed(strides))


def binary(row, x, y):
    """The elementwise op ``row`` of ``x`` and ``y``, with numpy broadcasting; bool
    output for comparisons."""
    dx, dy = _dev(x), _dev(y)
    _check_float(dx.dtype, row.name)
    try:
        out_shape = np.broadcast_shapes(dx.shape, dy.shape)
    except ValueError:
        raise InvalidArgumentError(None, None, "Incompatible shapes: [%s] vs. [%s]" % (
            ",".join(map(str, dx.shape)), ",".join(map(str, dy.shape)))) from None
    out = cuda.device_array(out_shape, np.bool_ if row.elementwise.bool_output else dx.dtype)
    n = out.size
    if n:
        shape = _ints(out_shape)
        xs = _ints(broadcast_strides(dx.shape, out_shape) if out_shape else [0])
        ys = _ints(broadcast_strides(dy.shape, out_shape) if out_shape else [0])
        if not out_shape:
            shape = _ints([1])
        blocks, threads = _launch(n)
        _ew.kernel_for(row)[blocks, threads](_flat(dx), _flat(dy), _flat(out), shape, xs, ys)
    return out


def select(cond, x, y):
    """``x`` where ``cond`` else ``y``; ``cond`` broadcasts to x's shape."""
    dc, dx, dy = _dev(np.asarray(cond, np.bool_) if not is_device_array(cond) else cond), \
        _dev(x), _dev(y)
    out = cuda.device_array(dx.shape, dx.dtype)
    if out.size:
        shape = _ints(dx.shape or (1,))
        cs = _ints(broadcast_strides(dc.shape, dx.shape) if dx.shape else [0])
        xs = _ints(broadcast_strides(dx.shape, dx.shape) if dx.shape else [0])
        blocks, threads = _launch(out.size)
        _ew.select_kernel[blocks, threads](_flat(dc), _flat(dx), _flat(dy), _flat(out),
                                           shape, cs, xs)
    return out


def cast(x, np_dtype, scale=1.0):
    """``x * scale`` converted to ``np_dtype`` on the device."""
    d = _dev(x)
    out = cuda.device_array(d.shape, np.dtype(np_dtype))
    if out.size:
        blocks, threads = _launch(out.size)
        _ew.cast_kernel[blocks, threads](_flat(d), _flat(out), scale)
    return out


def add_n(xs):
    """Elementwise sum of same-shape arrays, accumulated in one device buffer."""
    ds = [_dev(x) for x in xs]
    acc = cuda.device_array(ds[0].shape, ds[0].dtype)
    acc.copy_to_device(ds[0])
    if acc.size:
        blocks, threads = _launch(acc.size)
        for d in ds[1:]:
            _ew.add_kernel_inplace[blocks, threads](_flat(acc), _flat(d))
    return acc


# -- reductions -------------------------------------------------------------------------------
def _reduce_launch(d, op_code, init, kept, red):
    """Run the tree reduction over the axes ``red``; returns float64 [R, 1]."""
    shape = d.shape
    strides = [int(s) for s in np.cumprod((list(shape[1:]) + [1])[::-1])[::-1]] if shape else []
    kept_shape = [shape[a] for a in kept] or [1]
    kept_strides = [strides[a] for a in kept] or [0]
    red_shape = [shape[a] for a in red] or [1]
    red_strides = [strides[a] for a in red] or [0]
    R = math.prod(kept_shape)
    K = math.prod(shape[a] for a in red)
    threads = _red.THREADS
    C = 1 if K <= threads * 4 else min(64, -(-K // (threads * 4)))
    partial = cuda.device_array((R, C), np.float64)
    if R == 0:
        return partial
    _red.reduce_kernel[(R, C), threads](_flat(d), op_code, float(init), _ints(kept_shape),
                                        _ints(kept_strides), _ints(red_shape),
                                        _ints(red_strides), K, partial)
    if C > 1:
        final = cuda.device_array((R, 1), np.float64)
        _red.reduce_kernel[(R, 1), threads](_flat(partial), op_code, float(init),
                                            _ints([R]), _ints([C]), _ints([C]), _ints([1]),
                                            C, final)
        partial = final
    return partial


_CODES = {"sum": _red.SUM, "mean": _red.SUM, "prod": _red.PROD, "max": _red.MAX,
          "min": _red.MIN}
_INIT = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}


def reduce(kind, x, axes, keepdims):
    """The ``kind`` reduction ("sum", "mean", "max", "min", "prod") over ``axes``
    (float32/float64)."""
    d = _dev(x)
    _check_float(d.dtype, kind)
    axes = tuple(sorted(set(int(a) for a in axes)))
    if not axes:
        out = cuda.device_array(d.shape, d.dtype)
        out.copy_to_device(d)
        return out
    kept = [a for a in range(d.ndim) if a not in axes]
    out_shape = tuple(1 if i in axes else s for i, s in enumerate(d.shape)) if keepdims \
        else tuple(d.shape[a] for a in kept)
    partial = _reduce_launch(d, _CODES[kind], _INIT[kind], kept, list(axes))
    scale = 1.0
    if kind == "mean":
        count = math.prod(d.shape[a] for a in axes)
        scale = 1.0 / count if count else math.nan
    return cast(partial, d.dtype, scale).reshape(out_shape) if out_shape else \
        cast(partial, d.dtype, scale).reshape(())


def argmax(x, axis, out_np_dtype):
    """Index of the largest value along ``axis`` (the first one on ties)."""
    return _arg_reduce(True, x, axis, out_np_dtype)


def argmin(x, axis, out_np_dtype):
    """Index of the smallest value along ``axis`` (the first one on ties)."""
    return _arg_reduce(False, x, axis, out_np_dtype)


def _arg_reduce(find_max, x, axis, out_np_dtype):
    """Index of the max (min) along ``axis``; the first one on ties."""
    d = _dev(x)
    axis = int(axis) % max(d.ndim, 1)
    if d.shape[axis] == 0:
        raise InvalidArgumentError(None, None, "Reduction axis %d is empty in shape [%s]"
                                   % (axis, ",".join(map(str, d.shape))))
    A = math.prod(d.shape[:axis])
    K = d.shape[axis]
    B = math.prod(d.shape[axis + 1:])
    out = cuda.device_array(A * B, np.dtype(out_np_dtype))
    if A * B:
        blocks, threads = _launch(A * B)
        _red.arg_reduce_kernel[blocks, threads](_flat(d), bool(find_max), A * B, K, B, out)
    shape = tuple(d.shape)
    return out.reshape(shape[:axis] + shape[axis + 1:]) if d.ndim > 1 else \
        out.reshape(())


# -- scans --------------------------------------------------------------------------------------
def cumulative(x, axis, product, exclusive, reverse):
    """Cumsum/Cumprod along ``axis`` (floats and int32/int64)."""
    d = _dev(x)
    shape = tuple(d.shape)
    A, K, B = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    out = cuda.device_array(shape, d.dtype)
    if A * B and K:
        blocks, threads = _launch(A * B)
        _scans.scan_kernel[blocks, threads](_flat(d), _flat(out), A, K, B,
                                            d.dtype.type(1 if product else 0), bool(product),
                                            bool(exclusive), bool(reverse))
    return out


# -- sorting ------------------------------------------------------------------------------------
def top_k(x, k):
    """``(values, indices)`` of the ``k`` largest entries of each row."""
    d = _dev(x)
    shape = tuple(d.shape)
    n = shape[-1]
    rows = math.prod(shape[:-1])
    values = cuda.device_array(rows * k, d.dtype)
    indices = cuda.device_array(rows * k, np.int32)
    if rows and k:
        blocks, threads = _launch(rows)
        _sorting.top_k_kernel[blocks, threads](_flat(d), rows, n, k, values, indices)
    out_shape = shape[:-1] + (k,)
    return values.reshape(out_shape), indices.reshape(out_shape)


def in_top_k(predictions, targets, k):
    """Per row: is the target class among the ``k`` largest predictions?"""
    d = _dev(predictions)
    t = _dev(targets)
    rows, n = tuple(d.shape)
    out = cuda.device_array(rows, np.bool_)
    if rows:
        blocks, threads = _launch(rows)
        _sorting.in_top_k_kernel[blocks, threads](_flat(d), t, rows, n, k, out)
    return out


# -- matmul ---------------------------------------------------------------------------------
def matmul(a, b, transpose_a=False, transpose_b=False):
    """``op(a) @ op(b)``, 2-D or batched. Transposes are stride swaps. Batch
    dimensions must match or one side must have none (or all ones); other
    broadcasts are materialised on the host first."""
    da, db = _dev(a), _dev(b)
    _check_float(da.dtype, "matmul")
    sa, sb = tuple(da.shape), tuple(db.shape)
    ar, ac = sa[-2], sa[-1]
    br, bc = sb[-2], sb[-1]
    M, K = (ac, ar) if transpose_a else (ar, ac)
    K2, N = (bc, br) if transpose_b else (br, bc)
    if K != K2:
        raise InvalidArgumentError(None, None, "Matrix size-incompatible: In[0]: [%s], "
                                   "In[1]: [%s]" % (",".join(map(str, sa)),
                                                    ",".join(map(str, sb))))
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    T = math.prod(batch)
    Ta, Tb = math.prod(sa[:-2]), math.prod(sb[:-2])
    if (Ta != 1 and sa[:-2] != batch) or (Tb != 1 and sb[:-2] != batch):
        ha = np.broadcast_to(to_host(da), batch + sa[-2:])
        hb = np.broadcast_to(to_host(db), batch + sb[-2:])
        da, db = _dev(np.ascontiguousarray(ha)), _dev(np.ascontiguousarray(hb))
        Ta = Tb = T
    out = cuda.device_array(batch + (M, N), da.dtype)
    if out.size == 0:
        return out
    if K == 0:
        return cast(_dev(np.zeros(batch + (M, N), da.dtype)), da.dtype)
    a_rs, a_cs = (1, ac) if transpose_a else (ac, 1)
    b_rs, b_cs = (1, bc) if transpose_b else (bc, 1)
    a_bs = ar * ac if Ta > 1 else 0
    b_bs = br * bc if Tb > 1 else 0
    tile = _mm.TILE
    grid = (-(-N // tile), -(-M // tile), T)
    kernel = _mm.matmul_f32 if da.dtype == _F32 else _mm.matmul_f64
    kernel[grid, (tile, tile)](_flat(da), _flat(db), _flat(out), M, K, N, a_rs, a_cs, a_bs,
                               b_rs, b_cs, b_bs)
    return out


# -- linear algebra: one thread per matrix ------------------------------------------------------
def _batch(d):
    shape = tuple(d.shape)
    return shape[:-2], math.prod(shape[:-2]), shape[-1]


def _failed(failed, message):
    if to_host(failed).any():
        raise InvalidArgumentError(None, None, message)


def matrix_inverse(x, adjoint=False):
    d = _dev(x)
    _check_float(d.dtype, "MatrixInverse")
    _, T, n = _batch(d)
    work = cuda.device_array(d.size, d.dtype)
    inv = cuda.device_array(d.shape, d.dtype)
    failed = cuda.device_array(max(T, 1), np.int32)
    if T and n:
        blocks, threads = _launch(T)
        _la.inverse_kernel[blocks, threads](_flat(d), work, _flat(inv), T, n, bool(adjoint),
                                            failed)
        _failed(failed[:T], "Input is not invertible.")
    return inv


def matrix_determinant(x):
    d = _dev(x)
    _check_float(d.dtype, "MatrixDeterminant")
    batch, T, n = _batch(d)
    det = cuda.device_array(max(T, 1), d.dtype)
    if T:
        work = cuda.device_array(max(d.size, 1), d.dtype)
        blocks, threads = _launch(T)
        _la.determinant_kernel[blocks, threads](_flat(d), work, det, T, n)
    return det[:T].reshape(batch) if batch else det[:1].reshape(())


def cholesky(x):
    d = _dev(x)
    _check_float(d.dtype, "Cholesky")
    _, T, n = _batch(d)
    out = cuda.device_array(d.shape, d.dtype)
    failed = cuda.device_array(max(T, 1), np.int32)
    if T and n:
        blocks, threads = _launch(T)
        _la.cholesky_kernel[blocks, threads](_flat(d), _flat(out), T, n, failed)
    return out


def matrix_solve(a, b, adjoint=False):
    da, db = _dev(a), _dev(b)
    _check_float(da.dtype, "MatrixSolve")
    _, T, n = _batch(da)
    m = tuple(db.shape)[-1]
    x = cuda.device_array(db.shape, da.dtype)
    failed = cuda.device_array(max(T, 1), np.int32)
    if T and n and m:
        work = cuda.device_array(da.size, da.dtype)
        blocks, threads = _launch(T)
        _la.solve_kernel[blocks, threads](_flat(da), _flat(db), work, _flat(x), T, n, m,
                                          bool(adjoint), failed)
        _failed(failed[:T], "Input matrix is not invertible.")
    return x


def triangular_solve(a, b, lower=True, adjoint=False):
    da, db = _dev(a), _dev(b)
    _check_float(da.dtype, "MatrixTriangularSolve")
    _, T, n = _batch(da)
    m = tuple(db.shape)[-1]
    x = cuda.device_array(db.shape, da.dtype)
    if T and n and m:
        blocks, threads = _launch(T)
        _la.triangular_solve_kernel[blocks, threads](_flat(da), _flat(db), _flat(x), T, n, m,
                                                     bool(lower), bool(adjoint))
    return x


def permute(x, perm):
    """``x`` with its axes in the order ``perm``, as a new contiguous device array."""
    d = _dev(x)
    shape = tuple(d.shape)
    out_shape = tuple(shape[p] for p in perm)
    strides = [int(v) for v in np.cumprod((list(shape[1:]) + [1])[::-1])[::-1]] if shape else []
    out = cuda.device_array(out_shape, d.dtype)
    if out.size:
        blocks, threads = _launch(out.size)
        _la.permute_kernel[blocks, threads](_flat(d), _flat(out), _ints(out_shape or (1,)),
                                            _ints([strides[p] for p in perm] or [0]))
    return out


# -- softmax and losses -------------------------------------------------------------------------
def _rows_launch(R):
    threads = _ew.THREADS
    return max(1, -(-R // threads)), threads


def _softmax(x, want_log):
    d = _dev(x)
    _check_float(d.dtype, "softmax")
    C = tuple(d.shape)[-1] if d.ndim else 1
    R = d.size // C if C else 0
    out = cuda.device_array(d.shape, d.dtype)
    if R and C:
        blocks, threads = _rows_launch(R)
        _nn.softmax_kernel[blocks, threads](_flat(d), _flat(out), R, C, want_log)
    return out


def softmax(x):
    return _softmax(x, False)


def log_softmax(x):
    return _softmax(x, True)


def softmax_xent(logits, labels):
    """(loss, backprop) of SoftmaxCrossEntropyWithLogits over the last axis."""
    d = _dev(logits)
    lab = labels if is_device_array(labels) else np.ascontiguousarray(
        np.broadcast_to(np.asarray(labels), d.shape))
    dl = _dev(lab)
    C = tuple(d.shape)[-1]
    R = d.size // C if C else 0
    loss = cuda.device_array(tuple(d.shape)[:-1], d.dtype)
    backprop = cuda.device_array(d.shape, d.dtype)
    if R and C:
        blocks, threads = _rows_launch(R)
        _nn.xent_kernel[blocks, threads](_flat(d), _flat(dl), _flat(loss), _flat(backprop),
                                         R, C)
    return loss, backprop


def sparse_softmax_xent(logits, labels):
    """(loss, backprop) with one integer label per row; labels are checked on
    the host first (TF's message)."""
    d = _dev(logits)
    hl = to_host(labels)
    C = tuple(d.shape)[-1]
    bad = (hl < 0) | (hl >= C)
    if hl.size and bad.any():
        raise InvalidArgumentError(
            None, None, "Received a label value of %d which is outside the valid range of "
            "[0, %d).  Label values: %s" % (hl.flat[int(np.argmax(bad))], C,
                                            " ".join(str(int(v)) for v in hl.ravel())))
    dl = _dev(hl.astype(np.int64))
    R = d.size // C if C else 0
    loss = cuda.device_array(tuple(d.shape)[:-1], d.dtype)
    backprop = cuda.device_array(d.shape, d.dtype)
    if R and C:
        blocks, threads = _rows_launch(R)
        _nn.sparse_xent_kernel[blocks, threads](_flat(d), _flat(dl), _flat(loss),
                                                _flat(backprop), R, C)
    return loss, backprop


# -- optimizers (in place on device arrays) ---------------------------------------------------
def _scalar(v):
    return float(to_host(v)) if is_device_array(v) else float(np.asarray(v))


def apply_gradient_descent(var, alpha, delta):
    if var.size:
        blocks, threads = _launch(var.size)
        _opt.sgd_kernel[blocks, threads](_flat(var), _scalar(alpha), _flat(_dev(delta)))
    return var


def apply_momentum(var, accum, lr, grad, momentum, use_nesterov=False):
    if var.size:
        blocks, threads = _launch(var.size)
        _opt.momentum_kernel[blocks, threads](_flat(var), _flat(accum), _scalar(lr),
                                              _flat(_dev(grad)), _scalar(momentum),
                                              bool(use_nesterov))
    return var


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_nesterov=False):
    lr_t = _scalar(lr) * math.sqrt(1 - _scalar(beta2_power)) / (1 - _scalar(beta1_power))
    if var.size:
        blocks, threads = _launch(var.size)
        _opt.adam_kernel[blocks, threads](_flat(var), _flat(m), _flat(v), lr_t,
                                          _scalar(beta1), _scalar(beta2), _scalar(epsilon),
                                          _flat(_dev(grad)), bool(use_nesterov))
    return var


def apply_adagrad(var, accum, lr, grad, update_slots=True):
    if var.size:
        blocks, threads = _launch(var.size)
        _opt.adagrad_kernel[blocks, threads](_flat(var), _flat(accum), _scalar(lr),
                                             _flat(_dev(grad)), bool(update_slots))
    return var


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    if var.size:
        blocks, threads = _launch(var.size)
        _opt.rmsprop_kernel[blocks, threads](_flat(var), _flat(ms), _flat(mom), _scalar(lr),
                                             _scalar(rho), _scalar(momentum),
                                             _scalar(epsilon), _flat(_dev(grad)))
    return var


# -- random ops: TF's streams, sampled on the device ------------------------------------------
def random_stream(seed, seed2):
    """A random op's stream: the same bookkeeping as on the CPU, so the same numbers."""
    return _random_streams.GuardedPhiloxRandom(seed, seed2)


def random_uniform(stream, shape, dtype):
    return _random_streams.random_uniform(stream, shape, dtype, fill=_random)


def random_standard_normal(stream, shape, dtype):
    return _random_streams.random_standard_normal(stream, shape, dtype, fill=_random)


def truncated_normal(stream, shape, dtype):
    return _random_streams.truncated_normal(stream, shape, dtype, fill=_random)


def random_uniform_int(stream, shape, minval, maxval):
    """``minval``/``maxval`` are host memory (TF's ``HostMemory``), like ``shape``."""
    return _random_streams.random_uniform_int(stream, shape, to_host(minval), to_host(maxval),
                                              fill=_random)

# -- convolutions and pooling -------------------------------------------------------------------
# The row's kernel (minitf/ops/conv_ops.py) has checked the shapes and worked out
# the geometry. Each kernel reads and writes its images through strides, so NCHW
# needs no transpose; one thread per output element (see .conv).

def _one_thread_each(total):
    """(blocks, threads) with one thread for each of ``total`` items (no stride loop)."""
    return max(1, -(-total // _ew.THREADS)), _ew.THREADS


def _c_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= int(d)
    return list(reversed(strides))


def _image_strides(shape, data_format):
    """Element strides along (N, H, W, C) of a C-contiguous array in ``data_format``."""
    s = _c_strides(shape)
    return [s[0], s[2], s[3], s[1]] if data_format == "NCHW" else s


def _nhwc(shape, data_format):
    n, a, b, c = (int(d) for d in shape)
    return (n, b, c, a) if data_format == "NCHW" else (n, a, b, c)


def _layout(n, h, w, c, data_format):
    return (n, c, h, w) if data_format == "NCHW" else (n, h, w, c)


def _out_len(size, k, stride, dilation, before, after):
    return (size + before + after - (k - 1) * dilation - 1) // stride + 1


def _zeros(shape, dtype):
    return cuda.to_device(np.zeros(shape, dtype))


def conv2d(x, w, strides, dilations, pads, data_format="NHWC"):
    """TF's Conv2D, one thread per output element."""
    dx_, dw_ = _dev(x), _dev(w)
    _check_float(dx_.dtype, "Conv2D")
    n, h, wd, c = _nhwc(dx_.shape, data_format)
    kh, kw, _, o = (int(d) for d in dw_.shape)
    oh = _out_len(h, kh, strides[0], dilations[0], pads[0], pads[1])
    ow = _out_len(wd, kw, strides[1], dilations[1], pads[2], pads[3])
    shape = _layout(n, oh, ow, o, data_format)
    y = cuda.device_array(shape, dx_.dtype)
    total = n * oh * ow * o
    if total:
        _conv.conv2d_kernel[_one_thread_each(total)](
            _flat(dx_), _ints(_image_strides(dx_.shape, data_format)), _flat(dw_), _flat(y),
            _ints(_image_strides(shape, data_format)), h, wd, c, kh, kw, o, oh, ow,
            strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[2], total)
    return y


def conv2d_backprop_input(input_shape, w, dy, strides, dilations, pads, data_format="NHWC"):
    """TF's Conv2DBackpropInput, one thread per input element (gathering)."""
    dw_, dd = _dev(w), _dev(dy)
    _check_float(dd.dtype, "Conv2DBackpropInput")
    n, h, wd, c = _nhwc(input_shape, data_format)
    kh, kw, _, o = (int(d) for d in dw_.shape)
    _, oh, ow, _ = _nhwc(dd.shape, data_format)
    shape = tuple(int(d) for d in input_shape)
    dx = cuda.device_array(shape, dd.dtype)
    total = n * h * wd * c
    if total:
        _conv.backprop_input_kernel[_one_thread_each(total)](
            _flat(dd), _ints(_image_strides(dd.shape, data_format)), _flat(dw_), _flat(dx),
            _ints(_image_strides(shape, data_format)), h, wd, c, kh, kw, o, oh, ow,
            strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[2], total)
    return dx


def conv2d_backprop_filter(x, filter_shape, dy, strides, dilations, pads, data_format="NHWC"):
    """TF's Conv2DBackpropFilter, one thread per filter element."""
    dx_, dd = _dev(x), _dev(dy)
    _check_float(dd.dtype, "Conv2DBackpropFilter")
    n, h, wd, c = _nhwc(dx_.shape, data_format)
    kh, kw, _, o = (int(d) for d in filter_shape)
    _, oh, ow, _ = _nhwc(dd.shape, data_format)
    dw = cuda.device_array((kh, kw, c, o), dd.dtype)
    total = kh * kw * c * o
    if total:
        _conv.backprop_filter_kernel[_one_thread_each(total)](
            _flat(dx_), _ints(_image_strides(dx_.shape, data_format)), _flat(dd),
            _ints(_image_strides(dd.shape, data_format)), _flat(dw), n, h, wd, c, kh, kw, o,
            oh, ow, strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[2], total)
    return dw


def _pool_out(dx_, ksize, strides, pads, data_format):
    n, h, w, c = _nhwc(dx_.shape, data_format)
    oh = _out_len(h, ksize[0], strides[0], 1, pads[0], pads[1])
    ow = _out_len(w, ksize[1], strides[1], 1, pads[2], pads[3])
    return n, h, w, c, oh, ow


def max_pool(x, ksize, strides, pads, data_format="NHWC"):
    """TF's MaxPool; the start value is the storage dtype's lowest (TF's rule)."""
    storage = np.asarray(x).dtype if not is_device_array(x) else x.dtype
    dx_ = _dev(x)
    _check_float(dx_.dtype, "MaxPool")
    n, h, w, c, oh, ow = _pool_out(dx_, ksize, strides, pads, data_format)
    shape = _layout(n, oh, ow, c, data_format)
    y = cuda.device_array(shape, dx_.dtype)
    total = n * oh * ow * c
    if total:
        _conv.max_pool_kernel[_one_thread_each(total)](
            _flat(dx_), _ints(_image_strides(dx_.shape, data_format)), _flat(y),
            _ints(_image_strides(shape, data_format)), h, w, c, ksize[0], ksize[1], oh, ow,
            strides[0], strides[1], pads[0], pads[2], float(ml_dtypes.finfo(storage).min),
            total)
    return y


def max_pool_grad(x, y, dy, ksize, strides, pads, data_format="NHWC"):
    """TF's MaxPoolGrad: one thread per window, atomics where windows overlap."""
    dx_, dd = _dev(x), _dev(dy)
    _check_float(dd.dtype, "MaxPoolGrad")
    n, h, w, c, oh, ow = _pool_out(dx_, ksize, strides, pads, data_format)
    dx = _zeros(dx_.shape, dd.dtype)
    total = n * oh * ow * c
    if total:
        _conv.max_pool_grad_kernel[_one_thread_each(total)](
            _flat(dx_), _ints(_image_strides(dx_.shape, data_format)), _flat(dd),
            _ints(_image_strides(dd.shape, data_format)), _flat(dx), h, w, c, ksize[0],
            ksize[1], oh, ow, strides[0], strides[1], pads[0], pads[2], total)
    return dx


def avg_pool(x, ksize, strides, pads, data_format="NHWC"):
    """TF's AvgPool: window means over the elements inside the image."""
    dx_ = _dev(x)
    _check_float(dx_.dtype, "AvgPool")
    n, h, w, c, oh, ow = _pool_out(dx_, ksize, strides, pads, data_format)
    shape = _layout(n, oh, ow, c, data_format)
    y = cuda.device_array(shape, dx_.dtype)
    total = n * oh * ow * c
    if total:
        _conv.avg_pool_kernel[_one_thread_each(total)](
            _flat(dx_), _ints(_image_strides(dx_.shape, data_format)), _flat(y),
            _ints(_image_strides(shape, data_format)), h, w, c, ksize[0], ksize[1], oh, ow,
            strides[0], strides[1], pads[0], pads[2], total)
    return y


def avg_pool_grad(input_shape, dy, ksize, strides, pads, data_format="NHWC"):
    """TF's AvgPoolGrad, one thread per input element (gathering)."""
    dd = _dev(dy)
    _check_float(dd.dtype, "AvgPoolGrad")
    shape = tuple(int(d) for d in input_shape)
    n, h, w, c = _nhwc(shape, data_format)
    _, oh, ow, _ = _nhwc(dd.shape, data_format)
    dx = cuda.device_array(shape, dd.dtype)
    total = n * h * w * c
    if total:
        _conv.avg_pool_grad_kernel[_one_thread_each(total)](
            _flat(dd), _ints(_image_strides(dd.shape, data_format)), _flat(dx),
            _ints(_image_strides(shape, data_format)), h, w, c, ksize[0], ksize[1], oh, ow,
            strides[0], strides[1], pads[0], pads[2], total)
    return dx


# -- batch normalization ------------------------------------------------------------------------
def _vector(v, channels=None):
    """A per-channel vector on the device (an empty one, as training passes for
    the running mean and variance, becomes zeros of ``channels``)."""
    if channels is not None and v.size == 0:
        return _zeros(channels, np.float64)
    if is_device_array(v):
        return v
    return cuda.to_device(np.asarray(v, np.float64).reshape(-1))


def _f32(v):
    return cast(v, np.float32)


def fused_batch_norm(x, scale, offset, mean, variance, epsilon, exponential_avg_factor,
                     is_training, data_format="NHWC"):
    """TF's FusedBatchNormV3: a block per channel for the statistics, then one
    thread per element for ``y = a*x + d``."""
    dx_ = _dev(x)
    _check_float(dx_.dtype, "FusedBatchNormV3")
    n, h, w, c = _nhwc(dx_.shape, data_format)
    count = n * h * w
    xs = _ints(_image_strides(dx_.shape, data_format))
    scale, offset = _vector(scale), _vector(offset)
    old_mean, old_var = _vector(mean, c), _vector(variance, c)
    if is_training:
        m = cuda.device_array(c, np.float64)
        v = cuda.device_array(c, np.float64)
        if c:
            _conv.bn_stats_kernel[c, _conv.THREADS](_flat(dx_), xs, count, h * w, w, m, v)
        out_mean = cuda.device_array(c, np.float64)
        out_var = cuda.device_array(c, np.float64)
        if c:
            blocks, threads = _one_thread_each(c)
            _conv.bn_outputs_kernel[blocks, threads](m, v, old_mean, old_var,
                                                     float(exponential_avg_factor), count,
                                                     out_mean, out_var, c)
        saved = (m, v)
    else:
        m, v = old_mean, old_var
        out_mean, out_var = m, v
        saved = (_zeros(c, np.float64), _zeros(c, np.float64))
    a = cuda.device_array(c, np.float64)
    d = cuda.device_array(c, np.float64)
    y = cuda.device_array(dx_.shape, dx_.dtype)
    if c:
        blocks, threads = _one_thread_each(c)
        _conv.bn_coefficients_kernel[blocks, threads](m, v, scale, offset, float(epsilon), a,
                                                      d, c)
    if y.size:
        _conv.bn_apply_kernel[_one_thread_each(y.size)](
            _flat(dx_), _flat(dx_), xs, _flat(y), a, _zeros(c, np.float64), d, c, h * w, w,
            y.size)
    return y, _f32(out_mean), _f32(out_var), _f32(saved[0]), _f32(saved[1])


def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, epsilon, is_training,
                          data_format="NHWC"):
    """TF's FusedBatchNormGradV3: a block per channel for the two sums, then one
    thread per element for ``dx = a*dy + b*x + d``."""
    dd, dx_ = _dev(dy), _dev(x)
    _check_float(dd.dtype, "FusedBatchNormGradV3")
    n, h, w, c = _nhwc(dx_.shape, data_format)
    count = n * h * w
    xs = _ints(_image_strides(dx_.shape, data_format))
    mean, var, scale = _vector(saved_mean), _vector(saved_variance), _vector(scale)
    sum_dy = cuda.device_array(c, np.float64)
    sum_dy_xc = cuda.device_array(c, np.float64)
    a, b, d = (cuda.device_array(c, np.float64) for _ in range(3))
    dscale = cuda.device_array(c, np.float64)
    if c:
        _conv.bn_grad_sums_kernel[c, _conv.THREADS](_flat(dd), _flat(dx_), xs, count, h * w, w,
                                                    mean, sum_dy, sum_dy_xc)
        blocks, threads = _one_thread_each(c)
        _conv.bn_grad_coefficients_kernel[blocks, threads](
            sum_dy, sum_dy_xc, mean, var, scale, float(epsilon), count, bool(is_training),
            a, b, d, dscale, c)
    dx = cuda.device_array(dx_.shape, dd.dtype)
    if dx.size:
        _conv.bn_apply_kernel[_one_thread_each(dx.size)](
            _flat(dd), _flat(dx_), xs, _flat(dx), a, b, d, c, h * w, w, dx.size)
    return dx, _f32(dscale), _f32(sum_dy)


# -- BiasAdd --------------------------------------------------------------------------------------
def bias_add(value, bias, data_format="NHWC"):
    """``value + bias`` along the channel axis: the broadcasting AddV2 kernel, with the
    bias seen as ``[C, 1, 1]`` for NCHW."""
    dv, db = _dev(value), _dev(bias)
    if data_format == "NCHW":
        db = db.reshape((db.size,) + (1,) * (dv.ndim - 2))
    return binary(ADD_V2, dv, db)
