"""Stop must leave a valid conversation.

The invariant: whenever a run is stopped — while the model streams, while a tool (or a
subprocess) runs, while the agent waits for an answer or an approval, while paused, while
it makes room in the context window —

1. the history is still a valid Messages API conversation: partial text is kept and
   marked interrupted, and every ``tool_use`` is answered by an ``is_error``
   ``tool_result`` saying the user interrupted it;
2. nothing the run started is left running: no task of the run, no subprocess;
3. the next start on the same agent works and completes.

Each seeded run below builds a random script, stops at a random point (a random event,
or a random moment, from the loop's thread or another thread) and checks all three. The
runs of the second half live on a loop of their own on another thread, as a kernel's
agents do (``Agent.home``), started, stopped and waited for from the test's loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import threading
from typing import Any

import pytest
from helpers import assert_valid, chat_problems, until

from jupyter_agent import Agent, ContextPolicy, RunHandle, ScriptedModel, tool
from jupyter_agent.messages import INTERRUPTED_RESULT
from jupyter_agent.permissions import Allow, Ask, ToolCall
from jupyter_agent.states import AgentState

PIDS: list[int] = []
PUBLISHED_ON: set[str] = set()
"""The threads a seeded run's events were published on."""


@tool
async def nap(seconds: float) -> str:
    """Sleep a while (an async tool that awaits)."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@tool
async def run_sleeper(seconds: float) -> str:
    """Run `sleep` in a subprocess of its own process group."""
    proc = await asyncio.create_subprocess_exec("sleep", str(seconds), start_new_session=True)
    PIDS.append(proc.pid)
    try:
        await proc.wait()
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    return "done"


@tool
def guarded(note: str) -> str:
    """A tool the policy asks about."""
    return f"ran {note}"


class AskForGuarded:
    def decide(self, call: ToolCall):
        return Ask("guarded") if call.name == "guarded" else Allow()

    def remember(self, call: ToolCall) -> str | None:
        return None

    def preview_remember(self, call: ToolCall) -> str | None:
        return None


WORDS = [
    "the",
    "sales",
    "data",
    "has",
    "duplicates",
    "and",
    "missing",
    "prices",
    "in",
    "several",
    "regions",
]


def random_turn(rng: random.Random) -> dict[str, Any]:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30)))
    calls = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        kind = rng.choice(["nap", "nap", "sleeper", "ask", "guarded", "update", "bogus"])
        if kind == "nap":
            calls.append(
                {"name": "nap", "input": {"seconds": rng.choice([0.0, 0.001, 0.01, 0.05])}}
            )
        elif kind == "sleeper":
            calls.append({"name": "run_sleeper", "input": {"seconds": 30}})
        elif kind == "ask":
            calls.append({"name": "ask_user", "input": {"question": "Go on?"}})
        elif kind == "guarded":
            calls.append({"name": "guarded", "input": {"note": "x"}})
        elif kind == "update":
            calls.append({"name": "send_update", "input": {"message": "working"}})
        else:
            calls.append({"name": "nap", "input": {"seconds": "not a number"}})
    return {"text": text, "tool_calls": calls, "thinking": "hmm" if rng.random() < 0.2 else None}


SEEDS = 200
"""Seeded runs on the test's own loop; as many again live on a home thread's loop."""


async def stopped_run(
    seed: int, workspace, home: asyncio.AbstractEventLoop | None = None
) -> tuple[Agent, RunHandle]:
    rng = random.Random(seed)
    script = [random_turn(rng) for _ in range(rng.randint(1, 6))]
    model = ScriptedModel(
        script, chunk_size=rng.choice([1, 3, 8]), delay=rng.choice([0.0, 0.0005, 0.002])
    )
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        tools=[nap, run_sleeper, guarded],
        policy=AskForGuarded(),
        max_steps=8,
        # A window so small that a third of the runs compact at nearly every step: the stop
        # then lands in the middle of clearing or summarising too.
        context=ContextPolicy(window=rng.choice([None, None, 12_000])),
    )
    agent.home = home
    stop_at = rng.randint(1, 60)
    from_thread = rng.random() < 0.3
    pause_first = rng.random() < 0.1
    handle = agent.start("clean up the data")

    def maybe_stop(event) -> None:
        PUBLISHED_ON.add(threading.current_thread().name)
        if event.seq == stop_at and not handle.done:
            if pause_first:
                handle.pause()
            if from_thread:
                threading.Thread(target=handle.stop).start()
            else:
                handle.stop()

    agent.subscribe(maybe_stop)
    try:
        await asyncio.wait_for(asyncio.shield(handle.wait()), rng.uniform(0.0, 0.15))
    except asyncio.TimeoutError:
        handle.stop()  # the run is waiting (an answer, an approval) or slow: stop it now
    await asyncio.wait_for(handle.wait(), 5)
    return agent, handle


@pytest.mark.parametrize("seed", range(2 * SEEDS))
async def test_stop_at_a_random_point_leaves_a_valid_history(seed, workspace, agent_home):
    PIDS.clear()
    PUBLISHED_ON.clear()
    homed = agent_home if seed >= SEEDS else None
    agent, handle = await stopped_run(seed, workspace, homed)
    home_thread = "agent-home" if homed else threading.current_thread().name
    published_on = set(PUBLISHED_ON)
    assert published_on <= {home_thread}  # none: the run ended before the subscription

    # 1. a valid conversation, interrupted parts marked
    assert handle.state.terminal
    assert_valid(agent.history)
    for message in agent.history:
        if message.interrupted:
            assert message.role == "assistant"
            assert message.text.strip()
    if handle.stop_reason == "manual_stop":
        stopped_calls = [
            r for m in agent.history for r in m.tool_results if r.text == INTERRUPTED_RESULT
        ]
        assert all(r.is_error for r in stopped_calls)

    # 2. nothing left running
    await asyncio.sleep(0)
    tasks = asyncio.all_tasks() if homed is None else await _tasks_of(homed)
    leftovers = [t for t in tasks if t.get_name().startswith("jupyter_agent-")]
    assert not leftovers
    for pid in PIDS:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)

    # 3. the next start works
    agent.model = ScriptedModel([{"text": "Recovered and finished."}])
    again = await asyncio.wait_for(agent.run("carry on"), 5)
    assert again.state is AgentState.completed
    assert again.summary == "Recovered and finished."
    assert_valid(agent.history)


async def _tasks_of(loop: asyncio.AbstractEventLoop) -> set[asyncio.Task[Any]]:
    """The tasks of ``loop`` (another thread's), read on that thread after one turn."""

    async def tasks() -> set[asyncio.Task[Any]]:
        await asyncio.sleep(0)
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(tasks(), loop))


async def test_stop_while_streaming_keeps_the_partial_text_marked_interrupted(workspace):
    model = ScriptedModel([{"text": "word " * 200}], chunk_size=5, delay=0.001)
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("write a lot")
    await until(lambda: sum(e.kind == "text_delta" for e in handle.events_so_far) >= 5)
    handle.stop()
    await handle.wait()
    last = agent.history[-1]
    assert last.role == "assistant"
    assert last.interrupted
    assert 0 < len(last.text) < len("word " * 200)
    assert any(e.kind == "text" and e.interrupted for e in handle.events_so_far)
    assert_valid(agent.history)


async def test_stop_while_a_subprocess_runs_kills_it(workspace):
    PIDS.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "run_sleeper", "input": {"seconds": 30}}]}])
    agent = Agent("actor", model, workspace=workspace, tools=[run_sleeper])
    handle = agent.start("run it")
    await until(lambda: PIDS)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    with pytest.raises(ProcessLookupError):
        os.kill(PIDS[0], 0)
    result = agent.history[-1].tool_results[0]
    assert result.is_error
    assert result.text == INTERRUPTED_RESULT
    ends = [e for e in handle.events_so_far if e.kind == "tool_end"]
    assert ends[-1].is_error


@tool
async def slow_cleanup() -> str:
    """Wait; when stopped, take a moment to clean up."""
    RUNNING.append("slow_cleanup")
    try:
        await asyncio.sleep(30)
    finally:
        CLEANUP.append("started")
        await asyncio.sleep(0.2)
        CLEANUP.append("finished")
    return "done"


@tool
async def deaf() -> str:
    """Ignore the first cancel (as careless code does), then wait again."""
    RUNNING.append("deaf")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        CLEANUP.append("ignored a cancel")
    await asyncio.sleep(30)
    return "done"


CLEANUP: list[str] = []
RUNNING: list[str] = []
"""The tools above that have started running (a Stop before that ends the call as it
is decided, before the tool runs)."""


async def test_a_second_stop_does_not_cut_a_tools_cleanup_short(workspace):
    """Two Stop clicks in a row: the first starts the tool's cleanup, the second must not
    cancel it halfway (a process left unkilled, a file half written)."""
    CLEANUP.clear()
    RUNNING.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "slow_cleanup", "input": {}}]}])
    agent = Agent("actor", model, workspace=workspace, tools=[slow_cleanup])
    handle = agent.start("go")
    await until(lambda: RUNNING)
    handle.stop()
    await until(lambda: CLEANUP)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)
    assert CLEANUP == ["started", "finished"]
    assert handle.stop_reason == "manual_stop"
    assert_valid(agent.history)


async def test_a_later_stop_still_ends_a_tool_that_ignored_the_first(workspace, monkeypatch):
    import jupyter_agent.agent._run as run_module

    monkeypatch.setattr(run_module, "CANCEL_GRACE", 0.05)
    CLEANUP.clear()
    RUNNING.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "deaf", "input": {}}]}])
    agent = Agent("actor", model, workspace=workspace, tools=[deaf])
    handle = agent.start("go")
    await until(lambda: RUNNING)
    handle.stop()
    await until(lambda: CLEANUP)
    await asyncio.sleep(0.1)  # past the grace: the next Stop cancels again
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)
    assert handle.stop_reason == "manual_stop"
    assert_valid(agent.history)


async def test_stop_before_the_task_ever_ran(workspace):
    agent = Agent("actor", ScriptedModel([{"text": "never"}]), workspace=workspace)
    handle = agent.start("go")
    handle.stop()  # same tick: the task has not started yet
    await handle.wait()
    assert handle.stop_reason == "manual_stop"
    assert handle.state is AgentState.cancelled
    assert_valid(agent.history)


def random_reply(rng: random.Random):
    from jupyter_agent.testing import Reply, text, tool_use

    turn = random_turn(rng)
    content = [text(turn["text"])] if turn["text"] else []
    content += [tool_use(c["name"], c["input"]) for c in turn["tool_calls"]]
    if not content:
        content = [text("ok")]
    stop = "tool_use" if turn["tool_calls"] else "end_turn"
    return Reply(
        content, stop, chunk_size=rng.choice([2, 5, 16]), delay=rng.choice([0.0, 0.0005, 0.002])
    )


@pytest.mark.parametrize(
    ("provider", "seed"),
    [("anthropic", seed) for seed in range(1000, 1040)]
    + [("openai", seed) for seed in range(2000, 2020)],
)
async def test_stop_at_a_random_point_through_the_real_client(
    provider, seed, workspace, request, monkeypatch
):
    """The same invariant with a real client streaming from a loopback API: the anthropic
    client from the Messages API, the openai client from Chat Completions."""
    from jupyter_agent.models import AnthropicModel, Model, OpenAIModel

    rng = random.Random(seed)
    model: Model
    if provider == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        messages_server = request.getfixturevalue("messages_server")
        model = AnthropicModel(base_url=messages_server.url, retry_delay=0.001)
    else:
        messages_server = request.getfixturevalue("chat_server")
        model = OpenAIModel(
            "gpt-4o", api_key="k", base_url=messages_server.base_url, retry_delay=0.001
        )
    messages_server.responder = lambda body: random_reply(rng)
    PIDS.clear()
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        tools=[nap, run_sleeper, guarded],
        policy=AskForGuarded(),
        max_steps=6,
    )
    stop_at = rng.randint(1, 80)
    handle = agent.start("clean up the data")
    agent.subscribe(lambda e: handle.stop() if e.seq == stop_at and not handle.done else None)
    try:
        await asyncio.wait_for(asyncio.shield(handle.wait()), rng.uniform(0.0, 0.3))
    except asyncio.TimeoutError:
        handle.stop()
    await asyncio.wait_for(handle.wait(), 5)

    assert handle.state.terminal
    assert_valid(agent.history)
    for pid in PIDS:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    from jupyter_agent.testing import Reply, text

    # Answered by its content, not by order: a request the stopped run sent as it stopped
    # may reach the server after this line, and must not take the next run's answer.
    def recover(body):
        asked = json.dumps(body["messages"][-1])
        return Reply([text("Recovered.")]) if "carry on" in asked else random_reply(rng)

    messages_server.responder = recover
    again = await asyncio.wait_for(agent.run("carry on"), 5)
    assert again.summary == "Recovered.", again.error
    assert_valid(agent.history)
    if provider == "openai":
        for sent in messages_server.requests:
            assert not chat_problems(sent.body["messages"])
