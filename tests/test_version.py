"""The version has one source, ``__version__`` in jupyter_agent/__init__.py: pyproject.toml
reads it from there (hatch's dynamic version), the installed distribution reports it, and
js/package.json, which the lab extension's ping reply reports, repeats it exactly."""

from __future__ import annotations

import json
import re
import sys
from importlib.metadata import version
from pathlib import Path

import jupyter_agent

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_pyproject_reads_the_version_from_the_package():
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "jupyter_agent/__init__.py"


def test_the_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", jupyter_agent.__version__)


def test_the_installed_distribution_has_the_package_version():
    assert version("jupyter-in-kernel-agent") == jupyter_agent.__version__, (
        "the installed metadata predates a version bump: `pip install -e .` again"
    )


def test_the_lab_extension_has_the_package_version():
    package = json.loads((ROOT / "js" / "package.json").read_text())
    assert package["version"] == jupyter_agent.__version__, (
        "js/package.json's version differs from jupyter_agent.__version__: set both"
    )
