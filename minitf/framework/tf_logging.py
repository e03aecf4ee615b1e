"""``tf.compat.v1.logging``: TF1's log, on top of Python's ``logging``.

Every message goes through one ``logging.Logger`` named ``"tensorflow"``, as
in TF, so ``logging.getLogger("tensorflow")`` is the same object a program
configures either way (add a handler, change its level, capture its records
in a test). minitf's own messages (MonitoredTrainingSession, the hooks, the
Supervisor, queue runners) go through it too, with TF's wording where TF
logs the same event::

    tf.logging.set_verbosity(tf.logging.INFO)   # TF's default is WARN
    ...   # INFO:tensorflow:loss = 0.5, step = 10 (0.012 sec)

The levels are Python's (``DEBUG`` 10, ``INFO`` 20, ``WARN`` 30, ``ERROR``
40, ``FATAL`` 50). Until a program sets one, the logger has none of its own
and inherits the root logger's (WARNING), so ``get_verbosity()`` is 30.

Where the lines go: the first time the logger is needed (:func:`get_logger`),
if the root logger has no handler yet, the logger gets a handler of its own
that writes ``LEVEL:tensorflow:message`` to stderr (to stdout, at level INFO,
in an interactive interpreter). A program that configured ``logging`` first
(``logging.basicConfig``) gets its own format and no double lines.
"""

import logging as _logging
import sys as _sys
import threading as _threading
from logging import DEBUG, ERROR, FATAL, INFO, WARN  # noqa: F401  (TF's names)

_logger = None
_lock = _threading.Lock()
_counts = {}     # (file, line) -> calls so far, for log_every_n and log_first_n


def _interactive():
    return hasattr(_sys, "ps1") or bool(_sys.flags.interactive)


def get_logger():
    """The ``"tensorflow"`` logger, given its handler the first time (see above)."""
    global _logger
    if _logger is not None:
        return _logger
    with _lock:
        if _logger is None:
            logger = _logging.getLogger("tensorflow")
            if not _logging.getLogger().handlers:
                target = _sys.stderr
                if _interactive():
                    logger.setLevel(INFO)
                    target = _sys.stdout
                handler = _logging.StreamHandler(target)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


# stacklevel=2: a record names the line that called info(), not this module.
def log(level, msg, *args, **kwargs):
    """Log ``msg % args`` at ``level`` (a number: ``INFO``, or any int)."""
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, stacklevel=2, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, stacklevel=2, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, stacklevel=2, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, stacklevel=2, **kwargs)


def fatal(msg, *args, **kwargs):
    """Log at ``FATAL`` (50). As in TF, this only logs: the program goes on."""
    get_logger().critical(msg, *args, stacklevel=2, **kwargs)


def vlog(level, msg, *args, **kwargs):
    """TF's verbose log: ``log(level, ...)``. Its levels are small numbers
    (``vlog(1, ...)``), below ``DEBUG``, so they show only after
    ``set_verbosity(1)`` or lower."""
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def log_if(level, msg, condition, *args):
    """Log ``msg % args`` at ``level`` if ``condition``."""
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


def _count_for_caller():
    """How many times the line that called log_every_n/log_first_n got here before."""
    frame = _sys._getframe(2)
    token = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        count = _counts.get(token, 0)
        _counts[token] = count + 1
    return count


# TF means the same, but its lookup of the calling line goes one frame too far,
# so all the calls in one script share one count there.
def log_every_n(level, msg, n, *args):
    """Log ``msg % args`` on the 1st, (n+1)th, (2n+1)th... call from the same line."""
    if not _count_for_caller() % n:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_first_n(level, msg, n, *args):
    """Log ``msg % args`` only the first ``n`` times it is called from the same line."""
    if _count_for_caller() < n:
        get_logger().log(level, msg, *args, stacklevel=2)


def TaskLevelStatusMessage(msg):  # noqa: N802  (TF's name)
    """TF's status message of a task: an ``error`` line."""
    get_logger().error(msg, stacklevel=2)


def flush():
    """Not implemented, in TF either: it raises NotImplementedError."""
    raise NotImplementedError()


def get_verbosity():
    """The level below which messages are dropped (the logger's effective level)."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v):
    """Drop messages below level ``v`` from now on (``set_verbosity(INFO)``)."""
    get_logger().setLevel(v)


#: What ``tf.compat.v1.logging`` offers (TF 2.21's names).
__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "TaskLevelStatusMessage", "debug",
           "error", "fatal", "flush", "get_verbosity", "info", "log", "log_every_n",
           "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning"]
