"""The panel's side of context management: the gauge (the ``context`` trait), Compact now
(the ``compact`` command) and the transcript's compaction markers, live and resumed.

The kernel end runs for real (an AgentPanel on a live agent with a scripted model, whose
summary turn is the model's answer to the compaction's request); what a view would send
goes through the same handler the comm calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from helpers import until
from inline_snapshot import snapshot

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.events import CompactionEvent
from jupyter_agent.jupyter.panel.protocol import to_entry
from jupyter_agent.jupyter.panel.transcript import history_entries
from jupyter_agent.jupyter.panel.widget import AgentPanel

SUMMARY = "The user asked for three files; they were read, and the answer was 42."
WINDOW = 50_000


def _reads(workspace: Path) -> list[dict[str, Any]]:
    """Three steps that read a big file each, then an answer (the summary is apart)."""
    turns: list[dict[str, Any]] = []
    for n in range(3):
        (workspace / f"part{n}.txt").write_text(f"line {n}\n" * 400)
        turns.append({"tool_calls": [{"name": "read_file", "input": {"path": f"part{n}.txt"}}]})
    return [*turns, {"text": "The answer is 42."}]


def _panel(agent: Agent) -> tuple[AgentPanel, list[Mapping[str, Any]]]:
    panel = AgentPanel(agent)
    sent: list[Mapping[str, Any]] = []
    panel.outbox = sent.append  # the comm, not opened here
    return panel, sent


def _resumed(agent: Agent) -> tuple[Agent, AgentPanel]:
    """The agent's session as ``%agent --resume`` opens it, in a panel of its own."""
    model = ScriptedModel([], context_window=WINDOW)
    resumed = Agent.resume(agent.session.id, workspace=agent.workspace, model=model)
    panel = AgentPanel(resumed)
    panel.close()
    return resumed, panel


def _command(panel: AgentPanel, sent: list[Mapping[str, Any]], cid: str, **fields: Any) -> Any:
    panel.receive({"type": "command", "id": cid, **fields})
    return next(m for m in reversed(sent) if m["type"] == "reply" and m["id"] == cid)


async def test_the_gauge_shows_the_window_as_the_api_counted_the_last_request(
    workspace: Path,
) -> None:
    usage = {"input_tokens": 1_000, "cache_read_input_tokens": 8_000, "output_tokens": 50}
    model = ScriptedModel([{"text": "hello", "usage": usage}], context_window=WINDOW)
    agent = Agent("planner", model, workspace=workspace)
    panel, sent = _panel(agent)
    assert panel.context == {}  # an empty conversation: no gauge, nothing to compact
    assert _command(panel, sent, "a", name="send", text="hi")["ok"]
    assert agent.handle is not None
    await agent.handle.wait()
    assert panel.context == {
        "used_tokens": 9_050,  # the request as counted, plus the reply
        "window": WINDOW,
        "cached_tokens": 8_000,
        "estimated": False,
    }
    # A trait, not a transcript entry.
    panel.receive({"type": "hello", "view": "v"})
    snapshot = next(m for m in sent if m["type"] == "snapshot")
    assert "context" not in [e["kind"] for e in snapshot["entries"]]
    panel.close()


async def test_compact_now_compacts_marks_the_transcript_and_the_resumed_session_shows_it(
    workspace: Path,
) -> None:
    model = ScriptedModel(_reads(workspace), context_window=WINDOW, summaries=[SUMMARY])
    agent = Agent("actor", model, workspace=workspace)
    panel, sent = _panel(agent)
    reply = _command(panel, sent, "e", name="compact")
    assert not reply["ok"] and "nothing to compact" in reply["error"]

    assert _command(panel, sent, "a", name="send", text="Read the three parts")["ok"]
    assert agent.handle is not None
    await agent.handle.wait()
    counted = panel.context
    assert counted["estimated"] is False and counted["used_tokens"] > 0
    uncompacted = _resumed(agent)[1].context

    assert _command(panel, sent, "c", name="compact")["ok"]
    handle = agent.handle
    assert handle is not None
    assert not _command(panel, sent, "c2", name="compact")["ok"]  # one at a time
    await handle.wait()
    assert handle.summary == "Compacted the conversation."
    # The request the summary answered ended with the compaction's instruction.
    assert "summar" in str(model.requests[-1].messages[-1]).lower()

    done = [e for e in handle.events_so_far if isinstance(e, CompactionEvent)]
    assert [e.reason for e in done] == ["manual", "manual"]
    assert done[0].cleared >= 1 and done[1].summarised >= 1 and done[1].summary == SUMMARY
    # The gauge: estimated after the compaction, and smaller than before.
    assert panel.context["estimated"] is True
    assert panel.context["used_tokens"] < counted["used_tokens"]

    # The live transcript has a marker per change, as the view renders it.
    panel.receive({"type": "hello", "view": "v"})
    snapshot = next(m for m in sent if m["type"] == "snapshot")
    live = [e for e in snapshot["entries"] if e["kind"] == "compaction"]
    assert [{k: v for k, v in e.items() if k not in ("n", "run_id")} for e in live] == [
        {k: v for k, v in to_entry(e).items() if k != "run_id"} for e in done
    ]
    panel.close()

    # Resumed: the same markers where they happened, the summary as the model wrote it, and
    # no context record shown as something the user said.
    resumed, panel = _resumed(agent)
    entries = history_entries(resumed.history, resumed)
    markers = [e for e in entries if e["kind"] == "compaction"]
    assert [(e["cleared"], e["summarised"], e["summary"]) for e in markers] == [
        (e.cleared, e.summarised, e.summary) for e in done
    ]
    assert [(e["tokens_before"], e["tokens_after"]) for e in markers] == [
        (e.tokens_before, e.tokens_after) for e in done
    ]
    users = [e["text"] for e in entries if e["kind"] == "user"]
    assert users == ["Read the three parts"]
    kinds = [e["kind"] for e in entries]
    answer = next(i for i, e in enumerate(entries) if e.get("text") == "The answer is 42.")
    assert answer < kinds.index("compaction") and kinds[-1] == "note"

    # The resumed panel's gauge is estimated from what the model sees now (no request
    # counted yet): the compacted view, smaller than the same session's before.
    gauge = panel.context
    assert gauge["estimated"] is True and gauge["window"] == WINDOW
    assert uncompacted["estimated"] is True
    assert 0 < gauge["used_tokens"] < uncompacted["used_tokens"]


async def test_compact_now_is_refused_while_a_run_goes_on(workspace: Path) -> None:
    model = ScriptedModel([{"text": "a slow answer " * 40}], delay=0.01, chunk_size=2)
    agent = Agent("planner", model, workspace=workspace)
    panel, sent = _panel(agent)
    assert _command(panel, sent, "a", name="send", text="hi")["ok"]
    await until(lambda: panel.busy)
    reply = _command(panel, sent, "c", name="compact")
    assert reply["ok"] is False
    assert reply["error"] == snapshot(
        "The agent is working: wait for it, or Stop it, then compact."
    )
    agent.stop()
    assert agent.handle is not None
    await agent.handle.wait()
    panel.close()
