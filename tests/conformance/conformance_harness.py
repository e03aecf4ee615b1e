"""Run a conformance program under one engine and turn its output into the
text we compare with the golden file.

Used by test_conformance.py (pytest) and record.py (writes the goldens).
No pytest import here, so record.py runs with any python3.

What real TensorFlow (2.21, tensorflow.compat.v1) prints for
ConfigProto(log_device_placement=True), checked on CPU-only TF:

  * When a session first places a graph (and again each time the graph has
    grown), the placer prints one line per node of the *whole* graph, in no
    useful order, bare, with printf to the C-level **stdout**:

        v/Assign: (Assign): /job:localhost/replica:0/task:0/device:CPU:0

    i.e. ``NAME: (OPTYPE): /job:localhost/replica:0/task:0/device:CPU:0``.
    This happens whatever TF_CPP_MIN_LOG_LEVEL says.  Because it is a C
    stream, its lines interleave unpredictably with Python's print output.
  * Only with TF_CPP_MIN_LOG_LEVEL=0 it also logs each line to **stderr**
    with the usual log prefix:

        I0000 00:00:1796022673.843695    4887 placer.cc:162] v: (VariableV2): /job:...

minitf prints the same bare lines (to stdout, like TF's printf; stderr would
do as well).  So for programs that opt in (a
``# conformance: placement-log`` line), we take placement lines from both
streams, strip any log prefix, drop duplicates (TF repeats the whole graph
when it grows; minitf may log per run), sort them, remove them from stdout
and append them under a ``--- placement log ---`` header.  A program that
opts in should run every op of its graph at least once, so that a runtime
which logs only the ops a run needs shows the same set as TF.
"""
from __future__ import annotations

import atexit
import difflib
import json
import os
import re
import select
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REPO = HERE.parent.parent
TIMEOUT_S = 60

PLACEMENT_OPT_IN = "# conformance: placement-log"
PLACEMENT_HEADER = "--- placement log ---"
# Optional glog/absl prefix ("I0000 00:00:1796022673.843695    4887 placer.cc:162] "),
# then NAME: (OPTYPE): DEVICE.
PLACEMENT_LINE = re.compile(
    r"^(?:[IWEF]\d{4} [0-9:.]+\s+\d+ \S+:\d+\] )?"
    r"(?P<line>[A-Za-z0-9.][\w.\-/>]*: \(\w+\): /job:\S+)\s*$"
)

DEFAULT_ORACLE = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"


def program_names() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def golden_path(name: str) -> Path:
    return PROGRAMS / f"{name}.expected"


def oracle_python() -> str | None:
    """The python of a venv with real TensorFlow, or None.

    MINITF_TF_PYTHON wins (scripts/setup_tf_oracle.sh prints a value for it);
    otherwise the venv that script creates by default, if it exists.
    """
    explicit = os.environ.get("MINITF_TF_PYTHON")
    if explicit:
        return explicit
    if DEFAULT_ORACLE.exists():
        return str(DEFAULT_ORACLE)
    return None


def opts_into_placement_log(name: str) -> bool:
    source = (PROGRAMS / f"{name}.py").read_text()
    return any(line.strip() == PLACEMENT_OPT_IN for line in source.splitlines())


@dataclass
class Run:
    name: str
    engine: str
    returncode: int | None  # None: killed after TIMEOUT_S
    stdout: str
    stderr: str
    text: str  # what is compared with the golden

    def problem(self) -> str | None:
        """Why this run cannot be compared at all, or None."""
        if self.returncode == 0:
            return None
        if self.returncode is None:
            what = f"timed out after {TIMEOUT_S} s"
        else:
            what = f"exited with status {self.returncode}"
        tail = "\n".join(self.stderr.splitlines()[-30:])
        return (f"program {self.name} under engine {self.engine!r} {what}.\n"
                f"--- stdout ---\n{self.stdout}--- stderr (last lines) ---\n{tail}")


def compared_text(stdout: str, stderr: str, placement_log: bool) -> str:
    if not placement_log:
        return stdout
    kept, placements = [], set()
    for line in stdout.splitlines():
        match = PLACEMENT_LINE.match(line)
        if match:
            placements.add(match.group("line"))
        else:
            kept.append(line)
    for line in stderr.splitlines():
        match = PLACEMENT_LINE.match(line)
        if match:
            placements.add(match.group("line"))
    return "\n".join(kept + [PLACEMENT_HEADER] + sorted(placements)) + "\n"


def program_env(engine: str) -> dict:
    """The environment a program runs in under ``engine``."""
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)   # pytest's, changed per test: one zygote serves all
    env["MINITF_ENGINE"] = engine
    env["PYTHONIOENCODING"] = "utf-8"
    # TF 2.21 has tf.layers and tf.nn.rnn_cell only through tf_keras (Keras 2),
    # which scripts/setup_tf_oracle.sh installs beside TF; this selects it.
    env["TF_USE_LEGACY_KERAS"] = "1"
    paths = [str(HERE)]
    if engine == "minitf":
        paths.append(str(REPO))  # works even without `pip install -e .`
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_program(name: str, python: str, engine: str, fresh: bool = False) -> Run:
    """Run programs/NAME.py with `python`, MINITF_ENGINE=engine: forked from a
    zygote that has imported the engine already (zygote.py says why), or with
    ``fresh`` in a process of its own, ``python NAME.py`` (record.py does so
    for the goldens, and the suite for one program, to show the two agree)."""
    env = program_env(engine)
    program = PROGRAMS / f"{name}.py"
    if fresh:
        try:
            proc = subprocess.run(
                [python, str(program)],
                cwd=HERE, env=env, capture_output=True, text=True,
                timeout=TIMEOUT_S,
            )
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            returncode = None
            stdout = _text(e.stdout)
            stderr = _text(e.stderr)
    else:
        returncode, stdout, stderr = zygote(python, env).run(program, TIMEOUT_S)
    text = compared_text(stdout, stderr, opts_into_placement_log(name))
    return Run(name, engine, returncode, stdout, stderr, text)


class ZygoteError(RuntimeError):
    """The zygote process died or stopped answering."""


class _Zygote:
    """One zygote.py process (an engine imported, waiting for programs)."""

    def __init__(self, python: str, env: dict):
        read_end, write_end = os.pipe()
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [python, str(HERE / "zygote.py"), str(write_end)], cwd=HERE, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.log,
            pass_fds=(write_end,))
        os.close(write_end)
        self.replies = os.fdopen(read_end, "rb")

    def run(self, program: Path, timeout: float) -> tuple[int | None, str, str]:
        with tempfile.TemporaryDirectory(prefix="minitf-conformance-") as tmp:
            out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
            request = {"program": str(program), "stdout": str(out), "stderr": str(err),
                       "timeout": timeout}
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except OSError:
                self._fail("could not send it the program")
            # the zygote kills a program at `timeout`; this is for the zygote itself
            ready, _, _ = select.select([self.replies], [], [], timeout + 30)
            line = self.replies.readline() if ready else b""
            if not line:
                self._fail("no answer for %s within %d s" % (program.name, timeout + 30))
            returncode = json.loads(line)["returncode"]
            return (returncode, out.read_text("utf-8", "replace") if out.exists() else "",
                    err.read_text("utf-8", "replace") if err.exists() else "")

    def _fail(self, what: str):
        self.stop()
        self.log.seek(0)
        tail = "\n".join(self.log.read().decode("utf-8", "replace").splitlines()[-30:])
        raise ZygoteError("conformance zygote (%s): %s; its stderr:\n%s"
                          % (self.proc.args[0], what, tail))

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()      # the zygote exits at the end of its input
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.replies.close()


_zygotes: dict = {}


def zygote(python: str, env: dict) -> _Zygote:
    """The running zygote for this python and environment (started if needed)."""
    key = (python, tuple(sorted(env.items())))
    zygote = _zygotes.get(key)
    if zygote is None or zygote.proc.poll() is not None:
        zygote = _zygotes[key] = _Zygote(python, env)
    return zygote


@atexit.register
def stop_zygotes():
    while _zygotes:
        _zygotes.popitem()[1].stop()


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def diff(expected: str, actual: str, name: str, actual_label: str) -> str:
    return "".join(difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile=f"programs/{name}.expected (recorded from real TF)",
        tofile=actual_label,
    ))

