"""A session started on one provider resumes on the other: Claude (the real ``anthropic``
client, loopback Messages API) and an OpenAI-compatible model (the real ``openai`` client,
loopback Chat Completions), with tool calls, thinking and an image in the history.

Invariant: each server receives a request its API accepts. Claude never gets a thinking
block it did not sign or a tool id it refuses; a chat server never gets thinking, and gets
every tool call answered right after it.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from typing import Any

import pytest
from helpers import assert_valid, chat_problems, until

from jupyter_agent import Agent, AnthropicModel
from jupyter_agent.messages import ImageBlock, ImageSource, ThinkingBlock, conversation_problems
from jupyter_agent.models import OpenAIModel
from jupyter_agent.testing import Reply, text, thinking, tool_use
from jupyter_agent.tools import ToolOutput, tool

CLAUDE_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def snapshot() -> ToolOutput:
    """Take a picture of the chart."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "blue").save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    return ToolOutput(
        "the chart", images=[ImageBlock(source=ImageSource(media_type="image/png", data=data))]
    )


TOOLS = [lookup, snapshot]


@pytest.fixture
def claude(messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return AnthropicModel("claude-sonnet-4-6", base_url=messages_server.url, thinking=2048)


@pytest.fixture
def gpt(chat_server):
    return OpenAIModel("gpt-4o", api_key="test-key", base_url=chat_server.base_url)


def assert_claude_takes(body: dict[str, Any]) -> None:
    """What the Messages API checks of a history, and what it refuses from others."""
    turns = body["messages"]
    assert not conversation_problems(turns), conversation_problems(turns)
    for turn in turns:
        for block in turn["content"]:
            if block["type"] == "thinking":
                assert block["signature"], "a thinking block Claude did not sign"
            if block["type"] == "tool_use":
                assert CLAUDE_ID.fullmatch(block["id"]), block["id"]
            if block["type"] == "tool_result":
                assert CLAUDE_ID.fullmatch(block["tool_use_id"]), block["tool_use_id"]


async def test_a_session_started_on_claude_goes_on_with_an_openai_model_and_back(
    workspace, claude, gpt, messages_server, chat_server
):
    messages_server.script(
        [
            Reply(
                [thinking("Chart first.", signature="sig-1"), tool_use("snapshot", {})],
                "tool_use",
            ),
            Reply(
                [
                    thinking("Look blue up.", signature="sig-2"),
                    text("It is blue."),
                    tool_use("lookup", {"key": "blue"}),
                ],
                "tool_use",
            ),
            Reply([thinking("Known.", signature="sig-3"), text("Blue is known.")]),
        ]
    )
    agent = Agent("actor", claude, workspace=workspace, tools=TOOLS)
    first = await agent.run("What does the chart show?")
    assert first.summary == "Blue is known.", first.stop_message
    assert agent.session.metadata.provider == "anthropic"

    # On the OpenAI-compatible model: the whole history, as a chat, image included.
    chat_server.script(
        [
            Reply(
                [
                    thinking("Look it up again."),
                    tool_use("lookup", {"key": "sky"}, id="functions.lookup:0"),
                ],
                "tool_use",
            ),
            Reply([text("The sky is known too.")]),
        ]
    )
    on_gpt = Agent.resume(agent.session.id, workspace=workspace, model=gpt, tools=TOOLS)
    second = await on_gpt.run("And the sky?")
    assert second.summary == "The sky is known too.", second.stop_message
    assert on_gpt.session.metadata.provider == "openai"
    sent = chat_server.requests[0].body["messages"]
    assert not chat_problems(sent), sent
    assert "Chart first." not in str(sent)  # Claude's thinking stays with Claude
    snapshot_call = sent[2]["tool_calls"][0]
    assert snapshot_call["function"]["name"] == "snapshot"
    assert sent[3] == {"role": "tool", "tool_call_id": snapshot_call["id"], "content": "the chart"}
    assert sent[4]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert [m["role"] for m in sent[-2:]] == ["assistant", "user"]
    assert sent[-1]["content"] == "And the sky?"
    for request in chat_server.requests:
        assert not chat_problems(request.body["messages"])

    # And back on Claude: the server's reasoning is left out, its odd tool id made safe.
    kept = [b for m in on_gpt.history for b in m.content if isinstance(b, ThinkingBlock)]
    assert [(b.thinking, b.signature) for b in kept] == [
        ("Chart first.", "sig-1"),
        ("Look blue up.", "sig-2"),
        ("Known.", "sig-3"),
        ("Look it up again.", ""),
    ]
    messages_server.push(Reply([text("Back on Claude.")]))
    on_claude = Agent.resume(agent.session.id, workspace=workspace, model=claude, tools=TOOLS)
    third = await on_claude.run("Summarise.")
    assert third.summary == "Back on Claude."
    body = messages_server.requests[-1].body
    assert_claude_takes(body)
    blocks = [b for turn in body["messages"] for b in turn["content"]]
    thoughts = [b["thinking"] for b in blocks if b["type"] == "thinking"]
    assert thoughts == ["Chart first.", "Look blue up.", "Known."]
    calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
    answers = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert calls == answers and len(calls) == 3
    assert "functions.lookup:0" not in str(body)
    assert (
        sum(
            b["type"] == "image" for r in blocks if r["type"] == "tool_result" for b in r["content"]
        )
        == 1
    )
    assert_valid(on_claude.history)


async def test_a_session_started_on_an_openai_model_resumes_on_claude(
    workspace, claude, gpt, messages_server, chat_server
):
    chat_server.style.reasoning_field = "reasoning"
    chat_server.script(
        [
            Reply(
                [
                    thinking("Think."),
                    text("Checking."),
                    tool_use("lookup", {"key": "k"}, id="call:1.x"),
                    tool_use("snapshot", {}, id="call:2.y"),
                ],
                "tool_use",
            ),
            Reply([thinking("Only thoughts, then an answer.")]),  # a reply of thinking alone
            Reply([text("Done on GPT.")]),
        ]
    )
    agent = Agent("actor", gpt, workspace=workspace, tools=TOOLS)
    await agent.run("look")
    handle = await agent.run("again")
    assert handle.summary == "Done on GPT.", handle.stop_message
    for request in chat_server.requests:
        assert not chat_problems(request.body["messages"])

    messages_server.push(Reply([text("Claude here.")]))
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=claude, tools=TOOLS)
    assert (await resumed.run("continue")).summary == "Claude here."
    body = messages_server.requests[0].body
    assert_claude_takes(body)
    assert "Think." not in str(body) and "Only thoughts" not in str(body)
    ids = [b["id"] for t in body["messages"] for b in t["content"] if b["type"] == "tool_use"]
    results = [
        b["tool_use_id"]
        for t in body["messages"]
        for b in t["content"]
        if b["type"] == "tool_result"
    ]
    assert ids == results and len(set(ids)) == 2


async def test_claude_thinks_again_once_a_loop_another_provider_began_is_finished(
    workspace, claude, gpt, messages_server, chat_server
):
    """Stopped while the OpenAI model's tool call ran, then on Claude with thinking on: the
    Messages API keeps one thinking setting per tool-use loop, so Claude finishes this one
    without thinking (else it refuses the request) and thinks again on the next task."""
    gate = asyncio.Event()

    @tool
    async def wait_here() -> str:
        """Wait for the gate."""
        await gate.wait()
        return "opened"

    chat_server.push(Reply([tool_use("wait_here", {}, id="call:1")], "tool_use"))
    agent = Agent("actor", gpt, workspace=workspace, tools=[wait_here])
    handle = agent.start("go")
    await until(lambda: any(e.kind == "tool_start" for e in handle.events_so_far))
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)

    agent.set_model(claude)
    messages_server.script(
        [
            Reply([text("Carrying on."), tool_use("wait_here", {})], "tool_use"),
            Reply([text("Done without thinking.")]),
            Reply([thinking("A new task.", signature="sig"), text("Thinking again.")]),
        ]
    )
    gate.set()
    carried = await agent.run("carry on")
    assert carried.summary == "Done without thinking.", carried.stop_message
    after = await agent.run("next")
    assert after.summary == "Thinking again.", after.stop_message
    sent = [r.body for r in messages_server.requests]
    assert ["thinking" in body for body in sent] == [False, False, True]
    for body in sent:
        assert_claude_takes(body)
    assert_valid(agent.history)
