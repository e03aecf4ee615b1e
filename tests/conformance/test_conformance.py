"""Conformance: each program under programs/ must print, on minitf, exactly
what real TensorFlow printed when its golden file was recorded.

Two tests per program, both with the program's name as their id:

  test_minitf_matches_golden[NAME]   runs NAME.py on minitf (this python)
  test_tf_still_prints_golden[NAME]  runs NAME.py on real TF, so goldens
                                     cannot rot; skipped without an oracle

The oracle is the python of a venv with tensorflow-cpu: $MINITF_TF_PYTHON, or
~/.cache/minitf/tf-venv/bin/python (what scripts/setup_tf_oracle.sh creates).
Regenerate goldens with:  python3 tests/conformance/record.py [NAME...]
"""
import sys
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
