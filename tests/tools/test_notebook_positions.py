"""Notebook tools say where the cells they name are: ``data["positions"]`` maps each cell id
the result mentions to its 1-based place, so the panel shows "cell 7" as a link instead of
an id (and never parses the result's text for it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_agent.errors import ToolError
from jupyter_agent.notebook.bridge import NotebookBridge, RunResult
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.notebook import NOTEBOOK_TOOLS

TOOLS = {t.name: t for t in NOTEBOOK_TOOLS}


@pytest.fixture
def bridge(tmp_path: Path) -> FileBridge:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell("x = 1", id="load"),
        nbformat.v4.new_code_cell("x", id="show"),
    ]
    path = tmp_path / "positions.ipynb"
    nbformat.write(nb, path)
    return FileBridge(path)


async def call(bridge: NotebookBridge, name: str, **args: Any) -> dict[str, Any]:
    ctx = ToolContext(workspace=Path.cwd())
    ctx.resources.insert(bridge, NotebookBridge)
    out = await TOOLS[name].call(ctx, args)
    assert out.data is not None
    return out.data


async def test_an_inserted_cell_and_its_neighbour_have_their_positions(bridge):
    data = await call(bridge, "insert_cell", source="y = 2", after="load")
    new = data["cell_id"]
    assert data["positions"] == {"load": 2, new: 3}


async def test_an_edited_and_a_moved_cell_have_their_new_positions(bridge):
    assert (await call(bridge, "update_cell", cell_id="show", source="x + 1"))["positions"] == {
        "show": 3
    }
    moved = await call(bridge, "move_cell", cell_id="show", before="intro")
    assert moved["positions"] == {"show": 1, "intro": 2}


async def test_a_run_cell_has_its_position(bridge, monkeypatch):
    async def run(cell_id: str, timeout: float = 120.0) -> RunResult:
        return RunResult(status="ok", execution_count=4)

    monkeypatch.setattr(bridge, "run", run)
    data = await call(bridge, "run_cell", cell_id="load")
    assert data["positions"] == {"load": 2}
    assert data["cell_id"] == "load"


async def test_an_unreadable_notebook_gives_no_positions_not_a_failed_edit(bridge, monkeypatch):
    async def read() -> Any:  # update_cell reads its cell with read_cell, not read
        raise ToolError("the notebook closed")

    monkeypatch.setattr(bridge, "read", read)
    data = await call(bridge, "update_cell", cell_id="show", source="x * 2")
    assert data["positions"] == {}
    assert data["change"] == "update"


async def test_a_read_of_the_notebook_gives_every_cells_position(bridge):
    """So a later call that names a cell by its id has its row say "cell 3" from its start."""
    data = await call(bridge, "read_notebook")
    assert data["positions"] == {"intro": 1, "load": 2, "show": 3}
    assert data["cells"] == 3
    outline = await call(bridge, "read_notebook", start=3, outline=True)
    assert outline["positions"] == {"intro": 1, "load": 2, "show": 3}  # all, not the view's
