from __future__ import annotations

import io
import typing
from typing import get_args

import pytest
from event_samples import PLAN, SAMPLES
from inline_snapshot import snapshot
from pydantic import ValidationError

from jupyter_agent import events as ev
from jupyter_agent.agent.render import TextRenderer, event_kinds
from jupyter_agent.events import EventAdapter
from jupyter_agent.plans import Plan, PlanStep
from jupyter_agent.states import AgentState


def test_samples_cover_every_event_kind():
    assert sorted(e.kind for e in SAMPLES) == sorted(event_kinds())
    assert len(get_args(get_args(ev.Event)[0])) == len(SAMPLES)


def test_an_event_class_is_named_for_its_kind():
    # kind "tool_end" is ToolEndEvent: a reader finds one from the other without a table.
    for event in SAMPLES:
        camel = "".join(part.capitalize() for part in event.kind.split("_"))
        assert type(event).__name__ == camel + "Event", event.kind


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_every_event_round_trips_through_the_adapter(event):
    data = EventAdapter.dump_json(event)
    back = EventAdapter.validate_json(data)
    assert type(back) is type(event)
    assert back == event


def test_events_from_outside_are_validated_and_typed_by_the_adapter():
    """Events skip validation when the run makes them; what comes back in (a log, the
    panel, another process) goes through EventAdapter, which checks and types it."""
    event = EventAdapter.validate_python(
        {"kind": "state", "state": "thinking", "previous": "running", "seq": "7"}
    )
    assert event == ev.StateEvent(
        state=AgentState.thinking, previous=AgentState.running, seq=7, time=event.time
    )
    with pytest.raises(ValidationError, match=r"tool_end\.is_error"):
        EventAdapter.validate_python(
            {"kind": "tool_end", "tool_use_id": "t", "name": "n", "result": "r", "is_error": "?"}
        )
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        EventAdapter.validate_python({"kind": "no_such_event"})


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_the_text_renderer_handles_every_event(event):
    out = io.StringIO()
    TextRenderer(out, color=False)(event)  # raises AttributeError for an unhandled kind
    assert callable(getattr(TextRenderer, "_on_" + event.kind))


def test_the_samples_cover_every_kind_of_event():
    union = typing.get_args(typing.get_args(ev.Event)[0])
    kinds = {cls.__dataclass_fields__["kind"].default for cls in union}
    assert kinds == {e.kind for e in SAMPLES}


def test_renderer_says_a_steps_status_in_words():
    out = io.StringIO()
    TextRenderer(out, color=False)(ev.PlanStepEvent(step_number=2, status="in_progress"))
    assert out.getvalue() == "  step 2: in progress\n"  # not "in_progress"


def test_renderer_prints_a_readable_run():
    out = io.StringIO()
    r = TextRenderer(out, color=False)
    for e in SAMPLES:
        r(e)
    text = out.getvalue()
    assert "▶ planner on m (tool_use loop)" in text
    assert "| 1 | a |" in text
    assert "? q?" in text and "• Yes [y] (default)" in text
    assert "■ Stopped by the user.\n" in text  # the user's words, not the reason's code
    assert "manual_stop" not in text
    assert "✗ error: boom" in text
    assert "✗ x (+1 line)\n" in text  # the rest of a long result is counted, not printed
    assert text == snapshot("""\
▶ planner on m (tool_use loop)
  task: t
[reason]
he [interrupted]
  reason control: {'finish': False}
⚙ Read a
  │ line
  ✗ x (+1 line)
    -a
    +b
Plan
**Goal:** g

| # | Action | Reason | Tools | Time |
|---|---|---|---|---|
| 1 | a |  |  |  |
  step 1: done — ok
? q?  [minor]
  • Yes [y] (default)
  answer with handle.answer(value)
  → Yes
  no answer within 3 s
⚠ approval needed: s
  handle.approve(True | False)
  → allowed; remembered: r1
ℹ working
⇣ Compacted the conversation (the context window was filling up): cleared 3 old tool results and summarised 12 earlier messages; about 170,000 → 40,000 tokens.
↻ the reply broke off (overloaded_error); retrying
⚠ careful
■ Stopped by the user.
  tokens: 3 in (33% cached), 0 out · $0.0000
✔ completed: done
✗ error: boom
↳ 1: planner subagent c: t
  1│ ⚙ s
↳ 1: subagent c ended completed
""")  # the whole wording, reviewed with --inline-snapshot=review


def test_a_tool_result_shows_its_first_line_and_how_many_more():
    out = io.StringIO()
    r = TextRenderer(out, color=False)
    for result in ("one", "one\ntwo\nthree"):
        r(ev.ToolEndEvent(tool_use_id="t", name="read_file", result=result, is_error=False))
    assert out.getvalue() == "  ✓ one\n  ✓ one (+2 lines)\n"


def test_a_run_ending_on_its_answer_prints_the_answer_once():
    out = io.StringIO()
    r = TextRenderer(out, color=False)
    answer = "The table has 12 duplicated rows."
    for e in (
        ev.TextDeltaEvent(text=answer),
        ev.TextEvent(text=answer),
        ev.CompletedEvent(summary=answer),
    ):
        r(e)
    assert out.getvalue().count(answer) == 1
    assert out.getvalue().endswith("✔ completed\n")
    # A summary that says something the text did not is still printed.
    r(ev.CompletedEvent(summary="Removed them."))
    assert out.getvalue().endswith("✔ completed: Removed them.\n")


HIDING = [
    "rm -rf ~/data\rRun: ls -la",  # a carriage return rewrites the printed line
    "rm -rf data\x1b[2K\x1b[1GRun: ls -la",  # ANSI erase and cursor moves
    "rm -rf data \x1b[8mhidden",  # concealed text
    "ls \u202eatad fr- mr",  # a right-to-left override reverses what is shown
    "l\u200bs",  # a zero-width space makes another program look like ls
    "ls \U000e0072\U000e006d",  # tag characters: invisible text a model still reads
]


@pytest.mark.parametrize("command", HIDING)
def test_what_a_model_writes_cannot_hide_itself_in_an_approval_or_a_tool_title(command):
    from jupyter_agent.tools.shell import execute_command

    summary = execute_command.summary({"command": command})
    assert not any(ch in summary for ch in "\r\x1b\u202e\u200b") and "\U000e0072" not in summary
    out = io.StringIO()
    r = TextRenderer(out, color=True)  # our own colours stay, the model's do not
    r(
        ev.PermissionRequestEvent(
            request_id="r",
            tool_use_id="t",
            tool_name="execute_command",
            summary=summary,
            input={"command": command},
        )
    )
    r(ev.ToolStartEvent(tool_use_id="t", name="execute_command", input={}, summary=summary))
    r(ev.TextDeltaEvent(text=command))
    r(ev.ToolEndEvent(tool_use_id="t", name="execute_command", result=command, is_error=False))
    printed = out.getvalue()
    model_escapes = (
        printed.replace("\x1b[33m", "")
        .replace("\x1b[34m", "")
        .replace("\x1b[32m", "")
        .replace("\x1b[0m", "")
        .replace("\x1b[2m", "")
    )
    assert "\x1b" not in model_escapes and "\r" not in printed
    assert "\u202e" not in printed and "\u200b" not in printed
    assert "\\r" in printed or "\\x1b" in printed or "\\u" in printed or "\\U" in printed


def test_a_replay_run_shows_its_tokens_but_no_cost():
    for label, replay, cost in ((None, False, " · $0.0120"), ("Scripted replay", True, "")):
        out = io.StringIO()
        r = TextRenderer(out, color=False)
        start = ev.AgentStartEvent(
            task="t",
            role="actor",
            model="m",
            loop="tool_use",
            max_steps=3,
            model_label=label,
            replay=replay,
        )
        usage = ev.UsageEvent(run_input_tokens=100, run_output_tokens=5, run_cost_usd=0.012)
        for e in (start, usage, ev.CompletedEvent(summary="done")):
            r(e)
        assert out.getvalue().endswith(f"tokens: 100 in (0% cached), 5 out{cost}\n")


def test_executing_a_plan_does_not_print_the_plan_again_as_its_task():
    out = io.StringIO()
    TextRenderer(out, color=False)(
        ev.AgentStartEvent(
            task="Execute the approved plan.\n\n" + PLAN.to_markdown(),
            role="actor",
            model="m",
            loop="tool_use",
            max_steps=3,
            action="execute_plan",
        )
    )
    assert "Executing the plan" in out.getvalue()
    assert "|" not in out.getvalue()


def test_a_record_shows_every_event_kind_and_escapes_what_it_shows():
    from jupyter_agent.jupyter.panel.record import Recorder, record_html

    hostile = '<img src=x onerror="alert(1)">'
    recorder = Recorder()
    for e in SAMPLES:
        recorder(e)
    recorder(ev.TextEvent(text=hostile))
    recorder(ev.PlanEvent(plan=Plan(goal=hostile, steps=[PlanStep(step_number=1, action=hostile)])))
    html = record_html(recorder.events, header=hostile, note=hostile)
    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") == 5
    assert ">a</td>" in html
    assert "✗ Error:" in html
    assert "<strong>■ Stopped by the user.</strong>" in html  # as the panel says it
    assert "manual_stop" not in html


def test_a_stop_is_said_in_the_users_words_as_the_panel_says_it():
    stops = [
        ev.StoppedEvent(reason="manual_stop", message="Stopped by the user."),
        ev.StoppedEvent(reason="manual_stop"),
        ev.StoppedEvent(reason="iteration_limit", message="Reached the limit of 30 steps."),
        ev.StoppedEvent(reason="time_limit"),
    ]
    assert [s.describe() for s in stops] == [
        "Stopped by the user.",
        "Stopped.",
        "Stopped: Reached the limit of 30 steps.",
        "Stopped: time limit",
    ]


def test_a_record_keeps_what_a_subagent_reported():
    from jupyter_agent.jupyter.panel.record import record_html

    html = record_html(
        [
            ev.SubagentSpawnedEvent(child_session_id="c1", agent_type="planner", task="look"),
            ev.SubagentCompleteEvent(child_session_id="c1", result="Found 3 dupes.\nDetails…"),
        ],
        header="h",
    )
    assert "↳ subagent c1 ended completed: Found 3 dupes." in html
    assert "Details" not in html  # its first line; the rest is in its session
