"""Every lesson runs on real TensorFlow after the one import swap.

"Change one import line and you are on real TF" is a promise the lessons make;
this file keeps it. For each lesson, ``scripts/run_lesson_on_tf.py`` runs its
code cells in the TF oracle (``$MINITF_TF_PYTHON``, a venv with TF 2.21 and
tf_keras; skipped when there is none, as the conformance tests are), with
``import minitf.compat.v1 as tf`` turned into ``import tensorflow.compat.v1 as
tf`` and the cells tagged ``minitf-only`` or ``colab-install`` skipped. A
lesson fails on:

* any cell that raises on TF (the message names the lesson, the cell index,
  the error, the cell line it came through and the cell's first line);
* a hang: the run is stopped after ``LESSON_TIMEOUT_S`` and the message names
  the cell that was running;
* a cell tagged ``nbval-check-output`` whose output on TF differs from the one
  stored in the notebook (the output minitf printed), after the sanitizers of
  ``lessons/sanitize.cfg``. A cell whose output legitimately depends on the
  engine (an op name only one engine has, a count of threads) carries the tag
  ``output-differs-on-tf`` and a comment saying why; it still has to run.

The lessons run a few at a time in parallel processes (``PARALLEL`` of them:
most of a lesson's time is TF's import and servers waiting on each other, not
CPU), started when the first test of this file asks for a result.

The conventions that make the skipped cells honest are checked without TF:
every ``minitf-only`` cell's first line is ``# minitf-only: <what TF offers
instead>``, and at most a quarter of all lesson code cells are minitf-only.
"""
import configparser
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
RUNNER = ROOT / "scripts" / "run_lesson_on_tf.py"
SANITIZE = ROOT / "lessons" / "sanitize.cfg"
DEFAULT_ORACLE = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"

LESSON_TIMEOUT_S = 240.0
PARALLEL = max(3, min(6, os.cpu_count() or 2))
MINITF_ONLY_SHARE = 0.25
SKIP_TAGS = {"minitf-only", "colab-install", "nbval-skip"}
ENGINE_TAG = "output-differs-on-tf"


def oracle_python():
    explicit = os.environ.get("MINITF_TF_PYTHON")
    if explicit:
        return explicit
    return str(DEFAULT_ORACLE) if DEFAULT_ORACLE.exists() else None


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def code_cells(path):
    nb = nbformat.read(path, as_version=4)
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


# -- what nbval compares, sanitized the same way ----------
def sanitizers(path=SANITIZE):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


SANITIZERS = sanitizers()


def sanitize(text):
    for regex, replace in SANITIZERS:
        text = regex.sub(replace, text)
    return text


def stored_text(cell):
    """The stored stdout and text/plain outputs of a cell, in order, as the
    runner reports them (a display or a result shows as its text plus a newline)."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            plain = out.get("data", {}).get("text/plain")
            if plain is not None:
                parts.append(plain + "\n")
    return "".join(parts)


def tf_text(record):
    text = record.get("stdout", "")
    if record.get("result") is not None:
        text += record["result"] + "\n"
    return text


# -- running the lessons on TF ----------
class Run:
    """One lesson's run on TF: the JSON records, whether it timed out, stderr."""

    def __init__(self, path):
        self.path = path
        self.records, self.timed_out, self.stderr, self.seconds = [], False, "", 0.0
        self.leaked = False

    def last_started(self):
        started = [r["cell"] for r in self.records if r.get("status") == "started"]
        finished = {r["cell"] for r in self.records
                    if r.get("status") in ("ran", "error", "skipped")}
        pending = [c for c in started if c not in finished]
        return pending[-1] if pending else None

    def done(self):
        return next((r for r in self.records if "done" in r), None)


def run_on_tf(path, python):
    run = Run(path)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3",
               MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)   # the oracle venv must not see this tree's minitf shim
    start = time.monotonic()
    proc = subprocess.Popen([python, str(RUNNER), str(path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    err_chunks = []
    err_reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()),
                                  daemon=True)
    err_reader.start()
    timer = threading.Timer(LESSON_TIMEOUT_S, lambda: _kill(run, proc))
    timer.start()
    try:
        for line in proc.stdout:
            line = line.strip()
            if line.startswith("{"):
                try:
                    run.records.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        proc.wait()
        try:   # the runner is gone; anything left in its process group is a leak
            if run.timed_out:
                raise ProcessLookupError   # already killed with the runner
            os.killpg(proc.pid, 9)
            run.leaked = True
        except (ProcessLookupError, PermissionError):
            pass
    finally:
        timer.cancel()
        if proc.poll() is None:
            _kill(run, proc)
        err_reader.join(5)
    run.stderr = "".join(err_chunks)[-3000:]
    run.seconds = time.monotonic() - start
    return run


def _kill(run, proc):
    run.timed_out = True
    try:
        os.killpg(proc.pid, 9)   # the runner and any server process a cell started
    except ProcessLookupError:
        pass


_runs = {}
_lock = threading.Lock()


def lesson_run(path, request):
    """The run of ``path``; the first call starts every selected lesson, PARALLEL at a time."""
    python = oracle_python()
    if python is None:
        pytest.skip("real TensorFlow not available: set MINITF_TF_PYTHON "
                    "(see scripts/setup_tf_oracle.sh)")
    if not Path(python).exists():
        pytest.fail("MINITF_TF_PYTHON=%s does not exist" % python, pytrace=False)
    with _lock:
        if not _runs:
            pool = ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="lesson-on-tf")
            selected = [item.callspec.params["path"] for item in request.session.items
                        if getattr(item, "originalname", None) == "test_lesson_runs_on_tf"]
            for lesson in selected or [path]:
                _runs[lesson] = pool.submit(run_on_tf, lesson, python)
            pool.shutdown(wait=False)
    return _runs[path].result()


def first_line(source):
    return next((line for line in source.splitlines() if line.strip()), "").strip()


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_runs_on_tf(path, request):
    run = lesson_run(path, request)
    cells = dict(code_cells(path))
    name = path.name
    problems = []
    if run.timed_out:
        hung = run.last_started()
        where = ("cell %d (%s)" % (hung, first_line(cells[hung].source))
                 if hung is not None else "before its first cell")
        problems.append("%s: stopped after %.0f s on TF: it hangs in %s"
                        % (name, LESSON_TIMEOUT_S, where))
    elif run.done() is None:
        hung = run.last_started()
        problems.append("%s: the TF run died in cell %s:\n%s" % (name, hung, run.stderr))
    if run.leaked:
        problems.append("%s: processes it started on TF were still running after its last "
                        "cell: stop every process a lesson starts (terminate, wait)" % name)
    for record in run.records:
        if record.get("status") != "error":
            continue
        index = record["cell"]
        problems.append("%s cell %d raised on TF: %s (%s); the cell starts: %s"
                        % (name, index, record.get("error"), record.get("line", "line ?"),
                           first_line(cells[index].source)))
    for record in run.records:
        if record.get("status") != "ran":
            continue
        cell = cells[record["cell"]]
        if "nbval-check-output" not in tags(cell) or ENGINE_TAG in tags(cell):
            continue
        if "solution" in tags(cell) or "build-solution" in tags(cell):
            continue   # solutions store no output (it would give the answer away)
        want, got = sanitize(stored_text(cell)), sanitize(tf_text(record))
        if want != got:
            problems.append("%s cell %d (%s): its checked output differs on TF\n"
                            "  stored (minitf): %r\n  on TF:           %r\n"
                            "  (if the difference is the engine's, tag the cell %s and "
                            "say why in it)" % (name, record["cell"],
                                                first_line(cell.source), want, got, ENGINE_TAG))
    assert not problems, "\n".join(problems)


# -- the conventions, no TF needed ----------
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_minitf_only_cells_say_what_tf_offers(path):
    bad = []
    for index, cell in code_cells(path):
        if "minitf-only" in tags(cell):
            if not re.match(r"# minitf-only: \S", cell.source.lstrip()):
                bad.append("cell %d starts %r" % (index, first_line(cell.source)))
        if ENGINE_TAG in tags(cell) and "differs on tf" not in cell.source.lower():
            bad.append("cell %d is tagged %s but no comment in it says why its output "
                       "differs on TF" % (index, ENGINE_TAG))
    assert not bad, ("%s: a minitf-only cell's first line is '# minitf-only: <what real TF "
                     "offers instead>':\n  %s" % (path.name, "\n  ".join(bad)))


def test_at_most_a_quarter_of_the_lesson_cells_are_minitf_only():
    per_lesson, total, only = [], 0, 0
    for path in LESSONS:
        cells = [c for _, c in code_cells(path) if "colab-install" not in tags(c)]
        n_only = sum("minitf-only" in tags(c) for c in cells)
        per_lesson.append("%s: %d of %d" % (path.name[:2], n_only, len(cells)))
        total += len(cells)
        only += n_only
    print("minitf-only code cells: %d of %d (%.0f%%); per lesson: %s"
          % (only, total, 100.0 * only / max(total, 1), ", ".join(per_lesson)))
    assert only <= MINITF_ONLY_SHARE * total, (
        "%d of %d lesson code cells are minitf-only; at most a quarter may be (%s)"
        % (only, total, ", ".join(per_lesson)))


if __name__ == "__main__":  # one lesson: python3 tests/lessons/test_lessons_on_tf.py 01
    for arg in sys.argv[1:]:
        for lesson in LESSONS:
            if lesson.name.startswith(arg):
                result = run_on_tf(lesson, oracle_python())
                print(lesson.name, "%.1f s" % result.seconds, result.done())
