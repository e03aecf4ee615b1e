"""The executor: run one step of a placed graph.

A :class:`Plan` is built once per (fetches, feeds, targets) signature and
reused by every ``sess.run`` with that signature:

1. **prune** - keep only the ops the fetches and targets need, stopping at
   fed tensors (a fed tensor's producer does not run);
2. **place** - ask the placer for each op's device (sticky across steps);
3. **wire**  - give every tensor a *slot* in a flat list of values and
   record, for each op, which slots it reads and where its outputs go;
4. **bind**  - look up each op's kernel for its device and build its
   ``compute(ctx, inputs)`` function.

Running a plan then is a loop over ``steps``. Two ways:

* **inline**: everything on one device and nothing that can block -> run
  the ops in creation order (always a topological order) in the caller's
  thread. This is the common case and costs a few microseconds per op.
* **dataflow**: several devices, or ops that may block (queues, receives)
  -> an op starts as soon as its inputs and control inputs are done; ops run
  on the session's thread pool (one pool, ``inter_op_parallelism_threads``
  wide) so ops on different devices overlap, and each blocking op gets a
  thread of its own so it can never starve the others.

Errors from a kernel are re-raised with the op attached (``e.op``) and the
node named at the end of the message, as TF does; the first error cancels
the rest of the step.

An op whose input is *dead* (the untaken branch of a ``tf.cond``, see
``deadness.py``) is not run: its outputs are marked dead instead.
"""

import queue
import threading
import time

import numpy as np

from minitf.framework import errors
from minitf.kernels import registry
from minitf.ops.op_def import get_op_def
from minitf.runtime.config import (DeviceStepStats, NodeExecStats, NodeOutput,
                                   TensorDescription)
from minitf.runtime.deadness import ALL, ANY, DEAD
from minitf.runtime.resource_manager import VariableResource


DEADLINE_GRACE = 1.0  # seconds
_DEAD_SOURCES = frozenset(["Switch", "RefSwitch", "_Recv"])


class StepState:
    """Per-step signals shared by all ops of one ``run``: a cancellation flag
    and an absolute deadline (``time.monotonic()``), both watched by
    blocking kernels."""

    __slots__ = ("cancelled", "deadline", "step_id", "extra")

    def __init__(self, deadline=None, step_id=0):
        self.cancelled = threading.Event()
        self.deadline = deadline
        self.step_id = step_id
        self.extra = {}

    def time_left(self):
        return None if self.deadline is None else self.deadline - time.monotonic()


class KernelContext:
    """What a kernel may use besides its inputs."""

    __slots__ = ("resources", "device", "session_state", "step")

    def __init__(self, resources, device, session_state, step):
        self.resources = resources
        self.device = device
        self.session_state = session_state
        self.step = step


class _Step:
    """One op in a plan: its kernel and where its inputs and outputs live.

    ``members`` is None for an ordinary op; a fused step (fusion.py) lists the
    ops it replaced. ``allocator`` is the GPU allocator its outputs are
    charged to (None on a CPU or for host-memory outputs)."""

    __slots__ = ("op", "compute", "device", "inputs", "deref", "out_base", "n_out",
                 "successors", "n_preds", "blocking", "members", "allocator",
                 "control_preds", "dead_when")

    def __init__(self, op, compute, device, inputs, deref, out_base, blocking):
        self.op = op
        self.compute = compute
        self.device = device
        self.inputs = inputs
        self.deref = deref
        self.out_base = out_base
        self.n_out = len(op._outputs)
        self.successors = []
        self.n_preds = 0
        self.blocking = blocking
        self.members = None
        self.allocator = None
        self.control_preds = ()
        self.dead_when = get_op_def(op.type).dead_when


def read_ref(value):
    """A variable reference becomes its current value (a plain array passes)."""
    if isinstance(value, VariableResource):
        return value.read()
    return value


def _fetched(values):
    """The fetched values; a dead one (an untaken cond branch) is an error, as in TF."""
    for i, v in enumerate(values):
        if v is DEAD:
            raise errors.InvalidArgumentError(
                None, None, "Retval[%d] does not have value: it is on the branch of a "
                "tf.cond that did not run this step" % i)
    return [read_ref(v) for v in values]


def annotate(exc, op):
    """Attach the failing op to an error, TF style."""
    if isinstance(exc, errors.OpError):
        if exc.op is None:
            exc._op = op
            exc._node_def = op.node_def
            exc._message = "%s\n\t [[{{node %s}}]]" % (exc._message, op.name)
            exc.args = (exc._message,)
        return exc
    err = errors.InternalError(op.node_def, op, "%s in op %s (%s): %s\n\t [[{{node %s}}]]" % (
        type(exc).__name__, op.name, op.type, exc, op.name))
    err.__cause__ = exc
    return err


class Plan:
    """A pruned, placed and wired subgraph, ready to run many times."""

    def __init__(self, graph, fetches, targets, feeds, placer, contexts, pool_factory,
                 fuse=None):
        self.graph = graph
        self.feeds = list(feeds)
        self._pool_factory = pool_factory
        fed = set(self.feeds)
        needed = prune(fetches, targets, fed)
        placer.place(needed)
        order = sorted(needed, key=lambda o: o._id)

        slot_of = {}
        n = 0
        for t in self.feeds:
            slot_of[t] = n
            n += 1
        self.steps = []
        for op in order:
            out_base = n
            for t in op._outputs:
                if t not in fed:
                    slot_of[t] = n
                n += 1
            device = placer.assigned[op]
            kdef = registry.find(op.type, device.device_type, registry.kernel_dtype(op))
            if kdef is None:
                raise errors.InternalError(op.node_def, op, "No %s kernel for %s on %s"
                                           % (op.type, registry.kernel_dtype(op), device.name))
            try:
                compute = kdef.builder(op, device)
            except errors.OpError as e:
                raise annotate(e, op)
            op_def = get_op_def(op.type)
            refs = set(op_def.ref_inputs)
            inputs = [slot_of[t] for t in op._inputs]
            deref = tuple(i for i, t in enumerate(op._inputs)
                          if t.dtype.is_ref_dtype and i not in refs)
            self.steps.append(_Step(op, compute, device, inputs, deref, out_base,
                                    op_def.blocking))
        fetch_slots = [slot_of[t] for t in fetches]
        # Host<->GPU copies on every edge between memories (see copies.py), then
        # the fusion pass (see fusion.py); both only rewrite steps and slots.
        devices = placer.devices
        if isinstance(devices, dict):
            devices = devices.values()
        if any(d.device_type == "GPU" for d in devices):
            from minitf.runtime import copies
            n, fetch_slots, self.memory = copies.insert_copies(self.steps, fetch_slots, n,
                                                               self.feeds)
        else:
            self.memory = None
        if fuse is None or fuse:
            from minitf.runtime import fusion
            if fusion.enabled(fuse):
                self.steps = fusion.fuse_steps(self.steps, fetch_slots, self.feeds)
        producer = {}
        index_of = {}
        for i, s in enumerate(self.steps):
            for k in range(s.n_out):
                producer[s.out_base + k] = i
            for op in getattr(s, "members", None) or (s.op,):
                index_of[op] = i
        for i, s in enumerate(self.steps):
            preds = {producer[j] for j in s.inputs if j in producer}
            controls = set()
            for op in getattr(s, "members", None) or (s.op,):
                controls.update(index_of[c] for c in getattr(op, "_control_inputs", ())
                                if c in index_of)
            controls.discard(i)
            s.control_preds = tuple(sorted(controls))
            preds |= controls
            preds.discard(i)
            s.n_preds = len(preds)
            for p in preds:
                self.steps[p].successors.append(i)
        self.n_slots = n
        self.fetch_slots = fetch_slots
        # Only a Switch makes dead values (and a _Recv may bring one from another
        # task): plans without them skip the checks, which cost ~1 us per op.
        self.may_be_dead = any(op.type in _DEAD_SOURCES for s in self.steps
                               for op in (getattr(s, "members", None) or (s.op,)))
        self.devices = sorted({s.device.name for s in self.steps})
        self.contexts = contexts  # device name -> (ResourceManager, session_state)
        self.inline = len(self.devices) <= 1 and not any(s.blocking for s in self.steps)
        self.placement = {op.name: s.device.name for s in self.steps
                          for op in (getattr(s, "members", None) or (s.op,))
                          if not getattr(op, "is_copy", False)}

    # -- running ---------------------------------------------------------------------------
    def run(self, feed_values, step, trace=None):
        """Run one step. ``feed_values`` are in ``self.feeds`` order. Returns
        the fetched values (refs already read) in fetch order."""
        vals = [None] * self.n_slots
        vals[:len(feed_values)] = feed_values
        if trace is not None:
            step.extra.setdefault("trace", trace)
        if self.memory is not None:
            step.extra["memory"] = self.memory.start(trace)
        try:
            if self.inline:
                self._run_inline(vals, step, trace)
            else:
                self._run_dataflow(vals, step, trace)
            return _fetched([vals[i] for i in self.fetch_slots])
        finally:
            if self.memory is not None:
                step.extra["memory"].finish()

    def _context(self, device, step):
        resources, session_state = self.contexts[device.name]
        return KernelContext(resources, device, session_state, step)

    def _run_one(self, i, vals, ctx, trace, dead):
        s = self.steps[i]
        ins = [vals[j] for j in s.inputs]
        if self.may_be_dead and self._is_dead(s, ins, dead):
            dead[i] = True
            if s.n_out:
                vals[s.out_base:s.out_base + s.n_out] = [DEAD] * s.n_out
            return
        try:
            for j in s.deref:
                value = ins[j]
                if isinstance(value, VariableResource):
                    # Remember which version of the variable this step read, so
                    # an update later in the step can tell how stale it is.
                    ctx.step.extra.setdefault("read_versions", {}).setdefault(
                        value, value.version)
                    ins[j] = value.read()
            if trace is None:
                outs = s.compute(ctx, ins)
                if self.memory is not None:
                    ctx.step.extra["memory"].after(s, outs)
            else:
                start = time.time_ns() // 1000
                outs = s.compute(ctx, ins)
                used = None
                if self.memory is not None:
                    used = ctx.step.extra["memory"].after(s, outs)
                trace.record(s, start, time.time_ns() // 1000, outs, used)
        except Exception as e:  # noqa: BLE001 - every kernel failure is reported with its op
            raise annotate(e, s.op) from None
        if s.n_out:
            vals[s.out_base:s.out_base + s.n_out] = outs

    @staticmethod
    def _is_dead(s, ins, dead):
        """Whether step ``s`` is skipped this run: see deadness.py."""
        if s.dead_when == ANY:
            return any(v is DEAD for v in ins) or any(dead[p] for p in s.control_preds)
        if s.dead_when == ALL:
            return all(v is DEAD for v in ins) or any(dead[p] for p in s.control_preds)
        return False

    def _run_inline(self, vals, step, trace):
        ctx = self._context(self.steps[0].device, step) if self.steps else None
        run_one = self._run_one
        deadline = step.deadline
        dead = [False] * len(self.steps)
        for i, s in enumerate(self.steps):
            run_one(i, vals, ctx, trace, dead)
            if step.cancelled.is_set():
                raise errors.CancelledError(None, None, "Step was cancelled")
            if deadline is not None and time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Timed out after running %s" % s.op.name)

    def _run_dataflow(self, vals, step, trace):
        pool, blocking_pool = self._pool_factory()
        done = queue.SimpleQueue()
        contexts = {name: self._context(s.device, step)
                    for name, s in {s.device.name: s for s in self.steps}.items()}
        pending = [s.n_preds for s in self.steps]
        remaining = len(self.steps)
        dead = [False] * len(self.steps)

        def work(i):
            s = self.steps[i]
            try:
                if step.cancelled.is_set():
                    raise errors.CancelledError(None, None, "Step was cancelled")
                if step.deadline is not None and time.monotonic() > step.deadline:
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out before %s could start" % s.op.name)
                self._run_one(i, vals, contexts[s.device.name], trace, dead)
                done.put((i, None))
            except BaseException as e:  # noqa: BLE001 - handed to the scheduler thread
                done.put((i, e))

        def submit(i):
            (blocking_pool if self.steps[i].blocking else pool).submit(work, i)

        for i, s in enumerate(self.steps):
            if s.n_preds == 0:
                submit(i)
        while remaining:
            # Blocking ops watch the deadline themselves and fail cleanly (a
            # dequeue puts back what it took). The scheduler only gives up on
            # its own if an op ignores the deadline for DEADLINE_GRACE more.
            timeout = step.time_left()
            try:
                if timeout is None:
                    i, exc = done.get()
                else:
                    i, exc = done.get(timeout=max(timeout, 0) + DEADLINE_GRACE)
            except queue.Empty:
                step.cancelled.set()
                raise errors.DeadlineExceededError(
                    None, None, "Timed out waiting for the step to finish: the deadline "
                    "passed while ops were still running or blocked (%d not done)"
                    % remaining) from None
            remaining -= 1
            if exc is not None:
                # Cancel the rest: blocking kernels watch this flag; ops not yet
                # started see it and stop. Their late results are discarded.
                step.cancelled.set()
                raise exc
            for j in self.steps[i].successors:
                pending[j] -= 1
                if pending[j] == 0:
                    submit(j)


def prune(fetches, targets, fed):
    """The set of ops needed to compute ``fetches`` and run ``targets``."""
    needed = set()
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op._inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(op._control_inputs)
    return needed


class Trace:
    """Collects per-op timings of one step (``RunOptions.FULL_TRACE``)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_device = {}
        self.transfers = []   # Transfer records: host<->GPU copies, cross-task receives
        self.memory = []      # AllocatorMemoryUsed per GPU at the end of the step

    def record(self, s, start, end, outs, memory=None):
        outputs = []
        for slot, value in enumerate(outs or ()):
            value = read_ref(value) if isinstance(value, VariableResource) and \
                value.value is not None else value
            if isinstance(value, np.ndarray):
                nbytes = 0 if value.dtype == np.dtype(object) else int(value.nbytes)
                outputs.append(NodeOutput(slot=slot, tensor_description=TensorDescription(
                    dtype=s.op._outputs[slot].dtype.base_dtype.name,
                    shape=list(value.shape), requested_bytes=nbytes)))
        thread = threading.get_ident() % 100000
        # A fused step (fusion.py) ran its member ops as one kernel: each member is
        # listed, over the kernel's time span, with a label that says so.
        members = s.members or (s.op,)
        fused = " [fused: %s]" % "+".join(m.type for m in members) if s.members else ""
        records = []
        shapes = getattr(getattr(s.compute, "__self__", None), "last_shapes", {})
        for op in members:
            last = op is s.op
            out = outputs
            if not last:   # a fused member's output: its logical size, never allocated
                shape = list(shapes.get(op, ()))
                dt = op._outputs[0].dtype.base_dtype
                out = [NodeOutput(slot=0, tensor_description=TensorDescription(
                    dtype=dt.name, shape=shape,
                    requested_bytes=int(np.prod(shape)) * np.dtype(dt.np_dtype).itemsize))]
            records.append(NodeExecStats(
                node_name=op.name, op_type=op.type, all_start_micros=start,
                op_start_rel_micros=0, op_end_rel_micros=end - start,
                all_end_rel_micros=end - start, output=out,
                timeline_label="%s = %s()%s" % (op.name, op.type, fused), thread_id=thread,
                memory=[memory] if memory is not None and last else []))
        with self._lock:
            self.by_device.setdefault(s.device.name, []).extend(records)

    def device_stats(self):
        return [DeviceStepStats(device=d, node_stats=sorted(n, key=lambda x: x.all_start_micros))
                for d, n in sorted(self.by_device.items())]
