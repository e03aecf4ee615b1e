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

    def _assign_frames(self, nodes):
        """TF's rule, walked from the ops with no inputs: an op's successors are
        in its frame, except an Enter's (in the frame it enters) and an Exit's
        (in the frame enclosing its own)."""
        n = len(nodes)
        frame_of = [0] * n   # 0: not reached yet
        parent = {}
        todo = collections.deque(i for i, s in enumerate(nodes) if s.n_preds == 0)
        for i in todo:
            frame_of[i] = _ROOT
        while todo:
            i = todo.popleft()
            f = frame_of[i]
            if self.move[i] == ENTERS:
                parent.setdefault(self.child[i], f)
                g = self.child[i]
            elif self.move[i] == EXITS:
                if f is _ROOT:
                    raise errors.InvalidArgumentError(
                        None, None, "%s is an Exit outside of any while loop"
                        % nodes[i].op.name)
                g = parent[f]
            else:
                g = f
            for j in nodes[i].successors:
                if frame_of[j] == 0:
                    frame_of[j] = g
                    todo.append(j)
                elif frame_of[j] != g:
                    raise errors.InvalidArgumentError(
                        None, None, "%s has inputs from two frames (%s and %s): an op inside "
                        "a tf.while_loop may only read values made in the loop or captured "
                        "into it" % (nodes[j].op.name, frame_of[j] or "the top level",
                                     g or "the top level"))
        for i in range(n):
            if frame_of[i] == 0:
                raise errors.InternalError(None, None, "%s is unreachable in the plan"
                                           % nodes[i].op.name)
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
        self.key = key               # a name unique in the step, for rendezvous keys


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
    """One step of a plan with loops. ``compute(i, iteration)`` runs node ``i``
    with that iteration's inputs and returns ``(outputs, dead)``; ``submit`` is
    None to run everything in the caller's thread, else
    ``submit(i, iteration, done_queue)`` hands the node to a thread pool."""

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
        self.frame_count = 0
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
            self.frame_count += 1
            frame = Frame(name, it, self.layout.parallel[i], self.layout.n_enters[name],
                          "%s;%d" % (name, self.frame_count))
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
            while frame.deferred and frame.deferred[0][0] < frame.oldest + frame.parallel:
                k, i, value = frame.deferred.popleft()
                target = frame.iterations.get(k) or self._new_iteration(frame, k)
                self._put(target, i, [value], False)
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
    def run_inline(self, compute):
        step = self.step
        deadline = step.deadline
        ready = self.ready
        while ready:
            i, it = ready.popleft()
            outs, dead = compute(i, it)
            self.finished(i, it, outs, dead)
            if step.cancelled.is_set():
                raise errors.CancelledError(None, None, "Step was cancelled")
            if deadline is not None and time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Timed out after running %s" % self.nodes[i].op.name)
        return self._fetched()

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


def is_dead(node, inputs, it, i):
    """Whether node ``i`` is skipped in iteration ``it`` (the ANY, CONTROLS and
    PASS rules; a Merge's, ALL, is decided by the scheduler)."""
    if node.dead_when == ANY:
        return (it.dead_ctrl is not None and i in it.dead_ctrl) or any(
            v is DEAD for v in inputs)
    if node.dead_when == CONTROLS:
        return it.dead_ctrl is not None and i in it.dead_ctrl
    return False
