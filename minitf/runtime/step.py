"""One step (one ``sess.run``, or a task's part of it): what its ops share.

:class:`StepState` is made per step by the session (or the worker) and handed
to every kernel inside a :class:`KernelContext`, with the kernel's device and
that device's resource manager. It is how a kernel reaches state without
importing anything above it: variables and queues through ``ctx.resources``,
the other tasks through ``ctx.step.rendezvous``, the trace through
``ctx.step.trace``.
"""

import time


class Cancellation:
    """A step's cancellation flag: set once (``set``), read by every blocking
    kernel and between ops (``is_set``). A plain attribute, which one thread
    sets and others read (the GIL makes both whole): nothing ever sleeps on
    it, since blocking kernels wake every 50 ms to look at it and at the
    deadline (queues.py, rendezvous.py), so a ``threading.Event`` (a lock and a
    condition made for every step, a fifth of a trivial step's time) buys
    nothing here."""

    __slots__ = ("_set",)

    def __init__(self):
        self._set = False

    def set(self):
        self._set = True

    def is_set(self):
        return self._set


class StepState:
    """What all ops of one step share: a cancellation flag and an absolute
    deadline (``time.monotonic()``), both watched by blocking kernels; the
    rendezvous that ``_Send``/``_Recv`` use; the trace (or None); the variable
    versions the step read; the step's GPU memory accounting (or None)."""

    __slots__ = ("cancelled", "deadline", "step_id", "rendezvous", "trace", "read_versions",
                 "memory")

    def __init__(self, deadline=None, step_id=0, rendezvous=None, trace=None):
        self.cancelled = Cancellation()
        self.deadline = deadline
        self.step_id = step_id
        self.rendezvous = rendezvous
        self.trace = trace
        self.read_versions = {}
        self.memory = None

    def time_left(self):
        return None if self.deadline is None else self.deadline - time.monotonic()


class KernelContext:
    """What a kernel may use besides its inputs: its device's resource manager
    (variables, queues...), the device, per-session state, the step, and
    ``frame_iter``: which while-loop frame and iteration the op runs in (""
    outside every loop; runtime/frames.py), so that a ``_Send``/``_Recv`` in a
    loop uses one rendezvous key per iteration, as TF's do."""

    __slots__ = ("resources", "device", "session_state", "step", "frame_iter")

    def __init__(self, resources, device, session_state, step, frame_iter=""):
        self.resources = resources
        self.device = device
        self.session_state = session_state
        self.step = step
        self.frame_iter = frame_iter

    def in_frame(self, frame_iter):
        """This context for an op of frame iteration ``frame_iter``."""
        return KernelContext(self.resources, self.device, self.session_state, self.step,
                             frame_iter)
