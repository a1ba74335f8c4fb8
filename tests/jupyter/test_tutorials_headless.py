"""The tutorials as papermill and nbclient run them: no frontend, no widgets, every cell in
order in one kernel, the agent on its own thread and the notebook edited in file mode.

``await h.wait()``, ``h.wait_for_user()`` and the approvals answered in code cross from the
cell's loop to the agent's; each tutorial must run to its end on its offline replay, and
every cell whose output the tutorial checks (``# NBVAL_CHECK_OUTPUT``) must have printed
something. What they print is compared with the stored outputs in JupyterLab
(``tests/browser/test_tutorials.py``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("name", TUTORIALS)
def test_a_tutorial_runs_to_its_end_headless(name: str, tmp_path: Path) -> None:
    for path in NOTEBOOKS.iterdir():
        if path.is_file():
            shutil.copy(path, tmp_path)
    nb = nbformat.read(tmp_path / name, as_version=4)
    # The offline replay: no key, and no real API reachable.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["JPY_SESSION_NAME"] = str(tmp_path / name)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env=env)  # raises CellExecutionError naming the cell that failed

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "a cell did not run"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    checked = [c for c in code if c.source.startswith("# NBVAL_CHECK_OUTPUT")]
    assert checked, f"{name} checks no output"
    silent = [c.source.splitlines()[1] for c in checked if not c.outputs]
    assert not silent, f"cells that printed nothing: {silent}"
