"""The modules of the flat package moved into a package per domain; their old import paths,
which users' code and notebooks hold, still give the same modules."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import jupyter_agent
from jupyter_agent._moved import MOVED

PACKAGE_ROOT = Path(jupyter_agent.__file__).parent


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_import_path_gives_the_moved_module_itself(old: str, new: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(new)


def test_no_old_path_hides_a_module_that_exists() -> None:
    for old in MOVED:
        relative = Path(*old.split(".")[1:])
        assert not PACKAGE_ROOT.joinpath(relative).with_suffix(".py").exists(), old
        assert not PACKAGE_ROOT.joinpath(relative, "__init__.py").exists(), old


def test_a_fresh_interpreter_imports_an_old_path_and_its_names() -> None:
    code = (
        "from jupyter_agent.rules import Rule\n"
        "from jupyter_agent.settings import load_settings\n"
        "import jupyter_agent.config.rules as new\n"
        "assert Rule is new.Rule\n"
        "from jupyter_agent.notebook import NotebookBridge\n"
        "from jupyter_agent.secrets import mask_secrets\n"
        "from jupyter_agent.namespace import KernelNamespace\n"
        "from jupyter_agent.sandbox import Sandbox\n"  # renamed WorkspaceAccess since
        "from jupyter_agent.workspace.access import WorkspaceAccess\n"
        "assert Sandbox is WorkspaceAccess\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_patch_through_the_old_path_reaches_the_code_that_uses_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = importlib.import_module("jupyter_agent.sandbox")
    new = importlib.import_module("jupyter_agent.workspace.access")
    monkeypatch.setattr(old, "__doc__", "patched")
    assert new.__doc__ == "patched"
