"""The panel's Stop and a cell the agent started: while such a cell runs, the kernel may
read no click (a cell running synchronous code), so Stop also interrupts the kernel from
the frontend (``running_code``) — unless the policy leaves cells running, when Stop must
stop only the agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import pytest
from helpers import PrintingCell, call, until

from jupyter_agent import Agent, CellPolicy, ScriptedModel
from jupyter_agent.config.rules import Everything, Rule, Rules
from jupyter_agent.jupyter.panel.widget import AgentPanel
from jupyter_agent.notebook.file import FileBridge

QUESTION = call("ask_user", question="Go on?", options=[{"label": "Yes", "value": "y"}])


@pytest.mark.parametrize(("on_stop", "interrupts"), [("interrupt", True), ("leave_running", False)])
def test_stop_interrupts_the_kernel_while_a_cell_runs_only_if_the_policy_says(
    workspace: Path, on_stop: str, interrupts: bool
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("train()", id="train")]
    nbformat.write(nb, workspace / "train.ipynb")
    cell = PrintingCell()

    async def scenario() -> list[bool]:
        agent = Agent(
            "actor",
            ScriptedModel([call("run_cell", cell_id="train", wait=0), QUESTION]),
            workspace=workspace,
            notebook=FileBridge(workspace / "train.ipynb", cell),
            policy=Rules([Rule.allow(Everything())]),
            cells=CellPolicy(on_stop=on_stop),  # type: ignore[arg-type]
        )
        panel = AgentPanel(agent)
        panel.outbox = lambda _: None  # the comm, not opened here
        seen = []
        handle = agent.start("train")
        await until(lambda: handle.pending_question is not None)
        seen.append(panel.running_code)  # the agent waits for the user; the cell runs on
        cell.end.set()
        await until(lambda: not agent.cells.running())
        # The listeners hear of the end a loop turn after the cell's task ended.
        await until(lambda: not panel.running_code, timeout=10)
        seen.append(panel.running_code)  # the cell ended: nothing to interrupt
        handle.stop()
        await handle.wait()
        panel.close()
        return seen

    assert asyncio.run(scenario()) == [interrupts, False]
