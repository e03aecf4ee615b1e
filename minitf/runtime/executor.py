"""The executor: run one step of a placed graph.

A step is one ``sess.run`` (or, on a server, one task's part of it). A
:class:`Plan` is built once per (fetches, feeds, targets) signature and reused
by every step with that signature:

1. **prune** - keep only the ops the fetches and targets need, stopping at
   fed tensors (a fed tensor's producer does not run);
2. **place** - ask the placer for each op's device (sticky across steps);
3. **wire**  - give every tensor a *slot* in a flat list of values and
   record, for each op, which slots it reads and where its outputs go;
4. **bind**  - look up each op's kernel for its device in the registry and
   build its ``compute(ctx, inputs)`` function: one :class:`Node` per op.

Then the graph optimizations the session asked for rewrite the nodes: ops whose
value cannot change are computed once (constant_folding.py, on unless opt_level is L0),
host<->GPU copies are inserted on edges between memories (copies.py) and
chains of elementwise ops are fused (fusion.py).

Running a plan then is a loop over ``nodes``. Two ways:

* **inline**: everything on one device and nothing that can block -> run
  the ops in creation order (always a topological order) in the caller's
  thread. This is the common case and costs a few microseconds per op.
* **dataflow**: several devices, or ops that may block (queues, receives)
  -> an op starts as soon as its inputs and control inputs are done; ops run
  on the thread pools (thread_pools.py: ``inter_op_parallelism_threads``
  wide) so ops on different devices overlap, and each blocking op gets a
  thread of its own so it can never starve the others.

Errors from a kernel are re-raised with the op attached (``e.op``) and the
node named at the end of the message, as TF does; the first error cancels
the rest of the step.

An op whose input is *dead* (the untaken branch of a ``tf.cond``, see
``deadness.py``) is not run: its outputs are marked dead instead.
"""

import collections
import queue
import time

from minitf.framework import errors
from minitf.framework.op_def import DEAD, NOTHING
from minitf.kernels import registry, threads
from minitf.ops.variables import VALUE_OUTPUT_OPS, VariableResource, read_ref
from minitf.runtime import (constant_folding, copies, deadness, dependency_optimizer,
                            frames, fusion, remapper)
from minitf.runtime.node import Node, annotate
from minitf.runtime.step import KernelContext


DEADLINE_GRACE = 1.0  # seconds
ASYNC_POLL = 0.05     # seconds between the scheduler's checks of ops waiting without a thread


def _fetched(values):
    """The fetched values; a dead one (an untaken cond branch) is an error, as in TF."""
    for i, v in enumerate(values):
        if v is DEAD:
            raise errors.InvalidArgumentError(
                None, None, "Retval[%d] does not have value: it is on the branch of a "
                "tf.cond that did not run this step" % i)
    return [read_ref(v) for v in values]


def _ops_of(node):
    return node.members or (node.op,)


class Plan:
    """A pruned, placed and wired subgraph, ready to run many times.

    ``contexts``: device name -> (ResourceManager, session state dict);
    ``pools``: the :class:`~minitf.runtime.thread_pools.ThreadPools` the
    dataflow executor uses; ``fuse``/``fold``/``skip_unread``: the session's
    graph optimizations (fusion.py, constant_folding.py,
    dependency_optimizer.py); ``live_receives``: no op of the whole step
    (this task's part and every other's) makes dead values, so a ``_Recv``
    never brings one (a server's master says so when it registers a part)."""

    def __init__(self, graph, fetches, targets, feeds, placer, contexts, pools, fuse=True,
                 fold=False, skip_unread=True, live_receives=False):
        self.graph = graph
        self.feeds = list(feeds)
        self._pools = pools
        fed = set(self.feeds)
        needed = prune(fetches, targets, fed)
        # (Without skip_unread, as at opt_level L0, it looks at no op: none is skipped.)
        unread = dependency_optimizer.Unread(needed if skip_unread else (), fetches,
                                             targets, fed)
        needed -= unread.ops
        placer.place(needed)
        order = sorted(needed, key=lambda o: o._id)
        self.placement = {op.name: placer.assigned[op].name for op in order}
        preserve = {t.op for t in fetches} | set(targets) | {t.op for t in fed}
        bypass = dependency_optimizer.Bypass(order if skip_unread else (), preserve, fed,
                                             lambda op: placer.assigned[op].name, unread)
        order = [op for op in order if op not in bypass.ops]

        slot_of = {}
        after = {}     # op -> assigns it must follow (see _variable_behind)
        n = 0
        for t in self.feeds:
            slot_of[t] = n
            n += 1
        out_base_of = {}
        for op in order:       # every slot first: a loop's Merge reads a later op
            out_base_of[op] = n
            for t in op._outputs:
                if t not in fed:
                    slot_of[t] = n
                n += 1
        self.nodes = []
        for op in order:
            out_base = out_base_of[op]
            device = placer.assigned[op]
            row = op.op_def
            kernel = registry.find(op.type, device.device_type, registry.kernel_dtype(op))
            if kernel is None:
                raise errors.InternalError(op.node_def, op, "No %s kernel for %s on %s"
                                           % (op.type, registry.kernel_dtype(op), device.name))
            try:
                compute = kernel.build(op, device)
            except errors.OpError as e:
                raise annotate(e, op)
            refs = set(row.ref_inputs)
            inputs = [slot_of[bypass.resolve(t)] for t in op._inputs]
            if row.kernel_reads != NOTHING:    # (Switch/Merge route the value as it is)
                for i in refs:
                    if i < len(inputs) and op._inputs[i].op.type in VALUE_OUTPUT_OPS:
                        inputs[i] = slot_of[_variable_behind(op, i, after)]
            deref = tuple(i for i, t in enumerate(op._inputs)
                          if t.dtype.is_ref_dtype and i not in refs)
            node = Node(op, compute, device, inputs, deref, out_base, row.blocking)
            node.control_inputs = bypass.control_inputs(op)
            if row.async_kernel is not None:
                node.begin = row.async_kernel(op)
            self.nodes.append(node)
        fetch_slots = [slot_of[t] for t in fetches]
        if fold:
            self.nodes = constant_folding.fold(self.nodes, contexts, fetch_slots)
        devices = placer.devices
        if isinstance(devices, dict):
            devices = devices.values()
        if any(d.device_type == "GPU" for d in devices):
            n, fetch_slots, self.memory = copies.insert_copies(self.nodes, fetch_slots, n,
                                                               self.feeds)
        else:
            self.memory = None
        if fusion.enabled(fuse):
            self.nodes = remapper.remap(self.nodes, fetch_slots, self.feeds)
            self.nodes = fusion.fuse_nodes(self.nodes, fetch_slots, self.feeds)
        producer = {}
        index_of = {}
        for i, s in enumerate(self.nodes):
            for k in range(s.n_out):
                producer[s.out_base + k] = i
            for op in _ops_of(s):
                index_of[op] = i
        for i, s in enumerate(self.nodes):
            preds = {producer[j] for j in s.inputs if j in producer}
            controls = set()
            # (control_inputs: what the op waits for, unread and gone-round ops
            # replaced by what they waited for; a fused node's members have none)
            controls.update(index_of[c] for c in s.control_inputs if c in index_of)
            for op in _ops_of(s):
                controls.update(index_of[c] for c in after.get(op, ()) if c in index_of)
            controls.discard(i)
            s.control_preds = tuple(sorted(controls))
            preds |= controls
            preds.discard(i)
            s.n_preds = len(preds)
            for p in preds:
                self.nodes[p].successors.append(i)
        self.n_slots = n
        self.fetch_slots = fetch_slots
        self.inline_order = _ready_order(self.nodes)
        # Only ops that make dead values (Switch; a _Recv may bring one from
        # another task) can make others dead: plans without them skip the
        # checks, which cost ~1 us per op.
        self.may_be_dead = any(op.op_def is not None and op.op_def.makes_dead
                               and not (live_receives and op.type == "_Recv")
                               for s in self.nodes for op in _ops_of(s))
        self.devices = sorted({s.device.name for s in self.nodes})
        per_device = collections.Counter(s.device.name for s in self.nodes)
        #: The device whose ops the dataflow executor runs in the caller's thread.
        self.home_device = per_device.most_common(1)[0][0] if per_device else None
        self.contexts = contexts
        #: One device and nothing that can block: a loop runs its iterations
        #: one at a time in the caller's thread (frames.run_structured).
        self.one_thread = len(self.devices) <= 1 and not any(s.blocking for s in self.nodes)
        #: ... and no two expensive ops that could run side by side: the whole
        #: step runs inline (see the module docstring). A plan where two
        #: could starts on the dataflow executor, which times its expensive
        #: ops; from its second step on it keeps the pool only if two ops
        #: that do not depend on each other were measured long enough.
        self.inline = self.one_thread and not (
            getattr(pools, "width", 1) > 1 and _may_overlap(self.nodes))
        self._steps = 0
        # With while loops, ops run once per iteration of their frame (frames.py).
        self.frames = frames.FrameLayout(self.nodes) if any(
            op.op_def is not None and op.op_def.frame_move is not None
            for s in self.nodes for op in _ops_of(s)) else None

    # -- running ---------------------------------------------------------------------------
    def run(self, feed_values, step):
        """Run one step. ``feed_values`` are in ``self.feeds`` order. Returns
        the fetched values (refs already read) in fetch order."""
        vals = [None] * self.n_slots
        vals[:len(feed_values)] = feed_values
        if self.memory is not None:
            step.memory = self.memory.start(step.trace)
        try:
            if self.frames is not None:
                return _fetched(self._run_frames(vals, step))
            if self.inline:
                self._run_inline(vals, step)
            else:
                self._run_dataflow(vals, step)
                self._steps += 1
                if self.one_thread and self._steps >= 2 and not _may_overlap(
                        self.nodes, measured=True):
                    self.inline = True
            return _fetched([vals[i] for i in self.fetch_slots])
        finally:
            if self.memory is not None:
                step.memory.finish()

    def _context(self, device, step):
        resources, session_state = self.contexts[device.name]
        return KernelContext(resources, device, session_state, step)

    def _run_one(self, i, vals, ctx, dead):
        s = self.nodes[i]
        ins = [vals[j] for j in s.inputs]
        if self.may_be_dead and deadness.is_dead(s, ins, dead):
            dead[i] = True
            if s.n_out:
                vals[s.out_base:s.out_end] = [DEAD] * s.n_out
            return
        outs = self._call(s, ins, ctx)
        if s.n_out:
            vals[s.out_base:s.out_end] = outs

    @staticmethod
    def deref(s, ins, step):
        """Read the variables node ``s`` takes by value (``s.deref``) into ``ins``."""
        for j in s.deref:
            value = ins[j]
            if isinstance(value, VariableResource):
                # Remember which version of the variable this step read, so
                # an update later in the step can tell how stale it is.
                step.read_versions.setdefault(value, value.version)
                ins[j] = value.read()

    def _call(self, s, ins, ctx):
        """Run node ``s``'s kernel on ``ins``: read variable refs it takes by
        value, trace it, charge its GPU memory, and name the op in any error."""
        step = ctx.step
        try:
            if s.deref:
                self.deref(s, ins, step)
            trace = step.trace
            if trace is None:
                outs = s.compute(ctx, ins)
                if step.memory is not None:
                    step.memory.after(s, outs)
            else:
                start = time.time_ns() // 1000
                outs = s.compute(ctx, ins)
                used = None
                if step.memory is not None:
                    used = step.memory.after(s, outs)
                trace.record(s, start, time.time_ns() // 1000, outs, used)
        except Exception as e:  # noqa: BLE001 - every kernel failure is reported with its op
            raise annotate(e, s.op, s.device) from None
        return outs

    def _run_inline(self, vals, step):
        """The ops in creation order, in the caller's thread. Without dead
        values to look for, a trace or GPU memory to account, this loop is all
        a step does around its kernels (well under a microsecond per op)."""
        nodes = self.nodes
        if not nodes:
            return
        ctx = self._context(nodes[0].device, step)
        if self.may_be_dead or step.trace is not None or step.memory is not None:
            return self._run_inline_checked(vals, step, ctx)
        cancelled = step.cancelled.is_set
        deadline = step.deadline
        for s in nodes:
            ins = [vals[j] for j in s.inputs]
            try:
                if s.deref:
                    self.deref(s, ins, step)
                outs = s.compute(ctx, ins)
            except Exception as e:  # noqa: BLE001 - every kernel failure is reported with its op
                raise annotate(e, s.op, s.device) from None
            if s.n_out:
                vals[s.out_base:s.out_end] = outs
            if cancelled():
                raise errors.CancelledError(None, None, "Step was cancelled")
            if deadline is not None and time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Timed out after running %s" % s.op.name)

    def _run_inline_checked(self, vals, step, ctx):
        run_one = self._run_one
        deadline = step.deadline
        dead = [False] * len(self.nodes)
        for i in self.inline_order:
            run_one(i, vals, ctx, dead)
            s = self.nodes[i]
            if step.cancelled.is_set():
                raise errors.CancelledError(None, None, "Step was cancelled")
            if deadline is not None and time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Timed out after running %s" % s.op.name)

    def _run_dataflow(self, vals, step):
        """Ready ops first, in the caller's thread where nothing is gained by
        handing them over.

        The caller is the scheduler *and* runs the non-blocking ops of the
        plan's home device (the device with most ops) itself: handing an op
        to a pool thread costs tens of microseconds, more than most kernels.
        Blocking ops (a dequeue, a receive) go to the blocking pool, so
        they never hold up the rest; ops of the other devices go to the
        inter-op pool, so devices overlap, unless their last run was quick
        (under HAND_OVER_SECONDS: a variable read, a small add), which the
        caller runs itself, since a hand-over would cost more. Whatever its
        device, an expensive op (a product, a convolution:
        ``OpDef.expensive``) whose kernel took at least HAND_OVER_SECONDS
        last time goes to the inter-op pool when another op is ready beside
        it, as in TF's executor (which also learns its kernels' costs as it
        runs them, keeps cheap ones inline and runs the last ready op in its
        own thread): two independent matrix products of one device then run
        at once, each kernel within the session's
        ``intra_op_parallelism_threads``. The
        last one ready runs here, so two chains of products take one pool
        thread and the caller (one thread to wake per step, not two: on the
        build machines waking a thread on an idle core costs up to 100 us),
        and a single chain never pays for a hand-over. A finished pool op
        comes back through ``done``; the caller waits there only when nothing
        is ready.
        """
        nodes = self.nodes
        pool, blocking_pool = self._pools.get()
        done = queue.SimpleQueue()
        contexts = {name: self._context(s.device, step)
                    for name, s in {s.device.name: s for s in nodes}.items()}
        pending = [s.n_preds for s in nodes]
        remaining = len(nodes)
        dead = [False] * len(nodes)
        run_one = self._run_one
        home = self.home_device
        ready = collections.deque(i for i, s in enumerate(nodes) if s.n_preds == 0)
        cancelled = step.cancelled

        def check(s):
            if cancelled.is_set():
                raise errors.CancelledError(None, None, "Step was cancelled")
            if step.deadline is not None and time.monotonic() > step.deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Timed out before %s could start" % s.op.name)

        busy = [0]              # ops handed to the inter-op pool, not yet done
        waiting = {}            # node -> what it waits for, for ops waiting without a thread
        trace = step.trace

        def begin(i):
            """Start blocking node ``i``'s asynchronous kernel (a ``_Recv`` whose
            tensor comes to this rendezvous): no thread waits for it; ``finish``
            runs in the thread that brings the value. False: run it on a thread."""
            s = nodes[i]
            if step.memory is not None:
                return False
            ins = [vals[j] for j in s.inputs]
            if self.may_be_dead and deadness.is_dead(s, ins, dead):
                return False
            start = time.time_ns() // 1000 if trace is not None else 0

            def finish(outs, exc):
                if exc is not None:
                    done.put((i, None, annotate(exc, s.op, s.device)))
                    return
                if s.n_out:
                    vals[s.out_base:s.out_end] = outs
                if trace is not None:
                    trace.record(s, start, time.time_ns() // 1000, outs, None)
                done.put((i, None, None))
            waiting[i] = s.op.name
            what = s.begin(contexts[s.device.name], ins, finish)
            if not what:
                del waiting[i]
                return False
            if i in waiting:
                waiting[i] = what
            return True

        def give_up_waiting():
            i = min(waiting)
            if cancelled.is_set():
                raise annotate(errors.CancelledError(
                    None, None, "Step %d was cancelled while waiting for %s"
                    % (step.step_id, waiting[i])), nodes[i].op, nodes[i].device)
            left = step.time_left()
            if left is not None and left <= 0:
                raise annotate(errors.DeadlineExceededError(
                    None, None, "Timed out waiting for %s" % waiting[i]),
                    nodes[i].op, nodes[i].device)

        def work(i, beside=False):
            """Run node ``i`` in a pool thread, then, while the node just run
            is the last thing an expensive successor waits for, that successor
            too (:func:`_claim_successor`), as TF's executor threads go on with
            a node they made ready: a chain of products stays on one inter-op
            pool thread instead of waking the scheduler and another pool thread
            per link. (A blocking op's thread claims nothing.) Each node is
            reported as it finishes, ``(node, claimed successor, error)``.
            ``beside``: the run was counted by ``threads.begin_beside`` (it
            runs beside the caller's expensive ops); it ends the count."""
            try:
                while True:
                    s = nodes[i]
                    check(s)
                    start = time.perf_counter()
                    run_one(i, vals, contexts[s.device.name], dead)
                    s.seconds = time.perf_counter() - start
                    j = None if s.blocking else _claim_successor(nodes, pending, i)
                    done.put((i, j, None))
                    if j is None:
                        return
                    i = j
            except BaseException as e:  # noqa: BLE001 - handed to the scheduler thread
                done.put((i, None, e))
            finally:
                if beside:
                    threads.end_beside()

        def finished(i, claimed, exc):
            """Node ``i`` finished on a thread (``claimed``: the successor that
            thread went on with): its successors may now be ready."""
            nonlocal remaining
            if exc is not None:
                raise exc
            waiting.pop(i, None)
            if claimed is None and not nodes[i].blocking:
                busy[0] -= 1          # the pool thread's run of nodes ended here
            remaining -= 1
            for j in nodes[i].successors:
                pending[j] -= 1
                if pending[j] == 0 and j != claimed:   # a claimed one runs already
                    ready.append(j)

        try:
            while True:
                while ready:
                    i = ready.popleft()
                    s = nodes[i]
                    if s.blocking:
                        if s.begin is None or not begin(i):
                            blocking_pool.submit(work, i)
                        continue
                    other = s.device.name != home
                    if other and not s.expensive and (s.seconds == 0.0
                                                      or s.seconds >= HAND_OVER_SECONDS):
                        busy[0] += 1      # another device's op, long or not yet timed
                        pool.submit(work, i)
                        continue
                    if s.expensive and s.seconds >= HAND_OVER_SECONDS:
                        # Before the caller is tied up for a while, see what
                        # the ops finished meanwhile have made ready. Another
                        # long op ready beside this one: this one goes to the
                        # pool. Only quick ones: they go first, then this one.
                        while True:
                            try:
                                finished(*done.get_nowait())
                            except queue.Empty:
                                break
                        if any(nodes[j].seconds >= HAND_OVER_SECONDS for j in ready):
                            # (two long kernels at once: each keeps to its
                            # share of the cores, see minitf/kernels/threads.py)
                            busy[0] += 1
                            threads.begin_beside()
                            try:
                                pool.submit(work, i, True)
                            except BaseException:
                                threads.end_beside()
                                raise
                            continue
                        if ready:
                            ready.append(i)
                            continue
                    check(s)
                    if s.expensive or other:
                        start = time.perf_counter()
                        run_one(i, vals, contexts[s.device.name], dead)
                        s.seconds = time.perf_counter() - start
                    else:
                        run_one(i, vals, contexts[home], dead)
                    remaining -= 1
                    for j in s.successors:
                        pending[j] -= 1
                        if pending[j] == 0:
                            ready.append(j)
                if not remaining:
                    return
                # Blocking ops watch the deadline themselves and fail cleanly (a
                # dequeue drops what it took, as TF). The scheduler only gives up on
                # its own if an op ignores the deadline for DEADLINE_GRACE more,
                # or when an op that waits without a thread (``waiting``) is still
                # waiting at the deadline or on cancellation.
                timeout = step.time_left()
                try:
                    if waiting:
                        i, claimed, exc = done.get(timeout=ASYNC_POLL if timeout is None
                                          else min(ASYNC_POLL, max(timeout, 0)))
                    elif timeout is None:
                        i, claimed, exc = done.get()
                    else:
                        i, claimed, exc = done.get(timeout=max(timeout, 0) + DEADLINE_GRACE)
                except queue.Empty:
                    if waiting:
                        give_up_waiting()
                        continue
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out waiting for the step to finish: the deadline "
                        "passed while ops were still running or blocked (%d not done)"
                        % remaining) from None
                finished(i, claimed, exc)
        except BaseException:
            # Cancel the rest: blocking kernels watch this flag; ops not yet
            # started see it and stop. Their late results are discarded.
            cancelled.set()
            raise

    def _run_frames(self, vals, step):
        """A step with while loops: values per (frame, iteration), frames.py."""
        nodes = self.nodes
        if self.one_thread:
            return frames.run_structured(self, self.frames, vals, step,
                                         self._context(nodes[0].device, step))
        run = frames.FrameRun(self, self.frames, vals, step)
        may_be_dead = self.may_be_dead

        def compute(i, it, ctx):
            s = nodes[i]
            ins = [it.vals[j] for j in s.inputs]
            if may_be_dead and frames.is_dead(s, ins, it, i):
                return None, True
            if it.frame.key:
                ctx = ctx.in_frame("%s:%d" % (it.frame.key, it.index))
            return self._call(s, ins, ctx), False

        pool, blocking_pool = self._pools.get()
        contexts = {name: self._context(s.device, step)
                    for name, s in {s.device.name: s for s in nodes}.items()}

        def work(i, it, done):
            try:
                if step.cancelled.is_set():
                    raise errors.CancelledError(None, None, "Step was cancelled")
                if step.deadline is not None and time.monotonic() > step.deadline:
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out before %s could start (iteration %d of its "
                        "while loop)" % (nodes[i].op.name, it.index))
                outs, dead = compute(i, it, contexts[nodes[i].device.name])
                done.put((i, it, outs, dead, None))
            except BaseException as e:  # noqa: BLE001 - handed to the scheduler thread
                done.put((i, it, None, False, e))

        def submit(i, it, done):
            (blocking_pool if nodes[i].blocking else pool).submit(work, i, it, done)

        return run.run_pooled(submit, DEADLINE_GRACE)


#: How long an expensive kernel must have run (its last run) for the executor
#: to hand it to a pool thread when something else is ready: a hand-over and
#: the wake-up cost tens of microseconds (up to 100 on the build machines), so
#: only kernels several times that long gain from running beside another (a
#: 400x400 float32 product takes 0.55 ms on one core; an MLP's 256x64 by
#: 64x128 product 0.025 ms).
HAND_OVER_SECONDS = 250e-6

#: Static input elements below which an expensive op is never worth a thread
#: (a 128x128 product: under HAND_OVER_SECONDS on any core).
SMALL_INPUTS = 1 << 15


def _may_overlap(nodes, measured=False):
    """Whether two expensive nodes (``OpDef.expensive``) could run at once:
    neither needs the other. Without ``measured``, every expensive node
    whose inputs are not known to be small counts (the plan has not run
    yet); with it, those whose last run took HAND_OVER_SECONDS.

    Every node's expensive ancestors are a bit set (one Python int); in a
    chain each of the E expensive nodes has all earlier ones as ancestors,
    E(E-1)/2 pairs in all, and fewer pairs mean two nodes that do not depend
    on each other."""
    bit = {}
    for i, s in enumerate(nodes):
        if s.expensive and (s.seconds >= HAND_OVER_SECONDS if measured
                            else not _known_small(s)):
            bit[i] = 1 << len(bit)
    if len(bit) < 2:
        return False
    ancestors = [0] * len(nodes)
    for i in _ready_order(nodes):
        mine = ancestors[i] | bit.get(i, 0)
        for j in nodes[i].successors:
            ancestors[j] |= mine
    ordered = sum(bin(ancestors[i]).count("1") for i in bit)
    return ordered < len(bit) * (len(bit) - 1) // 2


def _claim_successor(nodes, pending, i):
    """An expensive successor of just-run node ``i`` that waits for nothing
    else, for the pool thread that ran ``i`` to run next, or None.

    Called from that pool thread while the scheduler owns ``pending``: a count
    only goes down, and ``i`` is not reported yet, so a successor whose count
    reads 1 waits for ``i`` alone and nobody else can start it. (A count read
    as 2 that is really 1 by now just means no claim: the scheduler runs it.)
    Cheap ops go back to the scheduler, which runs them in its own thread;
    blocking and asynchronous ops are the scheduler's too."""
    for j in nodes[i].successors:
        s = nodes[j]
        if s.expensive and pending[j] == 1 and not s.blocking:
            return j
    return None


def _known_small(s):
    """The op's inputs have static shapes of fewer than SMALL_INPUTS
    elements in all."""
    sizes = [t.shape.num_elements() for t in s.op._inputs]
    return None not in sizes and sum(sizes) < SMALL_INPUTS


def _variable_behind(op, i, after):
    """The variable whose assign produced ``op``'s ref input ``i``.

    An assign outputs the value it wrote (see ``minitf/ops/variables.py``), so
    an op that takes it as a *reference* is given the variable itself, and
    runs after the assign (recorded in ``after``) as it would in TF."""
    t = op._inputs[i]
    while t.op.type in VALUE_OUTPUT_OPS:
        after.setdefault(op, []).append(t.op)
        t = t.op._inputs[0]
    return t


def prune(fetches, targets, fed):
    """The set of ops needed to compute ``fetches`` and run ``targets``.

    An op whose every output is fed is replaced by the feed: a control
    dependency on it (``control_dependencies([placeholder])``) is satisfied
    without running it, as in TF."""
    needed = set()
    replaced = {t.op for t in fed if all(o in fed for o in t.op._outputs)}
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op._inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(c for c in op._control_inputs if c not in replaced)
    return needed


def _ready_order(nodes):
    """The order one thread runs a single-device plan in: as TF's executor,
    an op runs once its inputs are ready, first ready first run (ties in
    creation order). So an op that needs only a variable (a hook's copy of
    the global step, ``global_step + 0``) runs at the start of the step, before
    the optimizer's update that needs the whole backward pass; creation order
    would run it after an update created earlier. Nothing but data and control
    edges orders two ops: a program must not rely on either order."""
    pending = [s.n_preds for s in nodes]
    ready = collections.deque(i for i, s in enumerate(nodes) if s.n_preds == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for j in nodes[i].successors:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    if len(order) != len(nodes):    # a cycle the planner let through: keep creation order
        return list(range(len(nodes)))
    return order
