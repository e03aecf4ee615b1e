"""CPU kernels: the numpy-array functions the registry calls for device CPU.

This file is the *front* of every kernel: it checks arguments the way
TensorFlow does, reshapes inputs into the simple layouts the Numba loop nests
expect, picks the serial or the parallel variant, and hands back a numpy array
of the right dtype (a 0-d array for 0-d inputs, never a Python scalar). The
loop nests themselves live in one module per family:

* an elementwise op's scalar function is part of its row in the op table
  (``minitf/ops/math_ops.py``); :func:`unary`/:func:`binary` make it a ufunc;
* :mod:`.elementwise` -- the scalar functions of ``select`` and ``add_n``;
* :mod:`.vector_math` -- exp/log/tanh/sigmoid from arithmetic the compiler
  vectorizes, and the array loop that applies them;
* :mod:`.reductions`  -- Sum/Prod/Max/Min and ArgMax/ArgMin over ``x[A, K, B]``;
* :mod:`.scans`       -- Cumsum/Cumprod, running totals over ``x[A, K, B]``;
* :mod:`.sorting`     -- TopKV2 and InTopKV2 over the rows of ``x[R, N]``;
* :mod:`.matmul`      -- integer matmul (float products go to BLAS: :mod:`.blas`);
* :mod:`.linalg`      -- triangular solves (inverse, det, Cholesky, solve: LAPACK
  via numpy);
* :mod:`.nn`          -- softmax, log-softmax, the cross-entropy losses;
* :mod:`.optimizers`  -- the Apply* updates of the optimizers, in place;
* :mod:`.philox`, :mod:`.random_fill` -- TF's Philox4x32-10 and its
  distributions; the random ops' functions below (``random_uniform``...)
  keep TF's per-op streams through :mod:`minitf.kernels.random_streams`;
* :mod:`.conv`        -- im2col/col2im for convolutions (BLAS does the products),
  pooling and batch normalization;
* :mod:`.compile`     -- lazy, cached compilation and the parallel switch.

Nothing is compiled when this module is imported: the first call for a given
(op, dtype) compiles that one kernel (or loads it from numba's disk cache).

Dtype policy:

* bool, int32, int64, float32, float64 run natively.
* float16 and ``ml_dtypes.bfloat16`` are storage types: the kernels compute in
  float32 and round once at the end (numba has no half arithmetic on CPUs).
* Inputs with fewer than :data:`~.compile.PARALLEL_MIN_SIZE` elements use the
  serial kernel (a few microseconds per call); larger ones the multi-threaded one.

Functions whose work is a pure memory copy with numpy semantics equal to TF's
(``cast``) call numpy directly; see their docstrings.
"""

import concurrent.futures
import math
import os
import threading

import ml_dtypes
import numba
import numpy as np

from minitf.framework.errors import InvalidArgumentError
from minitf.kernels.cpu import (blas as _blas, conv as _conv, elementwise, linalg as _linalg,
                                matmul as _matmul, nn as _nn, reductions as _reduce,
                                scans as _scans, sorting as _sorting, vector_math)
from minitf.kernels.cpu.optimizers import (apply_adagrad, apply_adam,  # noqa: F401
                                           apply_gradient_descent, apply_momentum,
                                           apply_rms_prop)
from minitf.kernels import random_streams as _random_streams
from minitf.kernels.threads import kernel_threads
from minitf.kernels.threads import product as blas_product
from minitf.kernels.cpu.compile import (PARALLEL_LOCK, PARALLEL_MIN_SIZE, jit_kernel,
                                        ufunc_kernel)

__all__ = ["unary", "binary", "reduce", "cumulative", "top_k", "in_top_k", "matmul",
           "matrix_inverse", "matrix_determinant", "cholesky", "matrix_solve",
           "triangular_solve", "permute", "add_n", "cast", "select",
           "argmax", "argmin", "softmax", "log_softmax", "softmax_xent",
           "sparse_softmax_xent", "apply_gradient_descent", "apply_momentum",
           "apply_adagrad", "apply_rms_prop", "apply_adam", "random_stream",
           "random_uniform", "random_standard_normal", "truncated_normal",
           "random_uniform_int", "random_shuffle", "multinomial", "shuffle_queue_picker",
           "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool",
           "max_pool_grad", "avg_pool", "avg_pool_grad", "fused_batch_norm",
           "fused_batch_norm_grad", "bias_add", "PARALLEL_MIN_SIZE"]

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)
_HALF_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_NATIVE_KIND = {_BOOL: "b", _F32: "f", np.dtype(np.float64): "f"}
_NATIVE_KIND.update((np.dtype(t), "i") for t in (np.int8, np.int16, np.int32, np.int64,
                                                 np.uint8, np.uint16))


def _compute_dtype(dtype):
    """The dtype a kernel computes in: float32 for the half types, else itself."""
    return _F32 if dtype in _HALF_TYPES else dtype


def _as_array(r, dtype):
    """Numpy ufuncs return scalars for 0-d inputs; the runtime wants arrays."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    if r.dtype != dtype:
        r = r.astype(dtype)
    return r


def _numba_type_name(dtype):
    return "boolean" if dtype == np.bool_ else dtype.name


def _is_big_contiguous(x):
    return x.size >= PARALLEL_MIN_SIZE and x.flags.c_contiguous


def _call(kernel, parallel, *args):
    if parallel:
        with PARALLEL_LOCK:
            return kernel(*args)
    return kernel(*args)


# ------------------------------------------------------------ elementwise ----

class _Elementwise:
    """What one elementwise (op row, dtype) needs at call time, worked out once.

    ``fn`` is the row's scalar function for the dtype's kind; exp/log/tanh/
    sigmoid (rows with ``vector_math``) always take vector_math's array kernel
    for floats (one algorithm for every size); every other op is a numba ufunc.
    """

    __slots__ = ("fn", "signature", "compute", "out", "quiet", "serial", "vector_op")

    def __init__(self, row, dtype, arity):
        ew = row.elementwise
        compute = _compute_dtype(dtype)
        kind = _NATIVE_KIND.get(compute)
        self.fn = ew.scalar.get(kind) if kind is not None else None
        if self.fn is None:
            raise TypeError("minitf cpu kernel %s does not support dtype %s" % (row.name, dtype))
        t = _numba_type_name(compute)
        self.signature = "%s(%s)" % ("boolean" if ew.bool_output else t, ", ".join([t] * arity))
        self.compute = compute if compute is not dtype else None
        self.out = _BOOL if ew.bool_output else dtype
        self.quiet = kind == "f"          # float ops may hit inf/NaN: TF never warns
        self.vector_op = vector_math.OPS[ew.vector_math] if (kind == "f" and ew.vector_math) \
            else None
        self.serial = ufunc_kernel(self.fn, self.signature, False) if self.vector_op is None \
            else None

    def kernel(self, parallel):
        return ufunc_kernel(self.fn, self.signature, True) if parallel else self.serial


_elementwise = {}


def _elementwise_for(row, dtype, arity):
    key = (row, dtype)
    plan = _elementwise.get(key)
    if plan is None:
        plan = _elementwise[key] = _Elementwise(row, dtype, arity)
    return plan


def unary(row, x):
    """The elementwise op ``row`` applied to every element of ``x`` (same shape).

    The serial ufunc loop is ``for i: out[i] = f(x[i])``; inputs of at least
    PARALLEL_MIN_SIZE contiguous elements split that loop over threads. Tiny
    inputs cost one dict lookup plus one ufunc call (~2 us).
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    plan = _elementwise.get((row, x.dtype)) or _elementwise_for(row, x.dtype, 1)
    if plan.compute is not None:
        x = x.astype(plan.compute)
    if plan.vector_op is not None:
        return _vector_map(plan, x)
    parallel = _is_big_contiguous(x)
    kernel = plan.kernel(parallel)
    if plan.quiet:
        with np.errstate(all="ignore"):
            r = _call(kernel, parallel, x)
    else:
        r = _call(kernel, parallel, x)
    return _as_array(r, plan.out)


def _vector_map(plan, x):
    """exp/log/tanh/sigmoid of a float array with :func:`.vector_math.map_kernel`.

    A numba ufunc calls the scalar function once per element through a strided
    loop that LLVM does not vectorize; this kernel's flat loop does 8 float32
    lanes per instruction (see tests/benchmarks/bench_kernels.py). Strided
    views are copied to contiguous memory first. ``contract`` lets LLVM fuse
    each multiply-add of the polynomials into one FMA instruction.
    """
    if not x.flags.c_contiguous:
        x = x.copy()            # (np.ascontiguousarray would turn 0-d into 1-d)
    out = np.empty(x.shape, x.dtype)
    parallel = x.size >= PARALLEL_MIN_SIZE
    kernel = jit_kernel(vector_math.map_kernel, vector_math.map_signature, (x.dtype,),
                        error_model="numpy", fastmath={"contract"})
    _call(kernel, parallel, x.reshape(-1), out.reshape(-1), plan.vector_op, parallel)
    return out if plan.compute is None else out.astype(plan.out)


def binary(row, x, y):
    """The elementwise op ``row`` of ``x`` and ``y``, with numpy broadcasting.

    Output dtype: the input dtype, or bool for comparisons and logical ops.
    Parallel when both operands are large, contiguous and of one shape (or one
    is a single element): numba's parallel ufunc pays a thread launch per inner
    loop, so a broadcast with a short inner loop runs serially (numpy's speed).
    The row's kernel has already checked the arguments (division by zero...).
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if type(y) is not np.ndarray:
        y = np.asarray(y)
    plan = _elementwise.get((row, x.dtype)) or _elementwise_for(row, x.dtype, 2)
    if plan.compute is not None:
        x = x.astype(plan.compute)
        y = y.astype(plan.compute)
    parallel = False
    if x.size >= PARALLEL_MIN_SIZE or y.size >= PARALLEL_MIN_SIZE:
        parallel = ((x.shape == y.shape and x.flags.c_contiguous and y.flags.c_contiguous)
                    or (y.size == 1 and x.flags.c_contiguous)
                    or (x.size == 1 and y.flags.c_contiguous))
    kernel = plan.kernel(parallel)
    if plan.quiet:
        with np.errstate(all="ignore"):
            r = _call(kernel, parallel, x, y)
    else:
        r = _call(kernel, parallel, x, y)
    return _as_array(r, plan.out)


def select(cond, x, y):
    """``x`` where ``cond`` else ``y``, elementwise with broadcasting (np.where).

    Half types are selected through their 16-bit patterns (no arithmetic needed).
    """
    cond = np.asarray(cond, dtype=np.bool_)
    x = np.asarray(x)
    y = np.asarray(y)
    dtype = x.dtype
    work = np.dtype(np.uint16) if dtype in _HALF_TYPES else dtype
    if work is not dtype:
        x = x.view(work)
        y = y.view(work)
    t = _numba_type_name(work)
    parallel = (cond.shape == x.shape == y.shape and _is_big_contiguous(x)
                and cond.flags.c_contiguous and y.flags.c_contiguous)
    kernel = ufunc_kernel(elementwise.select, "%s(boolean, %s, %s)" % (t, t, t), parallel)
    r = _as_array(_call(kernel, parallel, cond, x, y), work)
    return r.view(dtype) if work is not dtype else r


def _sum_kernel(dtype, parallel):
    """The ufunc ``x + y`` for AddN's accumulation (``elementwise.add``)."""
    t = _numba_type_name(dtype)
    return ufunc_kernel(elementwise.add, "%s(%s, %s)" % (t, t, t), parallel)


def add_n(xs):
    """The elementwise sum of a list of same-shape arrays (TF's AddN).

    Accumulates into one output buffer: ``out = xs[0] + xs[1]; out += xs[i]``.
    """
    xs = [np.asarray(x) for x in xs]
    dtype = xs[0].dtype
    if len(xs) == 1:
        return xs[0].copy()
    cdtype = _compute_dtype(dtype)
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu AddN does not support dtype %s" % dtype)
    xs = [x.astype(cdtype, copy=False) for x in xs]
    parallel = _is_big_contiguous(xs[0]) and all(x.flags.c_contiguous for x in xs)
    kernel = _sum_kernel(cdtype, parallel)
    with np.errstate(all="ignore"):
        out = _as_array(_call(kernel, parallel, xs[0], xs[1]), cdtype)
        for x in xs[2:]:
            if out.ndim:
                _call(kernel, parallel, out, x, out)
            else:
                out = _as_array(kernel(out, x), cdtype)
    return out.astype(dtype, copy=False)


def cast(x, np_dtype):
    """``x`` converted to ``np_dtype`` with TensorFlow's rules.

    float -> int truncates toward zero, number -> bool is ``x != 0``, bool ->
    number is 0/1, float <-> bfloat16 rounds to nearest even. These are exactly
    the C conversions numpy's ``astype`` performs, at memory speed, so this one
    kernel is numpy: a Numba loop would do the same work and add nothing.
    """
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return x.astype(np.dtype(np_dtype))


# ------------------------------------------------------------- reductions ----

def _three_d(x, axes):
    """View ``x`` as a C-contiguous ``[A, K, B]`` array with the reduced axes in K.

    If the reduced axes are one block (e.g. the last axes, the first axes, or
    all of them), this is a free reshape; otherwise they are transposed to the
    end first (one copy).
    """
    shape = x.shape
    lo, hi = axes[0], axes[-1] + 1
    if hi - lo == len(axes):
        A, K, B = math.prod(shape[:lo]), math.prod(shape[lo:hi]), math.prod(shape[hi:])
        return np.ascontiguousarray(x).reshape(A, K, B)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.ascontiguousarray(x.transpose(kept + list(axes)))
    return moved.reshape(math.prod(shape[i] for i in kept), math.prod(shape[i] for i in axes), 1)


def _chunks(A, K, size):
    """How many k-chunks per output row: enough items to keep every thread busy."""
    if size < PARALLEL_MIN_SIZE:
        return 1, False
    threads = max(1, numba.get_num_threads())
    if A >= threads:
        return 1, True
    return max(1, min(K, -(-threads // A) * 2)), True


def _run_reduce(code, x3, init_value, acc_dtype):
    A, K, B = x3.shape
    C, parallel = _chunks(A, K, x3.size)
    partial = np.empty((A, C, B), acc_dtype)
    if acc_dtype.kind == "f" and code in (_reduce.MAX, _reduce.MIN):
        # Float Max/Min compare the bits as ints (vectorizes, keeps NaN); the
        # identity (init_value, -inf or +inf) is built into the kernel.
        it = _reduce.bits_dtype(acc_dtype)
        kernel = jit_kernel(_reduce.float_extreme_kernel, _reduce.float_extreme_signature,
                            (it,))
        _call(kernel, parallel, x3.view(it), code == _reduce.MAX,
              *_reduce.float_bits_constants(acc_dtype), partial.view(it), parallel)
    else:
        kernel = jit_kernel(_reduce.reduce_kernel, _reduce.reduce_signature,
                            (x3.dtype, acc_dtype), fastmath={"reassoc"})
        _call(kernel, parallel, x3, code, acc_dtype.type(init_value), partial, parallel)
    if C == 1:
        return partial[:, 0, :]
    if code == _reduce.SUM:
        return partial.sum(axis=1)
    if code == _reduce.PROD:
        return partial.prod(axis=1)
    return partial.max(axis=1) if code == _reduce.MAX else partial.min(axis=1)


def _lowest_highest(dtype):
    if dtype.kind == "f":
        return -np.inf, np.inf
    info = np.iinfo(dtype)
    return info.min, info.max


def reduce(kind, x, axes, keepdims):
    """The ``kind`` reduction ("sum", "mean", "max", "min", "prod", "all",
    "any") of ``x`` over ``axes`` (a tuple of ints).

    Output dtype = input dtype (int sums wrap like TF's int32 arithmetic). Mean
    of integers sums in int64 and truncates toward zero, as TF does. Over an
    empty axis: sum 0, prod 1, max lowest (-inf), min highest (+inf), all True,
    any False, float mean NaN, int mean 0.
    See :mod:`.reductions` for the loop nest.
    """
    x = np.asarray(x)
    dtype = x.dtype
    axes = tuple(sorted(set(int(a) for a in axes)))
    if not axes:
        return x.copy()
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
        else tuple(d for i, d in enumerate(x.shape) if i not in axes)
    if kind in ("all", "any"):
        if dtype != np.bool_:
            raise TypeError("minitf cpu reduction %s needs bool input, got %s" % (kind, dtype))
        u8 = np.dtype(np.uint8)
        code = _reduce.MIN if kind == "all" else _reduce.MAX
        r = _run_reduce(code, _three_d(x.view(u8), axes), 1 if kind == "all" else 0, u8)
        return np.ascontiguousarray(r).view(np.bool_).reshape(out_shape)
    cdtype = _compute_dtype(dtype)
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu reduction %s does not support dtype %s" % (kind, dtype))
    if cdtype is not dtype:
        x = x.astype(cdtype)
    if kind == "mean" and cdtype.kind in "iu":
        # TF's integer Mean sums in 64 bits, so the mean of int8 [100, 100, 100] is
        # 100 although their int8 sum wraps (an int64 sum still wraps).
        cdtype = np.dtype(np.int64)
        x = x.astype(cdtype)
    code = _reduce.SUM if kind == "mean" else _reduce.OP_CODES[kind]
    acc_dtype = _reduce.accumulator_dtype(cdtype, code)
    if code == _reduce.MAX:
        init = _lowest_highest(cdtype)[0]
    elif code == _reduce.MIN:
        init = _lowest_highest(cdtype)[1]
    else:
        init = 1 if code == _reduce.PROD else 0
    x3 = _three_d(x, axes)
    r = _run_reduce(code, x3, init, acc_dtype)
    if kind == "mean":
        count = x3.shape[1]
        if cdtype.kind == "f":
            with np.errstate(all="ignore"):
                r = r / count if count else np.full(r.shape, np.nan)
        elif count == 0:
            r = np.zeros(r.shape, cdtype)
        else:
            s = r.astype(cdtype)
            q = s // count
            r = q + ((q < 0) & (q * count != s))  # floor -> truncate toward zero
    return np.asarray(r).astype(dtype).reshape(out_shape)


def _arg_reduce(find_max, x, axis, out_np_dtype):
    x = np.asarray(x)
    axis = int(axis)
    if axis < 0:
        axis += x.ndim
    if x.shape[axis] == 0:
        raise InvalidArgumentError(
            None, None, "Reduction axis %d is empty in shape %s"
            % (axis, "[" + ",".join(str(d) for d in x.shape) + "]"))
    cdtype = _compute_dtype(x.dtype)
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu ArgMax/ArgMin does not support dtype %s" % x.dtype)
    x3 = _three_d(x.astype(cdtype, copy=False), (axis,))
    A, K, B = x3.shape
    C, parallel = _chunks(A, K, x3.size)
    best = np.empty((A, C, B), cdtype)
    where = np.empty((A, C, B), np.int64)
    kernel = jit_kernel(_reduce.arg_reduce_kernel, _reduce.arg_reduce_signature, (cdtype,))
    _call(kernel, parallel, x3, find_max, best, where, parallel)
    if C == 1:
        idx = where[:, 0, :]
    else:
        winner = best.argmax(axis=1) if find_max else best.argmin(axis=1)
        idx = np.take_along_axis(where, winner[:, None, :], axis=1)[:, 0, :]
    out_shape = x.shape[:axis] + x.shape[axis + 1:]
    return idx.reshape(out_shape).astype(out_np_dtype)


def argmax(x, axis, out_np_dtype):
    """Index of the largest value along ``axis`` (the first one on ties)."""
    return _arg_reduce(True, x, axis, out_np_dtype)


def argmin(x, axis, out_np_dtype):
    """Index of the smallest value along ``axis`` (the first one on ties)."""
    return _arg_reduce(False, x, axis, out_np_dtype)


# ------------------------------------------------------------------ scans ----

def cumulative(x, axis, product, exclusive, reverse):
    """Running sums (``product``: products) of ``x`` along ``axis``, TF's Cumsum
    and Cumprod; see :mod:`.scans` for the loop nest. Half types scan in
    float32 and round each result once."""
    x = np.asarray(x)
    dtype = x.dtype
    cdtype = _compute_dtype(dtype)
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu Cumsum/Cumprod does not support dtype %s" % dtype)
    shape = x.shape
    A, K, B = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    x3 = np.ascontiguousarray(x, dtype=cdtype).reshape(A, K, B)
    out = np.empty_like(x3)
    parallel = x3.size >= PARALLEL_MIN_SIZE and A > 1
    kernel = jit_kernel(_scans.scan_kernel, _scans.scan_signature, (cdtype,))
    with np.errstate(all="ignore"):
        _call(kernel, parallel, x3, out, cdtype.type(1 if product else 0), product,
              exclusive, reverse, parallel)
    return out.reshape(shape).astype(dtype, copy=False)


# ---------------------------------------------------------------- sorting ----

def top_k(x, k):
    """``(values, indices)``: the ``k`` largest entries of each row (last axis)
    of ``x``, largest first, ties by lower index (:mod:`.sorting`)."""
    x = np.asarray(x)
    dtype = x.dtype
    cdtype = _compute_dtype(dtype)
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu TopKV2 does not support dtype %s" % dtype)
    shape = x.shape
    n = shape[-1]
    rows = math.prod(shape[:-1])
    x2 = np.ascontiguousarray(x, dtype=cdtype).reshape(rows, n)
    values = np.empty((rows, k), cdtype)
    indices = np.empty((rows, k), np.int32)
    if rows and k:
        parallel = x2.size >= PARALLEL_MIN_SIZE and rows > 1
        kernel = jit_kernel(_sorting.top_k_kernel, _sorting.top_k_signature, (cdtype,))
        _call(kernel, parallel, x2, k, values, indices, parallel)
    out_shape = shape[:-1] + (k,)
    return values.reshape(out_shape).astype(dtype, copy=False), indices.reshape(out_shape)


def in_top_k(predictions, targets, k):
    """Per row of the float32 ``predictions[R, N]``: is class ``targets[r]``
    among the ``k`` largest (fewer than ``k`` strictly larger, all finite)?"""
    predictions = np.ascontiguousarray(predictions, dtype=np.float32)
    targets = np.ascontiguousarray(targets)
    out = np.empty(targets.shape[0], np.bool_)
    kernel = jit_kernel(_sorting.in_top_k_kernel, _sorting.in_top_k_signature,
                        (targets.dtype,))
    parallel = predictions.size >= PARALLEL_MIN_SIZE and predictions.shape[0] > 1
    _call(kernel, parallel, predictions, targets, k, out, parallel)
    return out


# ----------------------------------------------------------------- matmul ----

def matmul(a, b, transpose_a=False, transpose_b=False):
    """``a @ b`` for 2-D operands, or batched (leading dims broadcast) for ndim >= 3.

    float32/float64 go to BLAS (:mod:`.blas`; transposes stay views, so BLAS
    reads them in place); half types multiply in float32. Integers use the
    Numba kernel in :mod:`.matmul`.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    dtype = a.dtype
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    cdtype = _compute_dtype(dtype)
    if cdtype.kind == "f":
        if cdtype is not dtype:
            a = a.astype(cdtype)
            b = b.astype(cdtype)
        _blas.ready()
        # (one BLAS thread for a small product, or one beside another)
        with blas_product(a.size * b.shape[-1]) as one_thread:
            out = _blas.matmul(a, b, one_thread)
        return _as_array(out, dtype)
    if _NATIVE_KIND.get(cdtype) != "i":
        raise TypeError("minitf cpu matmul does not support dtype %s" % dtype)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != K:
        raise InvalidArgumentError(
            None, None, "Matrix size-incompatible: In[0]: %s, In[1]: %s"
            % (list(a.shape), list(b.shape)))
    T = math.prod(batch)
    a3 = np.ascontiguousarray(np.broadcast_to(a, batch + (M, K))).reshape(T, M, K)
    b3 = np.ascontiguousarray(np.broadcast_to(b, batch + (K, N))).reshape(T, K, N)
    out = np.empty((T, M, N), dtype)
    parallel = T * M * K * N >= PARALLEL_MIN_SIZE
    kernel = jit_kernel(_matmul.matmul_kernel, _matmul.matmul_signature, (dtype,))
    _call(kernel, parallel, a3, b3, out, parallel)
    return out.reshape(batch + (M, N))


# ---------------------------------------------------------- linear algebra ----
# Inverse, determinant, Cholesky and solve call LAPACK through numpy, batched
# over leading dimensions (as float matmul calls BLAS). Half types compute in
# float32. LAPACK's "singular" becomes TF's InvalidArgumentError.

def _lapack_input(x):
    x = np.asarray(x)
    cdtype = _compute_dtype(x.dtype)
    if _NATIVE_KIND.get(cdtype) != "f":
        raise TypeError("minitf cpu linear algebra needs a float dtype, got %s" % x.dtype)
    return x.astype(cdtype, copy=False), x.dtype


def matrix_inverse(x, adjoint=False):
    """The inverse of each matrix (of its transpose with ``adjoint``)."""
    a, dtype = _lapack_input(x)
    if adjoint:
        a = np.swapaxes(a, -1, -2)
    try:
        return np.linalg.inv(a).astype(dtype, copy=False)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, None, "Input is not invertible.") from None


def matrix_determinant(x):
    """The determinant of each matrix (LU factorisation)."""
    a, dtype = _lapack_input(x)
    return np.asarray(np.linalg.det(a)).astype(dtype, copy=False)


def cholesky(x):
    """Lower-triangular ``L`` with ``L @ L^T = x``, read from x's lower triangle.
    A matrix that is not positive definite gets NaN in its lower triangle, as in
    TF (which no longer raises an error for it)."""
    a, dtype = _lapack_input(x)
    try:
        return np.linalg.cholesky(a).astype(dtype, copy=False)
    except np.linalg.LinAlgError:
        pass
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    out = np.empty_like(flat)
    for t in range(flat.shape[0]):         # find the failing matrices one by one
        try:
            out[t] = np.linalg.cholesky(flat[t])
        except np.linalg.LinAlgError:
            out[t] = np.where(np.tri(n, dtype=bool), np.nan, 0.0)
    return out.reshape(a.shape).astype(dtype, copy=False)


def matrix_solve(a, b, adjoint=False):
    """``x`` with ``a @ x = b`` (``a^T @ x = b`` with ``adjoint``), per matrix."""
    a, dtype = _lapack_input(a)
    b = np.asarray(b).astype(a.dtype, copy=False)
    if adjoint:
        a = np.swapaxes(a, -1, -2)
    try:
        return np.linalg.solve(a, b).astype(dtype, copy=False)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, None, "Input matrix is not invertible.") from None


def triangular_solve(a, b, lower=True, adjoint=False):
    """``x`` with ``tri(a) @ x = b``, only ``a``'s lower (or upper) triangle read;
    batched (:mod:`.linalg` has the loop nest)."""
    a, dtype = _lapack_input(a)
    b = np.asarray(b).astype(a.dtype, copy=False)
    n, m = a.shape[-1], b.shape[-1]
    batch = a.shape[:-2]
    T = math.prod(batch)
    a3 = np.ascontiguousarray(a).reshape(T, n, n)
    b3 = np.ascontiguousarray(b).reshape(T, n, m)
    x = np.empty_like(b3)
    if x.size:
        parallel = T > 1 and a3.size * m >= PARALLEL_MIN_SIZE
        kernel = jit_kernel(_linalg.triangular_solve_kernel,
                            _linalg.triangular_solve_signature, (a.dtype,))
        with np.errstate(all="ignore"):
            _call(kernel, parallel, a3, b3, x, bool(lower), bool(adjoint), parallel)
    return x.reshape(b.shape).astype(dtype, copy=False)


def permute(x, perm):
    """``x`` with its axes reordered, as a new contiguous array (a memory copy:
    numpy's, at memory speed)."""
    return np.array(np.transpose(np.asarray(x), perm), order="C")   # (0-d stays 0-d)


# --------------------------------------------------------------- softmax ----

def _rows(x):
    x = np.asarray(x)
    cdtype = _compute_dtype(x.dtype)
    if _NATIVE_KIND.get(cdtype) != "f":
        raise TypeError("minitf cpu softmax kernels need a float dtype, got %s" % x.dtype)
    classes = x.shape[-1] if x.ndim else 1
    n_rows = math.prod(x.shape[:-1]) if x.ndim else 1
    return np.ascontiguousarray(x, dtype=cdtype).reshape(n_rows, classes), cdtype


def _nn_kernel(py_func, make_signature, dtypes):
    """A softmax-family kernel: additions may be reordered (so that the float64
    row sums vectorize) and multiply-adds fused, as in :mod:`.nn`'s docstring."""
    return jit_kernel(py_func, make_signature, dtypes, fastmath={"reassoc", "contract"},
                      error_model="numpy")


def _softmax(x, want_log):
    x = np.asarray(x)
    rows, cdtype = _rows(x)
    out = np.empty_like(rows)
    parallel = rows.size >= PARALLEL_MIN_SIZE
    if rows.shape[1]:                       # (no classes: nothing to compute)
        kernel = _nn_kernel(_nn.softmax_kernel, _nn.softmax_signature, (cdtype,))
        _call(kernel, parallel, rows, out, want_log, parallel)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def softmax(logits):
    """Softmax over the last axis, computed stably (the row max is subtracted)."""
    return _softmax(logits, False)


def log_softmax(logits):
    """``logits - max - log(sum(exp(logits - max)))`` over the last axis."""
    return _softmax(logits, True)


def softmax_xent(logits, labels):
    """TF's SoftmaxCrossEntropyWithLogits on ``[batch, classes]``: (loss, backprop).

    ``loss[b] = -sum(labels[b] * log_softmax(logits[b]))``,
    ``backprop = softmax(logits) - labels``. ``labels`` broadcast to ``logits``.
    """
    logits = np.asarray(logits)
    dtype = logits.dtype
    rows, cdtype = _rows(logits)
    lab = np.ascontiguousarray(np.broadcast_to(np.asarray(labels), logits.shape),
                               dtype=cdtype).reshape(rows.shape)
    loss = np.zeros(rows.shape[0], cdtype)
    backprop = np.empty_like(rows)
    parallel = rows.size >= PARALLEL_MIN_SIZE
    if rows.shape[1]:
        kernel = _nn_kernel(_nn.softmax_xent_kernel, _nn.xent_signature, (cdtype,))
        _call(kernel, parallel, rows, lab, loss, backprop, parallel)
    return (loss.reshape(logits.shape[:-1]).astype(dtype, copy=False),
            backprop.reshape(logits.shape).astype(dtype, copy=False))


def sparse_softmax_xent(logits, labels):
    """TF's SparseSoftmaxCrossEntropyWithLogits: integer labels ``[batch]``.

    A label outside ``[0, classes)`` raises InvalidArgumentError with TF's text.
    """
    logits = np.asarray(logits)
    labels = np.ascontiguousarray(labels)
    dtype = logits.dtype
    rows, cdtype = _rows(logits)
    classes = rows.shape[1]
    if labels.size:
        bad = (labels < 0) | (labels >= classes)
        if bad.any():
            raise InvalidArgumentError(
                None, None,
                "Received a label value of %d which is outside the valid range of "
                "[0, %d).  Label values: %s"
                % (labels.flat[int(np.argmax(bad))], classes,
                   " ".join(str(int(v)) for v in labels.ravel())))
    if labels.dtype not in (np.int32, np.int64):
        labels = labels.astype(np.int64)
    loss = np.empty(rows.shape[0], cdtype)
    backprop = np.empty_like(rows)
    parallel = rows.size >= PARALLEL_MIN_SIZE
    kernel = _nn_kernel(_nn.sparse_softmax_xent_kernel, _nn.sparse_xent_signature,
                        (cdtype, labels.dtype))
    _call(kernel, parallel, rows, labels.reshape(-1), loss, backprop, parallel)
    return (loss.reshape(logits.shape[:-1]).astype(dtype, copy=False),
            backprop.reshape(logits.shape).astype(dtype, copy=False))


# ----------------------------------------------------------------- random ----
#
# TF's random ops keep a stream per op and session; the bookkeeping (how far a
# run moves it) is random_streams', the sampling random_fill's Numba kernels.
# (random_streams imports this package, so these look it up when called.)

def random_stream(seed, seed2):
    """A random op's stream (TF's ``GuardedPhiloxRandom``); seeds (0, 0): random."""
    return _random_streams.GuardedPhiloxRandom(seed, seed2)


def shuffle_queue_picker(seed, seed2):
    """What a RandomShuffleQueue dequeues: its Philox stream's words, one per
    element, picking TF's elements in a Numba loop; seeds (0, 0) are replaced
    by random ones, as TF does."""
    if int(seed) == 0 and int(seed2) == 0:
        seed, seed2 = _random_streams.nondeterministic_seeds()
    return _random_streams.ShuffleQueuePicker(seed, seed2)


def random_uniform(stream, shape, dtype):
    """``RandomUniform``: floats in [0, 1) of ``shape`` (a 1-D int array)."""
    return _random_streams.random_uniform(stream, shape, dtype)


def random_standard_normal(stream, shape, dtype):
    """``RandomStandardNormal``: N(0, 1) samples (Box-Muller)."""
    return _random_streams.random_standard_normal(stream, shape, dtype)


def truncated_normal(stream, shape, dtype):
    """``TruncatedNormal``: N(0, 1) samples within two standard deviations."""
    return _random_streams.truncated_normal(stream, shape, dtype)


def random_uniform_int(stream, shape, minval, maxval):
    """``RandomUniformInt``: integers in ``[minval, maxval)`` of ``minval``'s dtype."""
    return _random_streams.random_uniform_int(stream, shape, minval, maxval)


def random_shuffle(stream, value):
    """``RandomShuffle``: ``value`` with its first dimension shuffled."""
    return _random_streams.random_shuffle(stream, value)


def multinomial(stream, logits, num_samples, output_dtype):
    """``Multinomial``: ``[batch, num_samples]`` classes; TF's work split follows the
    calling thread's budget (``intra_op_parallelism_threads``)."""
    return _random_streams.multinomial(stream, logits, num_samples, output_dtype)
# ------------------------------------------------ convolutions and pooling ----
# The row's kernel (minitf/ops/conv_ops.py) has checked the shapes and worked
# out the geometry: ``strides``/``dilations``/``ksize`` are (height, width) pairs,
# ``pads`` is (top, bottom, left, right). The loop nests work on C-contiguous
# NHWC arrays in the compute dtype; NCHW (virtual GPUs) is transposed in and out.

#: im2col writes at most this many elements per chunk of images, so that a
#: chunk's columns stay in a core's caches while BLAS multiplies them (2 MB:
#: on the build machines' 1 MB L2 + shared L3, the CNN benchmark's conv 2 is
#: 8% faster than with 1 MB chunks, and 15% slower with 8 MB).
COLS_PER_CHUNK = 1 << 19

#: A convolution of fewer multiply-adds (16M: about 0.15 ms on one core) runs
#: its chunks in the calling thread: waking the chunk threads costs up to
#: 0.1 ms on the build machines.
CHUNKS_MIN_WORK = 1 << 24


def _nhwc_in(x, data_format, cdtype):
    x = np.asarray(x)
    if data_format == "NCHW":
        x = x.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(x, dtype=cdtype)


def _nhwc_out(y, data_format, dtype):
    if data_format == "NCHW":
        y = y.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(y).astype(dtype, copy=False)


def _nhwc_dims(shape, data_format):
    n, a, b, c = (int(d) for d in shape)
    return (n, b, c, a) if data_format == "NCHW" else (n, a, b, c)


def _conv_dtype(dtype, what):
    cdtype = _compute_dtype(np.dtype(dtype))
    if _NATIVE_KIND.get(cdtype) not in ("i", "f"):
        raise TypeError("minitf cpu %s does not support dtype %s" % (what, dtype))
    return cdtype


def _out_len(size, k, stride, dilation, before, after):
    return (size + before + after - (k - 1) * dilation - 1) // stride + 1


def _gemm(a, b, out, transpose_a=False, transpose_b=False, accumulate=False):
    """``out = op(a) @ op(b)`` (``accumulate``: ``out +=``), 2-D, on the calling
    thread: single-threaded BLAS for floats (the chunks are the parallel
    items), the Numba loop nest for ints."""
    if out.dtype.kind == "f":
        _blas.gemm(a.T if transpose_a else a, b.T if transpose_b else b, out, accumulate)
    elif accumulate:
        out += matmul(a, b, transpose_a, transpose_b)
    else:
        out[...] = matmul(a, b, transpose_a, transpose_b)
    return out


class _Convolution:
    """One convolution's geometry and its chunks of images.

    The work is cut into chunks of whole images, each small enough that its
    columns fit in a core's cache, and the chunks are shared out over up to
    the kernel's thread budget of threads: each thread runs im2col (serial,
    ``nogil``) and a *single-threaded* BLAS product on its own chunk. (Letting
    BLAS start its own threads inside each product is slower on a busy
    machine: its threads spin while they wait for each other, and compete
    with every other thread for the same two cores.)
    """

    def __init__(self, xshape, kh, kw, o, strides, dilations, pads, dtype):
        self.n, self.h, self.w, self.c = xshape
        self.kh, self.kw, self.o = kh, kw, o
        self.strides, self.dilations, self.pads = strides, dilations, pads
        self.dtype = dtype
        pt, pb, pl, pr = pads
        self.oh = _out_len(self.h, kh, strides[0], dilations[0], pt, pb)
        self.ow = _out_len(self.w, kw, strides[1], dilations[1], pl, pr)
        self.k = kh * kw * self.c
        self.rows_per_image = self.oh * self.ow
        # As many chunks as fit the cache, rounded up to a multiple of the
        # threads, with sizes that differ by at most one image, so that every
        # thread gets the same work (3 chunks on 2 threads leave one idle for
        # a third of the time).
        per_chunk = max(1, min(self.n, COLS_PER_CHUNK // max(1, self.rows_per_image * self.k)))
        count = -(-self.n // per_chunk) if self.n else 1
        threads = _chunk_threads()
        if count > 1 and threads > 1:
            count = min(self.n, -(-count // threads) * threads)
        self.n_chunks = count
        self.per_chunk = -(-self.n // count) if self.n else 1
        self.pointwise = (kh == kw == 1 and strides == (1, 1) and pt == pl == 0
                          and self.oh == self.h and self.ow == self.w)
        # one input channel, column stride 1: the columns are built transposed
        # (conv.im2col_one_channel_kernel), 5x faster for the CNN benchmark's conv 1
        self.one_channel = self.c == 1 and strides[1] == 1 and not self.pointwise

    def chunks(self):
        """``(first image, images)`` of each chunk."""
        count, out, n0 = self.n_chunks, [], 0
        for i in range(count):
            m = self.n // count + (1 if i < self.n % count else 0)
            if m:
                out.append((n0, m))
            n0 += m
        return out

    def rows(self, n0, m):
        return slice(n0 * self.rows_per_image, (n0 + m) * self.rows_per_image)

    def im2col(self, flat, n0, m, buffer):
        """The columns of images ``n0 .. n0+m`` (a view of ``buffer``, or of the
        input itself for a 1x1 convolution)."""
        if self.pointwise:
            return flat.reshape(-1, self.c)[self.rows(n0, m)]
        rows = m * self.rows_per_image
        (sh, sw), (dh, dw), (pt, _, pl, _) = self.strides, self.dilations, self.pads
        if self.one_channel:
            cols = buffer[:self.k * rows].reshape(self.k, rows)
            kernel = jit_kernel(_conv.im2col_one_channel_kernel,
                                _conv.im2col_one_channel_signature, (self.dtype,))
            kernel(flat, self.kh, self.kw, sh, dh, dw, pt, pl, self.oh, self.ow, n0, cols,
                   False)
            return cols.T                     # [rows, K], read in place by BLAS
        cols = self.rows_of(buffer, m)
        kernel = jit_kernel(_conv.im2col_kernel, _conv.im2col_signature, (self.dtype,))
        kernel(flat, self.c, self.kh, self.kw, sh, sw, dh, dw, pt, pl, self.oh, self.ow, n0,
               cols, False)
        return cols

    def rows_of(self, buffer, m):
        """``buffer`` as the ``[rows, K]`` matrix of a chunk of ``m`` images."""
        rows = m * self.rows_per_image
        return buffer[:rows * self.k].reshape(rows, self.k)

    def col2im(self, dcols, n0, dx_flat):
        kernel = jit_kernel(_conv.col2im_kernel, _conv.col2im_signature, (self.dtype,))
        (sh, sw), (dh, dw), (pt, _, pl, _) = self.strides, self.dilations, self.pads
        kernel(dcols, self.c, self.kh, self.kw, sh, sw, dh, dw, pt, pl, self.oh, self.ow, n0,
               dx_flat, False)

    def buffer(self):
        """Scratch for one chunk's columns (flat: im2col lays them out either way)."""
        return np.empty(self.per_chunk * self.rows_per_image * self.k, self.dtype)

    def run(self, work):
        """``work(n0, m, buffer)`` for every chunk, over the kernel's threads; returns
        the results in chunk order."""
        _blas.ready()
        # BLAS: one thread per call (see above); counted as running, so a
        # product started beside the convolution keeps to one thread too
        with blas_product(0):
            return self._run(work)

    def _run(self, work):
        chunks = self.chunks()
        threads = min(len(chunks), _chunk_threads())
        if threads <= 1 or self.n * self.rows_per_image * self.k * self.o < CHUNKS_MIN_WORK:
            buffer = self.buffer()
            return [work(n0, m, buffer) for n0, m in chunks]
        groups = [chunks[i::threads] for i in range(threads)]

        def worker(group):
            buffer = self.buffer()
            return [(n0, work(n0, m, buffer)) for n0, m in group]
        # (The chunk pool, one thread per core, is also what keeps two
        # convolutions that the executor runs at once from oversubscribing
        # the cores: the calling thread only waits.)
        done = dict(pair for part in _chunk_pool().map(worker, groups) for pair in part)
        return [done[n0] for n0, _ in chunks]


_pool_lock = threading.Lock()
_pool = [None, None]        # (pid, executor): threads do not survive fork()


def _chunk_threads():
    """The kernel thread budget (intra_op_parallelism_threads), else every core."""
    return kernel_threads() or numba.config.NUMBA_NUM_THREADS


def _chunk_pool():
    with _pool_lock:
        if _pool[0] != os.getpid():
            _pool[0] = os.getpid()
            _pool[1] = concurrent.futures.ThreadPoolExecutor(
                numba.config.NUMBA_NUM_THREADS, "minitf-conv")
        return _pool[1]


def _direct_pays(conv):
    """The direct loop nest beats im2col + BLAS for thin products: few input
    channels and few outputs (tests/benchmarks/bench_cnn.py --kernels measures
    both on the benchmark's convolutions)."""
    return conv.k <= DIRECT_MAX_K and conv.o <= DIRECT_MAX_O


#: The direct loop nest is used up to these patch lengths (KH*KW*C) and output
#: channels (measured on the 2-core CI machine: see the README).
DIRECT_MAX_K, DIRECT_MAX_O = 0, 0


def conv2d(x, w, strides, dilations, pads, data_format="NHWC", bias=None, relu=False):
    """TF's Conv2D (see :mod:`.conv`): im2col + a matrix product per chunk of
    images (or the direct loop nest for thin products); ``[N, OH, OW, O]``.

    ``bias`` (a vector of ``O``, NHWC, the compute dtype) and ``relu`` make it
    TF's fused convolution (``_FusedConv2D``, minitf/runtime/remapper.py): each
    chunk's rows get the bias added, then the ReLU, right after their product,
    while they are still in the cache, instead of two more passes over the
    whole output. The result is the same to the bit: the same float adds, in
    the same order."""
    x = np.asarray(x)
    dtype = x.dtype
    cdtype = _conv_dtype(dtype, "Conv2D")
    xn = _nhwc_in(x, data_format, cdtype)
    w = np.ascontiguousarray(w, dtype=cdtype)
    conv = _Convolution(xn.shape, w.shape[0], w.shape[1], w.shape[3], tuple(strides),
                        tuple(dilations), tuple(pads), cdtype)
    # (every path below writes every element, BLAS with beta = 0 included)
    y = (np.empty if conv.k else np.zeros)((conv.n, conv.oh, conv.ow, conv.o), cdtype)
    y2 = y.reshape(-1, conv.o)
    epilogue = None
    if bias is not None:
        epilogue = jit_kernel(_conv.bias_relu_rows_kernel, _conv.bias_relu_rows_signature,
                              (cdtype,))
        bias = np.ascontiguousarray(bias, dtype=cdtype)
    if y.size and conv.k and not _direct_pays(conv):
        flat = xn.reshape(conv.n, conv.h, conv.w * conv.c)
        w2 = w.reshape(conv.k, conv.o)

        def work(n0, m, buffer):
            rows = _gemm(conv.im2col(flat, n0, m, buffer), w2, y2[conv.rows(n0, m)])
            if epilogue is not None:
                epilogue(rows, bias, relu, False)
        conv.run(work)
        return _nhwc_out(y, data_format, dtype)
    if y.size and conv.k:
        parallel = y.size * conv.k >= PARALLEL_MIN_SIZE
        kernel = jit_kernel(_conv.conv_direct_kernel, _conv.direct_signature, (cdtype,),
                            fastmath={"contract"})
        (sh, sw), (dh, dw), (pt, _, pl, _) = strides, dilations, pads
        _call(kernel, parallel, xn, w, sh, sw, dh, dw, pt, pl, y, parallel)
    if epilogue is not None and y.size:
        parallel = y.size >= PARALLEL_MIN_SIZE
        _call(epilogue, parallel, y2, bias, relu, parallel)
    return _nhwc_out(y, data_format, dtype)


def conv2d_backprop_input(input_shape, w, dy, strides, dilations, pads, data_format="NHWC"):
    """TF's Conv2DBackpropInput: ``dcols = dy @ w.T`` per chunk of images, added back
    onto the input positions by :func:`.conv.col2im_kernel`."""
    dy = np.asarray(dy)
    dtype = dy.dtype
    cdtype = _conv_dtype(dtype, "Conv2DBackpropInput")
    g = _nhwc_in(dy, data_format, cdtype)
    w = np.ascontiguousarray(w, dtype=cdtype)
    shape = _nhwc_dims(input_shape, data_format)
    conv = _Convolution(shape, w.shape[0], w.shape[1], w.shape[3], tuple(strides),
                        tuple(dilations), tuple(pads), cdtype)
    nothing = not (g.size and conv.k)
    dx = (np.zeros if nothing else np.empty)(shape, cdtype)   # col2im zeroes each image
    if dx.size and not nothing:
        w2 = w.reshape(conv.k, conv.o)
        g2 = g.reshape(-1, conv.o)
        flat = dx.reshape(conv.n, conv.h, conv.w * conv.c)

        def work(n0, m, buffer):
            dcols = _gemm(g2[conv.rows(n0, m)], w2, conv.rows_of(buffer, m),
                          transpose_b=True)
            conv.col2im(dcols, n0, flat)
        conv.run(work)
    return _nhwc_out(dx, data_format, dtype)


def conv2d_backprop_filter(x, filter_shape, dy, strides, dilations, pads, data_format="NHWC"):
    """TF's Conv2DBackpropFilter: ``dw = sum over chunks of cols.T @ dy``."""
    dy = np.asarray(dy)
    dtype = dy.dtype
    cdtype = _conv_dtype(dtype, "Conv2DBackpropFilter")
    xn = _nhwc_in(x, data_format, cdtype)
    g = _nhwc_in(dy, data_format, cdtype)
    kh, kw, c, o = (int(d) for d in filter_shape)
    conv = _Convolution(xn.shape, kh, kw, o, tuple(strides), tuple(dilations), tuple(pads),
                        cdtype)
    dw = np.zeros((conv.k, o), cdtype)
    if xn.size and g.size and conv.k:
        flat = xn.reshape(conv.n, conv.h, conv.w * conv.c)
        g2 = g.reshape(-1, o)
        sums = {}      # thread -> its chunks' sum (BLAS adds each product in: beta = 1)

        def work(n0, m, buffer):
            me = threading.get_ident()
            first = me not in sums
            if first:
                sums[me] = np.empty((conv.k, o), cdtype)
            _gemm(conv.im2col(flat, n0, m, buffer), g2[conv.rows(n0, m)], sums[me],
                  transpose_a=True, accumulate=not first)
        conv.run(work)
        for part in sums.values():
            dw += part
    return dw.reshape(kh, kw, c, o).astype(dtype, copy=False)


#: Pooling over at least this many input elements (1M: about 0.3 ms on one
#: core) shares its images out over the chunk threads; from PARALLEL_MIN_SIZE
#: on, the kernel's own parallel loop takes over.
POOL_SPLIT_MIN_SIZE = 1 << 20


def _by_images(n, size, run):
    """``run(lo, hi, parallel)`` over images ``lo .. hi`` of a batch of ``n``.

    A pooling kernel on a mid-size batch (the CNN benchmark's 64x28x28x32)
    takes a millisecond on one core, too little for Numba's parallel loop to
    pay on the build machines (see compile.py), while in a training step it
    often runs alone, the other core idle. So the batch is cut into one part
    per chunk thread (the convolutions' pool, which also keeps concurrent
    kernels from oversubscribing the cores), each part a serial kernel call.
    """
    if size >= PARALLEL_MIN_SIZE:
        with PARALLEL_LOCK:
            return run(0, n, True)
    threads = min(n, _chunk_threads())
    if threads <= 1 or size < POOL_SPLIT_MIN_SIZE:
        return run(0, n, False)
    parts = [(i * n // threads, (i + 1) * n // threads) for i in range(threads)]
    for _ in _chunk_pool().map(lambda part: run(part[0], part[1], False), parts):
        pass


def bias_relu(y, bias, relu):
    """``y + bias`` along the last axis, then (with ``relu``) the ReLU, in place
    on ``y`` (a float32/float64 product or convolution just computed: the
    epilogue of a fused kernel, see minitf/runtime/remapper.py). Returns ``y``."""
    if not y.flags.c_contiguous or not y.flags.writeable:
        y = np.ascontiguousarray(y).copy()
    if y.size:
        rows = y.reshape(-1, y.shape[-1])
        kernel = jit_kernel(_conv.bias_relu_rows_kernel, _conv.bias_relu_rows_signature,
                            (y.dtype,))
        parallel = y.size >= PARALLEL_MIN_SIZE
        _call(kernel, parallel, rows, np.ascontiguousarray(bias, dtype=y.dtype), relu, parallel)
    return y


def _pool_lowest(dtype):
    """The start of a max: the storage dtype's lowest finite value (TF's)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return float(ml_dtypes.finfo(dtype).min)


def max_pool(x, ksize, strides, pads, data_format="NHWC"):
    """TF's MaxPool (see :func:`.conv.max_pool_kernel`)."""
    x = np.asarray(x)
    dtype = x.dtype
    cdtype = _conv_dtype(dtype, "MaxPool")
    xn = _nhwc_in(x, data_format, cdtype)
    n, h, w, c = xn.shape
    pt, pb, pl, pr = pads
    y = np.empty((n, _out_len(h, ksize[0], strides[0], 1, pt, pb),
                  _out_len(w, ksize[1], strides[1], 1, pl, pr), c), cdtype)
    if y.size:
        kernel = jit_kernel(_conv.max_pool_kernel, _conv.pool_signature, (cdtype,))
        lowest = cdtype.type(_pool_lowest(dtype))
        _by_images(n, xn.size, lambda lo, hi, parallel: kernel(
            xn[lo:hi], ksize[0], ksize[1], strides[0], strides[1], pt, pl, lowest, y[lo:hi],
            parallel))
    return _nhwc_out(y, data_format, dtype)


def max_pool_grad(x, y, dy, ksize, strides, pads, data_format="NHWC"):
    """TF's MaxPoolGrad: the winners are found again from ``x`` (``y`` is not read)."""
    dy = np.asarray(dy)
    dtype = dy.dtype
    cdtype = _conv_dtype(dtype, "MaxPoolGrad")
    xn = _nhwc_in(x, data_format, cdtype)
    g = _nhwc_in(dy, data_format, cdtype)
    n, _, _, c = xn.shape
    dx = (np.empty if g.size else np.zeros)(xn.shape, cdtype)   # the kernel zeroes each image
    if g.size:
        kernel = jit_kernel(_conv.max_pool_grad_kernel, _conv.max_grad_signature,
                            (cdtype, cdtype))
        best, winner = np.empty((n, c), cdtype), np.empty((n, c), np.int64)
        _by_images(n, xn.size, lambda lo, hi, parallel: kernel(
            xn[lo:hi], g[lo:hi], ksize[0], ksize[1], strides[0], strides[1], pads[0],
            pads[2], dx[lo:hi], best[lo:hi], winner[lo:hi], parallel))
    return _nhwc_out(dx, data_format, dtype)


def avg_pool(x, ksize, strides, pads, data_format="NHWC"):
    """TF's AvgPool: window means over the elements inside the image."""
    x = np.asarray(x)
    dtype = x.dtype
    cdtype = _conv_dtype(dtype, "AvgPool")
    xn = _nhwc_in(x, data_format, cdtype)
    n, h, w, c = xn.shape
    pt, pb, pl, pr = pads
    y = np.empty((n, _out_len(h, ksize[0], strides[0], 1, pt, pb),
                  _out_len(w, ksize[1], strides[1], 1, pl, pr), c), cdtype)
    if y.size:
        kernel = jit_kernel(_conv.avg_pool_kernel, _conv.avg_signature, (cdtype,))
        _by_images(n, xn.size, lambda lo, hi, parallel: kernel(
            xn[lo:hi], ksize[0], ksize[1], strides[0], strides[1], pt, pl, y[lo:hi],
            parallel))
    return _nhwc_out(y, data_format, dtype)


def avg_pool_grad(input_shape, dy, ksize, strides, pads, data_format="NHWC"):
    """TF's AvgPoolGrad: each window's gradient shared over its elements."""
    dy = np.asarray(dy)
    dtype = dy.dtype
    cdtype = _conv_dtype(dtype, "AvgPoolGrad")
    g = _nhwc_in(dy, data_format, cdtype)
    dx = np.zeros(_nhwc_dims(input_shape, data_format), cdtype)
    if g.size and dx.size:
        kernel = jit_kernel(_conv.avg_pool_grad_kernel, _conv.avg_grad_signature, (cdtype,))
        _by_images(dx.shape[0], dx.size, lambda lo, hi, parallel: kernel(
            g[lo:hi], ksize[0], ksize[1], strides[0], strides[1], pads[0], pads[2],
            dx[lo:hi], parallel))
    return _nhwc_out(dx, data_format, dtype)


# ----------------------------------------------------- batch normalization ----
def _bn_rows(x, data_format):
    """``x`` as C-contiguous rows ``[N*H*W, C]`` in its compute dtype (float32/64)."""
    x = np.asarray(x)
    cdtype = _compute_dtype(x.dtype)
    if _NATIVE_KIND.get(cdtype) != "f":
        raise TypeError("minitf cpu batch normalization needs a float dtype, got %s" % x.dtype)
    xn = _nhwc_in(x, data_format, cdtype)
    return xn.reshape(-1, xn.shape[-1]), xn.shape, cdtype


def _row_chunks(rows):
    if rows.size < PARALLEL_MIN_SIZE:
        return 1, False
    return max(1, min(rows.shape[0], 2 * numba.get_num_threads())), True


def _channel_sums(rows, center):
    """``(sum(x - center), sum((x - center) ** 2))`` per channel, in float64."""
    chunks, parallel = _row_chunks(rows)
    partial = np.empty((chunks, 2, rows.shape[1]))
    kernel = jit_kernel(_conv.channel_sums_kernel, _conv.channel_sums_signature, (rows.dtype,),
                        fastmath={"reassoc", "contract"})
    _call(kernel, parallel, rows, center, partial, parallel)
    total = partial.sum(axis=0)
    return total[0], total[1]


def _affine(rows, a, b, shape, data_format, dtype):
    out = np.empty_like(rows)
    if rows.size:
        parallel = rows.size >= PARALLEL_MIN_SIZE
        kernel = jit_kernel(_conv.affine_rows_kernel, _conv.affine_signature, (rows.dtype,),
                            fastmath={"contract"})
        _call(kernel, parallel, rows, a.astype(rows.dtype), b.astype(rows.dtype), out, parallel)
    return _nhwc_out(out.reshape(shape), data_format, dtype)


def fused_batch_norm(x, scale, offset, mean, variance, epsilon, exponential_avg_factor,
                     is_training, data_format="NHWC"):
    """TF's FusedBatchNormV3 (see ``minitf/ops/batch_norm_ops.py``): two passes for the
    batch statistics in training (mean, then squared deviations from it), one
    pass ``y = x * a + b`` to normalize. Returns ``(y, batch_mean, batch_var,
    saved_mean, saved_var)``."""
    dtype = np.asarray(x).dtype
    rows, shape, _ = _bn_rows(x, data_format)
    count, channels = rows.shape
    if is_training:
        with np.errstate(all="ignore"):
            m = _channel_sums(rows, np.zeros(channels))[0] / count
            v = _channel_sums(rows, m)[1] / count
            unbiased = v * count / max(count - 1, 1)
        f = exponential_avg_factor
        out_mean, out_var = m, unbiased
        if f != 1.0:
            out_mean = (1 - f) * np.asarray(mean, np.float64) + f * m
            out_var = (1 - f) * np.asarray(variance, np.float64) + f * unbiased
        saved = (m, v)
    else:
        m = np.asarray(mean, np.float64)
        v = np.asarray(variance, np.float64)
        out_mean, out_var = m, v
        saved = (np.zeros(channels), np.zeros(channels))
    a = np.asarray(scale, np.float64) / np.sqrt(v + epsilon)
    b = np.asarray(offset, np.float64) - m * a
    f32 = np.float32
    return (_affine(rows, a, b, shape, data_format, dtype), out_mean.astype(f32),
            out_var.astype(f32), saved[0].astype(f32), saved[1].astype(f32))


def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, epsilon, is_training,
                          data_format="NHWC"):
    """TF's FusedBatchNormGradV3: one pass for ``sum(dy)`` and ``sum(dy * (x - mean))``
    per channel, one pass for ``dx``. Returns ``(dx, dscale, doffset)``."""
    dtype = np.asarray(dy).dtype
    g, shape, cdtype = _bn_rows(dy, data_format)
    rows, _, _ = _bn_rows(x, data_format)
    count, channels = rows.shape
    mean = np.asarray(saved_mean, np.float64)
    inv = 1.0 / np.sqrt(np.asarray(saved_variance, np.float64) + epsilon)
    scale = np.asarray(scale, np.float64)
    chunks, parallel = _row_chunks(rows)
    partial = np.empty((chunks, 2, channels))
    kernel = jit_kernel(_conv.grad_sums_kernel, _conv.grad_sums_signature, (cdtype,),
                        fastmath={"reassoc", "contract"})
    _call(kernel, parallel, g, rows, mean, partial, parallel)
    sum_dy, sum_dy_xc = partial.sum(axis=0)
    doffset = sum_dy
    dscale = sum_dy_xc * inv
    a = scale * inv
    if is_training and count:
        b = -a * inv * dscale / count
        d = -a * sum_dy / count - mean * b
        dx = np.empty_like(rows)
        kernel = jit_kernel(_conv.bn_backprop_kernel, _conv.bn_backprop_signature, (cdtype,),
                            fastmath={"contract"})
        _call(kernel, parallel, g, rows, a.astype(cdtype), b.astype(cdtype),
              d.astype(cdtype), dx, parallel)
        dx = _nhwc_out(dx.reshape(shape), data_format, dtype)
    else:
        dx = _affine(g, a, np.zeros(channels), shape, data_format, dtype)
    f32 = np.float32
    return dx, dscale.astype(f32), doffset.astype(f32)


# ----------------------------------------------------------------- BiasAdd ----
def bias_add(value, bias, data_format="NHWC"):
    """``value + bias`` along the channel axis (the last, or axis 1 for NCHW): one
    pass, parallel over rows (or over (image, channel) planes) for large inputs.
    Half types add in float32 and round once (the exact sum, correctly rounded)."""
    value = np.asarray(value)
    dtype = value.dtype
    cdtype = _conv_dtype(dtype, "BiasAdd")
    x = np.ascontiguousarray(value, dtype=cdtype)
    b = np.ascontiguousarray(bias, dtype=cdtype)
    out = np.empty(x.shape, cdtype)
    parallel = x.size >= PARALLEL_MIN_SIZE
    if x.size:
        if data_format == "NCHW":
            x3 = x.reshape(x.shape[0], x.shape[1], -1)
            kernel = jit_kernel(_conv.bias_planes_kernel, _conv.bias_planes_signature,
                                (cdtype,))
            _call(kernel, parallel, x3, b, out.reshape(x3.shape), parallel)
        else:
            rows = x.reshape(-1, x.shape[-1])
            kernel = jit_kernel(_conv.bias_rows_kernel, _conv.bias_rows_signature, (cdtype,))
            with np.errstate(all="ignore"):
                _call(kernel, parallel, rows, b, out.reshape(rows.shape), parallel)
    return out.astype(dtype, copy=False)
