"""How an elementwise op is declared, and the one kernel all of them share.

An elementwise op computes each output element from the elements at the same
position of its inputs (with numpy broadcasting for two inputs). Its row in the
op table says *what* one element is (``Elementwise.scalar``: plain Python of one
or two numbers) and the kernel here does the rest, for every backend::

    def compute(ctx, inputs):
        x, y = inputs                    # numpy arrays, or GPU device arrays
        check shapes broadcast (TF's "Incompatible shapes: [2] vs. [3]")
        run the op's own checks (integer division by zero...)
        return [backend.binary(row, x, y)]

``backend`` is the device's: ``minitf.kernels.cpu`` compiles ``scalar`` into a
ufunc with Numba (or uses a vectorizable routine of ``vector_math``), the CUDA
backend compiles it (or ``Elementwise.cuda``) into a kernel, and the numpy
reference backend calls ``Elementwise.reference``. A new elementwise op is one
call to :func:`unary_op` or :func:`binary_op` in its family module.
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.dtypes import FLOAT_NAMES, NUMBER_NAMES
from minitf.framework.op_def import BACKEND, Elementwise, OpDef, declare

__all__ = ["unary_op", "binary_op", "unary_kernel", "binary_kernel", "dims_text",
           "FLOAT_NAMES", "NUMBER_NAMES", "BIG"]

#: Examples use arrays this large to reach the multi-threaded CPU kernels when
#: minitf.kernels.cpu.compile.PARALLEL_MIN_SIZE is 65536, as the test suite
#: sets it (tests/conftest.py).
BIG = (1 << 16) + 3


def dims_text(shape):
    """A shape as TF prints it in kernel messages: ``[1,3]``."""
    return "[%s]" % ",".join(str(d) for d in shape)


def unary_kernel(op, backend):
    """The kernel of every unary elementwise op: ``backend.unary(row, x)``."""
    row, unary = op.op_def, backend.unary
    return lambda ctx, inputs: [unary(row, inputs[0])]


def binary_kernel(check=None):
    """The kernel of a binary elementwise op. ``check(op, x, y)``, if given,
    runs the op's own argument checks first (integer division by zero)."""
    def kernel(op, backend):
        row, binary = op.op_def, backend.binary

        def compute(ctx, inputs):
            x, y = inputs
            if x.shape != y.shape:
                try:
                    np.broadcast_shapes(x.shape, y.shape)
                except ValueError:
                    raise errors.InvalidArgumentError(
                        None, None, "Incompatible shapes: %s vs. %s"
                        % (dims_text(x.shape), dims_text(y.shape))) from None
            if check is not None:
                check(op, x, y)
            return [binary(row, x, y)]
        return compute
    return kernel


def _examples(arity, domain):
    """Small and big inputs inside the op's domain (see :func:`unary_op`)."""
    def examples(dtype):
        np_dtype = dtypes.as_dtype(dtype).np_dtype
        cases = []
        for n in (5, BIG):
            arrays = []
            for k in range(arity):
                lo, hi = domain[k]
                if dtype == "bool":
                    arrays.append(np.arange(n) % (k + 2) == 0)
                    continue
                x = lo + (np.arange(n) * 0.37 + k) % (hi - lo)
                if dtype not in FLOAT_NAMES:
                    x = np.floor(x)
                arrays.append(x.astype(np_dtype))
            cases.append((arrays, None))
        return cases
    return examples


def _declare(name, arity, scalar, reference, cpu, gpu, vector_math, cuda, fusion, gradient,
             kernel, bool_output, domain, inputs, attrs=("T",), examples=None):
    if not isinstance(scalar, dict):        # one function for every kind the op takes
        scalar = {_kind(n): scalar for n in set(cpu) | set(gpu or ())
                  if n == "bool" or n in NUMBER_NAMES}
    devices = {"CPU": tuple(cpu)}
    if gpu:
        devices["GPU"] = tuple(gpu)
    domain = tuple(domain or [(-10, 10)] * arity)
    return declare(OpDef(
        name, inputs=inputs, attrs=attrs, gradient=gradient, devices=devices,
        kernel=kernel, kernel_reads=BACKEND, examples=examples or _examples(arity, domain),
        elementwise=Elementwise(scalar=scalar, reference=reference, vector_math=vector_math,
                                cuda=cuda, fusion=fusion, bool_output=bool_output,
                                domain=domain)))


def _kind(dtype_name):
    if dtype_name == "bool":
        return "b"
    return "f" if dtype_name in FLOAT_NAMES else "i"


def unary_op(name, scalar, reference, *, cpu=NUMBER_NAMES, gpu=FLOAT_NAMES, vector_math=None,
             cuda=None, fusion=None, gradient=None, domain=None, inputs=("x",)):
    """Declare a one-input elementwise op and return its row.

    ``scalar`` is a function of one number (or ``{kind: function}``);
    ``cpu``/``gpu``: the dtype names each device type runs; ``domain``: the
    ``[(lo, hi)]`` range the examples draw from (``Sqrt``: positive numbers).
    See :class:`~minitf.framework.op_def.Elementwise` for the rest."""
    return _declare(name, 1, scalar, reference, cpu, gpu, vector_math, cuda, fusion, gradient,
                    unary_kernel, False, domain, inputs)


def binary_op(name, scalar, reference, *, cpu=NUMBER_NAMES, gpu=FLOAT_NAMES, cuda=None,
              fusion=None, gradient=None, check=None, bool_output=False, domain=None,
              inputs=("x", "y"), kernel=None, attrs=("T",), examples=None):
    """Declare a two-input elementwise op (numpy broadcasting) and return its row.

    ``check(op, x, y)`` validates arguments before the backend runs (as TF's
    kernels do); ``bool_output`` for comparisons; ``kernel`` replaces the
    shared kernel when the op needs more (string ``+``); ``attrs``: the op's
    attr names when it has more than ``T``; ``examples`` replaces the
    generated ones when the op takes inputs of particular shapes."""
    return _declare(name, 2, scalar, reference, cpu, gpu, None, cuda, fusion, gradient,
                    kernel or binary_kernel(check), bool_output, domain, inputs, attrs,
                    examples)
