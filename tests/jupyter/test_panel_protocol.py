"""The panel's wire protocol: defined once in Python, generated for TypeScript, validated
where it comes in, and dispatched on every kind.

The kernel end runs for real (an AgentPanel on a live agent with a scripted model); what a
view would send goes through the same handler the comm calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import pytest
from event_samples import SAMPLES
from helpers import until
from pydantic import TypeAdapter, ValidationError

from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.events import Event
from jupyter_agent.jupyter.panel import protocol as panel_protocol
from jupyter_agent.jupyter.panel.protocol import (
    SCHEMA_FILE,
    TRAIT_EVENTS,
    PanelState,
    ViewMessageAdapter,
    to_entry,
)
from jupyter_agent.jupyter.panel.transcript import history_entries
from jupyter_agent.jupyter.panel.widget import AgentPanel
from jupyter_agent.permissions import Allow, Ask, ToolCall
from jupyter_agent.tools.control import CONTROL_TOOLS


def test_the_checked_in_schema_is_what_the_python_gives() -> None:
    # Regenerate with `python -m jupyter_agent.jupyter.panel.protocol`, then
    # `npm run build:wire` in js/ (js/test/wire.test.ts checks the TypeScript).
    assert SCHEMA_FILE.read_text(encoding="utf-8") == panel_protocol.render()


def test_every_event_kind_is_a_transcript_entry_or_a_trait() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    entry_kinds = {
        defs[ref["$ref"].rsplit("/", 1)[1]]["properties"]["kind"]["const"]
        for ref in defs["TranscriptEntry"]["oneOf"]
    }
    event_kinds = {cls.__dataclass_fields__["kind"].default for cls in get_args(get_args(Event)[0])}
    trait_kinds = {cls.__dataclass_fields__["kind"].default for cls in TRAIT_EVENTS}
    assert event_kinds - trait_kinds <= entry_kinds
    assert not trait_kinds & entry_kinds
    assert {"user", "note", "text_end", "plan_stopped"} <= entry_kinds
    # The shared constants are the kernel's own.
    assert schema["x-constants"]["CONTROL_TOOLS"] == sorted(t.name for t in CONTROL_TOOLS)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_every_event_on_the_wire_matches_its_schema(event: Any) -> None:
    entry = to_entry(event)
    assert not {"session_id", "seq", "time"} & entry.keys()
    if isinstance(event, TRAIT_EVENTS):
        return
    # The entry, as sent, validates against the protocol (what the TypeScript is made from).
    adapter = TypeAdapter(panel_protocol.TranscriptEntry)
    adapter.validate_python({**entry, "n": 1})


def test_the_panel_declares_exactly_the_traits_of_the_protocol() -> None:
    synced = {name for name, trait in AgentPanel.class_traits(sync=True).items()}
    synced -= {"_esm", "_css", "_anywidget_id", "layout", "tabbable", "tooltip", "comm"}
    synced = {n for n in synced if not n.startswith("_")}
    assert synced == set(PanelState.__annotations__)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"type": "command", "id": "1", "name": "frobnicate"}, "unknown command 'frobnicate'"),
        ({"type": "command", "id": "2", "name": "answer", "value": "x"}, "question_id"),
        ({"type": "command", "id": "3", "name": "approve", "request_id": "r"}, "allow"),
        ({"type": "command", "id": "4", "name": "set_max_steps", "value": "many"}, "value"),
        ({"type": "command", "id": "5", "name": "stop", "extra": 1}, "extra"),
        ({"type": "command", "id": "6", "name": "send", "text": ["not", "text"]}, "text"),
        ({"type": "shout", "id": "7"}, "shout"),
        ({"type": "command", "id": "8", "name": "compact", "keep": 3}, "keep"),
        ({"type": "command", "id": "9", "name": "search_sessions"}, "query"),
        (
            {"type": "command", "id": "10", "name": "search_sessions", "query": "a", "limit": 0},
            "1 to 30",
        ),
    ],
)
def test_a_malformed_message_from_a_view_is_refused_with_a_reply_that_says_why(
    message: dict[str, Any], error: str, workspace: Path
) -> None:
    if message.get("limit") is None:  # a limit out of range is the panel's to refuse
        with pytest.raises(ValidationError):
            ViewMessageAdapter.validate_python(message)

    async def scenario() -> list[Mapping[str, Any]]:
        agent = Agent("planner", ScriptedModel([{"text": "hi"}]), workspace=workspace)
        panel = AgentPanel(agent)
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append  # the comm, not opened here
        panel.receive(message)
        panel.close()
        return sent

    (reply,) = asyncio.run(scenario())
    assert reply["type"] == "reply" and reply["ok"] is False
    assert reply["id"] == message.get("id")
    assert error in reply["error"]


def test_commands_arrive_typed_and_hello_gets_a_snapshot(workspace: Path) -> None:
    async def scenario() -> tuple[list[Mapping[str, Any]], Agent]:
        agent = Agent("planner", ScriptedModel([{"text": "hello there"}]), workspace=workspace)
        panel = AgentPanel(agent)
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append  # the comm, not opened here
        panel.receive({"type": "command", "id": "a", "name": "set_max_steps", "value": 7})
        panel.receive({"type": "command", "id": "b", "name": "send", "text": "go"})
        assert agent.handle is not None
        await agent.handle.wait()
        panel.receive({"type": "hello", "view": "v"})
        panel.close()
        return sent, agent

    sent, agent = asyncio.run(scenario())
    replies = [m for m in sent if m["type"] == "reply"]
    assert [(r["id"], r["ok"]) for r in replies] == [("a", True), ("b", True)]
    assert agent.limits.max_steps == 7
    snapshot = next(m for m in sent if m["type"] == "snapshot")
    assert snapshot["view"] == "v"
    kinds = [e["kind"] for e in snapshot["entries"]]
    assert kinds[0] == "agent_start" and kinds[-1] == "completed"
    assert "state" not in kinds and "usage" not in kinds
    adapter = TypeAdapter(list[panel_protocol.TranscriptEntry])
    adapter.validate_python(snapshot["entries"])
    # Every event reached the wire in its serialised form, with n in log order.
    ns = [e["n"] for e in snapshot["entries"]]
    assert ns == sorted(ns)


def test_a_subagents_approval_shows_in_the_panel_and_the_answer_reaches_the_subagent(
    workspace: Path,
) -> None:
    """A subagent's approval card travels inside its parent's stream (``subagent_output``);
    the view's ``approve`` with that card's request id settles the subagent's call."""

    @tool(category="files", permissions={"write_files"})
    def note(text: str) -> str:
        """Write a note."""
        return f"noted {text}"

    class AskForNotes:
        def decide(self, call: ToolCall) -> Allow | Ask:
            return Ask("notes need approval") if call.name == "note" else Allow()

        def remember(self, call: ToolCall) -> str | None:
            return None

        def preview_remember(self, call: ToolCall) -> str | None:
            return None

    def answer(request: Any) -> dict[str, Any]:
        first = request.messages[0]["content"]
        task = first if isinstance(first, str) else first[0]["text"]
        replied = len(request.messages) > 1
        if "child" in task:
            if replied:
                return {"text": "child wrote it"}
            return {"tool_calls": [{"name": "note", "input": {"text": "child"}}]}
        if replied:
            return {"text": "parent done"}
        return {
            "tool_calls": [
                {"name": "delegate", "input": {"task": "child: write a note", "role": "actor"}}
            ]
        }

    async def scenario() -> tuple[list[Mapping[str, Any]], Agent]:
        agent = Agent(
            "actor",
            ScriptedModel([answer] * 10),
            workspace=workspace,
            tools=[note],
            policy=AskForNotes(),
        )
        panel = AgentPanel(agent)
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append  # the comm, not opened here

        def entries() -> list[dict[str, Any]]:
            return [e for m in sent if m["type"] == "events" for e in m["entries"]]

        def asked() -> list[dict[str, Any]]:
            return [
                e["event"]
                for e in entries()
                if e["kind"] == "subagent_output" and e["event"]["kind"] == "permission_request"
            ]

        panel.receive({"type": "command", "id": "go", "name": "send", "text": "go"})
        deadline = asyncio.get_running_loop().time() + 5
        while not asked():
            assert asyncio.get_running_loop().time() < deadline, "no approval card reached the view"
            await asyncio.sleep(0.01)
        (request,) = asked()
        assert panel.pending_approval == ""  # the parent waits on no approval of its own
        assert panel.detail == "a subagent is waiting for you"
        panel.receive(
            {"type": "command", "id": "x", "name": "approve", "request_id": "nope", "allow": True}
        )
        panel.receive(
            {
                "type": "command",
                "id": "ok",
                "name": "approve",
                "request_id": request["request_id"],
                "allow": True,
            }
        )
        assert agent.handle is not None
        await asyncio.wait_for(agent.handle.wait(), 5)
        panel.flush()
        panel.close()
        return sent, agent

    sent, agent = asyncio.run(scenario())
    replies = {m["id"]: m for m in sent if m["type"] == "reply"}
    assert replies["ok"]["ok"] is True
    assert replies["x"]["ok"] is False and "no longer pending" in replies["x"]["error"]
    handle = agent.handle
    assert handle is not None and handle.summary == "parent done"
    (child,) = handle.children
    assert [r.text for m in child.history for r in m.tool_results] == ["noted child"]
    entries = [e for m in sent if m["type"] == "events" for e in m["entries"]]
    # The subagent's state and usage set no trait of the parent's and are not entries.
    inner = [e["event"]["kind"] for e in entries if e["kind"] == "subagent_output"]
    assert "permission_response" in inner and not {"state", "usage"} & set(inner)
    spawned = next(e for e in entries if e["kind"] == "subagent_spawned")
    assert spawned["parent_tool_use_id"] == agent.history[1].tool_uses[0].id
    TypeAdapter(list[panel_protocol.TranscriptEntry]).validate_python(entries)


def test_a_session_search_replies_with_matches_and_one_can_be_resumed(workspace: Path) -> None:
    async def scenario() -> tuple[list[Mapping[str, Any]], AgentPanel, str]:
        past = Agent("planner", ScriptedModel([{"text": "Median is 4.2 ms"}]), workspace=workspace)
        await past.run("measure the p50 latency")
        agent = Agent("planner", ScriptedModel([{"text": "hi"}]), workspace=workspace)
        panel = AgentPanel(
            agent,
            resume=lambda sid: Agent.resume(sid, workspace=workspace, model=ScriptedModel()),
        )
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append  # the comm, not opened here
        panel.receive({"type": "command", "id": "s", "name": "search_sessions", "query": "medi"})
        panel.receive({"type": "command", "id": "e", "name": "search_sessions", "query": "(*)"})
        panel.receive({"type": "command", "id": "n", "name": "search_sessions", "query": "zebra"})
        assert not sent  # answered off the loop, once the thread has searched
        await until(lambda: len(sent) == 3)
        panel.receive(
            {"type": "command", "id": "r", "name": "resume", "session_id": past.session.id}
        )
        panel.close()
        return sent, panel, past.session.id

    sent, panel, past_id = asyncio.run(scenario())
    replies = {m["id"]: m for m in sent if m["type"] == "reply"}
    (found,) = replies["s"]["found"]
    assert found["id"] == past_id and found["title"] == "measure the p50 latency"
    assert found["role"] in ("user", "assistant") and found["matches"] == 1
    assert found["parts"] == ["", "Median", " is 4.2 ms"]
    assert replies["e"]["ok"] is False and "Nothing to search for" in replies["e"]["error"]
    assert replies["n"] == {"type": "reply", "id": "n", "ok": True, "error": None, "found": []}
    assert replies["r"]["ok"] is True and panel.session_id == past_id
    TypeAdapter(panel_protocol.KernelMessage).validate_python(replies["s"])


def test_a_resumed_session_shows_each_subagents_work_under_its_delegate_call(
    workspace: Path,
) -> None:
    """Live, a subagent's events nest in its delegate card; resumed, the parent's history
    holds only the call and its result, so the subagents' own sessions are replayed there."""

    def answer(request: Any) -> dict[str, Any]:
        first = request.messages[0]["content"]
        task = first if isinstance(first, str) else first[0]["text"]
        replied = len(request.messages) > 1
        if task.startswith("tally"):
            if replied:
                return {"text": f"{task}: done"}
            return {"tool_calls": [{"name": "list_directory", "input": {"path": "."}}]}
        if replied:
            return {"text": "both counted"}
        return {
            "tool_calls": [
                {"name": "delegate", "input": {"task": "tally the a files"}},
                {"name": "delegate", "input": {"task": "tally the b files"}},
            ]
        }

    async def scenario() -> Agent:
        agent = Agent("planner", ScriptedModel([answer] * 10), workspace=workspace)
        await agent.run("count both")
        return agent

    agent = asyncio.run(scenario())
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=ScriptedModel())
    entries = history_entries(resumed.history, resumed)
    kinds = [e["kind"] for e in entries]
    delegate_calls = [e["tool_use_id"] for e in entries if e.get("name") == "delegate"][:2]
    spawned = [e for e in entries if e["kind"] == "subagent_spawned"]
    assert [e["task"] for e in spawned] == ["tally the a files", "tally the b files"]
    assert [e["parent_tool_use_id"] for e in spawned] == delegate_calls
    inner = [e["event"] for e in entries if e["kind"] == "subagent_output"]
    assert [e["kind"] for e in inner].count("tool_start") == 2  # each one's list_directory
    assert {e["text"] for e in inner if e["kind"] == "text"} == {
        "tally the a files: done",
        "tally the b files: done",
    }
    assert not any(e["kind"] == "user" for e in inner)  # a task shows as the spawn, once
    # Each subagent ends before its delegate call's result, as it did live.
    ends = [i for i, k in enumerate(kinds) if k == "subagent_complete"]
    results = [
        i for i, e in enumerate(entries) if e["kind"] == "tool_end" and e["name"] == "delegate"
    ]
    assert len(ends) == 2 and max(ends) < min(results)
    TypeAdapter(list[panel_protocol.TranscriptEntry]).validate_python(entries)


def test_a_resumed_session_shows_a_denied_and_a_stopped_call_as_they_ended_live(
    workspace: Path,
) -> None:
    """The history keeps what the model read ("The user declined this call. Do not repeat
    it…", "Interrupted by the user…"); resumed, their rows say what the user saw live:
    denied, in the user's words, and stopped, not failed."""

    @tool(category="read")
    async def wait_long() -> str:
        """Wait a long time."""
        await asyncio.sleep(60)
        return "never"

    async def scenario() -> tuple[Agent, list[Any]]:
        model = ScriptedModel(
            [
                {"tool_calls": [{"name": "execute_command", "input": {"command": "rm a.tmp"}}]},
                {"tool_calls": [{"name": "wait_long", "input": {}}]},
            ]
        )
        agent = Agent("actor", model, workspace=workspace, tools=[wait_long])
        handle = agent.start("tidy up")
        await until(lambda: handle.pending_approval is not None)
        handle.approve(False)
        await until(
            lambda: any(
                e.kind == "tool_start" and e.name == "wait_long" for e in handle.events_so_far
            )
        )
        handle.stop()
        await handle.wait()
        return agent, [e for e in handle.events_so_far if e.kind == "tool_end"]

    agent, live = asyncio.run(scenario())
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=ScriptedModel())
    ends = [e for e in history_entries(resumed.history, resumed) if e["kind"] == "tool_end"]
    assert [(e["outcome"], e["error_line"]) for e in ends] == [
        ("denied", "You denied this call: it did not run."),
        ("interrupted", None),
    ]
    assert [(e.outcome.value, e.error_line) for e in live] == [
        (e["outcome"], e["error_line"]) for e in ends
    ]
    assert ends[0]["result"].startswith("The user declined this call. Do not repeat it;")
