"""The README's Python example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_python_example_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert blocks, "the README has no Python example"
    result = subprocess.run(
        [sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Drop duplicate rows" in result.stdout
    assert "completed - Removed 3 duplicate rows." in result.stdout
    assert "| 1 | Drop duplicate rows |" in result.stdout  # the renderer printed the plan
    assert (tmp_path / ".jupyter_agent" / "sessions").is_dir()


def test_ci_runs_the_readme_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "make test" in README.read_text()
