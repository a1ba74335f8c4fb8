"""The ``[cells]`` settings: how long run_cell waits, what Stop does to a running cell, and a
cell timeout. The user's table applies, a workspace's table over it; a folder the user has
not trusted may not make Stop leave cells running (it may not widen what the agent does)."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.settings import SettingsError, load_settings
from jupyter_agent.notebook.bridge import NotebookBridge, RunResult
from jupyter_agent.notebook.running_cells import CellPolicy, CellRuns, wait_free


def write(folder, text):
    (folder / ".jupyter_agent").mkdir(exist_ok=True)
    (folder / ".jupyter_agent" / "settings.toml").write_text(text)


def test_by_default_cells_wait_30_s_stop_interrupts_and_nothing_times_out(workspace, home):
    agent = Agent("actor", ScriptedModel(), workspace=workspace, persist=False)
    assert agent.cells.policy == CellPolicy(wait=30.0, on_stop="interrupt", timeout=None)


def test_the_workspace_table_goes_over_the_users(workspace, home):
    write(home, '[cells]\nwait = 10\non_stop = "leave_running"\n')
    write(workspace, "[cells]\ntimeout = 3600\n")
    agent = Agent("actor", ScriptedModel(), workspace=workspace, persist=False)
    assert agent.cells.policy == CellPolicy(wait=10.0, on_stop="leave_running", timeout=3600.0)


def test_an_untrusted_folder_cannot_make_stop_leave_cells_running(workspace, home):
    write(workspace, '[cells]\nwait = 5\non_stop = "leave_running"\n')
    agent = Agent("actor", ScriptedModel(), workspace=workspace, persist=False)
    assert agent.cells.policy == CellPolicy(wait=5.0, on_stop="interrupt")
    assert agent.trust_prompt is not None
    assert [e.kind for e in agent.trust_prompt.effects] == ["cells"]
    assert "leave_running" in agent.trust_prompt.text()
    agent.trust_workspace()
    assert agent.cells.policy.on_stop == "leave_running"
    again = Agent("actor", ScriptedModel(), workspace=workspace, persist=False)
    assert again.cells.policy == CellPolicy(wait=5.0, on_stop="leave_running")


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('on_stop = "ignore"', "cells.on_stop: Input should be 'interrupt' or 'leave_running'"),
        ("wait = 5000", "cells.wait: Input should be less than or equal to 600"),
        ("timeout = 0", "cells.timeout: Input should be greater than 0"),
        ("waiting = 5", "cells.waiting: Extra inputs are not permitted"),
    ],
)
def test_a_bad_cells_table_names_the_field(tmp_path, table, problem):
    path = tmp_path / "settings.toml"
    path.write_text(f"[cells]\n{table}\n")
    with pytest.raises(SettingsError, match=r"settings\.toml: ") as error:
        load_settings(path)
    assert problem in str(error.value)


def test_an_agent_option_overrides_the_settings(workspace, home):
    write(home, '[cells]\non_stop = "leave_running"\n')
    policy = CellPolicy(wait=2.0)
    agent = Agent("actor", ScriptedModel(), workspace=workspace, persist=False, cells=policy)
    assert agent.cells.policy is policy


class SlowBridge:
    """A notebook whose cells end when the test says (the NotebookBridge seam)."""

    def __init__(self) -> None:
        self.ends: dict[str, asyncio.Future[RunResult]] = {}
        self.interrupted: list[str | None] = []

    async def run(self, cell_id, timeout=None):
        self.ends[cell_id] = asyncio.get_running_loop().create_future()
        return await self.ends[cell_id]

    async def interrupt(self, cell_id=None):
        self.interrupted.append(cell_id)
        self.ends[cell_id].set_result(RunResult(status="error", error={"ename": "KI"}))


async def test_a_stopped_run_interrupts_only_its_own_running_cells():
    bridge = SlowBridge()
    notebook = cast(NotebookBridge, bridge)  # runs and interrupts: all CellRuns asks of it
    runs = CellRuns()
    mine, other, done = (
        runs.start(notebook, c, r, None) for c, r in [("a", "r1"), ("b", "r2"), ("c", "r1")]
    )
    await asyncio.sleep(0)
    bridge.ends["c"].set_result(RunResult(status="ok"))
    await asyncio.sleep(0)
    assert runs.stop_run("r1") == ["Cell a was interrupted by Stop."]
    await wait_free(mine.task, 1)
    assert bridge.interrupted == ["a"] and mine.interrupted == "interrupted by Stop"
    assert other.running and not done.interrupted
    with pytest.raises(Exception, match="Cell b is still running"):
        runs.start(notebook, "b", "r3", None)


async def test_a_wait_counts_only_time_the_loop_was_free():
    import time

    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def block_then_answer() -> None:
        time.sleep(1.0)
        future.set_result(None)

    loop.call_later(0.05, block_then_answer)
    # The loop is blocked for a second (a cell running synchronous code) and the result
    # arrives then: a 0.3 s window has not passed in free time, so it is not missed.
    assert await wait_free(future, 0.3) is True
    assert await wait_free(loop.create_future(), 0.3) is False
