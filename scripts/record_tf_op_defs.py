"""Record TF's definitions of the op types minitf declares.

    python3 scripts/record_tf_op_defs.py

Lists the op types of minitf's op table (in this python), asks real
TensorFlow (MINITF_TF_PYTHON, or the venv scripts/setup_tf_oracle.sh makes)
for its ``OpDef`` of each, and writes them, as an ``OpList`` in protobuf text
format, to minitf/framework/tf_op_defs.pbtxt. minitf reads that file to write
GraphDefs with TF's default attrs, to give imported nodes their output types,
and to write a ``.meta`` file's ``stripped_op_list``. Op types TF does not
have are listed in minitf/framework/minitf_op_defs.pbtxt, written by hand.
tests/conformance/test_graph_formats.py checks the file still matches TF.
"""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "minitf" / "framework" / "tf_op_defs.pbtxt"

ORACLE = r'''
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
from tensorflow.python.framework import op_def_registry
from tensorflow.core.framework import op_def_pb2
from google.protobuf import text_format
import tensorflow as tf
ops = op_def_pb2.OpList()
for name in sys.stdin.read().split():
    od = op_def_registry.get(name)
    if od is not None:
        ops.op.add().CopyFrom(od)
sys.stdout.write("# TF %s's OpDefs of the op types minitf declares.\n" % tf.__version__)
sys.stdout.write("# Written by scripts/record_tf_op_defs.py; do not edit.\n")
sys.stdout.write(text_format.MessageToString(ops))
'''


def oracle_python():
    explicit = os.environ.get("MINITF_TF_PYTHON")
    default = Path.home() / ".cache" / "minitf" / "tf-venv" / "bin" / "python"
    return explicit or (str(default) if default.exists() else None)


def main():
    sys.path.insert(0, str(REPO))
    import minitf.compat.v1  # noqa: F401  (declares the op table)
    import minitf.train  # noqa: F401
    from minitf.framework import op_def
    names = sorted(r.name for r in op_def.all_op_defs())
    python = oracle_python()
    if python is None:
        sys.exit("no real TensorFlow: run scripts/setup_tf_oracle.sh and set MINITF_TF_PYTHON")
    run = subprocess.run([python, "-c", ORACLE], input="\n".join(names), capture_output=True,
                         text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(run.stderr[-3000:])
    OUT.write_text(run.stdout)
    print("wrote %s (%d op types asked)" % (OUT.relative_to(REPO), len(names)))


if __name__ == "__main__":
    main()
