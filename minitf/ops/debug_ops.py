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
* ``tf.is_nan``, ``tf.is_inf``, ``tf.is_finite`` test each element.

As in TensorFlow, a Print or check only runs if something you fetch depends on
its output: use the returned tensor in place of ``x``.
"""

from minitf.framework import dtypes
from minitf.ops.core import convert_to_tensor, make_op, name_scope
from minitf.ops.math_ops import _FLOAT_TYPES, _check_dtype
from minitf.ops.op_def import register_op

__all__ = ["Print", "check_numerics", "is_nan", "is_inf", "is_finite"]

register_op("Print", stateful=True)         # a side effect: never folded or skipped


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """``input_``, unchanged; running it prints ``message`` and ``data``'s values.

    ``summarize``: how many elements of each tensor to print (default 3);
    ``first_n``: print only the first ``first_n`` times the op runs.
    """
    with name_scope(name, "Print", [input_] + list(data)) as scope:
        x = convert_to_tensor(input_, name="input")
        data = [convert_to_tensor(d) for d in data]
        op = make_op("Print", [x] + data, [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "message": message or "",
                            "first_n": -1 if first_n is None else int(first_n),
                            "summarize": 3 if summarize is None else int(summarize)})
    return op.outputs[0]


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged, or an InvalidArgumentError if it has NaN or Inf values."""
    with name_scope(name, "CheckNumerics", [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        _check_dtype("CheckNumerics", x, _FLOAT_TYPES, arg="tensor")
        op = make_op("CheckNumerics", [x], [x.dtype.base_dtype], [x.shape], name=scope,
                     attrs={"T": x.dtype.base_dtype, "message": message})
    return op.outputs[0]


def _float_test(op_type):
    def test(x, name=None):
        with name_scope(name, op_type, [x]) as scope:
            x = convert_to_tensor(x, name="x")
            _check_dtype(op_type, x, _FLOAT_TYPES, arg="x")
            return make_op(op_type, [x], [dtypes.bool], [x.shape], name=scope,
                           attrs={"T": x.dtype.base_dtype}).outputs[0]
    test.__name__ = op_type
    test.__doc__ = "Elementwise ``%s`` of a float tensor (a bool tensor)." % op_type
    return test


is_nan = _float_test("IsNan")
is_inf = _float_test("IsInf")
is_finite = _float_test("IsFinite")
