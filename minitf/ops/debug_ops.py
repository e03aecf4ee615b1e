"""Ops for finding bugs in a graph: print values as they flow, stop on NaN.

A graph runs later, elsewhere (perhaps on a server), so Python's ``print``
inside the model code prints *tensors*, not values. These ops do their work
when the step runs:

* ``tf.Print(x, [a, b], "msg: ")`` passes ``x`` through unchanged and, each
  time it runs, writes ``msg: [a's values][b's values]`` to the standard error
  of the process that runs it (your notebook, or the server's log);
* ``tf.check_numerics(x, "logits")`` passes ``x`` through, or fails the step
  with an InvalidArgumentError as soon as ``x`` holds a NaN or an infinity:
  put one after a suspicious op to find where NaNs start;
* ``tf.is_nan``, ``tf.is_inf``, ``tf.is_finite`` test each element;
* ``tf.Assert(condition, data)`` fails the step with ``data``'s values unless
  ``condition`` holds (``tf.assert_greater_equal``... build one); run it through
  a control dependency of the ops it guards.

As in TensorFlow, a Print or check only runs if something you fetch depends on
its output: use the returned tensor in place of ``x``.
"""

import sys
import threading

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.ops import math_ops, reduction_ops
from minitf.ops.core import FLOAT_TYPES, check_dtype, convert_to_tensor, make_op, name_scope
from minitf.ops.elementwise import FLOAT_NAMES

__all__ = ["Print", "check_numerics", "is_nan", "is_inf", "is_finite", "summarize", "Assert",
           "assert_greater_equal", "assert_less_equal"]


# -- Print ----------------------------------------------------------------------------------
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


def _print_kernel(op, backend):
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


def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


# Print runs on CPUs only (soft placement moves it off a GPU, as in TF); it is
# stateful, a side effect that is never folded or skipped.
PRINT = declare(OpDef("Print", inputs=("input", "*data"),
                      attrs=("T", "U", "message", "first_n", "summarize"),
                      gradient=_print_grad, stateful=True, kernel=_print_kernel))


# -- CheckNumerics and the float tests ---------------------------------------------------------
def _as_float(x):
    return x.astype(np.float32) if x.dtype.itemsize == 2 else x


def _check_numerics_kernel(op, backend):
    message = op.get_attr("message")

    def compute(ctx, inputs):
        x = inputs[0]
        values = _as_float(x)
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


def _check_numerics_grad(op, grad):
    return [grad]


_FLOAT_DEVICES = {"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES}
CHECK_NUMERICS = declare(OpDef("CheckNumerics", inputs=("tensor",), attrs=("T", "message"),
                               gradient=_check_numerics_grad, devices=_FLOAT_DEVICES,
                               kernel=_check_numerics_kernel))


def _float_test_kernel(test):
    def kernel(op, backend):
        return lambda ctx, inputs: [test(_as_float(inputs[0]))]
    return kernel


IS_NAN = declare(OpDef("IsNan", inputs=("x",), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                       devices=_FLOAT_DEVICES, kernel=_float_test_kernel(np.isnan)))
IS_INF = declare(OpDef("IsInf", inputs=("x",), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                       devices=_FLOAT_DEVICES, kernel=_float_test_kernel(np.isinf)))
IS_FINITE = declare(OpDef("IsFinite", inputs=("x",), attrs=("T",), gradient=NOT_DIFFERENTIABLE,
                          devices=_FLOAT_DEVICES, kernel=_float_test_kernel(np.isfinite)))


# -- Assert -----------------------------------------------------------------------------------
def _assert_kernel(op, backend):
    first = op.get_attr("summarize")

    def compute(ctx, inputs):
        condition, data = inputs[0], inputs[1:]
        if np.asarray(condition).shape != ():
            raise errors.InvalidArgumentError(
                None, None, "In[0] (condition) must be a scalar, got shape %s"
                % list(np.asarray(condition).shape))
        if not bool(condition):
            raise errors.InvalidArgumentError(
                None, None, "assertion failed: %s"
                % " ".join("[%s]" % summarize(v, first) for v in data))
        return []
    return compute


#: Fail the step with TF's "assertion failed: [...]" unless ``condition`` holds.
#: An op with no outputs: it runs when something depends on it (a control
#: dependency), and it is stateful, so it is never folded or skipped.
ASSERT = declare(OpDef("Assert", inputs=("condition", "*data"), attrs=("summarize",),
                       gradient=NOT_DIFFERENTIABLE, stateful=True, kernel=_assert_kernel))


# -- the tf.* functions -------------------------------------------------------------------------


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """``input_``, unchanged; running it prints ``message`` and ``data``'s values.

    ``summarize``: how many elements of each tensor to print (default 3);
    ``first_n``: print only the first ``first_n`` times the op runs.
    """
    with name_scope(name, "Print", [input_] + list(data)) as scope:
        x = convert_to_tensor(input_, name="input")
        data = [convert_to_tensor(d) for d in data]
        op = make_op(PRINT, [x] + data, [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "message": message or "",
                            "first_n": -1 if first_n is None else int(first_n),
                            "summarize": 3 if summarize is None else int(summarize)})
    return op.outputs[0]


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged, or an InvalidArgumentError if it has NaN or Inf values."""
    with name_scope(name, "CheckNumerics", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        check_dtype(x, FLOAT_TYPES, arg="tensor")
        op = make_op(CHECK_NUMERICS, [x], [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "message": message})
    return op.outputs[0]


def _float_test(row):
    def test(x, name=None):
        with name_scope(name, row.name, [x]) as scope:
            x = convert_to_tensor(x, name="x")
            check_dtype(x, FLOAT_TYPES, arg="x")
            return make_op(row, [x], [dtypes.bool], [x.shape], name=scope,
                           attrs={"T": x.dtype.base_dtype}).outputs[0]
    test.__name__ = row.name
    test.__doc__ = "Elementwise ``%s`` of a float tensor (a bool tensor)." % row.name
    return test


is_nan = _float_test(IS_NAN)
is_inf = _float_test(IS_INF)
is_finite = _float_test(IS_FINITE)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TF's name)
    """An op that fails the step with ``data``'s values unless ``condition`` is True."""
    with name_scope(name, "Assert", [condition] + list(data)):
        c = convert_to_tensor(condition, name="Condition")
        if c.dtype.base_dtype != dtypes.bool:
            raise TypeError("Assert's condition must be a bool tensor, got %s" % c.dtype.name)
        data = [convert_to_tensor(d) for d in data]
        return make_op(ASSERT, [c] + data, [], [], name="Assert",
                       attrs={"summarize": 3 if summarize is None else int(summarize)})


def _binary_assert(symbol, default_name, compare, x, y, data, summarize, message, name):
    """TF's check_ops: an Assert that ``compare(x, y)`` holds for every element;
    a ValueError at once when both are constants and it does not."""
    with name_scope(name, default_name, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype_hint=x.dtype.base_dtype)
        if data is None:
            data = ["Condition x %s y did not hold element-wise:" % symbol,
                    "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        if message is not None:
            data = [message] + list(data)
        condition = reduction_ops.reduce_all(compare(x, y))
        return Assert(condition, data, summarize=summarize)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op that fails the step unless ``x >= y`` everywhere."""
    return _binary_assert(">=", "assert_greater_equal", math_ops.greater_equal, x, y, data,
                          summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op that fails the step unless ``x <= y`` everywhere."""
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, x, y, data,
                          summarize, message, name)
