"""Long cells in a real kernel (file mode: the agent runs cells with KernelExecutor).

A cell is the user's work: the agent never interrupts it for taking long. run_cell waits a
short window (counted in time the kernel's loop was free) and returns "still running"
with the output so far; the cell keeps running, and wait_for_cell returns its outputs.
Only interrupt_cell, the user's Stop (policy ``interrupt``, the default) or the cell's own
timeout stop it; with ``leave_running`` Stop stops only the agent.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from kernel_agents import SETUP, make_notebook
from kernels import kernel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

COUNTING = (
    "import asyncio\nfor i in range({n}):\n    print('step', i)\n"
    "    await asyncio.sleep({pause})\n'done'"
)
"""A cell that yields to the loop between steps, as async I/O or a polling loop does. What
is under test is the policy (the window, Stop), not a duration: the cells last seconds,
each many times the window it outlives."""


def agent(path, script: str, **policy: object) -> str:
    options = ", ".join(f"{k}={v!r}" for k, v in policy.items())
    return f"""
from jupyter_agent.notebook.running_cells import CellPolicy
agent = Agent(
    "actor",
    ScriptedModel({script}),
    notebook=FileBridge({str(path)!r}, executor=KernelExecutor(get_ipython())),
    policy=Rules([Rule.allow(Everything())]),
    workspace={str(path.parent)!r},
    cells=CellPolicy({options}),
)
attach_kernel(agent)
"""


def test_a_long_cell_outlives_the_agents_window_and_is_waited_for(workspace):
    path = make_notebook(
        workspace / "long.ipynb",
        [
            nbformat.v4.new_code_cell(COUNTING.format(n=40, pause=0.1), id="train"),
            nbformat.v4.new_code_cell("import time\ntime.sleep(2)\nprint('slept')", id="sync"),
        ],
    )
    script = """[
    call("run_cell", cell_id="train"),
    call("read_notebook"),
    call("wait_for_cell", cell_id="train", timeout=60),
    call("run_cell", cell_id="sync", wait=1),
    call("read_notebook"),
    call("task_complete", summary="trained"),
]"""
    with kernel(workspace) as k:
        k.ok(SETUP)
        k.ok(agent(path, script, wait=0.5) + "h = agent.start('train it')")
        k.until("len(results()) >= 2", timeout=10)
        ran, meanwhile = k.value("[t for _, t in results()]")
        # The window passed: the cell keeps running, and the agent went on meanwhile.
        assert ran.startswith("Cell train is still running (")
        assert "it was not interrupted and keeps running" in ran
        assert "stdout:\nstep 0\nstep 1" in ran and "wait_for_cell('train')" in ran
        assert re.search(r"── 1 · train · code \[ \] · running \(\d\.\d s so far\)\n", meanwhile)
        assert k.value("agent.cells.get('train').running") is True
        k.until("h.done", timeout=40)
        assert k.value("h.state.value") == "completed"
        texts = k.value("[t for _, t in results()]")
        errors = k.value("[e for e, _ in results()]")
        assert errors == [False] * 6
        waited, slept, view = texts[2], texts[3], texts[4]
        # wait_for_cell returns the whole run: every step, the value, not interrupted.
        assert waited.startswith("Cell train ran [")
        assert "step 19" in waited and "'done'" in waited and "Interrupt" not in waited
        # A synchronous cell longer than the window blocks the loop: it ends normally,
        # and is never reported as "still running" nor interrupted.
        assert slept.startswith("Cell sync ran [") and "slept" in slept
        # The view says how long each cell took (the kernel timed them).
        assert re.search(r"── 1 · train · code \[\d+\] · took \d+(\.\d)? s\n", view)
        assert re.search(r"── 2 · sync · code \[\d+\] · took 2\.\d s\n", view)
        stored = nbformat.read(path, as_version=4).cells[0]
        assert "step 19" in stored.outputs[0]["text"]


def test_stop_interrupts_a_running_cell_or_leaves_it_running_as_the_policy_says(workspace):
    path = make_notebook(
        workspace / "stop.ipynb",
        [
            nbformat.v4.new_code_cell(COUNTING.format(n=60, pause=1), id="slow"),
            nbformat.v4.new_code_cell(COUNTING.format(n=3, pause=1), id="short"),
        ],
    )
    wait_slow = '[call("run_cell", cell_id="slow", wait=1), call("wait_for_cell", cell_id="slow")]'
    with kernel(workspace) as k:
        k.ok(SETUP)
        # Default policy: Stop while the agent waits interrupts the cell, and says so.
        k.ok(agent(path, wait_slow) + "h = agent.start('run it')")
        k.until("len(results()) >= 1 and agent.cells.get('slow').running", timeout=10)
        k.ok("await asyncio.sleep(0.5)\nh.stop()")
        k.until("h.done and not agent.cells.get('slow').running", timeout=60)
        stopped = k.value("results()[-1]")
        assert stopped[0] is True
        assert stopped[1].startswith("Cell slow was interrupted by Stop.")
        result = k.value("agent.cells.get('slow').result().model_dump()")
        assert result["status"] == "error" and "step 59" not in str(result["outputs"])
        assert k.ok("print('kernel fine')").stdout == "kernel fine\n"

        # leave_running: Stop stops the agent; the cell runs on and completes.
        k.ok(
            agent(path, wait_slow.replace("slow", "short"), on_stop="leave_running")
            + "h = agent.start('run it')"
        )
        k.until("len(results()) >= 1", timeout=10)
        k.ok("h.stop()")
        k.until("h.done", timeout=30)
        left = k.value("results()[-1][1]")
        assert left.startswith("Cell short was left running (Stop stops only the agent)")
        assert k.value("agent.cells.get('short').running") is True
        k.until("not agent.cells.get('short').running", timeout=10)
        result = k.value("agent.cells.get('short').result().model_dump()")
        assert result["status"] == "ok" and "step 2" in str(result["outputs"])
