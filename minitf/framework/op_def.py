"""The op table: everything minitf knows about an op *type*, declared once.

A graph is made of operations (nodes) such as ``mul`` of type ``Mul``. What
a ``Mul`` *is* - which inputs and attrs it has, which devices and dtypes can
run it, the code that computes it, its gradient, whether it keeps state or may
block - is one :class:`OpDef`, declared in the op family module a learner would
open (``tf.multiply`` and its ``Mul`` row live in ``minitf/ops/math_ops.py``)::

    MUL = declare(OpDef(
        "Mul", inputs=("x", "y"), attrs=("T",),
        devices={"CPU": NUMBER_NAMES, "GPU": FLOAT_NAMES},
        kernel=binary_kernel(), kernel_reads=BACKEND,
        elementwise=Elementwise(scalar={"i": _mul, "f": _mul}, reference=np.multiply,
                                fusion="{x} * {y}"),
        gradient=_mul_grad))

(``binary_op`` in ``minitf/ops/elementwise.py`` writes exactly that for
elementwise ops.)

Every other part of minitf *derives* what it needs from this table and keeps
no list of op names of its own: the kernel registry (which device and dtype
run what), the placer (ref inputs, colocation), the executor (blocking ops,
dead values), host<->GPU copies (host-memory inputs), fusion (templates),
autodiff (gradients), warm-up and the parity tests (examples).

An op type nobody declared is an error (:func:`lookup`), never a default: a
missing import must not quietly turn a blocking op into a non-blocking one.

This module is the framework layer: it holds the data structure and the table,
and imports nothing from the rest of minitf. The kernel functions named in a
row receive the device's *backend* (``minitf.kernels.cpu``, ``.cuda`` or
``.reference``) as an argument, so op families never import kernel code.
"""

import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

__all__ = ["OpDef", "Elementwise", "declare", "lookup", "all_op_defs", "NOT_DIFFERENTIABLE",
           "ANY", "ALL", "PASS", "CONTROLS", "DEAD", "HOST", "BACKEND", "NOTHING", "ANY_DTYPE",
           "ENTERS", "EXITS", "NEXT_ITERATION"]

#: ``dead_when`` values: an op is skipped (its outputs are dead, see
#: runtime/deadness.py) when ANY input is dead (most ops), when ALL are
#: (``Merge``), never (PASS: ``_Send`` runs to pass the news on), or only when a
#: control input is dead (CONTROLS: a dead data input reaches the kernel as
#: DEAD; a while loop's ``StackPushV2`` saves "this branch did not run").
ANY, ALL, PASS, CONTROLS = "any", "all", "pass", "controls"


class _Dead:
    __slots__ = ()

    def __repr__(self):
        return "DEAD"


#: The value of a tensor whose op did not run because its branch of a
#: ``tf.cond`` was not taken; ``Switch`` (``makes_dead``) outputs it.
DEAD = _Dead()

#: ``kernel_reads`` values. HOST: the kernel is numpy code on host arrays (on a
#: real GPU the runtime copies its inputs to the host and its outputs back).
#: BACKEND: the kernel computes with the backend it is given (the device's own
#: memory stays where it is). NOTHING: the kernel only routes values and never
#: looks inside them (``Switch``, ``Merge``), so it runs on any memory as is.
HOST, BACKEND, NOTHING = "host", "backend", "nothing"

#: In ``devices``: this device type runs the op whatever its dtype.
ANY_DTYPE = None

#: ``frame_move`` values: where a while loop's routing ops send their output
#: (see runtime/frames.py). ENTERS: into the loop's frame (``Enter``);
#: EXITS: out to the enclosing frame (``Exit``); NEXT_ITERATION: to the next
#: iteration of the same frame (``NextIteration``). Every other op's outputs
#: stay in the frame and iteration it ran in.
ENTERS, EXITS, NEXT_ITERATION = "enters", "exits", "next_iteration"


class _NotDifferentiable:
    __slots__ = ()

    def __repr__(self):
        return "NOT_DIFFERENTIABLE"


#: ``gradient=NOT_DIFFERENTIABLE``: no gradient flows through this op (TF's
#: ``tf.NotDifferentiable``), as opposed to ``None``: nobody wrote one yet,
#: which makes ``tf.gradients`` through it a LookupError.
NOT_DIFFERENTIABLE = _NotDifferentiable()


@dataclass(frozen=True, eq=False)
class Elementwise:
    """How an elementwise op computes one element, for each backend.

    * ``scalar``: ``{dtype kind: function}`` (kinds ``"b"`` bool, ``"i"`` ints,
      ``"f"`` floats), plain Python of one or two numbers. The CPU backend
      compiles it into a numpy ufunc with Numba; the same function, or
      ``cuda`` when given, becomes the body of the CUDA kernel.
    * ``vector_math``: the name of a routine in
      ``minitf/kernels/cpu/vector_math.py`` (``"exp"``) that the CPU backend
      uses for floats instead, because its loop vectorizes.
    * ``cuda``: a CUDA-safe version of the float function (the simulator runs
      it as Python, so it must not raise where a GPU returns NaN or inf).
    * ``reference``: the numpy function the tests compare against.
    * ``fusion``: the expression the fusion pass writes into a fused loop
      (``"{x} + {y}"``), or None if the op never fuses.
    * ``bool_output``: comparisons and logical ops give bool whatever ``T`` is.
    * ``domain``: ``[(lo, hi)]`` per input, where the op is defined for every
      dtype it takes (``Sqrt``: positive numbers; an integer divisor: not 0);
      examples and tests draw their inputs from it.
    """
    scalar: Mapping[str, Callable]
    reference: Callable
    vector_math: Optional[str] = None
    cuda: Optional[Callable] = None
    fusion: Optional[str] = None
    bool_output: bool = False
    domain: tuple = ()


@dataclass(frozen=True, eq=False)
class OpDef:
    """One op type (see the module docstring). Fields:

    graph building
      ``inputs``/``attrs``: the names TF gives them (``"*values"`` is a list
      input); ``gradient``: ``fn(op, *output_grads) -> input grads``,
      :data:`NOT_DIFFERENTIABLE`, or None (not written yet).
    flags
      ``ref_inputs``: input slots that take a variable *reference* (the placer
      keeps the op on the variable's device); ``stateful``: reads or writes
      state across steps, so it is never folded or cached; ``blocking``: may
      wait on something outside the step (a queue, a peer), so the executor
      gives it its own thread; ``dead_when``/``makes_dead``: tf.cond's dead
      values (see runtime/deadness.py); ``resource``: the op makes a resource
      (a variable, a queue...) whose empty ``container`` attr is filled from
      ``tf.container``; ``frame_move``: ENTERS, EXITS or NEXT_ITERATION for
      the routing ops of ``tf.while_loop``; ``expensive``: the kernel does
      much arithmetic per element it reads (a product, a convolution, a pool),
      so with big inputs it pays to run it on a pool thread beside other
      ready ops of its device, as TF's executor does (runtime/executor.py).
    kernels
      ``devices``: ``{device type: dtype names or ANY_DTYPE}`` - the kernel
      registry is built from this, keyed by (op, device type, dtype);
      ``dtype_attr``: the attr whose dtype selects the kernel (``T``, else
      ``dtype``); ``kernel(op, backend) -> compute(ctx, inputs) -> outputs``;
      ``kernel_reads``: HOST, BACKEND or NOTHING; ``host_memory_inputs`` /
      ``host_memory_outputs``: shapes and axes a GPU kernel reads on the host
      (TF's ``HostMemory``), so they are never copied to the GPU; ``examples``:
      ``fn(dtype_name) -> [(inputs, attrs)]`` small cases for warm-up and the
      parity tests (BACKEND kernels); ``async_kernel``: ``fn(op) -> begin(ctx,
      inputs, finish) -> what``, a blocking op's way to wait without a thread
      (TF's ``AsyncOpKernel``): ``begin`` returns None when it cannot (the
      executor then runs ``kernel`` on the blocking pool), else what it waits
      for (named if the step times out), and calls ``finish(outputs, error)``
      once, from whichever thread completes it.
    elementwise ops
      ``elementwise``: an :class:`Elementwise`.
    TF's file formats
      ``to_tf``: ``fn(op, node_def) -> [NodeDef, ...]`` for an op minitf builds
      differently from TF (a random op keeping its range in attrs): the nodes
      TF builds for it, written into GraphDefs instead of ``node_def``, so that
      real TF can import and run the graph (see minitf/framework/graph_def.py).
    """
    name: str
    inputs: tuple = ()
    attrs: tuple = ()
    gradient: object = None
    ref_inputs: tuple = ()
    stateful: bool = False
    blocking: bool = False
    dead_when: str = ANY
    makes_dead: bool = False
    resource: bool = False
    frame_move: Optional[str] = None
    expensive: bool = False
    devices: Mapping[str, object] = field(default_factory=lambda: {"CPU": ANY_DTYPE})
    dtype_attr: Optional[str] = None
    kernel: Optional[Callable] = None
    kernel_reads: str = HOST
    host_memory_inputs: tuple = ()
    host_memory_outputs: bool = False
    examples: Optional[Callable] = None
    async_kernel: Optional[Callable] = None
    elementwise: Optional[Elementwise] = None
    to_tf: Optional[Callable] = None

    def __post_init__(self):
        if self.dead_when not in (ANY, ALL, PASS, CONTROLS):
            raise ValueError("%s: dead_when must be 'any', 'all', 'pass' or 'controls', not %r"
                             % (self.name, self.dead_when))
        if self.frame_move not in (None, ENTERS, EXITS, NEXT_ITERATION):
            raise ValueError("%s: frame_move must be ENTERS, EXITS or NEXT_ITERATION, not %r"
                             % (self.name, self.frame_move))
        if self.kernel_reads not in (HOST, BACKEND, NOTHING):
            raise ValueError("%s: kernel_reads must be 'host', 'backend' or 'nothing', not %r"
                             % (self.name, self.kernel_reads))
        if self.kernel is None and self.devices:
            raise ValueError("%s declares devices %s but no kernel"
                             % (self.name, sorted(self.devices)))
        for device_type, names in self.devices.items():
            if names is not ANY_DTYPE and not isinstance(names, (tuple, frozenset)):
                raise TypeError("%s: the dtypes of %s must be a tuple of names or ANY_DTYPE"
                                % (self.name, device_type))

    @property
    def differentiable(self):
        return self.gradient is not NOT_DIFFERENTIABLE

    def kernel_dtype(self, attrs):
        """The dtype name that selects this op's kernel, or None (any kernel fits)."""
        if self.dtype_attr is not None:
            dt = attrs.get(self.dtype_attr)
        else:
            dt = attrs.get("T", attrs.get("dtype"))
        return None if dt is None else dt.base_dtype.name

    def __repr__(self):
        return "<OpDef %s>" % self.name


_TABLE = {}
_lock = threading.Lock()
_sealed = []   # set once the kernel registry has been built from the table


def declare(op_def):
    """Add ``op_def`` to the table and return it. Declaring a name twice is an
    error, and so is declaring one after the kernel registry was built (its
    kernels would silently be missing)."""
    with _lock:
        if op_def.name in _TABLE:
            raise ValueError("op type %r is declared twice (%s)" % (op_def.name, op_def))
        if _sealed:
            raise RuntimeError("op type %r was declared after the kernel registry was built "
                               "from the op table; declare ops at import time of minitf.ops"
                               % op_def.name)
        _TABLE[op_def.name] = op_def
    return op_def


def lookup(op_type):
    """The OpDef of ``op_type``; a KeyError that says what to do if there is none."""
    op_def = _TABLE.get(op_type)
    if op_def is None:
        raise KeyError("minitf has no op type %r: it was never declared (is the module that "
                       "declares it imported? every op family lives in minitf/ops/)"
                       % (op_type,))
    return op_def


def all_op_defs():
    """Every declared OpDef, in declaration order."""
    with _lock:
        return list(_TABLE.values())


def seal():
    """Called by the kernel registry once it has read the table."""
    with _lock:
        _sealed.append(True)
