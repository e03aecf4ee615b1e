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

import difflib
import os
import re
import subprocess
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


def run_program(name: str, python: str, engine: str) -> Run:
    """Run programs/NAME.py with `python`, MINITF_ENGINE=engine."""
    env = dict(os.environ)
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
    try:
        proc = subprocess.run(
            [python, str(PROGRAMS / f"{name}.py")],
            cwd=HERE, env=env, capture_output=True, text=True,
            timeout=TIMEOUT_S,
        )
        returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        returncode = None
        stdout = _text(e.stdout)
        stderr = _text(e.stderr)
    text = compared_text(stdout, stderr, opts_into_placement_log(name))
    return Run(name, engine, returncode, stdout, stderr, text)


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

