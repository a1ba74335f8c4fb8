"""An agent whose runs live on another thread's loop (``Agent.home``), as a kernel's do,
steered and awaited through its public API from the caller's loop, as a cell does."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from jupyter_agent import Agent, RunHandle, ScriptedModel
from jupyter_agent.errors import AgentBusy
from jupyter_agent.events import Event


def homed(workspace, agent_home, turns: list[dict[str, Any]]) -> Agent:
    agent = Agent("actor", ScriptedModel(turns), workspace=workspace)
    agent.home = agent_home
    return agent


ASK = {"tool_calls": [{"name": "ask_user", "input": {"question": "Which file?"}}]}
COMMAND = {"tool_calls": [{"name": "execute_command", "input": {"command": "echo homed"}}]}


async def test_questions_and_approvals_are_waited_for_and_answered_from_the_callers_loop(
    workspace, agent_home
):
    agent = homed(workspace, agent_home, [ASK, COMMAND, {"text": "Done."}])
    seen_on: set[str] = set()
    agent.subscribe(lambda _: seen_on.add(threading.current_thread().name))
    handle = agent.start("Ask, then run something")  # at once, from this loop

    asked = await asyncio.wait_for(handle.wait_for_user(), 10)
    assert asked is not None and not isinstance(asked, str) and asked.question == "Which file?"
    handle.answer("data.csv")
    approval = await asyncio.wait_for(handle.wait_for_user(), 10)
    assert approval == "Run: echo homed"
    handle.approve(True)
    assert await asyncio.wait_for(handle.wait_for_user(), 10) is None  # the run ended
    await asyncio.wait_for(handle.wait(), 10)

    assert handle.state.value == "completed"
    results = [r.text for m in handle.history for r in m.tool_results]
    assert "data.csv" in results[0] and "homed" in results[1]
    assert seen_on == {"agent-home"}  # the run lived on its home


async def test_events_stream_and_done_callbacks_reach_the_caller(workspace, agent_home):
    agent = homed(workspace, agent_home, [{"text": "A short answer."}])
    ended = asyncio.get_running_loop().create_future()
    handle = agent.start("Say something")

    def note_the_end(h: RunHandle) -> None:
        ended.get_loop().call_soon_threadsafe(ended.set_result, h.state.value)

    handle.add_done_callback(note_the_end)
    kinds = [event.kind async for event in _events(handle)]
    assert "agent_start" in kinds and kinds[-1] == "completed"
    assert "text_delta" in kinds
    assert await asyncio.wait_for(ended, 10) == "completed"
    again = await asyncio.wait_for(agent.run("Once more"), 10)  # start and wait, one call
    assert again.state.value == "completed"


async def test_a_stop_from_the_callers_loop_ends_the_run_on_its_home(workspace, agent_home):
    agent = homed(workspace, agent_home, [ASK, {"text": "Carried on."}])
    handle = agent.start("Ask something")
    await asyncio.wait_for(handle.wait_for_user(), 10)
    with pytest.raises(AgentBusy):  # raised on the home, seen here
        agent.start("Something else")
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    again = await asyncio.wait_for(agent.run("Go on"), 10)
    assert again.summary == "Carried on."


async def _events(handle: RunHandle) -> AsyncIterator[Event]:
    async for event in handle.events():
        yield event


async def test_the_session_is_on_disk_when_the_end_is_announced(workspace, agent_home):
    """A cell reading the run's events wakes on the terminal event while the run, on its
    home, still finishes: the session must be saved before that event goes out (the
    sessions tutorial reads it at once). Read here at the moment the event is published."""
    agent = homed(workspace, agent_home, [{"text": "Done at once."}])
    on_disk: list[tuple[str | None, int]] = []

    def read_at_the_end(event: Event) -> None:
        if event.kind == "completed":
            (saved,) = [m for m in Agent.sessions(workspace) if m.session_id == agent.session.id]
            on_disk.append((saved.state, saved.runs))

    agent.subscribe(read_at_the_end)
    await asyncio.wait_for(agent.start("Say it").wait(), 10)
    assert on_disk == [("completed", 1)]
