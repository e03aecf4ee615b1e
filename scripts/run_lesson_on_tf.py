"""Run lesson notebooks the way a learner on real TensorFlow would.

Every code cell runs in one IPython shell, in order, with the one import line
changed (``import minitf.compat.v1 as tf`` -> ``import tensorflow.compat.v1 as
tf``, everywhere a cell has it, programs written with ``%%writefile`` too).
Cells tagged ``minitf-only`` (they use something only minitf has, and say what
TF offers instead) and ``colab-install`` are skipped. Run it with the python
of the TF venv (``scripts/setup_tf_oracle.sh`` prints it)::

    $MINITF_TF_PYTHON scripts/run_lesson_on_tf.py lessons/01_graphs_and_sessions.ipynb

It prints one JSON object per line: ``{"cell": i, "status": "ran" | "skipped"
| "error", "stdout": ..., "error": "ErrorClass: message"}`` (a cell that ends
in an expression also has ``"result"``: its text/plain, what Jupyter shows as
``Out[n]``, kept out of ``stdout`` as nbval keeps it apart), each flushed
before the next cell starts; a ``{"cell": i, "status": "started"}`` line comes
before each cell runs, so a cell that hangs is the one whose start is the last
line printed. A last ``{"done": ...}`` line ends the run. ``--engine minitf`` runs the
same cells on minitf instead (the import is left alone), to compare the two.

The lesson runs in a temporary copy of its folder, so the files it writes
(checkpoints, programs, event files) do not land in the repository.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

SKIP_TAGS = {"minitf-only", "colab-install", "nbval-skip"}
MINITF_IMPORT = re.compile(r"^(\s*)import minitf\.compat\.v1 as tf\b", re.MULTILINE)
TF_IMPORT = r"\1import tensorflow.compat.v1 as tf"


def to_tf(source):
    """The cell as a learner on real TF writes it: the one import line swapped."""
    return MINITF_IMPORT.sub(TF_IMPORT, source)


def code_cells(notebook):
    nb = json.loads(Path(notebook).read_text())
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield index, "".join(source) if isinstance(source, list) else source, \
                set(cell.get("metadata", {}).get("tags", []))


def failing_line(error, source):
    """"line N: text" of the cell line the error came through (the innermost
    frame of the cell's own code: cells have no file on disk), or None."""
    found = None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if not os.path.exists(code.co_filename) and code.co_filename.startswith(("<", "/tmp")):
            found = tb.tb_lineno
        tb = tb.tb_next
    if error.__class__ is SyntaxError and getattr(error, "lineno", None):
        found = error.lineno
    lines = source.splitlines()
    if found is None or not 1 <= found <= len(lines):
        return None
    return "line %d: %s" % (found, lines[found - 1].strip())


def emit(record):
    print(json.dumps(record), flush=True)


def run(notebook, engine):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("MPLBACKEND", "Agg")
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    # IPython's stand-in for __main__ lacks the __spec__ a Jupyter kernel's has, and
    # multiprocessing's spawn start method reads it (lesson 6 starts servers that way).
    main = sys.modules["__main__"]
    if not hasattr(main, "__spec__"):
        main.__spec__ = None
    shell.run_line_magic("colors", "nocolor")   # tracebacks as plain text in the JSON
    results = []
    # A cell's last expression: keep its text/plain instead of printing "Out[n]: ...".
    shell.displayhook.write_output_prompt = lambda: None
    shell.displayhook.write_format_data = \
        lambda format_dict, md_dict=None: results.append(format_dict.get("text/plain"))
    ran = errors = skipped = 0
    for index, source, tags in code_cells(notebook):
        if tags & SKIP_TAGS:
            skipped += 1
            emit({"cell": index, "status": "skipped", "tags": sorted(tags & SKIP_TAGS)})
            continue
        if engine == "tf":
            source = to_tf(source)
        emit({"cell": index, "status": "started"})
        del results[:]
        with capture_output(display=False) as captured:
            # store_history: IPython reads a trailing ";" (hide the result) from the history
            result = shell.run_cell(source, store_history=True, silent=False)
        error = result.error_before_exec or result.error_in_exec
        record = {"cell": index, "status": "error" if error else "ran",
                  "stdout": captured.stdout}
        if results and results[-1] is not None:
            record["result"] = results[-1]
        if error is not None:
            errors += 1
            record["error"] = "%s: %s" % (type(error).__name__, str(error).splitlines()[0]
                                          if str(error) else "")
            record["stderr"] = captured.stderr[-2000:]
            line = failing_line(error, source)
            if line:
                record["line"] = line
        else:
            ran += 1
        emit(record)
    # The spawn start method's resource tracker (lesson 6) would outlive this process
    # by a moment; stop it now so that the caller finds nothing left running.
    from multiprocessing import resource_tracker
    resource_tracker._resource_tracker._stop()
    emit({"done": Path(notebook).name, "ran": ran, "errors": errors, "skipped": skipped})
    return errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+")
    parser.add_argument("--engine", choices=("tf", "minitf"), default="tf")
    args = parser.parse_args(argv)
    failed = 0
    for notebook in args.notebooks:
        notebook = Path(notebook).resolve()
        with tempfile.TemporaryDirectory(prefix="lesson-on-%s-" % args.engine) as tmp:
            work = Path(tmp) / notebook.parent.name
            shutil.copytree(notebook.parent, work,
                            ignore=shutil.ignore_patterns("*.ipynb", "__pycache__"))
            cwd = os.getcwd()
            os.chdir(work)
            sys.path.insert(0, str(work))
            try:
                failed += run(notebook, args.engine)
            finally:
                sys.path.remove(str(work))
                os.chdir(cwd)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
