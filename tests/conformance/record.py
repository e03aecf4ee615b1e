"""Record golden files from real TensorFlow.

    python3 tests/conformance/record.py            # every program
    python3 tests/conformance/record.py NAME ...   # just these

Runs each programs/NAME.py under the oracle (MINITF_TF_PYTHON, or the venv
scripts/setup_tf_oracle.sh makes) and writes programs/NAME.expected.
Read every changed golden before committing it: it is the specification.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance_harness as harness  # noqa: E402


def main(argv):
    python = harness.oracle_python()
    if python is None or not Path(python).exists():
        sys.exit("no real TensorFlow: run scripts/setup_tf_oracle.sh and set "
                 "MINITF_TF_PYTHON to the python it prints")
    names = argv or harness.program_names()
    unknown = sorted(set(names) - set(harness.program_names()))
    if unknown:
        sys.exit(f"no such program(s): {', '.join(unknown)}")
    failed = False
    for name in names:
        run = harness.run_program(name, python, "tf", fresh=True)
        problem = run.problem()
        if problem:
            print(problem, file=sys.stderr)
            failed = True
            continue
        path = harness.golden_path(name)
        old = path.read_text() if path.exists() else None
        path.write_text(run.text)
        state = "new" if old is None else ("same" if old == run.text else "CHANGED")
        print(f"{state:8} {path.relative_to(harness.REPO)}")
        if old is not None and old != run.text:
            print(harness.diff(old, run.text, name, "real TF now"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
