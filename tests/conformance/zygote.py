"""A process that imports an engine once and forks a fresh copy of itself for
each conformance program.

Importing TensorFlow takes about 5 s on the 2-core CI machine, longer than
most programs run, and the suite runs 84 of them under each engine. So the
harness (conformance_harness.run_program) starts one of these per engine:

    python zygote.py REPLY_FD        (env: MINITF_ENGINE=tf or minitf, ...)

It imports ``engine`` (``tensorflow.compat.v1`` or ``minitf.compat.v1``, with
``disable_v2_behavior()`` done, exactly what every program's ``from engine
import tf`` does first), then reads one JSON request per line on stdin::

    {"program": PATH, "stdout": PATH, "stderr": PATH, "timeout": SECONDS}

and for each forks a child that runs the program as ``python PROGRAM`` would:
as ``__main__``, ``sys.argv == [PROGRAM]``, the program's folder first on
``sys.path``, fd 1 and 2 into the two files (C-level output too, such as TF's
placement lines), a normal interpreter exit (non-daemon threads joined,
``atexit`` handlers run, streams flushed). The child leads a process group of
its own; past the timeout the whole group is killed. The reply, one JSON line
on REPLY_FD: ``{"returncode": N}``, or ``{"returncode": null}`` on a timeout.

Forking after ``import tensorflow`` is safe here: the import starts no thread
but OpenBLAS's (which has fork handlers), and nothing else has run.
The zygote exits when its stdin closes (the harness, or pytest, is gone).
"""
import json
import os
import runpy
import select
import signal
import sys
import time


def _child(request):
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, fd)
        os.close(out)
    os.close(null)
    os.close(REPLY_FD)
    program = request["program"]
    sys.argv = [program]
    sys.path[0] = os.path.dirname(program)
    runpy.run_path(program, run_name="__main__")
    raise SystemExit(0)


def _wait(pid, timeout):
    """The child's exit status, or None once it ran past ``timeout`` (killed)."""
    deadline = time.monotonic() + timeout
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            left = deadline - time.monotonic()
            if left <= 0:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                return None
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(left, 0.005))
    finally:
        if pidfd is not None:
            os.close(pidfd)


def main():
    import engine  # noqa: F401 - the whole point: imported once, before any fork
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)       # raises SystemExit: the child never comes back here
        code = _wait(pid, request["timeout"])
        os.write(REPLY_FD, (json.dumps({"returncode": code}) + "\n").encode())


if __name__ == "__main__":
    REPLY_FD = int(sys.argv[1])
    main()
