"""Conformance: each program under programs/ must print, on minitf, exactly
what real TensorFlow printed when its golden file was recorded.

Two tests per program, both with the program's name as their id:

  test_minitf_matches_golden[NAME]   runs NAME.py on minitf (this python)
  test_tf_still_prints_golden[NAME]  runs NAME.py on real TF, so goldens
                                     cannot rot; skipped without an oracle

The oracle is the python of a venv with tensorflow-cpu: $MINITF_TF_PYTHON, or
~/.cache/minitf/tf-venv/bin/python (what scripts/setup_tf_oracle.sh creates).
Regenerate goldens with:  python3 tests/conformance/record.py [NAME...]

Both engines' programs are forked from a zygote that imported the engine once
(zygote.py: importing TF takes longer than most programs run); record.py runs
each in a fresh process.
"""
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance_harness as harness  # noqa: E402

NAMES = harness.program_names()


def _golden(name):
    path = harness.golden_path(name)
    if not path.exists():
        pytest.fail(f"no golden file {path.name}: record it from real TF with "
                    f"`python3 tests/conformance/record.py {name}`", pytrace=False)
    return path.read_text()


def _compare(name, python, engine, label):
    expected = _golden(name)
    run = harness.run_program(name, python, engine)
    problem = run.problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    if run.text != expected:
        pytest.fail(f"{label} output differs from the golden file:\n"
                    + harness.diff(expected, run.text, name, label), pytrace=False)


def test_there_are_programs():
    assert len(NAMES) >= 10, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_minitf_matches_golden(name):
    _compare(name, sys.executable, "minitf", "minitf")


@pytest.mark.parametrize("name", NAMES)
def test_tf_still_prints_golden(name):
    python = harness.oracle_python()
    if python is None:
        pytest.skip("real TensorFlow not available: set MINITF_TF_PYTHON "
                    "(see scripts/setup_tf_oracle.sh)")
    if not Path(python).exists():
        pytest.fail(f"MINITF_TF_PYTHON={python} does not exist", pytrace=False)
    _compare(name, python, "tf", f"real TF ({python})")


# -- the zygote the programs are forked from (zygote.py) -------------------------------------------

def _forked(tmp_path, source, timeout=20):
    program = tmp_path / "program.py"
    program.write_text(source)
    return harness.zygote(sys.executable, harness.program_env("minitf")).run(program, timeout)


def test_a_forked_program_exits_as_a_fresh_process_would(tmp_path):
    code, out, err = _forked(tmp_path, textwrap.dedent("""
        import atexit, os, sys, threading, time
        from engine import tf, ENGINE
        atexit.register(lambda: print("atexit ran"))
        def late():
            time.sleep(0.2)
            print("non-daemon thread joined")
        threading.Thread(target=late).start()
        os.write(1, b"C-level write\\n")
        print(ENGINE, sys.argv == [__file__], __name__, sys.path[0] == os.path.dirname(__file__))
        print("to stderr", file=sys.stderr)
        sys.exit(3)
    """))
    assert code == 3
    assert out.splitlines() == ["C-level write", "minitf True __main__ True",
                                "non-daemon thread joined", "atexit ran"]
    assert err == "to stderr\n"


def test_a_forked_program_that_raises_exits_1_with_its_traceback(tmp_path):
    code, out, err = _forked(tmp_path, "print('before')\nraise ValueError('from the program')\n")
    assert code == 1 and out == "before\n"
    assert "ValueError: from the program" in err and "program.py" in err


def test_a_forked_program_past_its_timeout_is_killed_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    code, out, _ = _forked(tmp_path, textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("started", flush=True)
        time.sleep(60)
    """), timeout=3)
    assert code is None and out == "started\n"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{child}"):
        time.sleep(0.05)            # killed with the group; reaped by init
    assert not os.path.exists(f"/proc/{child}") or \
        open(f"/proc/{child}/stat").read().split()[2] == "Z"
    assert _forked(tmp_path, "print('next')\n") == (0, "next\n", "")  # the zygote serves on


def test_one_program_forked_and_fresh_prints_the_same():
    forked = harness.run_program("graph_split_processes", sys.executable, "minitf")
    fresh = harness.run_program("graph_split_processes", sys.executable, "minitf", fresh=True)
    assert forked.returncode == fresh.returncode == 0
    assert forked.text == fresh.text == _golden("graph_split_processes")
