"""The agent's panel over its comm in a real kernel, driven the way panel.js drives it
(custom comm messages: hello, then commands): a view gets a snapshot then live batches,
commands answer, approve and report errors, Stop works while streaming, running a command
or waiting for an answer, and Execute plan hands the plan to the Actor. Also the transcript
the panel keeps for its views: streams merged (each subagent's apart), the log within its
budget, and a resumed session offering to carry on a plan whose execution stopped.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import inline_snapshot
import pytest
from kernels import Kernel
from magic_kernel import LONG_TEXT, command, hello, plan_turns, scripted

pytestmark = pytest.mark.slow  # real kernels


# --- the panel's protocol over the comm ------------------------------------------------------


async def test_a_resumed_session_offers_to_carry_on_a_plan_whose_execution_stopped(
    tmp_path: Path,
) -> None:
    from helpers import until

    from jupyter_agent import Agent, ScriptedModel
    from jupyter_agent.jupyter.panel.transcript import history_entries

    def mark(number: int, status: str) -> dict[str, Any]:
        return {"name": "update_plan_step", "input": {"step_number": number, "status": status}}

    ask = {"name": "ask_user", "input": {"question": "Go on with step 2?"}}
    model = ScriptedModel(
        [
            *plan_turns(),
            {"tool_calls": [mark(1, "done"), mark(2, "in_progress")]},
            {"tool_calls": [ask]},
        ]
    )
    agent = Agent("planner", model, workspace=tmp_path)
    await agent.run("Clean the sales data")
    handle = agent.execute_plan()
    await until(lambda: handle.pending_question is not None)
    handle.stop()
    await handle.wait()

    resumed = Agent.resume(agent.session.id, workspace=tmp_path, model=ScriptedModel([]))
    entries = history_entries(resumed.history, resumed)
    kinds = [e["kind"] for e in entries]
    assert kinds[-5:] == ["plan", "plan_step", "plan_step", "plan_stopped", "note"]
    # What the user did: typed a task, then pressed Execute plan (the prompt it became is
    # there for the view to fold, never a message the user wrote).
    users = [e for e in entries if e["kind"] == "user"]
    assert [e.get("action") for e in users] == [None, "execute_plan"]
    assert users[0]["text"] == "Clean the sales data"
    assert users[1]["text"].startswith("Execute the approved plan.")
    # Not offered for a plan whose steps are all settled, nor after a run that completed.
    meta = resumed.session.metadata
    meta.stop_reason = "completed"
    assert "plan_stopped" not in [e["kind"] for e in history_entries(resumed.history, resumed)]
    meta.stop_reason = "manual_stop"
    for progress in meta.plan_progress:
        progress.status = "done"
    assert "plan_stopped" not in [e["kind"] for e in history_entries(resumed.history, resumed)]


def test_the_transcript_merges_streams_and_a_finished_block_keeps_its_text() -> None:
    from jupyter_agent.jupyter.panel.transcript import Transcript

    t = Transcript()
    t.add({"kind": "turn_start", "step": 1})
    for piece in ("Hel", "lo ", "wor"):
        t.add({"kind": "text_delta", "text": piece})
    assert [e["kind"] for e in t.take()] == ["turn_start", "text_delta"]
    # A view arriving mid-stream gets the pieces so far as one entry.
    assert t.snapshot()[-1] == {"kind": "text_delta", "text": "Hello wor", "n": 4}
    t.add({"kind": "text_delta", "text": "ld"})
    t.add({"kind": "text", "text": "Hello world", "interrupted": False})
    t.add({"kind": "tool_progress", "tool_use_id": "a", "output": "1\n"})
    t.add({"kind": "tool_progress", "tool_use_id": "a", "output": "2\n"})
    t.add({"kind": "tool_progress", "tool_use_id": "b", "output": "x"})
    assert t.take() == [
        {"kind": "text_delta", "text": "ld", "n": 5},
        {"kind": "text_end", "phase": None, "interrupted": False, "n": 6},
        {"kind": "tool_progress", "tool_use_id": "a", "output": "1\n2\n", "n": 8},
        {"kind": "tool_progress", "tool_use_id": "b", "output": "x", "n": 9},
    ]
    assert t.snapshot() == [
        {"kind": "turn_start", "step": 1, "n": 1},
        {"kind": "text", "text": "Hello world", "interrupted": False, "n": 6},
        {"kind": "tool_progress", "tool_use_id": "a", "output": "1\n2\n", "n": 8},
        {"kind": "tool_progress", "tool_use_id": "b", "output": "x", "n": 9},
    ]
    # Text that differs from what streamed (e.g. cut short) is sent whole.
    t.add({"kind": "text_delta", "text": "Par"})
    t.add({"kind": "text", "text": "Partial", "interrupted": True})
    assert t.take()[-1]["text"] == "Partial"


def test_the_transcript_merges_each_subagents_stream_apart() -> None:
    """Two subagents streaming at once: each one's pieces merge with its own only, in the
    batch and in the log, and what was sent is never changed by what the log merges."""
    from jupyter_agent.jupyter.panel.transcript import Transcript

    def piece(child: str, text: str) -> dict[str, Any]:
        return {
            "kind": "subagent_output",
            "child_session_id": child,
            "event": {"kind": "text_delta", "text": text},
        }

    t = Transcript()
    t.add(piece("a", "A1 "))
    t.add(piece("a", "A2 "))
    t.add(piece("b", "B1 "))
    t.add(piece("b", "B2 "))
    sent = t.take()
    assert [(e["child_session_id"], e["event"]["text"]) for e in sent] == [
        ("a", "A1 A2 "),
        ("b", "B1 B2 "),
    ]
    t.add(piece("b", "B3"))
    t.add(piece("a", "A3"))
    assert [e["event"]["text"] for e in t.take()] == ["B3", "A3"]
    log = t.snapshot()
    assert [(e["child_session_id"], e["event"]["text"]) for e in log] == [
        ("a", "A1 A2 "),
        ("b", "B1 B2 B3"),
        ("a", "A3"),
    ]
    assert [e["event"]["text"] for e in sent] == ["A1 A2 ", "B1 B2 "]  # as sent


def entries_after(kernel: Kernel, comm: str, since: int) -> list[dict[str, Any]]:
    found = []
    for m in kernel.seen[since:]:
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm:
            data = m["content"]["data"]
            if data.get("method") != "custom":
                continue
            content = data["content"]
            if content["type"] == "events":
                found.extend(content["entries"])
            elif content["type"] == "text":
                found.append({"kind": "text_delta", "n": content["n"], "text": content["text"]})
    return found


def test_a_view_gets_a_snapshot_then_live_batches(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns(LONG_TEXT[:800]), delay=0.002)
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    assert hello(kernel, comm) == []
    since = len(kernel.seen)
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    live = entries_after(kernel, comm, since)
    kinds = [e["kind"] for e in live]
    assert kinds[0] == "agent_start" and kinds[-1] == "completed"
    assert "plan" in kinds and "state" not in kinds and "usage" not in kinds
    numbers = [e["n"] for e in live]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    streamed = "".join(e["text"] for e in live if e["kind"] == "text_delta")
    assert streamed.startswith(LONG_TEXT[:800])
    # 200 pieces of text went out as far fewer, coalesced messages.
    assert sum(1 for e in live if e["kind"] == "text_delta") < 100
    # A second view (a page reload) gets the same transcript, deltas merged.
    # The text block's end carries no text: the view has it from the pieces.
    end = next(e for e in live if e["kind"] in ("text", "text_end"))
    assert end["kind"] == "text_end" and "text" not in end
    snapshot = hello(kernel, comm, "v2")
    assert [e["kind"] for e in snapshot][:3] == ["agent_start", "turn_start", "text"]
    assert snapshot[2]["text"] == LONG_TEXT[:800]
    assert snapshot[-1]["kind"] == "completed" and snapshot[-1]["n"] == live[-1]["n"]


def test_commands_answer_approve_and_report_errors(kernel: Kernel) -> None:
    ask = {
        "tool_calls": [
            {
                "name": "ask_user",
                "input": {
                    "question": "Drop the duplicates?",
                    "options": [
                        {"label": "Drop them", "value": "drop"},
                        {"label": "Keep them", "value": "keep"},
                    ],
                    "default": "drop",
                },
            }
        ]
    }
    command_call = {
        "tool_calls": [{"name": "execute_command", "input": {"command": "echo approved-ok"}}]
    }
    done = {"tool_calls": [{"name": "task_complete", "input": {"summary": "All done."}}]}
    scripted(kernel, "m", [ask, command_call, done])
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    reply = command(kernel, comm, "frobnicate")
    assert reply["ok"] is False and reply["error"] == "unknown command 'frobnicate'"
    assert command(kernel, comm, "answer", question_id="nope", value="x")[
        "error"
    ] == inline_snapshot.snapshot("That question is no longer pending.")
    kernel.ok("h = %agent act --model $m Clean up")
    kernel.state_of(comm, "status", "waiting_user")
    question = kernel.from_panel(
        comm, lambda c: c["type"] == "events" and any(e["kind"] == "question" for e in c["entries"])
    )
    qid = next(e for e in question["entries"] if e["kind"] == "question")["question_id"]
    bad = command(kernel, comm, "answer", question_id=qid, value="maybe")
    assert bad["ok"] is False and "not one of the options" in bad["error"]
    assert command(kernel, comm, "answer", question_id=qid, value="keep")["ok"] is True
    approval = kernel.from_panel(
        comm,
        lambda c: (
            c["type"] == "events" and any(e["kind"] == "permission_request" for e in c["entries"])
        ),
    )
    rid = next(e for e in approval["entries"] if e["kind"] == "permission_request")["request_id"]
    assert (
        command(kernel, comm, "approve", request_id=rid, allow=True, remember=False)["ok"] is True
    )
    out = kernel.ok("await h.wait(); print(h.state.value, h.summary)")
    assert out.stdout.strip() == "completed All done."
    results = kernel.ok("print([b.text for m in h.history for b in m.tool_results])").stdout
    assert "The user chose “Keep them” (value: keep)." in results
    assert "approved-ok" in results
    # Busy or not, a role switch and a limit apply to the next run.
    assert command(kernel, comm, "set_role", role="planner")["ok"] is True
    assert command(kernel, comm, "set_max_steps", value=4)["ok"] is True
    assert (
        command(kernel, comm, "set_max_steps", value=0)["error"]
        == "Max iterations must be at least 1."
    )
    out = kernel.ok("a = h.agent\nprint(a.role, a.limits.max_steps)")
    assert out.stdout.split() == ["planner", "4"]


def _stopped(kernel: Kernel, comm: str, since: int) -> None:
    """Stop from the panel, and see the run stopped long before what it was doing would have
    ended by itself (a 30-s command, a question nobody answers, a long stream). How fast a
    Stop is belongs to benchmarks/framework.py, not to an assert on a shared machine."""
    reply = command(kernel, comm, "stop")
    assert reply["ok"] is True
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "stopped" for e in c["entries"]),
        timeout=10.0,
        since=since,
    )


def test_stop_over_the_comm_while_streaming_running_a_command_and_waiting(kernel: Kernel) -> None:
    shell = {
        "tool_calls": [
            {
                "name": "execute_command",
                "input": {"command": "sleep 30 && echo ja-marker-done", "timeout": 60},
            }
        ]
    }
    ask = {"tool_calls": [{"name": "ask_user", "input": {"question": "Which file?"}}]}
    scripted(
        kernel,
        "m",
        [{"text": LONG_TEXT}, shell, ask, {"text": "Still here."}],
        delay=0.005,
    )
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    kernel.ok("%agent role actor")

    # 1. while streaming
    since = len(kernel.seen)
    kernel.ok("h = %agent act --model $m Write a lot")
    kernel.from_panel(comm, lambda c: c["type"] == "text", since=since)
    _stopped(kernel, comm, since)
    out = kernel.ok("await h.wait(); print(h.stop_reason, h.history[-1].interrupted)")
    assert out.stdout.split() == ["manual_stop", "True"]

    # 2. while a 30-s command runs (after it was approved): its process group is killed
    since = len(kernel.seen)
    assert command(kernel, comm, "send", text="Run the slow command")["ok"] is True
    approval = kernel.from_panel(
        comm,
        lambda c: (
            c["type"] == "events" and any(e["kind"] == "permission_request" for e in c["entries"])
        ),
        since=since,
    )
    rid = next(e for e in approval["entries"] if e["kind"] == "permission_request")["request_id"]
    command(kernel, comm, "approve", request_id=rid, allow=True)
    kernel.state_of(comm, "detail", "execute_command")
    kernel.ok("import time; time.sleep(0.3)")  # the command is surely running
    _stopped(kernel, comm, since)
    assert subprocess.run(["pgrep", "-f", "ja-marker-done"], capture_output=True).returncode == 1

    # 3. while waiting for an answer
    since = len(kernel.seen)
    command(kernel, comm, "send", text="Ask me something")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "question" for e in c["entries"]),
        since=since,
    )
    kernel.state_of(comm, "status", "waiting_user")
    _stopped(kernel, comm, since)

    # The next message continues the session, and the history is a valid conversation.
    since = len(kernel.seen)
    command(kernel, comm, "send", text="Go on")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    out = kernel.ok(
        "from jupyter_agent.messages import conversation_problems, to_api_messages\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(conversation_problems(to_api_messages(kernel_agent().agent.history)))"
    )
    assert out.stdout.strip() == "[]"


def test_execute_plan_switches_to_the_actor_with_the_plan(kernel: Kernel) -> None:
    step = lambda n, s: {"name": "update_plan_step", "input": {"step_number": n, "status": s}}  # noqa: E731
    scripted(
        kernel,
        "m",
        [
            *plan_turns(),
            {"tool_calls": [step(1, "in_progress")]},
            {"tool_calls": [step(1, "done"), step(2, "in_progress")]},
            {"tool_calls": [step(2, "done")]},
            {"tool_calls": [{"name": "task_complete", "input": {"summary": "Both steps done."}}]},
        ],
    )
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    assert command(kernel, comm, "execute_plan")["error"] == "There is no plan to execute yet."
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    # The planning run completed with its plan: the header says it awaits review.
    kernel.state_of(comm, "plan_ready", True)
    since = len(kernel.seen)
    assert command(kernel, comm, "execute_plan")["ok"] is True
    kernel.state_of(comm, "role", "actor")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    live = entries_after(kernel, comm, since)
    live = live[[e["kind"] for e in live].index("agent_start") :]
    assert live[0]["role"] == "actor"
    assert live[0]["action"] == "execute_plan"  # the view shows the action, not the prompt
    kernel.state_of(comm, "plan_ready", False)  # executing: no plan awaits review
    assert live[0]["task"].startswith("Execute the approved plan.")
    assert "| 2 | Drop duplicate rows |" in live[0]["task"]
    steps = [(e["step_number"], e["status"]) for e in live if e["kind"] == "plan_step"]
    assert steps == [(1, "in_progress"), (1, "done"), (2, "in_progress"), (2, "done")]


def test_a_long_sessions_log_stays_within_its_budget_and_says_what_it_left_out(
    monkeypatch,
) -> None:
    import jupyter_agent.jupyter.panel.transcript as transcript

    monkeypatch.setattr(transcript, "LOG_BUDGET", 200_000)
    monkeypatch.setattr(transcript, "LOG_KEEP_RECENT", 10)
    t = transcript.Transcript()
    for step in range(300):
        t.add({"kind": "turn_start", "step": step})
        t.add({"kind": "tool_end", "tool_use_id": f"t{step}", "result": f"{step}:" + "x" * 5_000})
    size = sum(len(json.dumps(e)) for e in t.snapshot())
    assert size <= 200_000
    entries = t.snapshot()
    # The newest entries are whole; older long results keep head and tail; the oldest are
    # gone, and a note at the top says so.
    assert entries[-1]["result"] == "299:" + "x" * 5_000
    trimmed = [e for e in entries if "of this earlier entry trimmed" in e.get("result", "")]
    assert trimmed and all(len(e["result"]) < 2_200 for e in trimmed)
    assert entries[0]["kind"] == "note"
    assert entries[0]["text"].endswith("earlier entries of this session are not shown.")
    assert sum(e["kind"] == "note" for e in entries) == 1


def test_pause_holds_the_run_before_its_next_step_and_resume_goes_on(kernel: Kernel) -> None:
    """Pause from the panel: the run finishes what it streams, then waits before its next
    step (the status says where); Resume goes on to the end. A pause after the run ended
    is refused in a sentence."""
    scripted(
        kernel,
        "m",
        [
            {"text": LONG_TEXT, "tool_calls": [{"name": "list_files", "input": {}}]},
            {"text": "All done."},
        ],
        delay=0.002,
    )
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    since = len(kernel.seen)
    kernel.ok("h = %agent act --model $m Look around")
    kernel.from_panel(comm, lambda c: c["type"] == "text", since=since)
    assert command(kernel, comm, "pause")["ok"] is True
    kernel.state_of(comm, "pausing", True)
    kernel.state_of(comm, "status", "paused", timeout=30)
    kernel.state_of(comm, "detail", "before list_files")  # the call it has not made yet
    out = kernel.ok("print(h.state.value, '|', h.pause_requested)")
    assert out.stdout.split() == ["paused", "|", "True"]
    assert command(kernel, comm, "unpause")["ok"] is True
    kernel.state_of(comm, "pausing", False)
    done = kernel.ok("await h.wait(); print(h.state.value, h.history[-1].text)")
    assert done.stdout.strip() == "completed All done."
    refused = command(kernel, comm, "pause")
    assert refused["ok"] is False and "nothing to pause" in refused["error"]
