"""pytest set-up for running the lessons with nbval (``python3 -m pytest lessons``).

pyproject.toml turns on ``--nbval-lax``: every cell runs, and only cells
tagged ``nbval-check-output`` have their outputs compared. This file adds:

* the sanitizers in ``sanitize.cfg`` (ports, addresses, timings, pids), found
  wherever pytest is started from;
* a time budget: each lesson must run in under ``LESSON_BUDGET_S`` seconds
  (kernel start included) and all of them in under ``TOTAL_BUDGET_S``;
* a leak check: when a lesson's last cell has run, nothing may still listen
  on that lesson's port range (23000 + 100 * lesson number, 100 ports), so
  lessons can run in any order, or in parallel with ``-n 2 --dist loadfile``.
"""
import socket
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LESSON_BUDGET_S = 60.0
TOTAL_BUDGET_S = 600.0
PORT_BASE = 23000
PORTS_PER_LESSON = 100

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


def lesson_ports(path):
    number = Path(path).name[:2]
    if not number.isdigit():
        return range(0)
    start = PORT_BASE + PORTS_PER_LESSON * int(number)
    return range(start, start + PORTS_PER_LESSON)


def listening(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


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
    left = [p for p in lesson_ports(path) if listening(p)]
    if left:
        problems.append("still listening after the last cell on port(s) %s: stop every "
                        "server the lesson starts" % left)
    if problems and rep.passed:
        rep.outcome = "failed"
        rep.longrepr = "%s:\n  %s" % (Path(path).name, "\n  ".join(problems))


def pytest_terminal_summary(terminalreporter):
    if _elapsed:
        terminalreporter.write_sep("-", "lesson run times")
        for path, seconds in sorted(_elapsed.items()):
            terminalreporter.write_line("%6.1f s  %s" % (seconds, Path(path).name))
