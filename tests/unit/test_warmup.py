"""Cold start: importing compiles nothing; the warm-up covers every kernel family."""

import io
import os
import subprocess
import sys

from minitf import warmup


def test_importing_minitf_compiles_nothing(tmp_path):
    script = ("import sys, minitf, minitf.compat.v1 as tf\n"
              "from minitf.kernels.cpu import compile as c\n"
              "print(c.compiled_count(), 'minitf.kernels.cuda' in sys.modules,\n"
              "      'numba.cuda' in sys.modules, os.listdir(os.environ['NUMBA_CACHE_DIR']))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", "import os\n" + script], env=env,
                         capture_output=True, text=True, check=True).stdout.split("\n")[0]
    assert out == "0 False False []"


def test_cache_dir_follows_numba_cache_dir(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "c"))
    out = subprocess.run([sys.executable, "-c", "from minitf.kernels.cpu.compile import "
                          "cache_root; from minitf.kernels.generated import cache_dir; "
                          "print(cache_root()); print(cache_dir('minitf_fused'))"], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(tmp_path / "c"), str(tmp_path / "c" / "minitf_fused")]


def test_tasks_cover_every_kernel_family():
    labels = [label for label, _ in warmup.tasks()]
    for expected in ("Exp float32", "Exp float32 parallel", "AddV2 int32", "Sum float64",
                     "All bool", "MatMul int64", "Softmax float32",
                     "SparseSoftmaxCrossEntropyWithLogits float64", "ArgMax int32 parallel",
                     "Select float64", "LogicalNot bool", "Cast float32"):
        assert expected in labels
    assert len(labels) == len(set(labels)) > 300
    # Derived from the op table: every row that computes with the CPU backend is
    # there, and the RandomShuffleQueue's picker (its row's output is no tensor).
    from minitf.kernels import examples
    assert {label.split()[0] for label in labels} == {
        row.name for row in examples.rows_with_examples("CPU")} | {"RandomShuffleQueueV2"}


def test_warm_up_shows_progress_and_compiles(monkeypatch):
    from minitf.kernels.cpu import compile as c
    chosen = [t for t in warmup.tasks() if t[0] in ("Neg float64", "Sum float32")]
    monkeypatch.setattr(warmup, "tasks", lambda: chosen)
    stream = io.StringIO()
    took = warmup.warm_up(stream=stream)
    text = stream.getvalue()
    assert "compiling 2 kernels into" in text
    assert "[##############################]   2/2 Neg float64" in text
    assert "done in" in text and took > 0
    assert c.compiled_count() >= 2


def test_list_option_prints_the_kernels(capsys):
    assert warmup.main(["--list"]) == 0
    assert "Tanh float64 parallel" in capsys.readouterr().out.splitlines()
