"""pytest set-up for running the lessons with nbval (``python3 -m pytest lessons``).

pyproject.toml turns on ``--nbval-lax``: every cell runs, and only cells
tagged ``nbval-check-output`` have their outputs compared. This file adds:

* the sanitizers in ``sanitize.cfg`` (ports, addresses, timings, pids), found
  wherever pytest is started from;
* a time budget: each lesson must run in under ``LESSON_BUDGET_S`` seconds
  (kernel start included) and all of them in under ``TOTAL_BUDGET_S``;
* a leak check: when a lesson's last cell has run, no process the lesson
  started may still be alive: no descendant of the kernel and no process in
  the kernel's session (an orphaned grandchild keeps it), so no server of a
  lesson outlives it or holds a port. Lessons pick free ports from the OS, so
  they can run in any order, twice, or in parallel with ``-n 2 --dist
  loadfile``. Servers a lesson runs inside the kernel itself
  (``tf.test.create_local_cluster``: TF has no way to stop those) end with
  the kernel. Leftovers are reported, then killed so they cannot spoil the
  next lesson.
"""
import os
import signal
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LESSON_BUDGET_S = 60.0
TOTAL_BUDGET_S = 600.0

_started = {}    # notebook path -> time its first cell was announced
_last_item = {}  # notebook path -> nodeid of its last cell
_elapsed = {}    # notebook path -> seconds


def pytest_configure(config):
    opt = config.option
    if getattr(opt, "nbval_sanitize_with", "missing") is None:
        opt.nbval_sanitize_with = str(HERE / "sanitize.cfg")


def _file_of(nodeid):
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        if _file_of(item.nodeid).endswith(".ipynb"):
            _last_item[_file_of(item.nodeid)] = item.nodeid


def pytest_runtest_logstart(nodeid, location):
    if _file_of(nodeid) in _last_item:
        _started.setdefault(_file_of(nodeid), time.monotonic())


def _processes():
    """{pid: (ppid, session id, command line)} of every process, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()   # after "pid (comm)": state ppid pgrp session
        if fields[0] == "Z":
            continue                             # a zombie holds no port and runs nothing
        table[int(entry)] = (int(fields[1]), int(fields[3]),
                             cmdline.replace(b"\0", b" ").decode(errors="replace").strip())
    return table


def left_behind(kernel_pid):
    """Processes the kernel started that are still alive: [(pid, command line)]."""
    if not Path("/proc").is_dir():
        return []
    table = _processes()
    if kernel_pid not in table:
        return []
    session = table[kernel_pid][1]
    found, frontier = set(), {kernel_pid}
    while frontier:
        frontier = {pid for pid, (ppid, _, _) in table.items() if ppid in frontier} - found
        found |= frontier
    if session == kernel_pid:   # the kernel leads its own session: orphans keep its id
        found |= {pid for pid, (_, sid, _) in table.items() if sid == session}
    found.discard(kernel_pid)
    return sorted((pid, table[pid][2]) for pid in found
                  if PYTHONS_OWN_HELPER not in table[pid][2])


#: multiprocessing's resource tracker: the spawn start method starts it (lesson 6
#: starts servers that way); it holds no port and ends with the kernel.
PYTHONS_OWN_HELPER = "from multiprocessing.resource_tracker import main"


def kernel_pid(item):
    kernel = getattr(item.parent, "kernel", None)
    provisioner = getattr(getattr(kernel, "km", None), "provisioner", None)
    return getattr(provisioner, "pid", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    path = _file_of(item.nodeid)
    if call.when != "call" or _last_item.get(path) != item.nodeid:
        return
    problems = []
    elapsed = time.monotonic() - _started.get(path, time.monotonic())
    _elapsed[path] = elapsed
    if elapsed > LESSON_BUDGET_S:
        problems.append("the lesson took %.1f s; each lesson must run in under %.0f s "
                        "(keep tensors small)" % (elapsed, LESSON_BUDGET_S))
    total = sum(_elapsed.values())
    if total > TOTAL_BUDGET_S:
        problems.append("the lessons so far took %.0f s together; the budget for all of "
                        "them is %.0f s" % (total, TOTAL_BUDGET_S))
    pid = kernel_pid(item)
    left = left_behind(pid) if pid else []
    if left:
        problems.append("still running after the last cell: %s; stop every process the "
                        "lesson starts (terminate, then wait)"
                        % "; ".join("pid %d %s" % p for p in left))
        for leftover, _ in left:
            try:
                os.kill(leftover, signal.SIGKILL)
            except OSError:
                pass
    if problems and rep.passed:
        rep.outcome = "failed"
        rep.longrepr = "%s:\n  %s" % (Path(path).name, "\n  ".join(problems))


def pytest_terminal_summary(terminalreporter):
    if _elapsed:
        terminalreporter.write_sep("-", "lesson run times")
        for path, seconds in sorted(_elapsed.items()):
            terminalreporter.write_line("%6.1f s  %s" % (seconds, Path(path).name))
