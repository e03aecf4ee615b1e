"""The fusion pass: a chain of elementwise ops becomes one compiled loop.

``tf.reduce_sum(tf.nn.relu(a * 2 + 1) - b)`` is four ops. Run one by one,
each reads its inputs from memory and writes a full-size temporary back:
four trips through 40 MB for 10M floats. Fused, one loop reads ``a`` and
``b`` once and keeps everything else in registers::

    for i in range(n):      # on each thread, its part of the arrays
        t0 = a[i] * s0                       # Mul   (s0 = 2, a 0-d constant)
        t1 = t0 + s1                         # add   (s1 = 1)
        t2 = t1 if t1 > 0 or t1 != t1 else 0 # Relu  (NaN stays NaN)
        t3 = t2 - b[i]                       # Sub
        acc += t3                            # the trailing Sum

What fuses: float32/float64 elementwise ops whose row of the op table has a
fusion template (``Elementwise.fusion``: ``"{x} + {y}"``) and whose result is
read by exactly one other op of the chain (and is not fetched), on one CPU
device, without control dependencies, optionally ending in a reduction over
all axes (Sum/Mean/Max/Min: :data:`REDUCTIONS`, by the backend's reduction
kind). At run time the fused kernel needs its array inputs to have one shape
(0-d/one-element inputs are scalars); anything else (broadcasting, a partial
reduction) falls back to running the original ops one by one, so fusion never
changes a result. A chain whose inputs' static shapes already differ (a bias
added to a batch) is not fused at all: it would always fall back.

Large arrays (from ``MINITF_PARALLEL_MIN_SIZE`` elements, 8M by default) are
cut into one part per core, and the loop runs on every part at once
(:mod:`minitf.kernels.split` says why not with Numba's ``prange``); a
reduction's parts each return their sum (or max, min), which the caller adds.

The loop is generated as Python **source** and imported through
``minitf/kernels/generated.py`` (folder ``minitf_fused`` in the Numba cache
directory), so ``cache=True`` lets Numba's disk cache serve it to the next
process. Open the file to see exactly what a fused kernel does.

Switch it off with ``ConfigProto(graph_options=GraphOptions(
fuse_elementwise=False))``, ``OptimizerOptions(opt_level=L0)`` or
``MINITF_FUSION=0`` to compare.
"""

import math
import os
import threading

import numpy as np

from minitf.kernels import split, threads
from minitf.kernels.generated import load_source
from minitf.ops import reduction_ops
from minitf.runtime.node import Node

#: The reductions a fused chain may end in, with the Python each combines with.
REDUCTIONS = {reduction_ops.SUM: "sum", reduction_ops.MEAN: "mean",
              reduction_ops.MAX: "max", reduction_ops.MIN: "min"}
DTYPES = ("float32", "float64")
_SUFFIX = {"float32": "f32", "float64": "f64"}


def enabled(flag=None):
    """Fusion is on unless the session's config or ``MINITF_FUSION=0`` says off."""
    if flag is False:
        return False
    return os.environ.get("MINITF_FUSION", "1") not in ("0", "false", "off", "no")


def _template(op):
    row = op.op_def
    ew = row.elementwise if row is not None else None
    return ew.fusion if ew is not None else None


def _dtype(op):
    t = op._attrs.get("T")
    return t.base_dtype.name if t is not None else None


def _fusible(s):
    op = s.op
    return (s.members is None and not s.folded and not getattr(op, "is_copy", False)
            and s.device.device_type == "CPU" and not s.blocking
            and _template(op) is not None and _dtype(op) in DTYPES
            and not s.control_inputs)


def _reduction(s):
    op = s.op
    return (s.members is None and not s.folded and not getattr(op, "is_copy", False)
            and s.device.device_type == "CPU" and op.op_def in REDUCTIONS
            and _dtype(op) in DTYPES and not s.control_inputs)


def _operands(s):
    """How many of node ``s``'s inputs are computed on (a reduction's axes are not)."""
    return 1 if s.op.op_def in REDUCTIONS else len(s.inputs)


def readers(nodes, fetch_slots):
    """``(uses, waited_for)``: how many times each slot is read (a fetch counts
    twice: its value must exist), and the ops that some node waits for. An
    intermediate value can live inside a fused kernel only if it is read once
    and its op is not waited for (also used by remapper.py)."""
    uses = {}
    for s in nodes:
        for slot in s.inputs:
            uses[slot] = uses.get(slot, 0) + 1
    for slot in fetch_slots:
        uses[slot] = uses.get(slot, 0) + 2
    return uses, {c for s in nodes for c in s.control_inputs}


def fuse_nodes(nodes, fetch_slots, feeds):
    """Return ``nodes`` with every fusible chain replaced by one fused node."""
    uses, control_targets = readers(nodes, fetch_slots)
    producer = {}
    for i, s in enumerate(nodes):
        for k in range(s.n_out):
            producer[s.out_base + k] = i
    # group[i] = index of the step whose fused kernel will compute step i
    group = list(range(len(nodes)))
    for i, s in enumerate(nodes):
        tail = _fusible(s) or _reduction(s)
        if not tail:
            continue
        for slot in s.inputs[:_operands(s)]:
            j = producer.get(slot)
            if j is None:
                continue
            p = nodes[j]
            if (_fusible(p) and uses.get(slot) == 1 and p.device is s.device
                    and p.op not in control_targets and _dtype(p.op) == _dtype(s.op)):
                # p's group joins i's group
                for k in range(len(group)):
                    if group[k] == j:
                        group[k] = i
    members = {}
    for i, g in enumerate(group):
        members.setdefault(g, []).append(i)
    out = []
    for i, s in enumerate(nodes):
        g = group[i]
        if g != i:
            continue          # computed by a later fused node
        idx = members[i]
        if len(idx) == 1:
            out.append(s)
            continue
        chain = [nodes[k] for k in idx]
        if _always_falls_back(chain):
            out.extend(chain)
            continue
        out.append(_fused_node(chain))
    return out


def _always_falls_back(chain):
    """Whether the chain's outside inputs have two different static shapes
    (neither a single element): a broadcast, such as a bias added to a batch,
    which the fused loop never takes (it would run the ops one by one through
    its fallback, slower than leaving them unfused)."""
    inside = {s.out_base for s in chain}
    shapes = set()
    for s in chain:
        for slot, t in zip(s.inputs[:_operands(s)], s.op._inputs):
            if slot in inside:
                continue
            shape = t.shape
            if shape.is_fully_defined() and shape.num_elements() != 1:
                shapes.add(tuple(shape.as_list()))
    return len(shapes) > 1


def _fused_node(chain):
    tail = chain[-1]
    produced = {}
    for m, s in enumerate(chain):
        produced[s.out_base] = m
    external = []        # slots read from outside the chain
    for s in chain:
        for slot in s.inputs[:_operands(s)]:
            if slot not in produced and slot not in external:
                external.append(slot)
    axes_slot = tail.inputs[1] if tail.op.op_def in REDUCTIONS else None
    inputs = list(external) + ([axes_slot] if axes_slot is not None else [])
    kernel = FusedKernel(chain, external, produced)
    node = Node(tail.op, kernel.compute, tail.device, inputs, (), tail.out_base, False)
    node.control_inputs = ()           # (no member waits for anything)
    node.members = tuple(s.op for s in chain)
    return node


class FusedKernel:
    """The compute function of a fused node, with its fallback."""

    def __init__(self, chain, external, produced):
        self.chain = chain
        self.external = external
        self.dtype = np.dtype(_dtype(chain[-1].op))
        self.reduction = REDUCTIONS.get(chain[-1].op.op_def)
        self.keep_dims = chain[-1].op.get_attr("keep_dims") if self.reduction else False
        ew = chain[:-1] if self.reduction else chain
        # the program: for each elementwise member, (op type, operand refs); a ref
        # is ("in", external index) or ("t", member index)
        self.program = []
        for s in ew:
            refs = []
            for slot in s.inputs:
                refs.append(("t", produced[slot]) if slot in produced
                            else ("in", external.index(slot)))
            self.program.append((s.op.type, _template(s.op), tuple(refs)))
        self.label = "+".join(s.op.type for s in chain)
        self._modules = {}
        self._lock = threading.Lock()
        self.last_shapes = {}
        from minitf.kernels.cpu import compile as cpu_compile  # lazy: imports Numba
        self._parallel_min = cpu_compile.PARALLEL_MIN_SIZE

    # -- running ------------------------------------------------------------------------------
    def compute(self, ctx, inputs):
        # Called for every step, on arrays as small as an LSTM's 64x128 gates:
        # the checks below cost about as much as the loop itself, so keep them lean.
        values = inputs[:len(self.external)]
        dtype = self.dtype
        shape = None
        scalar = []
        for v in values:
            if v.__class__ is not np.ndarray or v.dtype != dtype:
                return self._fallback(ctx, inputs)
            if v.ndim == 0:
                scalar.append(True)
                continue
            scalar.append(False)
            if shape is None:
                shape = v.shape
            elif v.shape != shape:
                return self._fallback(ctx, inputs)
        if shape is None:                   # all scalars: nothing to gain
            return self._fallback(ctx, inputs)
        if self.reduction:
            nd = len(shape)
            axes = inputs[-1]
            if axes.__class__ is not np.ndarray:
                axes = np.asarray(axes)
            if len({int(a) % nd for a in axes.reshape(-1)}) != nd:
                return self._fallback(ctx, inputs)
        if ctx.step.trace is not None:
            # what the trace reports for the members' outputs (never materialised)
            self.last_shapes = {s.op: shape for s in self.chain[:len(self.program)]}
        return self._run(values, scalar, shape)

    def _fallback(self, ctx, inputs):
        vals = {}
        ext = inputs[:len(self.external)]
        for s in self.chain:
            args = []
            for slot in s.inputs:
                if slot in vals:
                    args.append(vals[slot])
                elif slot in self.external:
                    args.append(ext[self.external.index(slot)])
                else:
                    args.append(inputs[-1])      # the reduction's axes
            outs = s.compute(ctx, args)
            vals[s.out_base] = outs[0]
        self.last_shapes = {s.op: np.shape(vals[s.out_base]) for s in self.chain}
        return [vals[self.chain[-1].out_base]]

    def _run(self, values, scalar, shape):
        key = tuple(scalar)
        module = self._modules.get(key)
        if module is None:
            module = self._module(key)
        n = math.prod(shape)
        args = []
        for v, is_scalar in zip(values, scalar):
            if is_scalar:
                args.append(v[()])
            else:
                if not v.flags.c_contiguous:
                    v = np.ascontiguousarray(v)
                args.append(v.reshape(-1))
        parts = split.bounds(n, threads.kernel_parts() if n >= self._parallel_min else 1)
        if self.reduction:
            partial = split.run(module.reduce, [_cut(args, scalar, lo, hi) for lo, hi in parts])
            if self.reduction in ("sum", "mean"):
                r = math.fsum(partial)            # Python floats: no overflow warning
                if self.reduction == "mean":
                    r = r / n
            else:
                r = max(partial) if self.reduction == "max" else min(partial)
                if any(p != p for p in partial):
                    r = np.nan
            with np.errstate(over="ignore"):  # a float64 sum beyond float32's range is inf
                out = np.asarray(r).astype(self.dtype)
            if self.keep_dims:
                out = out.reshape((1,) * len(shape))
            return [out]
        out = np.empty(shape, self.dtype)
        flat = out.reshape(-1)
        split.run(module.elementwise, [[flat[lo:hi]] + _cut(args, scalar, lo, hi)
                                       for lo, hi in parts])
        return [out]

    # -- code generation ------------------------------------------------------------------------
    def _module(self, scalar):
        module = self._modules.get(scalar)
        if module is None:
            with self._lock:
                module = self._modules.get(scalar)
                if module is None:
                    module = self._modules[scalar] = load_source(
                        self.source(scalar), "minitf_fused", "minitf_fused")
        return module

    def source(self, scalar):
        """The Python source of this chain's kernels, for these scalar inputs."""
        return generate_source(self.program, self.dtype.name, scalar, self.reduction)


def _body(program, scalar, indent):
    lines = []
    for j, is_scalar in enumerate(scalar):
        lines.append("%sx%d = %s" % (indent, j, "s%d" % j if is_scalar else "a%d[i]" % j))
    for m, (op_type, template, refs) in enumerate(program):
        names = ["x%d" % r[1] if r[0] == "in" else "t%d" % r[1] for r in refs]
        expr = template.format(x=names[0], y=names[1] if len(names) > 1 else None)
        lines.append("%st%d = %s    # %s" % (indent, m, expr, op_type))
    return lines, "t%d" % (len(program) - 1)


def _cut(args, scalar, lo, hi):
    """The kernel's arguments for elements ``lo:hi``: array inputs sliced, scalars as they are."""
    return [a if is_scalar else a[lo:hi] for a, is_scalar in zip(args, scalar)]


def generate_source(program, dtype, scalar, reduction):
    """Source of a module with one kernel for one fused chain: ``elementwise(out,
    inputs...)``, which writes every element of ``out``, or ``reduce(inputs...)``,
    which returns the chain's reduction over all of its inputs' elements.

    Both are serial loops (``nogil``): the caller runs one per part of the
    arrays on several threads at once (:mod:`minitf.kernels.split`) and
    combines the parts' sums, maxima or minima itself. The loop is over
    ``range(a.shape[0])`` of the arrays it is given, a form LLVM vectorizes
    (8 or 16 lanes)."""
    nb = dtype
    arg_names = ["s%d" % j if s else "a%d" % j for j, s in enumerate(scalar)]
    arg_types = ["numba.%s" % nb if s else "RO" for s in scalar]
    lines = [
        '"""A fused minitf kernel, generated by minitf/runtime/fusion.py. Do not edit."""',
        "",
        "import numba",
        "import numpy as np",
        "",
        "# exp/log/tanh/sigmoid as vectorizable arithmetic (minitf/kernels/cpu/vector_math.py)",
        "from minitf.kernels.cpu.vector_math import (exp_%s as exp_, log_%s as log_," % (
            _SUFFIX[nb], _SUFFIX[nb]),
        "    tanh_%s as tanh_, sigmoid_%s as sigmoid_)" % (_SUFFIX[nb], _SUFFIX[nb]),
        "",
        "RO = numba.types.Array(numba.%s, 1, 'C', readonly=True)" % nb,
        "zero = np.%s(0)" % nb,
        "one = np.%s(1)" % nb,
        "OPTIONS = dict(cache=True, nogil=True, error_model='numpy', fastmath={'reassoc'})",
        "",
    ]
    if reduction is None:
        sig = "numba.void(numba.%s[::1], %s)" % (nb, ", ".join(arg_types))
        body, last = _body(program, scalar, " " * 8)
        lines += ["", "@numba.njit(%s, **OPTIONS)" % sig,
                  "def elementwise(out, %s):" % ", ".join(arg_names),
                  "    for i in range(out.shape[0]):"] + body + \
                 ["        out[i] = %s" % last, ""]
    else:
        acc_t = "float64" if reduction in ("sum", "mean") else nb
        sig = "numba.%s(%s)" % (acc_t, ", ".join(arg_types))
        init = {"sum": "0.0", "mean": "0.0", "max": "-np.inf", "min": "np.inf"}[reduction]
        body, last = _body(program, scalar, " " * 8)
        start = ["    acc = numba.%s(%s)" % (acc_t, init)]
        if reduction in ("sum", "mean"):
            combine = ["        acc += np.float64(%s)" % last]
            result = "acc"
        else:
            start.append("    nan = False")
            # select, not branch, so that the loop vectorizes; NaN wins, as in TF
            cmp = ">" if reduction == "max" else "<"
            combine = ["        v = %s" % last,
                       "        acc = v if v %s acc else acc" % cmp,
                       "        nan = nan or v != v"]
            result = "np.%s(np.nan) if nan else acc" % nb
        first = [a for a, sc in zip(arg_names, scalar) if not sc][0]
        lines += ["", "@numba.njit(%s, **OPTIONS)" % sig,
                  "def reduce(%s):" % ", ".join(arg_names)] + start + \
                 ["    for i in range(%s.shape[0]):" % first] + body + combine + \
                 ["    return %s" % result, ""]
    return "\n".join(lines) + "\n"
