"""The test suite's own layout: a test module is never imported by another. What tests
share lives in helper modules (``helpers.py``, ``event_samples.py``, ``browser/panel_ui.py``
…) and conftest fixtures, so collecting or changing one test module never runs or breaks
another's import."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {name for name in names if name.startswith("test_")}


def test_no_test_module_imports_another() -> None:
    found = {
        (path.stem, imported)
        for path in TESTS.rglob("*.py")
        for imported in imported_test_modules(path)
    }
    assert found == set()  # (importer, imported) pairs
