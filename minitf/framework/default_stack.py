"""A per-thread stack of defaults, as TF keeps the default graph and session.

``with graph.as_default():`` pushes the graph, and the block's end pops it;
``with sess.as_default():`` does the same for a session. Each thread has its
own stack (a thread that never entered a block sees only the global default),
so two threads can build into different graphs at once.
"""

import contextlib
import threading


class DefaultStack:
    """A stack of objects per thread; :meth:`top` is the innermost default."""

    def __init__(self):
        self._local = threading.local()

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def top(self):
        """The innermost default of this thread, or None."""
        stack = self._stack()
        return stack[-1] if stack else None

    def __bool__(self):
        return bool(self._stack())

    def push(self, value):
        self._stack().append(value)

    def pop(self, value):
        """Remove ``value`` if it is the innermost default (as TF's ``__exit__``)."""
        stack = self._stack()
        if stack and stack[-1] is value:
            stack.pop()

    @contextlib.contextmanager
    def default(self, value):
        """``with stack.default(value):`` makes ``value`` the default in the block."""
        self.push(value)
        try:
            yield value
        finally:
            self.pop(value)
