"""The run engine's parts, through its seams: a ScriptedModel, a real Agent, the handle.

A tool call goes through its steps in one order: is it a tool we offer, may the role
call it, is its input valid, what does the policy say (and the user, when the policy
asks), and only then does it run. A refusal at any step is the call's result, and the
run goes on. However the run ends, every ``tool_use`` in the history has its
``tool_result``.
"""

from __future__ import annotations

from typing import TypeVar

from helpers import assert_valid, call, calls, of_type, until

from jupyter_agent import Agent, RunHandle, ScriptedModel, tool
from jupyter_agent.events import (
    AnswerEvent,
    PermissionRequestEvent,
    PermissionResponseEvent,
    QuestionEvent,
    StoppedEvent,
    ToolEndEvent,
    ToolOutcome,
    TurnStartEvent,
)
from jupyter_agent.messages import INTERRUPTED_RESULT
from jupyter_agent.permissions import Allow, Ask, Deny, ToolCall
from jupyter_agent.states import AgentState

TOUCHED: list[str] = []
"""What the ``record`` tool did: a call that never ran leaves nothing here."""

E = TypeVar("E")


@tool(category="files", permissions={"write_files"})
def record(text: str) -> str:
    """Record a note."""
    TOUCHED.append(text)
    return f"recorded {text}"


@tool
def explode() -> str:
    """Fail."""
    raise RuntimeError("disk on fire")


class Recorder:
    """A policy that answers ``decision`` for ``record`` and notes every call it sees."""

    def __init__(self, decision: Allow | Deny | Ask) -> None:
        self.decision = decision
        self.seen: list[str] = []

    def decide(self, call: ToolCall) -> Allow | Deny | Ask:
        self.seen.append(call.name)
        return self.decision if call.name == "record" else Allow()

    def remember(self, call: ToolCall) -> str | None:
        return None


def agent_for(workspace, *turns, role="actor", **options) -> Agent:
    TOUCHED.clear()
    options.setdefault("tools", [record, explode])
    return Agent(role, ScriptedModel(list(turns)), workspace=workspace, **options)


def scripted(agent: Agent) -> ScriptedModel:
    """The scripted model ``agent`` runs on (what ``agent_for`` gives it)."""
    assert isinstance(agent.model, ScriptedModel)
    return agent.model


def results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


def events(handle: RunHandle, kind: type[E]) -> list[E]:
    """The events of one kind the run has sent so far."""
    return of_type(handle.events_so_far, kind)


# --- the order of a call's steps ----------------------------------------------------


async def test_the_role_is_checked_before_the_input(workspace):
    agent = agent_for(workspace, call("record", wrong="x"), {"text": "ok"}, role="planner")
    await agent.run("go")
    text, is_error = results(agent)[0]
    assert is_error
    assert text.startswith("Refused: the planner role may not call record")
    assert "Invalid arguments" not in text


async def test_a_tool_the_role_lacks_is_refused_before_the_policy_is_asked(workspace):
    policy = Recorder(Ask("would ask"))
    agent = agent_for(
        workspace, call("record", text="x"), {"text": "ok"}, role="planner", policy=policy
    )
    handle = await agent.run("go")
    assert policy.seen == []
    assert events(handle, PermissionRequestEvent) == []
    assert TOUCHED == []
    assert handle.state is AgentState.completed


async def test_an_invalid_input_is_rejected_before_the_policy_is_asked(workspace):
    policy = Recorder(Ask("would ask"))
    agent = agent_for(
        workspace, call("record", wrong="x"), call("task_complete", summary="ok"), policy=policy
    )
    handle = await agent.run("go")  # never waits for an approval: it ends on its own
    assert "record" not in policy.seen
    assert events(handle, PermissionRequestEvent) == []
    assert results(agent)[0] == (
        "Invalid arguments for record: text: Field required; wrong: unexpected argument",
        True,
    )
    assert handle.state is AgentState.completed


async def test_a_denied_call_never_runs_and_the_run_goes_on(workspace):
    agent = agent_for(
        workspace,
        call("record", text="x"),
        call("task_complete", summary="done"),
        policy=Recorder(Deny("no notes today")),
    )
    handle = await agent.run("go")
    assert TOUCHED == []
    assert results(agent)[0] == ("Refused by a permission rule: no notes today.", True)
    assert [e.is_error for e in events(handle, ToolEndEvent)] == [True, False]
    assert [e.outcome for e in events(handle, ToolEndEvent)] == [ToolOutcome.denied, ToolOutcome.ok]
    assert handle.summary == "done"


async def test_a_call_that_needs_approval_waits_and_runs_only_once_allowed(workspace):
    agent = agent_for(
        workspace,
        call("record", text="x"),
        call("task_complete", summary="done"),
        policy=Recorder(Ask("notes need approval")),
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_approval is not None)
    pending = handle._run.user.approval
    assert pending is not None
    (request,) = events(handle, PermissionRequestEvent)
    assert pending.id == request.request_id
    assert (pending.call.name, dict(pending.call.input)) == ("record", {"text": "x"})
    assert request.reason == "notes need approval"
    assert handle.state is AgentState.waiting_user
    assert TOUCHED == []  # waiting: not run yet

    handle._run.user.settle("another-request", allowed=True, remember=False)
    assert handle._run.user.approval is pending  # only its own id settles it
    handle.approve(True)
    await handle.wait()
    assert TOUCHED == ["x"]
    assert results(agent)[0] == ("recorded x", False)
    assert [e.allowed for e in events(handle, PermissionResponseEvent)] == [True]
    assert handle.pending_approval is None


async def test_a_tool_exception_is_an_error_result_and_the_next_call_still_runs(workspace):
    agent = agent_for(
        workspace,
        calls(("explode", {}), ("record", {"text": "after"})),
        call("task_complete", summary="done"),
    )
    handle = await agent.run("go")
    assert results(agent)[:2] == [
        ("explode failed: RuntimeError: disk on fire", True),
        ("recorded after", False),
    ]
    assert TOUCHED == ["after"]
    outcomes = [e.outcome for e in events(handle, ToolEndEvent)]
    assert outcomes[:2] == [ToolOutcome.error, ToolOutcome.ok]
    # The model reads both results, the error first, on its next call.
    sent = scripted(agent).requests[1].messages[-1]["content"]
    assert [(b["type"], b.get("is_error", False)) for b in sent] == [
        ("tool_result", True),
        ("tool_result", False),
    ]
    assert handle.state is AgentState.completed


# --- questions ---------------------------------------------------------------------------


async def test_a_question_waits_until_its_own_id_is_answered(workspace):
    agent = agent_for(
        workspace,
        call("ask_user", question="Which file?"),
        call("task_complete", summary="done"),
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_question is not None)
    user = handle._run.user
    pending = user.question
    assert pending is not None
    (asked,) = events(handle, QuestionEvent)
    assert pending.id == asked.question_id
    assert pending.question.question == "Which file?"
    assert user.waiting.is_set()

    user.answer("another-question", "wrong.csv")
    assert user.question is pending and not pending.answer.done()
    handle.answer("sales.csv")
    await handle.wait()
    assert results(agent)[0] == ("The user answered: sales.csv", False)
    assert [(e.question_id, e.value) for e in events(handle, AnswerEvent)] == [
        (pending.id, "sales.csv")
    ]
    assert user.question is None and not user.waiting.is_set()


# --- limits ------------------------------------------------------------------------------


async def test_max_steps_stops_before_another_model_call(workspace):
    agent = agent_for(
        workspace, *[call("send_update", message=str(i)) for i in range(5)], max_steps=2
    )
    handle = await agent.run("loop")
    assert len(scripted(agent).requests) == 2
    assert scripted(agent).remaining == 3
    assert [e.step for e in events(handle, TurnStartEvent)] == [1, 2]
    last = handle.events_so_far[-1]
    assert isinstance(last, StoppedEvent)
    assert (last.kind, last.reason) == ("stopped", "iteration_limit")
    assert handle.state is AgentState.cancelled
    assert_valid(agent.history)


# --- the history invariant -------------------------------------------------------------


async def test_a_stop_during_an_approval_answers_every_tool_use_of_the_turn(workspace):
    agent = agent_for(
        workspace,
        calls(("record", {"text": "first"}), ("record", {"text": "second"})),
        call("task_complete", summary="never"),
        policy=Recorder(Ask("notes need approval")),
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_approval is not None)
    handle.stop()
    await handle.wait()
    assert handle.stop_reason == "manual_stop"
    assert TOUCHED == []
    assert events(handle, PermissionResponseEvent) == []
    assert handle.pending_approval is None
    uses = [b.id for m in agent.history for b in m.tool_uses]
    answered = [r.tool_use_id for m in agent.history for r in m.tool_results]
    assert len(uses) == 2 and answered == uses
    assert results(agent) == [(INTERRUPTED_RESULT, True), (INTERRUPTED_RESULT, True)]
    (ended,) = events(handle, ToolEndEvent)  # the call waiting for approval
    assert ended.outcome == ToolOutcome.interrupted
    assert scripted(agent).remaining == 1  # the model was not asked again
    assert_valid(agent.history)
