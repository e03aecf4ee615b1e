"""Sorting: ``tf.nn.top_k``, ``tf.nn.in_top_k``, ``tf.sort`` and ``tf.argsort``.

``TopKV2`` finds the ``k`` largest entries of every row (the last axis),
largest first; among equal values the lower index comes first. ``tf.sort``
and ``tf.argsort`` are built from it, as TF builds them: an ascending sort is
the top ``n`` of the negated values, negated back; another axis is moved last
with a transpose first. ``InTopKV2`` is the evaluation question "is the true
class among the k best predictions?" (``tf.metrics`` and accuracy-at-k code
use it). The loop nests are in ``minitf/kernels/cpu/sorting.py``.
"""

import collections

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops, reduction_ops
from minitf.ops.core import (CONST, NUMBER_TYPES, check_dtype, convert_to_tensor, make_op,
                             name_scope)
from minitf.ops.elementwise import BIG, FLOAT_NAMES, NUMBER_NAMES


# ========================================================================= TopKV2 ===
def _top_k_kernel(op, backend):
    top_k_ = backend.top_k

    def compute(ctx, inputs):
        x, k = inputs
        k = int(k)
        if k < 0:
            raise errors.InvalidArgumentError(None, None, "Need k >= 0, got %d" % k)
        if x.ndim < 1:
            raise errors.InvalidArgumentError(None, None, "input must be >= 1-D, got shape "
                                              "%s" % list(x.shape))
        if x.shape[-1] < k:
            raise errors.InvalidArgumentError(
                None, None, "input must have at least k columns. Had %d, needed %d"
                % (x.shape[-1], k))
        return list(top_k_(x, k))
    return compute


def _top_k_grad(op, grad_values, grad_indices):
    """The gradient of each kept value goes back to where it came from; the
    other entries get 0 (TF's: scatter into the flattened input)."""
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = array_ops.shape(x)
    n = array_ops.gather(in_shape, array_ops.size(in_shape) - 1)
    k = array_ops.gather(array_ops.shape(indices), array_ops.size(in_shape) - 1)
    rows = array_ops.reshape(indices, array_ops.stack([-1, k]))
    outer = array_ops.gather(array_ops.shape(rows), 0)
    offsets = array_ops.expand_dims(array_ops.range_(0, outer * n, n), -1)
    flat = array_ops.reshape(rows + offsets, [-1])
    total = reduction_ops.reduce_prod(in_shape)
    scattered = array_ops.scatter_nd(array_ops.expand_dims(flat, -1),
                                        array_ops.reshape(grad_values, [-1]),
                                        array_ops.stack([total]))
    return [array_ops.reshape(scattered, in_shape), None]


def _row_values(shape, dtype, k=0):
    n = int(np.prod(shape))
    x = ((np.arange(n) * 7 + k) % 11 - 5).astype(np.float64) * (0.5 if dtype in FLOAT_NAMES
                                                               else 1)
    return x.reshape(shape).astype(dtypes.as_dtype(dtype).np_dtype)


def _top_k_examples(dtype):
    return [([_row_values((3, 5), dtype)], lambda x: top_k(x, 2)[0]),
            ([_row_values((2, 3, 4), dtype, 1)], lambda x: top_k(x, 4)[0]),
            ([_row_values((7,), dtype, 2)], lambda x: top_k(x, 0)[0]),
            ([_row_values((BIG // 64, 64), dtype, 3)], lambda x: top_k(x, 5)[0])]


_TOP_K_DTYPES = NUMBER_NAMES
TOP_K_V2 = declare(OpDef(
    "TopKV2", inputs=("input", "k"), attrs=("T", "sorted", "Tk", "index_type"),
    gradient=_top_k_grad, devices={"CPU": _TOP_K_DTYPES, "GPU": _TOP_K_DTYPES},
    kernel=_top_k_kernel, kernel_reads=BACKEND, host_memory_inputs=(1,),
    examples=_top_k_examples))


# ======================================================================= InTopKV2 ===
def _in_top_k_kernel(op, backend):
    in_top_k_ = backend.in_top_k

    def compute(ctx, inputs):
        predictions, targets, k = inputs
        if predictions.ndim != 2:
            raise errors.InvalidArgumentError(None, None, "predictions must be 2-dimensional")
        if targets.ndim != 1 or targets.shape[0] != predictions.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, "First dimension of predictions %d must match length of "
                "targets %d" % (predictions.shape[0], targets.shape[0] if targets.ndim
                                else 0))
        return [in_top_k_(predictions, targets, int(k))]
    return compute


def _in_top_k_examples(dtype):
    p = _row_values((4, 5), "float32")
    p[2, 1] = np.inf
    t = np.array([0, 3, 2, 4], dtype=dtype)
    big = _row_values((BIG // 64, 64), "float32", 2)
    return [([p, t], lambda p, t: in_top_k(p, t, 2)),
            ([p, t], lambda p, t: in_top_k(p, t, 0)),
            ([p, t - 1], lambda p, t: in_top_k(p, t, 5)),
            ([big, (np.arange(BIG // 64) % 70).astype(dtype)], lambda p, t: in_top_k(p, t, 3))]


IN_TOP_K_V2 = declare(OpDef(
    "InTopKV2", inputs=("predictions", "targets", "k"), attrs=("T",),
    gradient=NOT_DIFFERENTIABLE, devices={"CPU": ("int32", "int64"),
                                          "GPU": ("int32", "int64")},
    kernel=_in_top_k_kernel, kernel_reads=BACKEND, host_memory_inputs=(2,),
    examples=_in_top_k_examples))


# ============================================================ the tf.* functions ===
#: What ``tf.nn.top_k`` returns: ``values`` and ``indices`` (also a 2-tuple).
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _static_int(t):
    return int(t.op.get_attr("value")) if t.op.op_def is CONST else None


def top_k(input, k=1, sorted=True, name=None, index_type=dtypes.int32):  # noqa: A002
    """``(values, indices)``: the ``k`` largest entries along the last axis, largest
    first (``sorted`` may be False in TF: the order is then unspecified; minitf
    always sorts)."""
    with name_scope(name, "TopKV2", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype(x, NUMBER_TYPES, arg="input")
        k_t = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        if dtypes.as_dtype(index_type).base_dtype != dtypes.int32:
            raise errors.UnimplementedError(None, None, "minitf's top_k returns int32 "
                                            "indices only (index_type=%s)" % index_type)
        kv = _static_int(k_t)
        if x.shape.ndims is None:
            shape = TensorShape(None)
        else:
            if x.shape.ndims == 0:
                raise ValueError("Shape must be at least rank 1 but is rank 0 for '{{node "
                                 "%s}}'" % scope[:-1])
            dims = x.shape.as_list()
            if kv is not None and dims[-1] is not None and dims[-1] < kv:
                raise ValueError("input must have last dimension >= k = %d but is %d for "
                                 "'{{node %s}}'" % (kv, dims[-1], scope[:-1]))
            shape = TensorShape(dims[:-1] + [kv])
        dt = x.dtype.base_dtype
        op = make_op(TOP_K_V2, [x, k_t], [dt, dtypes.int32], [shape, shape], name=scope,
                     attrs={"T": dt, "sorted": bool(sorted), "Tk": dtypes.int32,
                            "index_type": dtypes.int32})
    return TopKV2(op.outputs[0], op.outputs[1])


def in_top_k(predictions, targets, k, name=None):
    """bool per example: is ``targets[i]`` among the ``k`` largest of
    ``predictions[i]``? (Ties count in the target's favour; a row with a
    non-finite prediction is False.)"""
    with name_scope(name, "in_top_k", [predictions, targets]):
        p = convert_to_tensor(predictions, name="predictions")
        if p.dtype.base_dtype != dtypes.float32:
            raise TypeError("Value passed to parameter 'predictions' has DataType %s not in "
                            "list of allowed values: float32" % p.dtype.base_dtype.name)
        t = convert_to_tensor(targets, name="targets")
        if t.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'targets' has DataType %s not in list "
                            "of allowed values: int32, int64" % t.dtype.base_dtype.name)
        k_t = convert_to_tensor(k, dtype=t.dtype.base_dtype, name="k")
        batch = p.shape[0].value if p.shape.ndims else None
        op = make_op(IN_TOP_K_V2, [p, t, k_t], [dtypes.bool], [TensorShape([batch])],
                     name="InTopKV2", attrs={"T": t.dtype.base_dtype})
    return op.outputs[0]


def _sort_or_argsort(values, axis, direction, want_values, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("Unknown direction: %s" % direction)
    with name_scope(name, "sort" if want_values else "argsort", [values]):
        x = convert_to_tensor(values, name="values")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("minitf needs the rank of %s to sort it" % x.name)
        axis = int(axis) % rank if rank else 0
        last = axis == rank - 1
        if not last:            # move the axis to the end and back (TF does the same)
            perm = list(range(rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            x = array_ops.transpose(x, perm)
        ascending = direction == "ASCENDING"
        keyed = math_ops.negative(x) if ascending else x
        k = keyed.shape[-1].value if keyed.shape.ndims else None
        if k is None:
            k = array_ops.shape(keyed)[-1]
        top_values, indices = top_k(keyed, k)
        out = (math_ops.negative(top_values) if ascending else top_values) if want_values \
            else indices
        if not last:
            out = array_ops.transpose(out, perm)
    return out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis``."""
    return _sort_or_argsort(values, axis, direction, True, name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along ``axis`` (int32); equal values keep
    their order (so ``stable=True`` is honoured too)."""
    return _sort_or_argsort(values, axis, direction, False, name)
