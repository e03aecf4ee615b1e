"""pyproject.toml lists every package by hand (widgets/ installs as
minitf.widgets); this catches a package folder that was added but not listed."""

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "minitf").rglob("*.py") if "__pycache__" not in p.parts}
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert config["package-dir"]["minitf.widgets"] == "widgets"
    assert "minitf.widgets" in listed
