"""A tool call's input is bounded: one over the limit is refused before anything reads it
(its echo on the tool card, its summary, validation, a command's parse), the conversation
keeps a small stand-in in its place, and while it streams in, Stop still ends the run
and the next message works. Through the real ``anthropic`` and ``openai`` clients
against the loopback servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_valid, call, until

from jupyter_agent import Agent, AnthropicModel, ScriptedModel, tool
from jupyter_agent.input_limit import LEFT_OUT, TOOL_INPUT_LIMIT, left_out, oversized
from jupyter_agent.models import OpenAIModel
from jupyter_agent.states import AgentState
from jupyter_agent.testing import ChatCompletionsServer, MessagesServer, Reply, text, tool_use

BIG = 10 * 1024 * 1024


def _big_command(marker: Path) -> dict[str, Any]:
    """A 10 MB command line that would leave a mark if it ran."""
    return {"command": f"touch {marker} # {'x' * BIG}"}


@pytest.fixture(params=["anthropic", "openai"])
def served(request, workspace) -> Any:
    """A loopback server of either API and a model on the real client for it."""
    if request.param == "anthropic":
        server: MessagesServer = MessagesServer()
        model: Any = AnthropicModel(
            "claude-test", base_url=server.url, api_key="k", retry_delay=0.001
        )
    else:
        server = ChatCompletionsServer()
        model = OpenAIModel("gpt-test", api_key="k", base_url=server.base_url, retry_delay=0.001)
    try:
        yield server, model
    finally:
        server.close()


def _calls_sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls a request sends back, as ``{"name", "input"}`` in either API."""
    found = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                found.append({"name": block["name"], "input": block["input"]})
        for chat_call in message.get("tool_calls") or ():
            function = chat_call["function"]
            found.append({"name": function["name"], "input": json.loads(function["arguments"])})
    return found


async def test_a_10_mb_command_is_refused_unread_and_the_conversation_keeps_a_stand_in(
    workspace, served
):
    server, model = served
    marker = workspace / "ran"
    command = _big_command(marker)
    server.script(
        [
            Reply([tool_use("execute_command", command)], "tool_use", chunk_size=1 << 16),
            Reply([text("I will write it in parts.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("write the data")

    assert handle.state is AgentState.completed, handle.stop_message
    assert not marker.exists()
    results = [r for m in agent.history for r in m.tool_results]
    assert len(results) == 1 and results[0].is_error
    assert f"over the {TOOL_INPUT_LIMIT:,}" in results[0].text
    assert "Split the work" in results[0].text
    # Nothing asked the user, and the card echoed none of it.
    kinds = [e.kind for e in handle.events_so_far]
    assert "permission_request" not in kinds
    start = next(e for e in handle.events_so_far if e.kind == "tool_start")
    assert start.input == {} and "input too large" in start.summary
    # What goes back to the model, and what the session keeps, is the stand-in.
    size = len(json.dumps(command))
    again = [r for r in server.requests if r.body.get("messages")][1]
    assert _calls_sent(again.body) == [{"name": "execute_command", "input": {LEFT_OUT: size}}]
    assert len(again.raw) < 100_000
    assert agent.session.path is not None
    history = (agent.session.path / "history.jsonl").stat().st_size
    assert history < 100_000
    assert_valid(agent.history)


async def test_stop_while_a_10_mb_input_streams_in_ends_the_run_and_the_next_message_works(
    workspace, served
):
    server, model = served
    marker = workspace / "ran"
    server.script(
        [
            # 40 events of 64 KB (past the limit), then the stream waits.
            Reply(
                [tool_use("execute_command", _big_command(marker))],
                "tool_use",
                chunk_size=1 << 16,
                hold_after=40,
            ),
            Reply([text("Back.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("write the data")
    await until(lambda: len(server.requests) == 1)
    await until(lambda: handle.state is AgentState.thinking)
    handle.stop()
    await handle.wait()
    assert handle.state is AgentState.cancelled
    assert not marker.exists()
    assert_valid(agent.history)
    server.release()
    after = await agent.run("go on")
    assert after.state is AgentState.completed, after.stop_message
    assert_valid(agent.history)


async def test_an_input_over_the_limit_from_any_model_runs_no_part_of_its_tool(workspace):
    """A model of the caller's own (here the scripted one) hands over the whole input: the
    dispatcher refuses it before its summary, validation or the tool itself see it."""
    seen: list[str] = []

    def summary(args: Any) -> str:
        seen.append("summary")
        return "write"

    @tool(summary=summary)
    def write(ctx: Any, data: str) -> str:
        """Write data."""
        seen.append("tool")
        return "written"

    agent = Agent(
        "actor",
        ScriptedModel([call("write", data="x" * (TOOL_INPUT_LIMIT + 1)), {"text": "ok"}]),
        workspace=workspace,
        tools=[write],
    )
    handle = await agent.run("go")
    assert handle.state is AgentState.completed
    assert seen == []
    result = next(r for m in agent.history for r in m.tool_results)
    assert result.is_error and "Split the work" in result.text


async def test_an_input_under_the_limit_runs(workspace):
    content = "a line of data\n" * ((TOOL_INPUT_LIMIT - 1000) // 15)
    agent = Agent(
        "actor",
        ScriptedModel([call("create_file", path="data.txt", content=content), {"text": "ok"}]),
        workspace=workspace,
    )
    handle = await agent.run("go")
    assert handle.state is AgentState.completed
    assert (workspace / "data.txt").read_text() == content


@pytest.mark.parametrize(
    "data",
    [
        {"command": "x" * (TOOL_INPUT_LIMIT + 1)},
        {"rows": [{"a": "b" * 100}] * 3000},  # many small pieces
        {f"k{i}": 1 for i in range(100_000)},  # many keys
        {"deep": [[[["y" * 70_000]]]] * 4},
        left_out(5),  # the stand-in itself, whatever size it says
    ],
)
def test_an_input_is_measured_as_its_json_and_the_stand_in_is_always_over(data):
    assert oversized(data) is not None
    if LEFT_OUT not in data:
        assert len(json.dumps(data)) > TOOL_INPUT_LIMIT


@pytest.mark.parametrize(
    "data",
    [{}, {"command": "ls"}, {"content": "z" * (TOOL_INPUT_LIMIT // 2)}, {LEFT_OUT: 5, "x": 1}],
)
def test_an_input_within_the_limit_is_not_refused(data):
    assert oversized(data) is None
