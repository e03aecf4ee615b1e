"""minitf's layers import one way, and lazy imports say why they are lazy.

The layers, bottom to top::

    framework <- ops <- kernels <- runtime <- distributed <- the API packages

(the API packages build on everything: ``compat``, ``train``, ``data``,
``layers``, ``losses``, ``metrics``, ``app``, ``summary``, ``warmup``, ``timeline``,
``datasets`` and the widgets).
A module may import its own layer and the layers below it, never one above:
the framework never needs the op table, an op never needs the executor, a
kernel never reaches into a service. Every import statement counts, also one
inside a function: a function-level import is allowed only as a documented
*lazy* import (a comment on its line, or the line above, saying ``lazy`` and
why: importing Numba, probing CUDA, ...), and it must still point down.

The imports are read with ``ast`` from the source files, so the test names the
file and line of the import that breaks the shape.
"""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LAYERS = ["framework", "ops", "kernels", "runtime", "distributed", "api"]
API_PACKAGES = {"compat", "train", "data", "layers", "losses", "metrics", "app", "warmup",
                "timeline", "datasets", "widgets", "summary", "__init__"}


def layer_of(module):
    """The layer of a ``minitf.x.y`` module name (None for a non-minitf module)."""
    parts = module.split(".")
    if parts[0] != "minitf":
        return None
    if len(parts) == 1:
        return "api"                    # ``import minitf`` / ``from minitf import ops``
    top = parts[1]
    return top if top in LAYERS else "api" if top in API_PACKAGES else None


def _source_files():
    for folder, package in ((os.path.join(ROOT, "minitf"), "minitf"),
                            (os.path.join(ROOT, "widgets"), "minitf.widgets")):
        for dirpath, _, files in os.walk(folder):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, folder)[:-3].replace(os.sep, ".")
                    module = package if rel == "__init__" else package + "." + \
                        rel.replace(".__init__", "")
                    yield path, module


def _module_level(tree):
    """The statements that run at import time (also inside top-level if/try)."""
    out = set()

    def walk(body):
        for node in body:
            out.add(id(node))
            if isinstance(node, (ast.If, ast.Try)):
                walk(node.body)
                walk(node.orelse)
                walk(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)
    walk(tree.body)
    return out


def imports(path, module):
    """``[(line, imported module, at module level?, documented lazy?)]``."""
    source = open(path).read()
    lines = source.splitlines()
    tree = ast.parse(source)
    top = _module_level(tree)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                      # relative: from . import x
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # ``from minitf.ops import math_ops`` imports the submodule minitf.ops.math_ops
            names = [base + "." + a.name if layer_of(base + "." + a.name) and
                     _is_module(base + "." + a.name) else base for a in node.names]
        else:
            continue
        here = lines[node.lineno - 1] + (lines[node.lineno - 2] if node.lineno > 1 else "")
        for name in names:
            found.append((node.lineno, name, id(node) in top, "lazy" in here.lower()))
    return found


def _is_module(name):
    rel = name.split(".")[1:]
    base = os.path.join(ROOT, "widgets" if rel[:1] == ["widgets"] else "minitf",
                        *(rel[1:] if rel[:1] == ["widgets"] else rel))
    return os.path.exists(base + ".py") or os.path.isdir(base)


FILES = list(_source_files())


def test_every_module_has_a_layer():
    lost = [module for _, module in FILES if layer_of(module) is None]
    assert not lost, "modules outside every layer: %s" % lost


@pytest.mark.parametrize("path,module", FILES, ids=[m for _, m in FILES])
def test_imports_point_down(path, module):
    mine = LAYERS.index(layer_of(module))
    upward = ["%s:%d imports %s (layer %s) from layer %s"
              % (os.path.relpath(path, ROOT), line, name, layer_of(name), layer_of(module))
              for line, name, _, _ in imports(path, module)
              if layer_of(name) is not None and LAYERS.index(layer_of(name)) > mine]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("path,module", FILES, ids=[m for _, m in FILES])
def test_function_level_imports_are_documented_lazy_imports(path, module):
    hidden = ["%s:%d imports %s inside a function without saying why (a '# lazy "
              "import: <reason>' comment)" % (os.path.relpath(path, ROOT), line, name)
              for line, name, at_top, lazy in imports(path, module)
              if not at_top and not lazy]
    assert not hidden, "\n".join(hidden)


def test_the_checker_sees_an_upward_and_a_hidden_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from minitf.runtime import executor\n\n\ndef f():\n"
                   "    from minitf.kernels import registry\n"
                   "    import numba  # lazy import: Numba's start-up cost\n")
    found = imports(str(bad), "minitf.ops.bad")
    assert (1, "minitf.runtime.executor", True, False) in found
    assert (5, "minitf.kernels.registry", False, False) in found
    assert (6, "numba", False, True) in found
    assert layer_of("minitf.runtime.executor") == "runtime"
    assert layer_of("minitf.widgets.base") == "api"
