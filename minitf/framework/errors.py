"""The ``tf.errors`` family: one exception class per canonical error code.

Every runtime failure in minitf is an :class:`OpError` subclass, exactly as in
TensorFlow, so ``except tf.errors.OutOfRangeError`` works the same on both. An
error raised while running an op carries that op (``.op``, ``.node_def``) so a
learner can see which node of the graph failed.

The numeric codes are the ones of ``tensorflow/core/protobuf/error_codes.proto``;
they also travel on the wire (``error_code``) so that a server can raise the
right class in the client's process without pickling anything.
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """Base class of every error raised while running a graph.

    ``node_def`` and ``op`` name the node that failed (``None`` when the error
    is not tied to one node, e.g. a closed connection); ``message`` is the text
    without the class name; ``error_code`` is the canonical code above.
    """

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self._experimental_payloads = {}

    def __reduce__(self):
        # Keeps errors copyable across threads/processes of the launcher
        # (never across the wire, which carries only code + message).
        if type(self) is OpError:
            return (OpError, (self._node_def, None, self._message, self._error_code))
        return (type(self), (self._node_def, None, self._message))

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    @property
    def experimental_payloads(self):
        return self._experimental_payloads

    def __str__(self):
        return self._message


def _make(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)
    cls = type(name, (OpError,), {"__init__": __init__, "__doc__": doc})
    cls.__module__ = __name__
    return cls


CancelledError = _make("CancelledError", CANCELLED,
                       "An operation was cancelled (a closed queue, a cancelled step).")
UnknownError = _make("UnknownError", UNKNOWN, "An error with no better class.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op received an argument it cannot use (bad shape, bad value).")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "A step or request ran past its deadline.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A file, resource or device was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "Something to create exists already.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "The caller may not do this.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "Out of memory, or another resource ran out.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state to run this (e.g. an "
                                "uninitialized variable).")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted (e.g. a lost race).")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "Iterated past the end (a closed, empty queue; end of a dataset).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "Not implemented in minitf.")
InternalError = _make("InternalError", INTERNAL, "A broken invariant inside minitf: a bug.")
UnavailableError = _make("UnavailableError", UNAVAILABLE,
                         "A task or service cannot be reached (not started, died).")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The peer did not prove it holds the cluster secret.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code):
    """The OpError subclass for a canonical code (used when errors cross the wire)."""
    return _CODE_TO_CLASS.get(error_code, UnknownError)


def error_code_from_exception_type(cls):
    for code, c in _CODE_TO_CLASS.items():
        if c is cls:
            return code
    return UNKNOWN


def from_code(error_code, message, node_def=None, op=None):
    """Build the right OpError subclass from a code and a message."""
    return exception_type_from_error_code(error_code)(node_def, op, message)
