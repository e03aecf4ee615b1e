"""Running a step whose graph has while loops: frames and iterations.

A plan without loops runs each op once per step (executor.py). A
``tf.while_loop`` (ops/while_loop.py) runs the ops of its body once per
*iteration*, and several iterations may be in flight at once, so a value is
no longer "the output of op X" but "the output of op X in iteration 3 of the
loop, entered from iteration 1 of the enclosing loop". This is TensorFlow's
executor design:

* a **frame** is one execution of a loop: made when the first value
  ``Enter``\\ s it, named by the ``Enter``'s ``frame_name``, and owned by the
  iteration of the enclosing frame that entered it (a nested loop gets a new
  frame in every iteration of its outer loop). The step itself is the root
  frame, with one iteration;
* an **iteration** of a frame holds its own copy of every value slot, every
  op's count of inputs still to come, and which control inputs were dead, so
  the same op can be waiting in iteration 5 and running in iteration 4;
* the routing ops move values between them (their row's ``frame_move``):
  ``Enter`` into iteration 0 of its frame (a *constant* ``Enter``, a value the
  body reads from outside, into every iteration), ``NextIteration`` to the
  next iteration of its own frame, ``Exit`` to the iteration of the enclosing
  frame that owns the loop;
* ``Merge`` fires as soon as one live input arrives (the ``Enter`` in
  iteration 0, the ``NextIteration`` after), or dead when every input that
  can arrive in that iteration is dead;
* at most ``parallel_iterations`` iterations of a frame are alive at once: a
  ``NextIteration`` that would start one more waits until the oldest
  iteration finishes;
* an iteration finishes when none of its ops is still to run, no loop it
  entered is still running, and the iteration before it has finished
  (iteration 0: also once every ``Enter`` of the frame has delivered). A
  frame finishes with its last iteration: an ``Exit`` that never carried a
  live value (the loop sat in an untaken ``tf.cond`` branch) then sends a
  dead value out, so the ops after the loop are skipped too;
* the step ends when nothing is ready or running; the fetches are read from
  the root frame.

The last iteration of a loop is the one whose condition was false: its
``Switch`` ops send the values to ``Exit`` and *dead* values into the body,
so the body's ops are skipped there and its ``NextIteration``\\ s, receiving
dead values, start nothing. A loop stops by itself.
"""

import collections
import queue
import time

import numpy as np

from minitf.framework import errors
from minitf.framework.op_def import ALL, ANY, CONTROLS, DEAD, ENTERS, EXITS, NEXT_ITERATION
from minitf.runtime import deadness
from minitf.runtime.node import annotate

_ROOT = None


class FrameLayout:
    """What the plan knows statically about its frames, per node index:
    ``frame_of`` (its frame's name, None for the root), ``move``
    (``frame_move`` of routing ops), ``child`` (an Enter's frame name),
    ``constant``/``parallel`` (an Enter's attrs), ``merge_inputs`` (per
    Merge: which data inputs come from a NextIteration), and per frame name
    its ``parent`` frame name, its number of ``Enter`` nodes and its ``Exit``
    nodes."""

    def __init__(self, nodes):
        n = len(nodes)
        self.move = [s.op.op_def.frame_move if s.op.op_def is not None else None
                     for s in nodes]
        self.child = [None] * n
        self.constant = [False] * n
        self.parallel = [1] * n
        for i, s in enumerate(nodes):
            if self.move[i] == ENTERS:
                self.child[i] = s.op.get_attr("frame_name")
                self.constant[i] = bool(s.op.get_attr("is_constant"))
                self.parallel[i] = int(s.op.get_attr("parallel_iterations"))
        self.frame_of = self._assign_frames(nodes)
        self.parent = {}
        self.n_enters = collections.Counter()
        self.exits = collections.defaultdict(list)
        for i in range(n):
            if self.move[i] == ENTERS:
                self.parent[self.child[i]] = self.frame_of[i]
                self.n_enters[self.child[i]] += 1
            elif self.move[i] == EXITS:
                self.exits[self.frame_of[i]].append(i)
        producer = {}
        for i, s in enumerate(nodes):
            for k in range(s.n_out):
                producer[s.out_base + k] = i
        self.is_merge = [s.dead_when == ALL for s in nodes]
        # Per Merge: for each data input, whether it is a back edge (a NextIteration).
        self.back_edge = [None] * n
        self.ctrl_count = [len(s.control_preds) for s in nodes]
        for i, s in enumerate(nodes):
            if self.is_merge[i]:
                self.back_edge[i] = [producer.get(j) is not None and
                                     self.move[producer[j]] == NEXT_ITERATION
                                     for j in s.inputs]
        self.ctrl_succ = [set() for _ in range(n)]
        for i, s in enumerate(nodes):
            for p in s.control_preds:
                self.ctrl_succ[p].add(i)
        self.members = collections.defaultdict(list)
        for i in range(n):
            self.members[self.frame_of[i]].append(i)
        self.order = self._static_orders(nodes, producer)
        self._compile_programs(nodes)

    def _compile_programs(self, nodes):
        """What :func:`run_structured` walks: per frame, its static order as
        ``(kind, node index or child frame name, node)`` instructions, and the
        facts about dead values it needs without looking at the graph."""
        consumers = collections.defaultdict(list)
        for j, s in enumerate(nodes):
            for slot in s.inputs:
                consumers[slot].append(j)
        self.enters_of = collections.defaultdict(list)
        for i in range(len(nodes)):
            if self.move[i] == ENTERS:
                self.enters_of[self.child[i]].append(i)
        # Per node that makes dead values (a Switch): who reads each of its outputs.
        self.out_consumers = {}
        # Per Merge: its (input position, slot, index value) in iteration 0 and after.
        self.merge_choices = {}
        self.program = {}
        for frame, order in self.order.items():
            program = []
            for item in order:
                if item.__class__ is tuple:
                    program.append((_LOOP, item[1], None))
                    continue
                s = nodes[item]
                if self.is_merge[item]:
                    back = self.back_edge[item]
                    loop = any(back)
                    choices = [(pos, slot, np.int32(pos)) for pos, slot in enumerate(s.inputs)]
                    self.merge_choices[item] = (
                        tuple(c for c in choices if not loop or not back[c[0]]),
                        tuple(c for c in choices if not loop or back[c[0]]))
                    kind = _MERGE
                elif self.move[item] == NEXT_ITERATION:
                    kind = _NEXT
                elif s.op.op_def is not None and s.op.op_def.makes_dead:
                    self.out_consumers[item] = tuple(
                        tuple(consumers[s.out_base + k]) for k in range(s.n_out))
                    kind = _MAKES_DEAD
                else:
                    kind = _NODE
                program.append((kind, item, s))
            self.program[frame] = program

    def _static_orders(self, nodes, producer):
        """Per frame, an order to run one iteration of it in a single thread:
        its ops after their inputs (a Merge's back edge does not count), and
        each loop it contains as one item ``("loop", name)`` placed after the
        Enters that feed it and before the ops that read its Exits."""
        children = collections.defaultdict(list)
        for child, parent in self.parent.items():
            children[parent].append(child)
        orders = {}
        for frame, members in self.members.items():
            unit = {}                       # Exit node of a child loop -> its item
            for child in children[frame]:
                for x in self.exits[child]:
                    unit[x] = ("loop", child)
            preds = {}
            items = list(members) + [("loop", c) for c in children[frame]]
            for item in items:
                preds[item] = set()
            for j in members:
                s = nodes[j]
                for p in [producer[k] for k in s.inputs if k in producer] + list(s.control_preds):
                    if self.frame_of[p] == frame and not (
                            self.move[p] == NEXT_ITERATION and self.is_merge[j]):
                        preds[j].add(p)
                    elif p in unit:
                        preds[j].add(unit[p])
                    # else: an Enter of this frame, whose value is there before the iteration
            for child in children[frame]:
                preds[("loop", child)] = {i for i in members
                                          if self.move[i] == ENTERS and self.child[i] == child}
            succs = collections.defaultdict(list)
            for item, ps in preds.items():
                for p in ps:
                    succs[p].append(item)
            ready = sorted((item for item in items if not preds[item]), key=_item_key)
            order, count = [], {item: len(ps) for item, ps in preds.items()}
            while ready:
                item = ready.pop(0)
                order.append(item)
                for nxt in sorted(succs[item], key=_item_key):
                    count[nxt] -= 1
                    if count[nxt] == 0:
                        ready.append(nxt)
            if len(order) != len(items):
                raise errors.InvalidArgumentError(
                    None, None, "The graph has a cycle that is not a while loop (in %s)"
                    % (frame or "the top level"))
            orders[frame] = order
        return orders

    def _assign_frames(self, nodes):
        return assign_frames([s.successors for s in nodes], self.move, self.child,
                             [i for i, s in enumerate(nodes) if s.n_preds == 0],
                             lambda i: nodes[i].op.name)


def assign_frames(successors, move, child, sources, name_of):
    """The frame each op runs in (None: the top level), TF's rule, walked from
    ``sources`` (the ops with no inputs) along ``successors``: an op's successors
    are in its frame, except an Enter's (in the frame it enters, ``child``) and
    an Exit's (in the frame enclosing its own). Used for a plan's nodes and, by
    the partitioner, for a step's ops."""
    n = len(successors)
    frame_of = [0] * n   # 0: not reached yet
    parent = {}
    todo = collections.deque(sources)
    for i in todo:
        frame_of[i] = _ROOT
    while todo:
        i = todo.popleft()
        f = frame_of[i]
        if move[i] == ENTERS:
            parent.setdefault(child[i], f)
            g = child[i]
        elif move[i] == EXITS:
            if f is _ROOT:
                raise errors.InvalidArgumentError(
                    None, None, "%s is an Exit outside of any while loop" % name_of(i))
            g = parent[f]
        else:
            g = f
        for j in successors[i]:
            if frame_of[j] == 0:
                frame_of[j] = g
                todo.append(j)
            elif frame_of[j] != g:
                raise errors.InvalidArgumentError(
                    None, None, "%s has inputs from two frames (%s and %s): an op inside a "
                    "tf.while_loop may only read values made in the loop or captured into it"
                    % (name_of(j), frame_of[j] or "the top level", g or "the top level"))
    for i in range(n):
        if frame_of[i] == 0:
            raise errors.InternalError(None, None, "%s is unreachable in the plan" % name_of(i))
    return frame_of


class Frame:
    """One execution of a loop (see the module docstring)."""

    __slots__ = ("name", "parent_iter", "iterations", "oldest", "parallel", "constants",
                 "pending_enters", "deferred", "live_exits", "children", "key")

    def __init__(self, name, parent_iter, parallel, pending_enters, key):
        self.name = name
        self.parent_iter = parent_iter
        self.iterations = {}
        self.oldest = 0
        self.parallel = parallel
        self.constants = []          # (Enter node, value, dead) for every iteration
        self.pending_enters = pending_enters
        self.deferred = collections.deque()   # (iteration, NextIteration node, value)
        self.live_exits = set()
        self.children = {}           # (iteration index, frame name) -> Frame
        self.key = key               # names this frame in rendezvous keys (see below)


class Iteration:
    """One iteration of a frame: its values, pending counts and dead control inputs."""

    __slots__ = ("frame", "index", "vals", "pending", "dead_ctrl", "merge_dead",
                 "outstanding", "child_frames")

    def __init__(self, frame, index, n_slots, pending):
        self.frame = frame
        self.index = index
        self.vals = [None] * n_slots
        self.pending = list(pending)
        self.dead_ctrl = None        # a set of node indices, made on first use
        self.merge_dead = None       # Merge node -> dead data inputs so far
        self.outstanding = 0         # ops of this iteration ready or running
        self.child_frames = 0        # loops entered from this iteration, still running


class FrameRun:
    """One step of a plan with loops whose ops run on thread pools (several
    devices, or blocking ops): ``run_pooled(submit, grace)`` hands each ready
    (node, iteration) to ``submit(i, iteration, done_queue)`` and delivers the
    results as they come back, on the calling thread."""

    def __init__(self, plan, layout, vals, step):
        self.plan = plan
        self.nodes = plan.nodes
        self.layout = layout
        self.step = step
        self.n_slots = plan.n_slots
        # A Merge waits only for its control inputs; its data inputs are counted apart.
        self.initial_pending = [layout.ctrl_count[i] if layout.is_merge[i] else s.n_preds
                                for i, s in enumerate(self.nodes)]
        self.ready = collections.deque()
        self.in_flight = 0
        self.root = Frame(_ROOT, None, 1, 0, "")
        it = Iteration(self.root, 0, 0, self.initial_pending)
        it.vals = vals
        self.root.iterations[0] = it
        self.root_iteration = it
        for i, s in enumerate(self.nodes):
            if s.n_preds == 0 and not layout.is_merge[i]:
                self._schedule(i, it)

    # -- bookkeeping, always on the scheduling thread -------------------------------------
    def _schedule(self, i, it):
        it.outstanding += 1
        self.ready.append((i, it))

    def _new_iteration(self, frame, index):
        it = Iteration(frame, index, self.n_slots, self.initial_pending)
        frame.iterations[index] = it
        for enter_node, value, dead in frame.constants:
            self._put(it, enter_node, [value], dead)
        return it

    def _child_frame(self, it, i):
        name = self.layout.child[i]
        frame = it.frame.children.get((it.index, name))
        if frame is None:
            # The same name on every task that runs part of this loop: rendezvous
            # keys of a _Send/_Recv inside it must agree (distributed/partition.py).
            frame = Frame(name, it, self.layout.parallel[i], self.layout.n_enters[name],
                          "%s%s@%d" % (it.frame.key + "/" if it.frame.key else "", name,
                                       it.index))
            it.frame.children[(it.index, name)] = frame
            it.child_frames += 1
        return frame

    def finished(self, i, it, outs, dead):
        """Node ``i`` of iteration ``it`` is done: deliver its outputs."""
        move = self.layout.move[i]
        if move is None:
            self._put(it, i, outs, dead)
        elif move == ENTERS:
            frame = self._child_frame(it, i)
            if self.layout.constant[i]:
                frame.constants.append((i, DEAD if dead else outs[0], dead))
                for child in list(frame.iterations.values()):
                    self._put(child, i, outs, dead)
            else:
                child = frame.iterations.get(0) or self._new_iteration(frame, 0)
                self._put(child, i, outs, dead)
            frame.pending_enters -= 1
            self._finish_iterations(frame)
        elif move == EXITS:
            if not dead:
                frame = it.frame
                frame.live_exits.add(i)
                self._put(frame.parent_iter, i, outs, False)
        elif move == NEXT_ITERATION:
            if not dead:       # a dead value ends the loop: no next iteration
                frame = it.frame
                k = it.index + 1
                if k < frame.oldest + frame.parallel:
                    target = frame.iterations.get(k) or self._new_iteration(frame, k)
                    self._put(target, i, outs, False)
                else:
                    frame.deferred.append((k, i, outs[0]))
        it.outstanding -= 1
        self._finish_iterations(it.frame)

    def _put(self, it, i, outs, dead):
        """Write node ``i``'s outputs into iteration ``it`` and tell its successors."""
        s = self.nodes[i]
        if s.n_out:
            it.vals[s.out_base:s.out_base + s.n_out] = outs if not dead else [DEAD] * s.n_out
        layout = self.layout
        for j in s.successors:
            if layout.is_merge[j] and j not in layout.ctrl_succ[i]:
                self._merge_input(j, it, i, dead)
                continue
            if dead and j in layout.ctrl_succ[i]:
                if it.dead_ctrl is None:
                    it.dead_ctrl = set()
                it.dead_ctrl.add(j)
            it.pending[j] -= 1
            if it.pending[j] == 0:
                if layout.is_merge[j]:
                    self._try_merge(j, it)
                else:
                    self._schedule(j, it)

    def _merge_input(self, j, it, i, dead):
        if dead:
            if it.merge_dead is None:
                it.merge_dead = collections.Counter()
            it.merge_dead[j] += 1
        if it.pending[j] == 0:
            self._try_merge(j, it)

    def _try_merge(self, j, it):
        """Fire Merge ``j`` in ``it`` if it can: one live input, or all possible dead."""
        s = self.nodes[j]
        vals = it.vals
        for k, slot in enumerate(s.inputs):
            v = vals[slot]
            if v is not None and v is not DEAD:
                it.pending[j] = -1          # fired: later arrivals are ignored
                it.outstanding += 1
                self.finished(j, it, [v, np.int32(k)], False)
                return
        back = self.layout.back_edge[j]
        if any(back):     # a loop's Merge: its Enter in iteration 0, its back edge after
            can_arrive = sum(1 for b in back if b == (it.index > 0))
        else:             # a tf.cond's Merge: every input, in every iteration
            can_arrive = len(back)
        if it.dead_ctrl is not None and j in it.dead_ctrl or (
                it.merge_dead is not None and it.merge_dead[j] >= can_arrive):
            it.pending[j] = -1
            it.outstanding += 1
            self.finished(j, it, None, True)

    def _finish_iterations(self, frame):
        """Retire the frame's finished iterations in order; finish the frame."""
        while True:
            it = frame.iterations.get(frame.oldest)
            if it is None or it.outstanding or it.child_frames:
                break
            if it.index == 0 and frame.pending_enters:
                break
            del frame.iterations[frame.oldest]
            frame.oldest += 1
            due = []
            while frame.deferred and frame.deferred[0][0] < frame.oldest + frame.parallel:
                k, i, value = frame.deferred.popleft()
                target = frame.iterations.get(k) or self._new_iteration(frame, k)
                # Held until every waiting value is in: a Merge fires inline,
                # and an iteration whose first value has fired it and has
                # nothing else scheduled yet must not be retired half-filled.
                target.outstanding += 1
                due.append((target, i, value))
            for target, i, value in due:
                self._put(target, i, [value], False)
            for target, _, _ in due:
                target.outstanding -= 1
        if frame is self.root or frame.iterations or frame.deferred or frame.pending_enters:
            return
        # The frame is done: exits that never carried a live value send a dead one.
        parent = frame.parent_iter
        for x in self.layout.exits[frame.name]:
            if x not in frame.live_exits:
                self._put(parent, x, None, True)
        del parent.frame.children[(parent.index, frame.name)]
        parent.child_frames -= 1
        self._finish_iterations(parent.frame)

    # -- running ---------------------------------------------------------------------------
    def run_pooled(self, submit, grace):
        done = queue.SimpleQueue()
        step = self.step
        while True:
            while self.ready:
                i, it = self.ready.popleft()
                self.in_flight += 1
                submit(i, it, done)
            if not self.in_flight:
                break
            timeout = step.time_left()
            try:
                if timeout is None:
                    i, it, outs, dead, exc = done.get()
                else:
                    i, it, outs, dead, exc = done.get(timeout=max(timeout, 0) + grace)
            except queue.Empty:
                step.cancelled.set()
                raise errors.DeadlineExceededError(
                    None, None, "Timed out waiting for the step to finish: the deadline "
                    "passed while ops were still running or blocked (%d running)"
                    % self.in_flight) from None
            self.in_flight -= 1
            if exc is not None:
                step.cancelled.set()
                raise exc
            self.finished(i, it, outs, dead)
        return self._fetched()

    def _fetched(self):
        vals = self.root_iteration.vals
        for slot in self.plan.fetch_slots:
            if vals[slot] is None:
                raise errors.InternalError(
                    None, None, "The step ended before computing a fetched value: a "
                    "while loop did not finish (its frames: %s)"
                    % sorted(str(k[1]) for k in self.root.children))
        return [vals[slot] for slot in self.plan.fetch_slots]


def _item_key(item):
    return item if isinstance(item, int) else -1


_LOOP, _MERGE, _NODE, _MAKES_DEAD, _NEXT = range(5)


def run_structured(plan, layout, vals, step, ctx):
    """Run a plan with loops in the caller's thread: each frame one iteration at
    a time, each iteration in its static order (``FrameLayout.program``).

    With one thread, iterations gain nothing from overlapping, so there is no
    per-(frame, iteration) bookkeeping: one list of values and one list of
    dead flags serve the whole step. An iteration overwrites the slots of the
    one before (a Merge takes its back edge, the NextIteration's slot, before
    that NextIteration runs again); a nested loop runs to its end where it
    stands in its parent's order; the loop ends after the iteration in which
    no NextIteration carried a live value.

    Dead values are looked for only where one can be: a node is *suspect*
    once an op that feeds it made a dead value (a Switch's untaken output, a
    skipped op's outputs), and only a suspect is checked against the dead
    rules (deadness.py). Every other op just runs: in the LSTM of
    tests/benchmarks/bench_rnn.py that skips the check for all but the few
    ops an iteration's Switches touch. A loop whose Enters are dead (it sits
    in an untaken cond branch) checks all its ops. The flags set in an
    iteration are listed (``touched``) and cleared before the next one."""
    nodes = plan.nodes
    n = len(nodes)
    dead = [False] * n
    suspect = [False] * n
    frame_of = layout.frame_of
    touched = {}                    # frame name -> flags set in its current iteration
    out_consumers = layout.out_consumers
    deadline = step.deadline
    cancelled = step.cancelled.is_set
    plain = step.trace is None and step.memory is None
    call = plan._call
    deref = plan.deref

    def mark(j):
        if not suspect[j]:
            suspect[j] = True
            flags = touched.get(frame_of[j])
            if flags is None:
                flags = touched[frame_of[j]] = []
            flags.append(j)

    def kill(i, s, mine):
        """Node ``i`` is skipped: its outputs are dead, its successors suspect."""
        dead[i] = True
        mine.append(i)
        if s.n_out:
            vals[s.out_base:s.out_end] = [DEAD] * s.n_out
        for j in s.successors:
            mark(j)

    def clear(flags):
        for j in flags:
            dead[j] = suspect[j] = False
        flags.clear()

    def merge(i, s, k, mine):
        if not any(dead[p] for p in s.control_preds):
            for pos, slot, index in layout.merge_choices[i][k > 0]:
                v = vals[slot]
                if v is not DEAD and v is not None:
                    vals[s.out_base] = v
                    vals[s.out_base + 1] = index
                    return
        kill(i, s, mine)

    def run_frame(frame, check_all):
        program = layout.program[frame]
        mine = touched.get(frame)
        if mine is None:
            mine = touched[frame] = []
        else:
            clear(mine)          # left from this loop's last run (or marks from outside)
        k = 0
        while True:
            live_next = False
            for kind, i, s in program:
                if kind == _LOOP:
                    run_frame(i, check_all or any(dead[e] for e in layout.enters_of[i]))
                    continue
                if kind == _MERGE:
                    merge(i, s, k, mine)
                    continue
                ins = [vals[j] for j in s.inputs]
                if (check_all or suspect[i]) and deadness.is_dead(s, ins, dead):
                    kill(i, s, mine)
                    continue
                if plain:
                    try:
                        if s.deref:
                            deref(s, ins, step)
                        outs = s.compute(ctx, ins)
                    except Exception as e:  # noqa: BLE001 - reported with its op
                        raise annotate(e, s.op, s.device) from None
                else:
                    outs = call(s, ins, ctx)
                if s.n_out:
                    vals[s.out_base:s.out_end] = outs
                if kind == _NEXT:
                    live_next = True
                elif kind == _MAKES_DEAD:
                    for out, value in enumerate(outs):
                        if value is DEAD:
                            for j in out_consumers[i][out]:
                                mark(j)
                if cancelled():
                    raise errors.CancelledError(None, None, "Step was cancelled")
                if deadline is not None and time.monotonic() > deadline:
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out after running %s" % s.op.name)
            if frame is _ROOT or not live_next:
                return
            k += 1
            clear(mine)

    run_frame(_ROOT, False)
    return [vals[slot] for slot in plan.fetch_slots]


def is_dead(node, inputs, it, i):
    """Whether node ``i`` is skipped in iteration ``it`` (the ANY, CONTROLS and
    PASS rules; a Merge's, ALL, is decided by the scheduler)."""
    if node.dead_when == ANY:
        return (it.dead_ctrl is not None and i in it.dead_ctrl) or any(
            v is DEAD for v in inputs)
    if node.dead_when == CONTROLS:
        return it.dead_ctrl is not None and i in it.dead_ctrl
    return False
