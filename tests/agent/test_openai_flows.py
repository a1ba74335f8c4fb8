"""The tutorials' flows on an OpenAI-compatible model: the real ``openai`` client against the
loopback Chat Completions server. A plan, a question, an approval, Stop mid-stream and a
resumed session work as they do on Claude, and every request is a valid chat."""

from __future__ import annotations

import asyncio

import pytest
from helpers import PLAN, assert_valid, chat_problems, until

from jupyter_agent import Agent
from jupyter_agent.models import OpenAIModel
from jupyter_agent.permissions import Allow, Ask, ToolCall
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Reply, text, thinking, tool_use
from jupyter_agent.tools import tool


@tool(category="files", permissions={"write_files"})
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"


class AskForNotes:
    def decide(self, call: ToolCall):
        return Ask("notes need approval") if call.name == "write_note" else Allow()

    def remember(self, call: ToolCall) -> str | None:
        return None

    def preview_remember(self, call: ToolCall) -> str | None:
        return None


@pytest.fixture
def model(chat_server):
    return OpenAIModel(
        "qwen3", provider="openai-compatible", base_url=chat_server.base_url, retry_delay=0.001
    )


def assert_every_request_valid(server) -> None:
    for request in server.requests:
        problems = chat_problems(request.body["messages"])
        assert not problems, (problems, request.body["messages"])


async def test_a_planner_reads_then_submits_a_plan(workspace, model, chat_server):
    (workspace / "sales.csv").write_text("region,amount\nnorth,3\n")
    chat_server.script(
        [
            Reply(
                [thinking("Look at the data first."), tool_use("read_file", {"path": "sales.csv"})],
                "tool_use",
            ),
            Reply([text("Here is my plan."), tool_use("submit_plan", PLAN)], "tool_use"),
        ]
    )
    agent = Agent("planner", model, workspace=workspace)
    handle = await agent.run("Clean the sales data")
    assert handle.state is AgentState.completed, handle.stop_message
    assert handle.plan is not None and handle.plan.goal == "Clean the sales data"
    assert [s.action for s in handle.plan.steps] == ["Load sales.csv", "Drop duplicate rows"]
    assert "north,3" in agent.history[2].tool_results[0].text
    offered = {t["function"]["name"] for t in chat_server.requests[0].body["tools"]}
    assert "submit_plan" in offered and "write_file" not in offered  # the Planner's tools
    assert_every_request_valid(chat_server)
    assert_valid(agent.history)


async def test_a_question_is_asked_and_the_answer_goes_back_to_the_model(
    workspace, model, chat_server
):
    question = {
        "question": "Drop rows with missing prices?",
        "options": [
            {"label": "Drop them", "value": "drop"},
            {"label": "Keep them", "value": "keep"},
        ],
    }
    chat_server.script(
        [
            Reply([tool_use("ask_user", question)], "tool_use"),
            Reply([tool_use("task_complete", {"summary": "Dropped."})], "tool_use"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("clean")
    await until(lambda: handle.pending_question is not None)
    assert handle.state is AgentState.waiting_user
    handle.answer("Drop them")
    await asyncio.wait_for(handle.wait(), 5)
    assert handle.summary == "Dropped."
    answer = chat_server.requests[1].body["messages"][-1]
    assert answer["role"] == "tool"
    assert answer["content"] == "The user chose “Drop them” (value: drop)."
    assert_every_request_valid(chat_server)


async def test_an_approval_is_asked_and_granted(workspace, model, chat_server):
    chat_server.script(
        [
            Reply([text("Writing it."), tool_use("write_note", {"text": "hello"})], "tool_use"),
            Reply([text("Written.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[write_note], policy=AskForNotes())
    handle = agent.start("note it")
    await until(lambda: handle.pending_approval is not None)
    assert handle.pending_approval == "write_note(text='hello')"
    handle.approve(True)
    await asyncio.wait_for(handle.wait(), 5)
    assert handle.summary == "Written."
    assert chat_server.requests[1].body["messages"][-1]["content"] == "wrote hello"
    assert_every_request_valid(chat_server)


async def test_stop_in_the_middle_of_a_streamed_tool_call_leaves_a_valid_history(
    workspace, model, chat_server
):
    long_note = "x" * 400
    chat_server.push(
        Reply(
            [text("I will write a long note."), tool_use("write_note", {"text": long_note})],
            "tool_use",
            chunk_size=8,
            hold_after=12,  # inside the call's arguments
        )
    )
    agent = Agent("actor", model, workspace=workspace, tools=[write_note])
    handle = agent.start("go")
    await until(lambda: len(chat_server.requests) == 1 and handle.events_so_far)
    await until(lambda: any(e.kind == "text_delta" for e in handle.events_so_far))
    await asyncio.sleep(0.05)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    chat_server.wait_idle(timeout=10)
    assert chat_server.requests[0].outcome == "disconnected"
    assert not any(m.tool_uses for m in agent.history)  # a half-streamed call is not kept
    assert_valid(agent.history)
    chat_server.push(Reply([text("Carrying on.")]))
    again = await agent.run("carry on")
    assert again.summary == "Carrying on."
    assert_every_request_valid(chat_server)


async def test_a_session_resumes_on_the_same_provider(workspace, model, chat_server):
    chat_server.script(
        [
            Reply([tool_use("write_note", {"text": "a"})], "tool_use"),
            Reply([text("First done.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[write_note])
    await agent.run("first")
    assert agent.session.metadata.provider == "openai-compatible"

    chat_server.push(Reply([text("Second done.")]))
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=model, tools=[write_note])
    handle = await resumed.run("second")
    assert handle.summary == "Second done."
    sent = chat_server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[-1]["content"] == "second" and sent[3]["content"] == "wrote a"
    assert_every_request_valid(chat_server)
    assert_valid(resumed.history)
