"""The event stream: everything a run does, as tagged dataclasses.

Every event carries ``kind`` (the tag of the :data:`Event` union), the session and
run it belongs to, a per-agent sequence number and a timestamp. One adapter,
:data:`EventAdapter`, serialises them for the panel, logs and session files, and
validates what comes back.

Events are dataclasses with slots, not pydantic models: a run makes about twenty a
step and keeps them all, and a validated model cost five times the time and memory
(600 bytes a text delta, against 120) for values the run already holds typed.
Validation happens where data comes in from outside, through :data:`EventAdapter`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Discriminator, TypeAdapter
from typing_extensions import dataclass_transform

from .approvals import ApprovalPreview, RememberOption
from .plans import Plan, Question, StepStatus
from .states import AgentState, StopReason

_T = TypeVar("_T")

RunAction = Literal["execute_plan", "compact"]
"""A run the user started with a button rather than a typed task (see
:attr:`AgentStartEvent.action`; an ``execute_plan`` task's message in the history has the
same ``message_type``; a ``compact`` run adds no message, only its context records)."""


class ToolOutcome(str, Enum):
    """How a tool call ended, for code that branches on it (the result's text is for
    the model and people)."""

    ok = "ok"
    """The tool did what was asked."""
    error = "error"
    """The tool, or what it ran, failed; or the call was malformed."""
    denied = "denied"
    """A role permission, a rule or the user refused the call: nothing ran."""
    interrupted = "interrupted"
    """The run was stopped (Stop, a cancellation) while the call was under way."""
    stopped = "stopped"
    """The run ended for another reason (a limit, an unanswered question) while the call
    was under way."""


@dataclass_transform(kw_only_default=True)
def _event(cls: type[_T]) -> type[_T]:
    """Every event class's decorator: keyword-only (a field with a default in the base may
    be followed by required ones) and slotted (no per-event ``__dict__``)."""
    return dataclass(kw_only=True, slots=True)(cls)


@_event
class _Event:
    session_id: str = ""
    run_id: str = ""
    seq: int = 0
    """Position in the agent's stream; consumers use it to order and de-duplicate."""
    time: float = field(default_factory=time.time)


@_event
class AgentStartEvent(_Event):
    kind: Literal["agent_start"] = "agent_start"
    task: str
    role: str
    model: str
    loop: str
    max_steps: int
    model_label: str | None = None
    """A caption to show with the output, e.g. that the model is a scripted replay."""
    replay: bool = False
    """The model replays recorded turns (see ``Model.is_replay``): its cost means nothing."""
    action: RunAction | None = None
    """What the user did when that was not typing the task (a button such as Execute
    plan): a frontend shows the action, and ``task``, the prompt it became, only on demand."""


@_event
class TurnStartEvent(_Event):
    kind: Literal["turn_start"] = "turn_start"
    step: int


@_event
class TextDeltaEvent(_Event):
    kind: Literal["text_delta"] = "text_delta"
    text: str
    phase: str | None = None


@_event
class TextEvent(_Event):
    """A text block finished streaming (or was cut off, ``interrupted``)."""

    kind: Literal["text"] = "text"
    text: str
    phase: str | None = None
    interrupted: bool = False


@_event
class ThinkingDeltaEvent(_Event):
    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


@_event
class ReasonEvent(_Event):
    """The reason phase of the reason → act → observe loop."""

    kind: Literal["reason"] = "reason"
    step: int
    text: str
    control: dict[str, Any] | None = None


@_event
class ObserveEvent(_Event):
    """The observe phase of the reason → act → observe loop."""

    kind: Literal["observe"] = "observe"
    step: int
    text: str
    control: dict[str, Any] | None = None


@_event
class ToolStartEvent(_Event):
    kind: Literal["tool_start"] = "tool_start"
    tool_use_id: str
    name: str
    input: dict[str, Any]
    summary: str


@_event
class ToolProgressEvent(_Event):
    kind: Literal["tool_progress"] = "tool_progress"
    tool_use_id: str
    output: str


@_event
class ToolEndEvent(_Event):
    kind: Literal["tool_end"] = "tool_end"
    tool_use_id: str
    name: str
    result: str
    is_error: bool = False
    duration: float = 0.0
    diff: str | None = None
    data: dict[str, Any] | None = None
    error_line: str | None = None
    """Set when the call failed, was refused, or what it ran failed (a cell that raised, a
    command's non-zero exit): one line a tool row shows, in red, without expanding."""
    outcome: ToolOutcome = ToolOutcome.ok
    """How the call ended; anything but ``ok`` comes with ``is_error``."""


@_event
class PlanEvent(_Event):
    kind: Literal["plan"] = "plan"
    plan: Plan


@_event
class PlanStepEvent(_Event):
    kind: Literal["plan_step"] = "plan_step"
    step_number: int
    status: StepStatus
    note: str = ""


@_event
class QuestionEvent(_Event):
    kind: Literal["question"] = "question"
    question_id: str
    question: Question
    timeout: float | None = None


@_event
class AnswerEvent(_Event):
    kind: Literal["answer"] = "answer"
    question_id: str
    value: str
    label: str | None = None


@_event
class RequestInputTimeoutEvent(_Event):
    kind: Literal["request_input_timeout"] = "request_input_timeout"
    question_id: str
    timeout: float


@_event
class PermissionRequestEvent(_Event):
    kind: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_use_id: str
    tool_name: str
    summary: str
    reason: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Why this call asks even where a rule would allow it (it writes a git hook, runs a
    script changed during the session…): shown prominently on the card."""
    remember: str | None = None
    """What "Always allow" would remember, said before the click; ``None``: nothing would
    be (the card does not offer it)."""
    remember_options: list[RememberOption] = field(default_factory=list)
    """The scopes "Always allow" may take, narrowest first; the first is the default
    (``remember=True``), and ``remember`` describes it."""
    preview: ApprovalPreview | None = None
    """The call as the user judges it (the cell's code, the command's programs, the diff);
    ``None`` when the tool has no preview or it could not be computed."""


@_event
class PermissionResponseEvent(_Event):
    kind: Literal["permission_response"] = "permission_response"
    request_id: str
    tool_name: str
    allowed: bool
    remember: bool = False
    rule: str | None = None
    """Description of the session rule added when ``remember`` was set."""
    scope: str | None = None
    """The :class:`~jupyter_agent.approvals.RememberOption` id remembered, if any."""


@_event
class UpdateEvent(_Event):
    """A progress message from the agent (the send_update tool)."""

    kind: Literal["update"] = "update"
    message: str


@_event
class StateEvent(_Event):
    kind: Literal["state"] = "state"
    state: AgentState
    previous: AgentState
    detail: str = ""
    """E.g. the tool being run, or what the agent waits for."""


@_event
class UsageEvent(_Event):
    kind: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    run_cost_usd: float = 0.0
    session_cost_usd: float = 0.0
    run_input_tokens: int = 0
    run_output_tokens: int = 0
    run_cache_read_input_tokens: int = 0
    run_unpriced_calls: int = 0
    """Calls of the run whose price is unknown (a local or compatible server's model)."""
    session_unpriced_calls: int = 0


@_event
class ContextEvent(_Event):
    """How full the model's context window is: after each reply (as the API counted the
    request, plus the reply) and after a compaction (estimated)."""

    kind: Literal["context"] = "context"
    used_tokens: int
    window: int
    cached_tokens: int = 0
    """Of ``used_tokens``, those the last request read from the prompt cache."""
    estimated: bool = False


CompactionReason = Literal["auto", "manual", "too_long"]


@_event
class CompactionEvent(_Event):
    """The model's view of the conversation was made smaller (the history is whole)."""

    kind: Literal["compaction"] = "compaction"
    reason: CompactionReason
    """The window was filling up, the user asked, or the API said the prompt was too long."""
    cleared: int = 0
    """Tool results replaced by one-line stubs."""
    summarised: int = 0
    """Messages replaced by a summary the model wrote."""
    tokens_before: int = 0
    tokens_after: int = 0
    summary: str = ""

    def describe(self) -> str:
        """One line for a transcript: what was done, why, and what it saved."""
        why = {
            "auto": "the context window was filling up",
            "manual": "you asked",
            "too_long": "the API said the prompt was too long",
        }[self.reason]
        done = []
        if self.cleared:
            done.append(f"cleared {self.cleared} old tool result{'s' * (self.cleared != 1)}")
        if self.summarised:
            done.append(
                f"summarised {self.summarised} earlier message{'s' * (self.summarised != 1)}"
            )
        return (
            f"Compacted the conversation ({why}): {' and '.join(done)}; "
            f"about {self.tokens_before:,} → {self.tokens_after:,} tokens."
        )


@_event
class RetryEvent(_Event):
    """The model call failed mid-way and is being retried; discard the partial turn."""

    kind: Literal["retry"] = "retry"
    attempt: int
    reason: str
    delay: float


PanelAction = Literal["trust_workspace"]
"""Something the user can do about a warning from the panel (a button)."""


@_event
class WarningEvent(_Event):
    kind: Literal["warning"] = "warning"
    message: str
    action: PanelAction | None = None
    """What the user can do about it from the panel (a button): trust the workspace's
    settings."""


@_event
class StoppedEvent(_Event):
    """The run ended without completing its task."""

    kind: Literal["stopped"] = "stopped"
    reason: StopReason
    message: str = ""

    def describe(self) -> str:
        """One line in the user's words, as the panel says it: the user's own Stop is its
        message ("Stopped by the user."), never the reason's code; another reason says
        what stopped the run."""
        if self.reason == "manual_stop":
            return self.message or "Stopped."
        return f"Stopped: {self.message or self.reason.replace('_', ' ')}"


@_event
class CompletedEvent(_Event):
    kind: Literal["completed"] = "completed"
    summary: str = ""
    plan_ready: bool = False
    """The run ended by submitting a plan: it awaits the user's review, nothing was done."""


@_event
class ErrorEvent(_Event):
    kind: Literal["error"] = "error"
    message: str
    error_type: str = ""


@_event
class SubagentSpawnedEvent(_Event):
    kind: Literal["subagent_spawned"] = "subagent_spawned"
    child_session_id: str
    agent_type: str
    parent_tool_use_id: str | None = None
    task: str = ""


@_event
class SubagentOutputEvent(_Event):
    kind: Literal["subagent_output"] = "subagent_output"
    child_session_id: str
    event: Event


@_event
class SubagentCompleteEvent(_Event):
    kind: Literal["subagent_complete"] = "subagent_complete"
    child_session_id: str
    result: str | None = None
    state: AgentState = AgentState.completed


Event = Annotated[
    AgentStartEvent
    | TurnStartEvent
    | TextDeltaEvent
    | TextEvent
    | ThinkingDeltaEvent
    | ReasonEvent
    | ObserveEvent
    | ToolStartEvent
    | ToolProgressEvent
    | ToolEndEvent
    | PlanEvent
    | PlanStepEvent
    | QuestionEvent
    | AnswerEvent
    | RequestInputTimeoutEvent
    | PermissionRequestEvent
    | PermissionResponseEvent
    | UpdateEvent
    | StateEvent
    | UsageEvent
    | ContextEvent
    | CompactionEvent
    | RetryEvent
    | WarningEvent
    | StoppedEvent
    | CompletedEvent
    | ErrorEvent
    | SubagentSpawnedEvent
    | SubagentOutputEvent
    | SubagentCompleteEvent,
    Discriminator("kind"),
]

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)
"""Serialises and parses every event: ``EventAdapter.dump_json(e)``, ``validate_json(b)``."""

TERMINAL_EVENT_KINDS = frozenset({"stopped", "completed", "error"})
