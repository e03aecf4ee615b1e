"""Running a row's kernel on its own examples, on any backend.

Every row whose kernel computes with a backend (``kernel_reads == BACKEND``)
carries ``examples(dtype_name)``: small (and a few large) inputs for each
dtype it runs, with the ``tf.*`` call that builds the op (elementwise rows
need none: the op is made directly from the row). :func:`cases` turns them
into real ops of a throwaway graph; :func:`run` builds the row's kernel for
that op with a backend and computes.

Two users, both derived from the op table and nothing else:

* ``python -m minitf.warmup`` runs every case on the CPU backend, which
  compiles every CPU kernel into Numba's disk cache;
* the parity tests run every case on every backend (CPU, numpy reference,
  CUDA under the simulator) and compare the answers.
"""

from dataclasses import dataclass

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import Graph
from minitf.framework.op_def import ANY_DTYPE, BACKEND, all_op_defs
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.array_ops import PLACEHOLDER, placeholder
from minitf.ops.core import CONST, make_op

#: The dtypes tried for a row that takes any dtype on a device.
ANY_DTYPE_EXAMPLES = ("bool", "int32", "int64", "float32", "float64")


@dataclass
class Case:
    """One example of one row: the op built for it and the kernel's input values."""
    row: object
    dtype: str
    op: object
    inputs: list
    label: str



def rows_with_examples(device_type="CPU"):
    """The rows that compute with a backend and run on ``device_type``."""
    return [row for row in all_op_defs()
            if row.kernel_reads == BACKEND and row.examples is not None
            and device_type in row.devices]


def dtypes_of(row, device_type="CPU"):
    names = row.devices[device_type]
    return ANY_DTYPE_EXAMPLES if names is ANY_DTYPE else names


def _elementwise_op(row, dtype, tensors):
    ew = row.elementwise
    out = dtypes.bool if ew.bool_output else dtypes.as_dtype(dtype)
    return make_op(row, tensors, [out], [TensorShape(None)],
                   attrs={"T": dtypes.as_dtype(dtype)})


def cases(row, device_type="CPU", only=None):
    """Every example of ``row`` for every dtype it runs on ``device_type`` (or just
    the dtypes in ``only``), as :class:`Case` objects, labelled ``"Exp float32"``,
    ``"Exp float32 parallel"`` (inputs large enough for the threaded kernels)..."""
    from minitf.kernels.cpu.compile import PARALLEL_MIN_SIZE  # lazy: Numba's start-up cost
    out = []
    seen = {}
    for dtype in dtypes_of(row, device_type):
        if only is not None and dtype not in only:
            continue
        for k, (arrays, build) in enumerate(row.examples(dtype)):
            graph = Graph()
            with graph.as_default():
                fed = [placeholder(dtypes.dtype_of_numpy(a), a.shape) for a in arrays]
                if build is None:
                    op = _elementwise_op(row, dtype, fed)
                else:
                    result = build(*fed)
                    op = result.op if hasattr(result, "op") else result
                    if op.op_def is not row:  # e.g. a Cast after the op: find the op
                        made = [o for o in graph.get_operations() if o.op_def is row]
                        if not made:
                            raise ValueError("example %d of %s for %s built no %s op"
                                             % (k, row.name, dtype, row.name))
                        op = made[-1]
            value_of = dict(zip(fed, arrays))
            inputs = []
            for t in op.inputs:
                if t in value_of:
                    inputs.append(value_of[t])
                elif t.op.op_def is CONST:
                    inputs.append(t.op.get_attr("value"))
                elif t.op.op_def is PLACEHOLDER:
                    raise ValueError("example %d of %s feeds a tensor it did not build"
                                     % (k, row.name))
                else:
                    raise ValueError("example %d of %s reads %s, which is neither fed nor a "
                                     "constant" % (k, row.name, t.name))
            big = any(getattr(x, "size", 0) >= PARALLEL_MIN_SIZE for x in inputs)
            label = "%s %s%s" % (row.name, dtype, " parallel" if big else "")
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:
                label += " #%d" % seen[label]
            out.append(Case(row, dtype, op, inputs, label))
    return out


class _ExampleContext:
    """The kernel context of an example run: a session state of its own (a random
    op starts its stream afresh), no resources, device or step."""
    resources = device = step = None

    def __init__(self):
        self.session_state = {}


def run(case, backend):
    """The outputs of ``case``'s op computed by its row's kernel with ``backend``."""
    compute = case.row.kernel(case.op, backend)
    return compute(_ExampleContext(), [np.array(x, copy=True) if isinstance(x, np.ndarray)
                                       else x for x in case.inputs])
