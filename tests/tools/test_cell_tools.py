"""run_cell, wait_for_cell and interrupt_cell on a real FileBridge whose executor is a cell
that prints and ends when the test says (``helpers.PrintingCell``, at the executor seam):
what each call says while the cell runs, once it ended, and when there is nothing to wait
for or stop."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import nbformat
import pytest
from helpers import PrintingCell, call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import Everything, Rule, Rules
from jupyter_agent.errors import ToolError
from jupyter_agent.notebook.bridge import NotebookBridge
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.running_cells import CellPolicy, CellRuns
from jupyter_agent.tools import ToolContext, ToolOutput
from jupyter_agent.tools.notebook import NOTEBOOK_TOOLS

TOOLS = {t.name: t for t in NOTEBOOK_TOOLS}


@pytest.fixture
def cell(tmp_path: Path) -> tuple[FileBridge, PrintingCell]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("train()", id="train")]
    path = tmp_path / "train.ipynb"
    nbformat.write(nb, path)
    executor = PrintingCell()
    return FileBridge(path, executor), executor


def context(bridge: NotebookBridge) -> ToolContext:
    ctx = ToolContext(workspace=Path.cwd())
    ctx.resources.insert(bridge, NotebookBridge)
    ctx.resources.insert(CellRuns(CellPolicy(wait=0.2)))
    return ctx


async def test_a_cell_past_its_window_is_still_running_then_waited_for(cell):
    bridge, executor = cell
    ctx = context(bridge)
    first = await TOOLS["run_cell"].call(ctx, {"cell_id": "train"})
    assert isinstance(first, ToolOutput) and first.data is not None
    assert first.text.startswith("Cell train is still running (")
    assert "Output so far:\n⤷ 1 stdout:\nloss 1.000\nloss 0.500" in first.text
    assert first.data["status"] == "running" and first.error_line is None
    with pytest.raises(ToolError, match=r"Cell train is still running .*wait_for_cell"):
        await TOOLS["run_cell"].call(ctx, {"cell_id": "train"})
    again = await TOOLS["wait_for_cell"].call(ctx, {"cell_id": "train", "timeout": 0.1})
    assert again.text.startswith("Cell train is still running (")
    asyncio.get_running_loop().call_later(0.1, executor.end.set)
    done = await TOOLS["wait_for_cell"].call(ctx, {"cell_id": "train"})
    assert done.text.startswith("Cell train ran [3].\n⤷ 1 stdout:\nloss 1.000")
    stored = nbformat.read(bridge.file, as_version=4).cells[0]
    assert stored.execution_count == 3 and stored.outputs[0]["text"].startswith("loss 1.000")
    # Asked again once it ended: it says so, and gives the result.
    later = await TOOLS["wait_for_cell"].call(ctx, {"cell_id": "train"})
    assert later.text.startswith("Cell train is not running any more; its run ended ")
    assert "Cell train ran [3]." in later.text


async def test_interrupt_cell_stops_it_and_returns_what_it_printed(cell):
    bridge, executor = cell
    ctx = context(bridge)
    await TOOLS["run_cell"].call(ctx, {"cell_id": "train", "wait": 0})
    out = await TOOLS["interrupt_cell"].call(ctx, {"cell_id": "train"})
    assert executor.interrupted
    assert out.text.startswith("Cell train [3] was interrupted: KeyboardInterrupt")
    # The interrupt was asked for: the call is done, not failed (its row is not red).
    assert out.error_line is None


async def test_nothing_to_wait_for_or_stop_is_said_plainly(cell):
    bridge, _ = cell
    ctx = context(bridge)
    with pytest.raises(ToolError, match="Cell train is not running: you have not run it"):
        await TOOLS["wait_for_cell"].call(ctx, {"cell_id": "train"})
    with pytest.raises(ToolError, match="Cell train is not running: you have not run it"):
        await TOOLS["interrupt_cell"].call(ctx, {"cell_id": "train"})
    with pytest.raises(ToolError, match="wait must be a positive number of seconds, not -1"):
        await TOOLS["run_cell"].call(ctx, {"cell_id": "train", "wait": -1})


async def test_the_waiting_card_shows_the_cells_last_output_line(cell, workspace):
    bridge, executor = cell
    agent = Agent(
        "actor",
        ScriptedModel([call("run_cell", cell_id="train", wait=30)]),
        workspace=workspace,
        notebook=bridge,
        policy=Rules([Rule.allow(Everything())]),
        persist=False,
    )
    handle = agent.start("train")

    def progress() -> list[str]:
        return [e.output for e in handle.events_so_far if e.kind == "tool_progress"]

    await until(lambda: progress(), timeout=10)  # a look every 2 s while the cell runs
    executor.end.set()
    await handle.wait()
    assert all(re.fullmatch(r"loss 0\.\d{3}", line) for line in progress())
    assert agent.history[2].tool_results[0].text.startswith("Cell train ran [3].")


async def test_waiting_for_or_interrupting_its_own_cell_asks_nothing(cell, workspace):
    """With the default rules, running a cell asks; waiting for it and interrupting it
    (they run no code: each acts on a cell the agent ran) do not."""
    bridge, executor = cell
    model = ScriptedModel(
        [
            call("run_cell", cell_id="train", wait=0.2),
            call("wait_for_cell", cell_id="train", timeout=0.2),
            call("interrupt_cell", cell_id="train"),
            {"text": "stopped it"},
        ]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=bridge, persist=False)
    handle = agent.start("train")
    asked: list[str] = []
    while not handle.done:
        await until(lambda: handle.done or handle.pending_approval is not None, timeout=10)
        if handle.pending_approval is not None:
            asked.append(handle.pending_approval)
            handle.approve()
            await until(lambda: handle.pending_approval is None, timeout=10)
    assert asked == ["Run cell train"]
    results = [r for m in agent.history for r in m.tool_results]
    assert not any(r.is_error for r in results[:2]), [r.text for r in results]
    assert executor.interrupted
