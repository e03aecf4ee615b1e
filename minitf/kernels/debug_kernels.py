"""Kernels of the debugging ops (see minitf/ops/debug_ops.py). Print runs on
CPUs only (soft placement moves it off a GPU, as in TF); the numeric checks
run on every device (on a real GPU through host copies, see gpu_kernels)."""

import sys
import threading

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def summarize(value, first):
    """A tensor's values as TF's Print shows them (TF's ``SummarizeValue``).

    At most ``first`` elements (``< 0``: all), rows bracketed: a 2x3 matrix
    with ``first=3`` is ``[1.5 2 3]...``, a vector ``1 2 3...``, a scalar ``7``.
    Floats take 6 (float64: 15) significant digits, more if needed to read back
    the same number; bools print as 1 and 0.
    """
    value = np.asarray(value)
    flat = value.reshape(-1)
    limit = flat.size if first < 0 else min(first, flat.size)
    out = []
    if value.ndim == 0:
        out.append(" ".join(_element(v) for v in flat[:limit]))
    else:
        _one_dim(0, value.shape, limit, flat, [0], out)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


def _one_dim(dim, shape, limit, flat, index, out):
    """TF's ``PrintOneDim``: brackets for every dimension but the last."""
    if index[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if index[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(_element(flat[index[0]]))
            index[0] += 1
        return
    for _ in range(shape[dim]):
        opened = index[0] < limit
        if opened:
            out.append("[")
        _one_dim(dim + 1, shape, limit, flat, index, out)
        if opened or index[0] < limit:
            out.append("]")


def _element(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        if not np.isfinite(v):
            return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
        short, full = (15, 17) if v.dtype == np.float64 else (6, 9)
        text = "%.*g" % (short, v)
        return text if v.dtype.type(text) == v else "%.*g" % (full, v)
    return str(v)


@register("Print", ("CPU",))
def _print(op, device):
    message, first_n = op.get_attr("message"), op.get_attr("first_n")
    summarize_n = op.get_attr("summarize")
    count = {"n": 0}
    lock = threading.Lock()

    def compute(ctx, inputs):
        with lock:
            count["n"] += 1
            show = first_n < 0 or count["n"] <= first_n
        if show:
            text = message + "".join("[%s]" % summarize(v, summarize_n)
                                     for v in inputs[1:])
            print(text, file=sys.stderr, flush=True)
        return [inputs[0]]
    return compute


@register("CheckNumerics", ("CPU", "GPU"), dtypes=_FLOATS)
def _check_numerics(op, device):
    message = op.get_attr("message")

    def compute(ctx, inputs):
        x = inputs[0]
        values = x.astype(np.float32) if x.dtype.itemsize == 2 else x
        bad = ~np.isfinite(values)
        if bad.any():
            kinds = []
            if np.isinf(values).any():
                kinds.append("Inf")
            if np.isnan(values).any():
                kinds.append("NaN")
            raise errors.InvalidArgumentError(
                None, None, "%s : Tensor had %s values" % (message, " and ".join(kinds)))
        return [x]
    return compute


@register(("IsNan", "IsInf", "IsFinite"), ("CPU", "GPU"), dtypes=_FLOATS)
def _float_tests(op, device):
    test = {"IsNan": np.isnan, "IsInf": np.isinf, "IsFinite": np.isfinite}[op.type]

    def compute(ctx, inputs):
        x = inputs[0]
        return [test(x.astype(np.float32) if x.dtype.itemsize == 2 else x)]
    return compute
