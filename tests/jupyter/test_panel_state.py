"""What an event changes in the panel's state is a pure function of the event and a few
facts (no widget, no agent), and every command a view may send has its handler."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from event_samples import SAMPLES

from jupyter_agent import events as ev
from jupyter_agent.jupyter.panel.commands import handled
from jupyter_agent.jupyter.panel.protocol import Command, PanelState
from jupyter_agent.jupyter.panel.state import (
    SUBAGENT_WAITS,
    PanelFacts,
    PanelUpdate,
    Recheck,
    apply,
)
from jupyter_agent.models._usage import Usage
from jupyter_agent.states import AgentState


def test_every_command_type_has_a_handler() -> None:
    assert handled() == set(get_args(get_args(Command)[0]))


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_every_event_kind_gives_an_update_of_known_traits(event: Any) -> None:
    update = apply(PanelFacts(), event)
    assert isinstance(update, PanelUpdate)
    assert set(update.traits) <= set(PanelState.__annotations__)


def test_back_from_an_approval_the_status_names_the_running_tool() -> None:
    facts = PanelFacts(tool="run_cell")
    event = ev.StateEvent(state=AgentState.tool_executing, previous=AgentState.waiting_user)
    assert apply(facts, event).traits == {
        "status": "tool_executing",
        "detail": "run_cell",
        "busy": True,
    }


def test_a_completed_state_shows_no_detail_and_a_long_detail_is_cut() -> None:
    done = ev.StateEvent(
        state=AgentState.completed, previous=AgentState.running, detail="the whole answer"
    )
    assert apply(PanelFacts(), done).traits == {
        "status": "completed",
        "detail": "",
        "busy": False,
        "pausing": False,  # a pause ends with its run
    }
    long = ev.StateEvent(state=AgentState.running, previous=AgentState.idle, detail="x" * 500)
    detail = apply(PanelFacts(), long).traits["detail"]
    assert len(detail) == 300 and detail.endswith("…")


def test_a_tool_sets_the_running_tool_and_asks_whether_stop_interrupts_the_kernel() -> None:
    start = apply(PanelFacts(), SAMPLES[7])
    assert start.tool == "read_file" and start.recheck == {Recheck.RUNNING_CODE}
    end = apply(PanelFacts(tool="read_file"), SAMPLES[9])
    assert end.tool == "" and end.recheck == {Recheck.RUNNING_CODE}


def test_a_replay_shows_tokens_and_no_dollars() -> None:
    usage = ev.UsageEvent(run_input_tokens=3, run_cost_usd=0.5, session_cost_usd=1.0)
    session = Usage(input_tokens=10, output_tokens=4)
    priced = apply(PanelFacts(session_usage=session), usage).traits["usage"]
    replay = apply(PanelFacts(session_usage=session, priced=False), usage).traits["usage"]
    assert priced["run_cost_usd"] == 0.5 and priced["session_input_tokens"] == 10
    assert "run_cost_usd" not in replay and replay["session_output_tokens"] == 4


def test_an_ending_clears_what_waits_and_reads_sessions_context_and_model_again() -> None:
    stopped = ev.StoppedEvent(reason="manual_stop", message="Stopped by the user.")
    update = apply(PanelFacts(context_estimated=False), stopped)
    assert update.traits == {
        "busy": False,
        "running_code": False,
        "pending_question": "",
        "pending_approval": "",
        "stop_reason": "manual_stop",
        "plan_ready": False,
    }
    assert update.recheck == {Recheck.SESSIONS}
    error = apply(PanelFacts(), ev.ErrorEvent(message="bad key", error_type="AuthError"))
    assert error.recheck == {Recheck.SESSIONS, Recheck.CONTEXT, Recheck.MODEL}
    plan = apply(PanelFacts(), ev.CompletedEvent(summary="", plan_ready=True))
    assert plan.traits["plan_ready"] is True and plan.traits["stop_reason"] == "completed"


def test_pending_ids_follow_questions_and_approvals() -> None:
    question, answer, timeout, request, response = SAMPLES[12:17]
    assert apply(PanelFacts(), question).traits == {"pending_question": "q"}
    assert apply(PanelFacts(), answer).traits == {"pending_question": ""}
    assert apply(PanelFacts(), timeout).traits == {"pending_question": ""}
    assert apply(PanelFacts(), request).traits == {"pending_approval": "r"}
    assert apply(PanelFacts(), response).traits == {"pending_approval": ""}


def test_the_status_says_when_a_subagent_waits_for_the_user() -> None:
    asks = ev.SubagentOutputEvent(child_session_id="c", event=SAMPLES[12])
    answered = ev.SubagentOutputEvent(child_session_id="c", event=SAMPLES[13])
    assert apply(PanelFacts(tool="delegate"), asks).traits == {"detail": SUBAGENT_WAITS}
    assert apply(PanelFacts(tool="delegate"), answered).traits == {"detail": "delegate"}
    # A subagent's usage counts in the parent's own: it changes nothing here.
    usage = ev.SubagentOutputEvent(child_session_id="c", event=ev.UsageEvent())
    assert apply(PanelFacts(), usage) == PanelUpdate()
