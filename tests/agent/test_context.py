"""Context management through the real client: long runs stay inside the window the
server enforces, the history on disk stays whole, and stops and resumes keep working."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_valid

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import ContextPolicy
from jupyter_agent.models import AnthropicModel
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, MessagesServer, Reply, text, tool_use

FILES = 30
LINES = 500  # of 80 characters: 40 KB a file


def write_files(workspace: Path) -> None:
    for i in range(FILES):
        lines = [f"MARK-{i:02d} " + "abcdefghij" * 7 for _ in range(LINES)]
        (workspace / f"data{i:02d}.txt").write_text("\n".join(lines) + "\n")


def tokens(body: dict[str, Any], raw: bytes) -> int:
    return len(raw) // 4  # what the server reports as input tokens


def instruction(body: dict[str, Any]) -> str:
    last = body["messages"][-1]["content"][-1]
    return last.get("text", "") if last.get("type") == "text" else ""


def is_summary_request(body: dict[str, Any]) -> bool:
    return instruction(body).startswith("[Compaction")


class ReadingModel:
    """A server script: read the 30 files one by one, then finish. It refuses any request
    above ``limit`` tokens as the real API does, answers compaction requests with a
    summary, and checks that the file read last is in the request, whole."""

    def __init__(self, limit: int, *, name_limit: bool = True) -> None:
        self.limit = limit
        self.name_limit = name_limit
        self.refused: list[int] = []
        self.summaries = 0
        self.sizes: list[int] = []
        self.missing: list[int] = []
        self.issued = 0

    def __call__(self, body: dict[str, Any], raw: bytes) -> Reply | Fault:
        size = tokens(body, raw)
        if size > self.limit:
            self.refused.append(size)
            said = f": {size} tokens > {self.limit} maximum" if self.name_limit else ""
            return Fault.status(400, "invalid_request_error", f"prompt is too long{said}")
        self.sizes.append(size)
        if is_summary_request(body):
            self.summaries += 1
            return Reply([text(f"Summary {self.summaries}: files were read in order.")])
        done = self.issued
        if done:  # the newest result must be whole: it is what the model works on now
            newest = json.dumps(body["messages"][-1])
            if newest.count(f"MARK-{done - 1:02d}") != LINES:
                self.missing.append(done - 1)
        if done < FILES:
            self.issued += 1
            return Reply(
                [
                    text(f"Reading file {done}."),
                    tool_use("read_file", {"path": f"data{done:02d}.txt"}),
                ],
                "tool_use",
            )
        return Reply([text("All 30 files read.")])


def serve(server: MessagesServer, script: ReadingModel) -> None:
    def responder(body: dict[str, Any]) -> Reply | Fault:
        raw = server.requests[-1].raw
        return script(body, raw)

    server.responder = responder


def agent_on(server: MessagesServer, workspace: Path, **options: Any) -> Agent:
    model = AnthropicModel(
        "claude-sonnet-4-5", api_key="sk-ant-test", base_url=server.url, retry_delay=0.001
    )
    return Agent("actor", model, workspace=workspace, max_steps=40, **options)


async def test_thirty_big_files_fit_a_window_the_server_enforces(
    messages_server: MessagesServer, workspace: Path
):
    write_files(workspace)
    script = ReadingModel(limit=100_000)
    serve(messages_server, script)
    agent = agent_on(messages_server, workspace, context=ContextPolicy(window=100_000))
    seen: list[Any] = []
    agent.subscribe(seen.append)

    handle = await agent.run("Read the 30 data files")

    assert handle.state is AgentState.completed, handle.error
    assert handle.summary == "All 30 files read."
    assert script.refused == []  # room was made before the limit, never after
    assert script.missing == []  # each file was whole in the request after its read
    assert max(script.sizes) <= 100_000
    compactions = [e for e in seen if e.kind == "compaction"]
    assert compactions and all(e.tokens_after < e.tokens_before for e in compactions)
    # Cleared in batches, not a result per step: the prompt cache breaks rarely.
    assert len(compactions) <= FILES // 3
    gauge = [e for e in seen if e.kind == "context"]
    assert gauge and all(e.window == 100_000 for e in gauge)
    # Nothing is deleted: the session file holds every file's content.
    assert agent.session.path is not None
    stored = (agent.session.path / "history.jsonl").read_text()
    assert all(f"MARK-{i:02d}" in stored for i in range(FILES))
    assert_valid(agent.history)


async def test_prompt_too_long_compacts_and_retries_once(
    messages_server: MessagesServer, workspace: Path
):
    """The agent plans for a 200k window; the server holds 60k and says so once."""
    write_files(workspace)
    script = ReadingModel(limit=60_000)
    serve(messages_server, script)
    agent = agent_on(messages_server, workspace)
    seen: list[Any] = []
    agent.subscribe(seen.append)

    handle = await agent.run("Read the 30 data files")

    assert handle.state is AgentState.completed, handle.error
    assert len(script.refused) == 1  # then the agent knows the real window
    reasons = [e.reason for e in seen if e.kind == "compaction"]
    assert reasons[0] == "too_long"
    assert script.missing == []
    assert_valid(agent.history)


async def test_a_prompt_that_stays_too_long_ends_the_run_with_a_clear_error(
    messages_server: MessagesServer, workspace: Path
):
    agent = agent_on(messages_server, workspace)
    messages_server.script([Reply([text("One.")]), Reply([text("Two.")])])
    await agent.run("first")
    await agent.run("second")
    refuse = Fault.status(
        400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
    )
    messages_server.responder = lambda body: refuse
    sent = len(messages_server.requests)

    handle = await agent.run("third")

    assert handle.state is AgentState.error
    assert "no longer fits the model's context window" in str(handle.error)
    # the turn, then the summary (as the conversation, then as a clipped transcript): no loop
    assert len(messages_server.requests) - sent == 3
    assert_valid(agent.history)

    fresh = agent_on(messages_server, workspace)
    handle = await fresh.run("a first task that is already too long")
    assert handle.state is AgentState.error  # nothing to make room from: no second try
    assert len(messages_server.requests) - sent == 4


async def test_a_resumed_session_sees_the_compacted_view_and_continues(
    messages_server: MessagesServer, workspace: Path
):
    write_files(workspace)
    script = ReadingModel(limit=60_000)
    serve(messages_server, script)
    first = agent_on(messages_server, workspace, context=ContextPolicy(window=60_000))
    handle = await first.run("Read the 30 data files")
    assert handle.state is AgentState.completed
    view = first.session.api_messages()

    again = Agent.resume(first.session.id, model=first.model, workspace=workspace)
    assert again.session.api_messages() == view  # the same view from the file alone
    assert len(again.history) == len(first.history)  # and the whole record

    messages_server.responder = lambda body: Reply([text("Continuing from the summary.")])
    handle = await again.run("Which files did you read?")
    assert handle.state is AgentState.completed
    sent = json.dumps(messages_server.requests[-1].body["messages"])
    assert "[cleared:" in sent
    assert sent.count("MARK-00") == 0  # the first file's content stays cleared
    assert_valid(again.history)


async def test_compact_now_summarises_the_earlier_turns(workspace: Path):
    turns: list[dict[str, Any]] = [
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "input": {}}]},
        {"text": "First answer."},
        {"text": "Second answer."},
    ]
    model = ScriptedModel(turns, summaries=["The user asked twice; both answered."])
    agent = Agent("planner", model, workspace=workspace)
    with pytest.raises(ValueError, match="nothing to compact"):
        agent.compact()
    await agent.run("First question")
    await agent.run("Second question")
    before = len(agent.history)

    seen: list[Any] = []
    agent.subscribe(seen.append)
    handle = await agent.compact().wait()

    assert handle.state is AgentState.completed
    [marker] = [e for e in seen if e.kind == "compaction"]
    assert marker.reason == "manual" and marker.summarised >= 3
    assert marker.summary == "The user asked twice; both answered."
    assert len(agent.history) == before + 1  # one record added, nothing removed
    view = agent.session.api_messages()
    assert "both answered" in view[0]["content"][0]["text"]
    assert "First question" not in json.dumps(view)
    assert model.requests[-1].purpose == "compaction"
    assert_valid(agent.history)

    await agent.run("Third question")  # the conversation goes on from the summary
    assert_valid(agent.history)


async def test_stop_during_compaction_leaves_a_valid_history(
    messages_server: MessagesServer, workspace: Path
):
    messages_server.script(
        [
            Reply([text("Hello.")]),
            Reply([text("Again.")]),
            Reply([text("Summary that never ends " * 50)], hold_after=3),
        ]
    )
    agent = agent_on(messages_server, workspace)
    await agent.run("first")
    await agent.run("second")
    records = len(agent.history)
    handle = agent.compact()
    await asyncio.to_thread(messages_server.wait_for_requests, 3)
    await asyncio.sleep(0.05)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)
    messages_server.release()

    assert handle.state is AgentState.cancelled and handle.stop_reason == "manual_stop"
    assert len(agent.history) == records  # no half summary stands for anything
    assert_valid(agent.history)
    messages_server.push(Reply([text("Still here.")]))
    again = await agent.run("third")
    assert again.state is AgentState.completed


def test_the_window_comes_from_the_policy_the_model_or_the_table():
    from jupyter_agent.models import DEFAULT_WINDOW, context_window

    assert context_window(AnthropicModel("claude-opus-4-1")) == 200_000
    assert context_window(ScriptedModel(context_window=9_000)) == 9_000
    assert context_window(ScriptedModel()) == DEFAULT_WINDOW
    assert context_window(ScriptedModel(context_window=9_000), 5_000) == 5_000


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 210,345 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000",
    ],
)
async def test_the_api_saying_too_long_is_told_apart(
    messages_server: MessagesServer, workspace: Path, message: str
):
    from jupyter_agent.errors import PromptTooLong

    messages_server.push(Fault.status(400, "invalid_request_error", message))
    model = AnthropicModel(api_key="sk-ant-test", base_url=messages_server.url, retry_delay=0.001)
    from jupyter_agent.models import ModelRequest

    request = ModelRequest(system="s", messages=[{"role": "user", "content": [text("hi")]}])
    with pytest.raises(PromptTooLong) as caught:
        async for _ in model.stream(request):
            pass
    if "210,345" in message:
        assert (caught.value.tokens, caught.value.limit) == (210_345, 200_000)
    assert re.search("context window", str(caught.value))


async def test_a_failed_automatic_summary_warns_and_the_run_goes_on(
    messages_server: MessagesServer, workspace: Path
):
    """Room is made early, so the request still fits when the summary cannot be had."""
    script = ReadingModel(limit=10**9)

    def responder(body: dict[str, Any]) -> Reply | Fault:
        if is_summary_request(body):
            return Fault.status(400, "invalid_request_error", "the summary was refused")
        if len(body["messages"]) > 3:
            return Reply([text("Finished.")])
        return Reply([text("A long answer. " * 4_000)])

    messages_server.responder = responder
    # Long texts and no tool results: only a summary could make room.
    agent = agent_on(messages_server, workspace, context=ContextPolicy(window=30_000))
    await agent.run("first")
    seen: list[Any] = []
    agent.subscribe(seen.append)
    handle = await agent.run("second")

    assert handle.state is AgentState.completed, handle.error
    warnings = [e.message for e in seen if e.kind == "warning"]
    assert any("Could not compact the conversation" in w for w in warnings), warnings
    assert script.refused == []
    assert_valid(agent.history)


def test_the_window_and_auto_come_from_the_settings_files(workspace: Path, home: Path):
    (home / ".jupyter_agent").mkdir()
    (home / ".jupyter_agent" / "settings.toml").write_text("[context]\nwindow = 90000\n")
    folder = workspace / ".jupyter_agent"
    folder.mkdir()
    (folder / "settings.toml").write_text("[context]\nwindow = 4000\nauto = false\n")
    agent = Agent("planner", ScriptedModel(), workspace=workspace)
    # A folder not yet trusted may turn automatic room-making off, not shrink the window:
    # a tiny one would have the agent summarise at every step, on the user's bill.
    assert (agent.context.policy.window, agent.context.policy.auto) == (90_000, False)
    assert agent.trust_prompt is not None
    (effect,) = agent.trust_prompt.effects
    assert effect.kind == "context" and "4,000 tokens" in effect.summary
    agent.trust_workspace()
    assert agent.context.policy.window == 4_000
    # Given in code, the policy wins over the files.
    given = Agent("planner", ScriptedModel(), workspace=workspace, context=ContextPolicy())
    assert (given.context.policy.window, given.context.policy.auto) == (None, True)


def test_a_bad_context_table_is_named(workspace: Path, home: Path):
    from jupyter_agent.config.settings import SettingsError

    folder = workspace / ".jupyter_agent"
    folder.mkdir()
    (folder / "settings.toml").write_text("[context]\nwindow = 12\n")
    with pytest.raises(SettingsError, match="window"):
        Agent("planner", ScriptedModel(), workspace=workspace)


async def test_a_window_learned_from_one_model_is_not_another_models(
    messages_server: MessagesServer, workspace: Path
):
    """Claude's server says it holds 60k; switched to another model, the agent plans for
    that model's own window, not the one the last API named."""
    write_files(workspace)
    serve(messages_server, ReadingModel(limit=60_000))
    agent = agent_on(messages_server, workspace)
    windows: list[int] = []
    agent.subscribe(lambda e: windows.append(e.window) if e.kind == "context" else None)
    await agent.run("Read the 30 data files")
    assert windows[-1] == 60_000

    agent.set_model(ScriptedModel([{"text": "Done."}], context_window=150_000))
    windows.clear()
    await agent.run("Anything else?")
    assert windows and set(windows) == {150_000}
