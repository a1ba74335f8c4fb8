"""What an agent event changes in the panel's synced state, as a pure function.

:func:`apply` reads an event and the few facts the panel holds beside its traits
(:class:`PanelFacts`) and returns a :class:`PanelUpdate`: the traits to assign, the tool
now running, and what the panel must then look up again from the agent (:class:`Recheck`).
It touches no widget and no agent, so every event kind is testable without a kernel; the
widget (:class:`~jupyter_agent.jupyter.panel.widget.AgentPanel`) only assigns the result.

Every event kind is named in one of the matches here (``assert_never`` makes mypy check
it), so a new kind cannot be dropped silently.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple, TypedDict

from typing_extensions import assert_never

from ... import events as ev
from ...models._usage import Usage
from ...states import AgentState
from .protocol import PanelContext, PanelUsage, innermost

DETAIL_LIMIT = 300
"""The longest status detail shown; longer text is cut with an ellipsis."""
SUBAGENT_WAITS = "a subagent is waiting for you"
"""The status detail while a subagent's question or approval waits for the user."""


class TraitChanges(TypedDict, total=False):
    """The synced traits an event or a command may set (a part of
    :class:`~jupyter_agent.jupyter.panel.protocol.PanelState`)."""

    status: str
    detail: str
    stop_reason: str
    busy: bool
    role: str
    model_name: str
    model_label: str
    usage: PanelUsage
    context: PanelContext
    pending_question: str
    pending_approval: str
    running_code: bool
    pausing: bool
    plan_ready: bool
    max_steps: int


class Recheck(Enum):
    """What the panel looks up again from the agent after an event."""

    RUNNING_CODE = "running_code"
    """Whether Stop must also interrupt the kernel (the tool or a cell runs code)."""
    SESSIONS = "sessions"
    """The saved sessions (a run ended: its session was written)."""
    CONTEXT = "context"
    """The context gauge's estimate (a run ended with no count since)."""
    MODEL = "model"
    """Whether the model can be called (an error may be a rejected key)."""


_NO_USAGE = Usage()
_NO_TRAITS: TraitChanges = {}


class PanelFacts(NamedTuple):
    """What the panel knows beside its traits, that an event's effect depends on.

    (Tuples: one is made for every event, streamed text included, so it must be cheap.)"""

    tool: str = ""
    """The tool the agent runs now (empty between tools)."""
    priced: bool = True
    """The model's calls cost money (a scripted replay costs nothing: no dollars shown)."""
    session_usage: Usage = _NO_USAGE
    """The session's tokens so far, shown beside the run's (read, never changed)."""
    context_estimated: bool = True
    """The gauge shows an estimate (or nothing), not a count from the API."""


class PanelUpdate(NamedTuple):
    """What one event changes: assign ``traits``, set the running tool, then recheck."""

    traits: TraitChanges = _NO_TRAITS
    """The traits to assign (read, never changed)."""
    tool: str | None = None
    """The tool running now, when the event changed it (``""``: none); ``None``: unchanged."""
    recheck: frozenset[Recheck] = frozenset()


NOTHING = PanelUpdate()
"""The update of an event the transcript shows and the traits do not."""

_Pending = ev.QuestionEvent | ev.AnswerEvent | ev.RequestInputTimeoutEvent
_Approval = ev.PermissionRequestEvent | ev.PermissionResponseEvent
_End = ev.StoppedEvent | ev.CompletedEvent | ev.ErrorEvent


def apply(facts: PanelFacts, event: ev.Event) -> PanelUpdate:
    """What ``event`` changes in the panel's state, given ``facts``."""
    match event:
        case (
            ev.TextDeltaEvent()  # streamed text first: by far the most frequent
            | ev.ThinkingDeltaEvent()
            | ev.TurnStartEvent()
            | ev.TextEvent()
            | ev.ReasonEvent()
            | ev.ObserveEvent()
            | ev.ToolProgressEvent()
            | ev.PlanEvent()
            | ev.PlanStepEvent()
            | ev.UpdateEvent()
            | ev.RetryEvent()
            | ev.WarningEvent()
            | ev.CompactionEvent()
            | ev.SubagentSpawnedEvent()
            | ev.SubagentCompleteEvent()
        ):
            return NOTHING  # the transcript shows them
        case ev.StateEvent():
            return PanelUpdate(_state_traits(facts, event))
        case ev.UsageEvent():
            return PanelUpdate({"usage": _usage(facts, event)})
        case ev.ContextEvent():
            return PanelUpdate({"context": context_of(event)})
        case ev.AgentStartEvent():
            return PanelUpdate(_start_traits(event))
        case ev.ToolStartEvent() | ev.ToolEndEvent():
            tool = event.name if isinstance(event, ev.ToolStartEvent) else ""
            return PanelUpdate(tool=tool, recheck=frozenset({Recheck.RUNNING_CODE}))
        case ev.QuestionEvent() | ev.AnswerEvent() | ev.RequestInputTimeoutEvent():
            return PanelUpdate({"pending_question": _pending_id(event)})
        case ev.PermissionRequestEvent() | ev.PermissionResponseEvent():
            return PanelUpdate({"pending_approval": _approval_id(event)})
        case ev.StoppedEvent() | ev.CompletedEvent() | ev.ErrorEvent():
            return _ended(facts, event)
        case ev.SubagentOutputEvent():
            return _subagent(facts, event)
        case _:
            assert_never(event)


def context_of(event: ev.ContextEvent) -> PanelContext:
    """The gauge as a context count sets it."""
    return PanelContext(
        used_tokens=event.used_tokens,
        window=event.window,
        cached_tokens=event.cached_tokens,
        estimated=event.estimated,
    )


def short(text: str, limit: int = DETAIL_LIMIT) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis (the status line is one line)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _state_traits(facts: PanelFacts, event: ev.StateEvent) -> TraitChanges:
    detail = event.detail
    if not detail and event.state is AgentState.tool_executing:
        detail = facts.tool  # back from an approval: the state event names no tool
    elif event.state is AgentState.completed:
        detail = ""  # the summary, maybe the whole answer: the transcript shows it
    busy = not event.state.terminal and event.state is not AgentState.idle
    changes: TraitChanges = {"status": event.state.value, "detail": short(detail), "busy": busy}
    if not busy:
        changes["pausing"] = False  # a pause ends with its run
    return changes


def _usage(facts: PanelFacts, event: ev.UsageEvent) -> PanelUsage:
    session = facts.session_usage
    usage = PanelUsage(
        run_input_tokens=event.run_input_tokens,
        run_output_tokens=event.run_output_tokens,
        run_cache_read_input_tokens=event.run_cache_read_input_tokens,
        session_input_tokens=session.total_input_tokens,
        session_output_tokens=session.output_tokens,
        session_cache_read_input_tokens=session.cache_read_input_tokens,
    )
    if facts.priced:
        usage["run_cost_usd"] = event.run_cost_usd
        usage["session_cost_usd"] = event.session_cost_usd
        usage["run_unpriced_calls"] = event.run_unpriced_calls
        usage["session_unpriced_calls"] = event.session_unpriced_calls
    return usage


def _start_traits(event: ev.AgentStartEvent) -> TraitChanges:
    return {
        "busy": True,
        "stop_reason": "",
        "plan_ready": False,
        "role": event.role,
        "model_name": event.model,
        "model_label": event.model_label or "",
    }


def _pending_id(event: _Pending) -> str:
    """The question that waits now: the one asked, none once answered or timed out."""
    return event.question_id if isinstance(event, ev.QuestionEvent) else ""


def _approval_id(event: _Approval) -> str:
    """The approval that waits now: the one requested, none once answered."""
    return event.request_id if isinstance(event, ev.PermissionRequestEvent) else ""


def _ended(facts: PanelFacts, event: _End) -> PanelUpdate:
    """A run ended: nothing waits or runs, and the sessions (and maybe more) are read again."""
    recheck = {Recheck.SESSIONS}
    if facts.context_estimated:  # no count since: estimate again
        recheck.add(Recheck.CONTEXT)
    if isinstance(event, ev.ErrorEvent):
        recheck.add(Recheck.MODEL)  # a rejected key: the set-up box again
    traits: TraitChanges = {
        "busy": False,
        "running_code": False,
        "pending_question": "",
        "pending_approval": "",
        "stop_reason": event.reason if isinstance(event, ev.StoppedEvent) else event.kind,
        "plan_ready": isinstance(event, ev.CompletedEvent) and event.plan_ready,
    }
    return PanelUpdate(traits, recheck=frozenset(recheck))


def _subagent(facts: PanelFacts, event: ev.SubagentOutputEvent) -> PanelUpdate:
    """The status line says when a subagent (its card nested in the transcript) waits for
    the user, while the agent itself waits on its delegate call."""
    inner = innermost(event)
    if isinstance(inner, (ev.QuestionEvent, ev.PermissionRequestEvent)):
        return PanelUpdate({"detail": SUBAGENT_WAITS})
    if isinstance(inner, (ev.AnswerEvent, ev.PermissionResponseEvent, ev.RequestInputTimeoutEvent)):
        return PanelUpdate({"detail": short(facts.tool)})
    return NOTHING
