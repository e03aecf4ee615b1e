"""The default session: what ``Tensor.eval()`` and ``Operation.run()`` use.

``with tf.Session() as sess:`` (or ``sess.as_default()``) makes ``sess`` the
default session of the thread in the block. The stack lives here, in the
framework layer, so that a graph's tensors can find the session that runs
them without the framework importing the runtime.
"""

from minitf.framework.default_stack import DefaultStack

SESSIONS = DefaultStack()


def get_default_session():
    """The innermost default session of this thread, or None."""
    return SESSIONS.top()


def session_for(session, graph, what="tensor"):
    """The session ``Tensor.eval`` / ``Operation.run`` should use: ``session``, or
    the default one; it must run ``graph``. Errors are TF's."""
    if session is None:
        session = get_default_session()
        if session is None:
            if what == "operation":
                raise ValueError("Cannot execute operation using `run()`: No default "
                                 "session is registered. Use `with sess.as_default():` or "
                                 "pass an explicit session to `run(session=sess)`")
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit "
                             "session to `eval(session=sess)`")
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's "
                         "graph is different from the session's graph.")
    return session
