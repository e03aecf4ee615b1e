"""Scans: ``tf.cumsum`` and ``tf.cumprod``, running totals along one axis.

``tf.cumsum([1, 2, 3])`` is ``[1, 3, 6]``; ``exclusive=True`` leaves each
element out of its own total (``[0, 1, 3]``); ``reverse=True`` runs from the
end (``[6, 5, 3]``). The axis is a second input (host memory on a GPU), as in
TF. Each op is a row whose kernel calls ``backend.cumulative``, a loop nest
over the input viewed as ``x[A, K, B]`` (``minitf/kernels/cpu/scans.py``).
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import BACKEND, OpDef, declare
from minitf.ops import math_ops
from minitf.ops.core import NUMBER_TYPES, check_dtype, convert_to_tensor, make_op, name_scope
from minitf.ops.elementwise import BIG, FLOAT_NAMES, NUMBER_NAMES


def _scan_kernel(op, backend):
    product = op.type == CUMPROD.name
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    cumulative = backend.cumulative

    def compute(ctx, inputs):
        x, axis = inputs
        axis = int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise errors.InvalidArgumentError(
                None, None, "ScanOp: Expected scan axis in the range [%d, %d), but got %d"
                % (-x.ndim, x.ndim, axis))
        return [cumulative(x, axis % x.ndim, product, exclusive, reverse)]
    return compute


def _cumsum_grad(op, grad):
    return [cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


def _cumprod_grad(op, grad):
    """TF's: the running products times the gradient, summed back the other
    way, divided by ``x`` (0 where ``x`` is 0)."""
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [math_ops.div_no_nan(out, x), None]


def _scan_examples(api, lo, hi):
    def examples(dtype):
        def values(shape, k=0):
            n = int(np.prod(shape))
            x = lo + (np.arange(n) * 0.37 + k) % (hi - lo)
            if dtype not in FLOAT_NAMES:
                x = np.floor(x)
            return x.reshape(shape).astype(dtypes.as_dtype(dtype).np_dtype)
        cases = []
        for axis, exclusive, reverse in ((1, False, False), (0, True, False), (-1, True, True),
                                         (0, False, True)):
            cases.append(([values((3, 4))], lambda x, a=axis, e=exclusive, r=reverse:
                          api(x, a, exclusive=e, reverse=r)))
        cases.append(([values((2, BIG // 2), 1)], lambda x: api(x, 1)))
        cases.append(([values((BIG // 4, 4), 2)], lambda x: api(x, 0, reverse=True)))
        return cases
    return examples


_GPU = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def _scan_row(name, gradient, api, lo, hi):
    return declare(OpDef(
        name, inputs=("x", "axis"), attrs=("T", "Tidx", "exclusive", "reverse"),
        gradient=gradient, devices={"CPU": NUMBER_NAMES, "GPU": _GPU}, kernel=_scan_kernel,
        kernel_reads=BACKEND, host_memory_inputs=(1,), examples=_scan_examples(api, lo, hi)))


CUMSUM = _scan_row("Cumsum", _cumsum_grad, lambda *a, **k: cumsum(*a, **k), -10, 10)
CUMPROD = _scan_row("Cumprod", _cumprod_grad, lambda *a, **k: cumprod(*a, **k), 0.5, 1.5)


def _scan(row, x, axis, exclusive, reverse, name):
    with name_scope(name, row.name, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, NUMBER_TYPES)
        axis_t = convert_to_tensor(axis, name="axis")
        if axis_t.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'axis' has DataType %s not in list "
                            "of allowed values: int32, int64" % axis_t.dtype.name)
        op = make_op(row, [x, axis_t], [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "Tidx": axis_t.dtype.base_dtype,
                            "exclusive": bool(exclusive), "reverse": bool(reverse)})
    return op.outputs[0]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """The running sums of ``x`` along ``axis``: ``[a, a + b, a + b + c]``."""
    return _scan(CUMSUM, x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """The running products of ``x`` along ``axis``: ``[a, a * b, a * b * c]``."""
    return _scan(CUMPROD, x, axis, exclusive, reverse, name)
