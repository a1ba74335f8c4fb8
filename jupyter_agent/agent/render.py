"""Readable text for the event stream: terminals, logs, and frontends without widgets."""

from __future__ import annotations

import sys
from typing import Any, Protocol, get_args

from typing_extensions import assert_never

from .._wording import plural, visible
from ..events import (
    AgentStartEvent,
    AnswerEvent,
    CompactionEvent,
    CompletedEvent,
    ContextEvent,
    ErrorEvent,
    Event,
    ObserveEvent,
    PermissionRequestEvent,
    PermissionResponseEvent,
    PlanEvent,
    PlanStepEvent,
    QuestionEvent,
    ReasonEvent,
    RequestInputTimeoutEvent,
    RetryEvent,
    StateEvent,
    StoppedEvent,
    SubagentCompleteEvent,
    SubagentOutputEvent,
    SubagentSpawnedEvent,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ToolEndEvent,
    ToolProgressEvent,
    ToolStartEvent,
    TurnStartEvent,
    UpdateEvent,
    UsageEvent,
    WarningEvent,
)
from ..models._usage import cost_text
from ..plans import Plan
from ..states import AgentState

_RunEvent = (
    AgentStartEvent
    | TurnStartEvent
    | StateEvent
    | UsageEvent
    | ContextEvent
    | CompactionEvent
    | RetryEvent
    | WarningEvent
    | StoppedEvent
    | CompletedEvent
    | ErrorEvent
)
_ModelEvent = TextDeltaEvent | TextEvent | ThinkingDeltaEvent | ReasonEvent | ObserveEvent
_UserEvent = (
    PlanEvent
    | PlanStepEvent
    | QuestionEvent
    | AnswerEvent
    | RequestInputTimeoutEvent
    | PermissionRequestEvent
    | PermissionResponseEvent
    | UpdateEvent
)


class TextSink(Protocol):
    """Where a renderer writes: a file, ``sys.stdout``, a subagent's indented lines."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class TextRenderer:
    """Prints events as they come. Subscribe it to an agent: ``agent.subscribe(TextRenderer())``."""

    def __init__(
        self,
        file: TextSink | None = None,
        *,
        color: bool | None = None,
        show_thinking: bool = False,
        label: str | None = None,
        stream: bool = True,
    ) -> None:
        self.file = file
        self.stream = stream
        """Print text as it streams; else each text block whole once it ends (a subagent's:
        several running at once would interleave their words)."""
        self._subagents: dict[str, TextRenderer] = {}
        self.color = color
        self.show_thinking = show_thinking
        self.label = label
        """A caption printed with each run's header (e.g. that the model is a replay)."""
        self._open_line = False
        self._phase: str | None = None
        self._usage: Any = None
        self._replay = False
        """The run's model is a replay (``Model.is_replay``): its cost means nothing."""
        self._last_text = ""

    # --- output helpers ---------------------------------------------------------------

    @property
    def _out(self) -> TextSink:
        return self.file or sys.stdout

    def _style(self, text: str, code: str) -> str:
        use = (
            self.color if self.color is not None else getattr(self._out, "isatty", lambda: False)()
        )
        text = visible(text)  # what the model wrote may not restyle or rewrite the terminal
        return f"\033[{code}m{text}\033[0m" if use else text

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _line(self, text: str) -> None:
        if self._open_line:
            self._write("\n")
            self._open_line = False
        self._write(text + "\n")

    # --- events -------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        match event:
            case (
                AgentStartEvent()
                | TurnStartEvent()
                | StateEvent()
                | UsageEvent()
                | ContextEvent()
                | CompactionEvent()
                | RetryEvent()
                | WarningEvent()
                | StoppedEvent()
                | CompletedEvent()
                | ErrorEvent()
            ):
                self._on_run(event)
            case (
                TextDeltaEvent()
                | TextEvent()
                | ThinkingDeltaEvent()
                | ReasonEvent()
                | ObserveEvent()
            ):
                self._on_model(event)
            case ToolStartEvent() | ToolProgressEvent() | ToolEndEvent():
                self._on_tool(event)
            case (
                PlanEvent()
                | PlanStepEvent()
                | QuestionEvent()
                | AnswerEvent()
                | RequestInputTimeoutEvent()
                | PermissionRequestEvent()
                | PermissionResponseEvent()
                | UpdateEvent()
            ):
                self._on_user(event)
            case SubagentSpawnedEvent() | SubagentOutputEvent() | SubagentCompleteEvent():
                self._on_subagent(event)
            case _:
                assert_never(event)

    def _on_run(self, event: _RunEvent) -> None:
        """The run's own course: its start, turns, state, usage, and how it ended."""
        match event:
            case AgentStartEvent():
                self._on_agent_start(event)
            case TurnStartEvent():
                self._on_turn_start(event)
            case StateEvent():
                self._on_state(event)
            case UsageEvent():
                self._on_usage(event)
            case ContextEvent():
                self._on_context(event)
            case CompactionEvent():
                self._on_compaction(event)
            case RetryEvent():
                self._on_retry(event)
            case WarningEvent():
                self._on_warning(event)
            case StoppedEvent():
                self._on_stopped(event)
            case CompletedEvent():
                self._on_completed(event)
            case ErrorEvent():
                self._on_error(event)
            case _:
                assert_never(event)

    def _on_model(self, event: _ModelEvent) -> None:
        """What the model wrote: text, thinking, the strict loop's reason and observe."""
        match event:
            case TextDeltaEvent():
                self._on_text_delta(event)
            case TextEvent():
                self._on_text(event)
            case ThinkingDeltaEvent():
                self._on_thinking_delta(event)
            case ReasonEvent():
                self._on_reason(event)
            case ObserveEvent():
                self._on_observe(event)
            case _:
                assert_never(event)

    def _on_tool(self, event: ToolStartEvent | ToolProgressEvent | ToolEndEvent) -> None:
        match event:
            case ToolStartEvent():
                self._on_tool_start(event)
            case ToolProgressEvent():
                self._on_tool_progress(event)
            case ToolEndEvent():
                self._on_tool_end(event)
            case _:
                assert_never(event)

    def _on_user(self, event: _UserEvent) -> None:
        """What the user is shown or asked: plans, questions, approvals, updates."""
        match event:
            case PlanEvent():
                self._on_plan(event)
            case PlanStepEvent():
                self._on_plan_step(event)
            case QuestionEvent():
                self._on_question(event)
            case AnswerEvent():
                self._on_answer(event)
            case RequestInputTimeoutEvent():
                self._on_request_input_timeout(event)
            case PermissionRequestEvent():
                self._on_permission_request(event)
            case PermissionResponseEvent():
                self._on_permission_response(event)
            case UpdateEvent():
                self._on_update(event)
            case _:
                assert_never(event)

    def _on_subagent(
        self, event: SubagentSpawnedEvent | SubagentOutputEvent | SubagentCompleteEvent
    ) -> None:
        match event:
            case SubagentSpawnedEvent():
                self._on_subagent_spawned(event)
            case SubagentOutputEvent():
                self._on_subagent_output(event)
            case SubagentCompleteEvent():
                self._on_subagent_complete(event)
            case _:
                assert_never(event)

    def _on_agent_start(self, e: AgentStartEvent) -> None:
        label = self.label or e.model_label
        caption = f" — {label}" if label else ""
        self._replay = e.replay
        self._line(self._style(f"▶ {e.role} on {e.model} ({e.loop} loop){caption}", "1"))
        if e.action == "execute_plan":
            # The task is the plan again, which was printed when it was proposed.
            self._line("  Executing the plan")
        elif e.action == "compact":
            self._line("  Compacting the conversation")
        else:
            self._line(f"  task: {visible(e.task)}")

    def _on_turn_start(self, e: TurnStartEvent) -> None:
        self._phase = None

    def _on_text_delta(self, e: TextDeltaEvent) -> None:
        if not self.stream:
            return
        if e.phase != self._phase and e.phase:
            self._line(self._style(f"[{e.phase}]", "36"))
        self._phase = e.phase
        self._write(visible(e.text))
        self._open_line = not e.text.endswith("\n")

    def _on_text(self, e: TextEvent) -> None:
        self._last_text = e.text
        if not self.stream:
            for line in visible(e.text).splitlines():
                self._line(line)
        if e.interrupted:
            self._write(self._style(" [interrupted]", "33"))
            self._open_line = True
        if self._open_line:
            self._write("\n")
            self._open_line = False

    def _on_thinking_delta(self, e: ThinkingDeltaEvent) -> None:
        if self.show_thinking:
            self._write(self._style(e.text, "2"))
            self._open_line = True

    def _on_reason(self, e: ReasonEvent) -> None:
        if e.control:
            self._line(self._style(f"  reason control: {e.control}", "2"))

    def _on_observe(self, e: ObserveEvent) -> None:
        if e.control:
            self._line(self._style(f"  observe control: {e.control}", "2"))

    def _on_tool_start(self, e: ToolStartEvent) -> None:
        self._line(self._style(f"⚙ {e.summary}", "34"))

    def _on_tool_progress(self, e: ToolProgressEvent) -> None:
        for line in visible(e.output).splitlines():
            self._line(f"  │ {line}")

    def _on_tool_end(self, e: ToolEndEvent) -> None:
        lines = visible(e.result).splitlines() or [""]
        hidden = len(lines) - 1
        more = f" (+{plural(hidden, 'line')})" if hidden else ""
        mark = self._style("✗", "31") if e.is_error else self._style("✓", "32")
        self._line(f"  {mark} {lines[0][:200]}{more}")
        if e.diff:
            for line in e.diff.splitlines():
                code = "32" if line.startswith("+") else "31" if line.startswith("-") else "2"
                self._line("    " + self._style(line, code))

    def _on_plan(self, e: PlanEvent) -> None:
        plan: Plan = e.plan
        self._line(self._style("Plan", "1"))
        self._line(visible(plan.to_markdown()))

    def _on_plan_step(self, e: PlanStepEvent) -> None:
        note = f" — {visible(e.note)}" if e.note else ""
        self._line(f"  step {e.step_number}: {e.status.replace('_', ' ')}{note}")

    def _on_question(self, e: QuestionEvent) -> None:
        q = e.question
        self._line(self._style(f"? {q.question}", "1;35") + f"  [{q.severity}]")
        if q.context:
            self._line(f"  {visible(q.context)}")
        for option in q.options:
            star = " (default)" if option.value == q.default else ""
            desc = f" — {option.description}" if option.description else ""
            self._line(visible(f"  • {option.label} [{option.value}]{star}{desc}"))
        how = "handle.answer(value)" if q.options else "handle.answer(text)"
        self._line(self._style(f"  answer with {how}", "2"))

    def _on_answer(self, e: AnswerEvent) -> None:
        self._line(f"  → {visible(e.label or e.value)}")

    def _on_request_input_timeout(self, e: RequestInputTimeoutEvent) -> None:
        self._line(self._style(f"  no answer within {e.timeout:g} s", "33"))

    def _on_permission_request(self, e: PermissionRequestEvent) -> None:
        reason = f" ({e.reason})" if e.reason else ""
        self._line(self._style(f"⚠ approval needed: {e.summary}{reason}", "33"))
        for warning in e.warnings:
            self._line(self._style(f"  ! {warning}", "1;33"))
        if e.remember is None:
            self._line(self._style("  handle.approve(True | False)", "2"))
        else:
            self._line(
                self._style(
                    f"  handle.approve(True | False, remember=False); "
                    f"remember=True remembers: {e.remember}",
                    "2",
                )
            )

    def _on_permission_response(self, e: PermissionResponseEvent) -> None:
        verdict = "allowed" if e.allowed else "denied"
        self._line(f"  → {verdict}" + (f"; remembered: {visible(e.rule)}" if e.rule else ""))

    def _on_update(self, e: UpdateEvent) -> None:
        self._line(self._style(f"ℹ {e.message}", "36"))

    def _on_state(self, e: StateEvent) -> None:
        if e.state == AgentState.paused:
            self._line(self._style("‖ paused", "33"))

    def _on_usage(self, e: UsageEvent) -> None:
        self._usage = e  # the run's total is printed when it ends

    def _totals(self) -> None:
        u, self._usage = self._usage, None
        if u is None:
            return
        cached = u.run_cache_read_input_tokens / u.run_input_tokens if u.run_input_tokens else 0.0
        cost = "" if self._replay else f" · {cost_text(u.run_cost_usd, u.run_unpriced_calls)}"
        self._line(
            self._style(
                f"  tokens: {u.run_input_tokens:,} in ({cached:.0%} cached), "
                f"{u.run_output_tokens:,} out{cost}",
                "2",
            )
        )

    def _on_context(self, e: ContextEvent) -> None:
        pass  # the gauge is the panel's; a compaction, when it comes, has its own line

    def _on_compaction(self, e: CompactionEvent) -> None:
        self._line(self._style(f"⇣ {e.describe()}", "2"))

    def _on_retry(self, e: RetryEvent) -> None:
        self._line(self._style(f"↻ the reply broke off ({e.reason}); retrying", "33"))

    def _on_warning(self, e: WarningEvent) -> None:
        self._line(self._style(f"⚠ {e.message}", "33"))

    def _on_stopped(self, e: StoppedEvent) -> None:
        self._line(self._style(f"■ {e.describe()}", "33"))
        self._totals()

    def _on_completed(self, e: CompletedEvent) -> None:
        # A run that ends on plain text has that text as its summary: printed once is enough.
        summary = e.summary if e.summary and e.summary.strip() != self._last_text.strip() else ""
        self._line(self._style("✔ completed", "32") + (f": {visible(summary)}" if summary else ""))
        self._totals()

    def _on_error(self, e: ErrorEvent) -> None:
        self._line(self._style(f"✗ error: {e.message}", "31"))
        self._totals()

    def _on_subagent_spawned(self, e: SubagentSpawnedEvent) -> None:
        number = len(self._subagents) + 1
        self._subagent(e.child_session_id)
        self._line(
            self._style(f"↳ {number}: {e.agent_type} subagent {e.child_session_id}: {e.task}", "1")
        )

    def _on_subagent_output(self, e: SubagentOutputEvent) -> None:
        self._subagent(e.child_session_id)(e.event)

    def _on_subagent_complete(self, e: SubagentCompleteEvent) -> None:
        self._subagent(e.child_session_id)
        number = list(self._subagents).index(e.child_session_id) + 1
        self._line(f"↳ {number}: subagent {e.child_session_id} ended {e.state.value}")

    def _subagent(self, session_id: str) -> TextRenderer:
        """The renderer of a subagent's events: whole lines, indented under this one and
        marked with the subagent's number (several may run at once)."""
        found = self._subagents.get(session_id)
        if found is None:
            found = TextRenderer(
                _Indented(self, f"  {len(self._subagents) + 1}│ "),
                color=self.color,
                label=self.label,
                stream=False,
            )
            self._subagents[session_id] = found
        return found


class _Indented:
    """A subagent's output: each line indented under its parent's, which it never
    writes into the middle of."""

    def __init__(self, parent: TextRenderer, prefix: str) -> None:
        self._parent = parent
        self._prefix = prefix
        self._at_start = True

    def isatty(self) -> bool:
        return bool(getattr(self._parent._out, "isatty", lambda: False)())

    def write(self, text: str) -> int:
        parent = self._parent
        if parent._open_line:
            parent._write("\n")
            parent._open_line = False
        out: list[str] = []
        for piece in text.splitlines(keepends=True):
            if self._at_start:
                out.append(self._prefix)
            out.append(piece)
            self._at_start = piece.endswith("\n")
        parent._write("".join(out))
        return len(text)

    def flush(self) -> None:
        return None


def event_kinds() -> list[str]:
    """Every ``kind`` of the event union (for exhaustiveness checks)."""
    from .. import events

    union = get_args(get_args(events.Event)[0])
    return [cls.__dataclass_fields__["kind"].default for cls in union]
