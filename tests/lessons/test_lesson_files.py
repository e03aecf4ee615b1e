"""The lessons' files are in shape: links in sync with pyproject.toml, and
every notebook follows the lesson conventions (the cells themselves are run
and compared by nbval: ``python3 -m pytest lessons``)."""
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
sys.path.insert(0, str(ROOT / "scripts"))
import make_links  # noqa: E402

IMPORT_CELL = ("import minitf.compat.v1 as tf   # on real TensorFlow: import tensorflow.compat.v1 "
               "as tf\ntf.disable_eager_execution()    # TF 2 starts eager; TF1 code builds "
               "graphs (a no-op on minitf)")


def test_links_and_readme_table_are_in_sync():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_links.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_links_and_install_pin_the_release_tag():
    """Colab installs the release of pyproject.toml's version from its one repository URL."""
    url, tag = make_links.repository_url(), make_links.release_tag()
    assert re.fullmatch(r"v\d+\.\d+\.\d+\S*", tag), tag
    requirement = "minitf-edu @ git+%s.git@%s" % (url, tag)
    for path in LESSONS:
        nb = nbformat.read(path, as_version=4)
        install = [c for c in nb.cells if "colab-install" in tags(c)][0].source
        assert '"%s"' % requirement in install, "%s: the install cell must pin %s" % (
            path.name, requirement)
        assert "@main" not in install and "/main/" not in nb.cells[0].source
        assert "/blob/%s/lessons/%s" % (tag, path.name) in nb.cells[0].source
        assert "/v2/gh/%s/%s/%s?" % (make_links.github_slug(url) + (tag,)) in nb.cells[0].source


def test_lessons_exist():
    assert LESSONS, "no lessons/NN_*.ipynb found"


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_conventions(path):
    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata.get("minitf", {})
    assert int(path.name[:2]) == meta.get("lesson"), "metadata.minitf.lesson must match the file"
    assert "widgets" not in nb.metadata, "commit lessons without saved widget state"
    cells = nb.cells
    assert "lesson-links" in tags(cells[0]), "the first cell holds the Binder/Colab links"
    code = [c for c in cells if c.cell_type == "code"]
    assert "colab-install" in tags(code[0]), "the first code cell is the Colab install cell"
    assert 'if "google.colab" in sys.modules' in code[0].source
    assert not re.search(r"pip install[^\n]*\bminitf\b(?!-edu)", code[0].source), \
        "never install the bare PyPI name 'minitf' (another project)"
    assert any(c.source.startswith(IMPORT_CELL) for c in code), (
        "the import cell starts with exactly these two lines (one swap makes it TF):\n"
        + IMPORT_CELL)
    for c in code:
        if "minitf-only" in tags(c):
            continue
        for line in re.findall(r"^\s*((?:from|import) minitf\b.*)$", c.source, re.M):
            assert line.startswith("import minitf.compat.v1 as tf"), (
                "a portable cell imports minitf only by the import line (the one line a TF "
                "learner swaps); mark cells that need more minitf-only: %r" % line)
    opening = cells[1].source
    assert opening.startswith("# Lesson %d" % meta["lesson"])
    assert "What you will learn" in opening and "builds on" in opening
    exercises = [c for c in code if "exercise" in tags(c)]
    solutions = [c for c in code if "solution" in tags(c)]
    assert 2 <= len(exercises) <= 4, "2-4 exercises per lesson"
    assert len(solutions) == len(exercises), "every exercise has a folded solution"
    for c in solutions:
        assert c.metadata.get("jupyter", {}).get("source_hidden"), "solutions start folded"
        assert not c.outputs, ("a solution's output is not stored (Colab ignores the folding; "
                               "scripts/make_links.py --execute clears it)")
        assert "check_exercise" in c.source, ("a solution runs its exercise's check (nbval "
                                              "fails on the check's error if it is wrong)")
    for c in code:
        assert c.execution_count is not None or not c.outputs, \
            "a cell with outputs but no execution count fails nbval"
    assert any(c.execution_count for c in code), "commit lessons executed, with outputs"
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), \
        "each lesson shows at least one picture (widget or plot)"
