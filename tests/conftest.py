"""Shared pytest set-up for the whole suite. Keep it small: fixtures that only
one area needs belong in that area's own conftest.py."""
import os
from pathlib import Path

# Kernels switch to their threaded loops from 8M elements by default
# (minitf/kernels/cpu/compile.py says why). The suite lowers that to 64K, so
# that both loops of every kernel are tested on arrays the parity examples can
# afford; processes the tests start inherit it.
os.environ.setdefault("MINITF_PARALLEL_MIN_SIZE", str(1 << 16))

_DEFAULT_ORACLE = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"


def pytest_report_header(config):
    # Say up front whether the conformance tests can ask real TensorFlow.
    oracle = os.environ.get("MINITF_TF_PYTHON") or (
        str(_DEFAULT_ORACLE) if _DEFAULT_ORACLE.exists() else None)
    if oracle:
        return f"conformance oracle (real TensorFlow): {oracle}"
    return ("conformance oracle: none (set MINITF_TF_PYTHON, see "
            "scripts/setup_tf_oracle.sh); TF comparisons will be skipped")
