"""The static record of a panel display: what a notebook viewer shows without a kernel.

When a later ``%agent`` cell shows the panel, the earlier display stops being live: the
kernel replaces it (``update_display_data``) with a record of the runs it showed, as
text/plain (the transcript as :class:`~jupyter_agent.agent.render.TextRenderer` wrote it) and
as text/html, which JupyterLab, GitHub and nbviewer show with no kernel behind them.

Everything the model, a tool or the user wrote is escaped (``html.escape``) before it
reaches the HTML, and the HTML carries no script, style sheet, link or image of its own:
no markup from the model reaches the page. Model text is shown as text (paragraphs and
line breaks), never rendered as markdown.
"""

from __future__ import annotations

from html import escape

from typing_extensions import assert_never

from ... import events as ev
from ..._wording import plural, visible
from ...models._usage import cost_text
from ...plans import Plan

_LEFT = ' style="text-align: left"'
"""JupyterLab aligns table cells right; prose reads better left (viewers that drop styles
keep their own alignment)."""
RECORD_CLASS = "ja-record"
"""The class of a record's outer element (a browser test finds records by it)."""


class Recorder:
    """The events one display showed, kept to write its record when it is frozen.

    Streamed text is kept until its block ends (then the whole block replaces it);
    thinking, state and per-call usage are not kept.
    """

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self._usage: ev.UsageEvent | None = None

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.UsageEvent):
            self._usage = event
            return
        if isinstance(event, (ev.StateEvent, ev.ThinkingDeltaEvent)):
            return
        if isinstance(event, (ev.TextEvent, ev.RetryEvent)):
            while self.events and isinstance(self.events[-1], ev.TextDeltaEvent):
                self.events.pop()
        self.events.append(event)
        ends = (ev.CompletedEvent, ev.StoppedEvent, ev.ErrorEvent)
        if isinstance(event, ends) and self._usage is not None:
            self.events.append(self._usage)  # the run's totals, shown with its end
            self._usage = None

    @property
    def running(self) -> bool:
        """A run started here has not ended yet."""
        ends = (ev.CompletedEvent, ev.StoppedEvent, ev.ErrorEvent)
        for event in reversed(self.events):
            if isinstance(event, ends):
                return False
            if isinstance(event, ev.AgentStartEvent):
                return True
        return False


def record_html(events: list[ev.Event], *, header: str, note: str = "") -> str:
    """The record as HTML: each run's task, text, tool rows, the plan as a table once,
    questions and answers, approvals, and how the run ended. Everything is escaped."""
    record = _HtmlRecord(header)
    if not events:
        record.out.append("<p><em>No run was started while this was the live panel.</em></p>")
    for event in events:
        record.add(event)
    record.flush()
    if note:
        record.out.append(f"<p><em>{escape(note)}</em></p>")
    record.out.append("</div>")
    return "\n".join(record.out)


_Row = (
    ev.PermissionRequestEvent
    | ev.PermissionResponseEvent
    | ev.SubagentSpawnedEvent
    | ev.SubagentCompleteEvent
)
"""Events shown as a row of the tool list being written."""
_Block = (
    ev.PlanEvent
    | ev.QuestionEvent
    | ev.AnswerEvent
    | ev.RequestInputTimeoutEvent
    | ev.UpdateEvent
    | ev.WarningEvent
    | ev.RetryEvent
    | ev.StoppedEvent
    | ev.CompletedEvent
    | ev.ErrorEvent
    | ev.CompactionEvent
)
"""Events shown as a block of their own (after the text and tool rows before them)."""
_Unshown = (
    ev.TurnStartEvent
    | ev.ThinkingDeltaEvent
    | ev.ReasonEvent
    | ev.ObserveEvent
    | ev.ToolProgressEvent
    | ev.StateEvent
    | ev.ContextEvent
    | ev.SubagentOutputEvent
    | ev.PlanStepEvent
)
"""Events the record shows what came of, not themselves (a step's tool row says it)."""


class _HtmlRecord:
    """The HTML being written: blocks in ``out``, and the text or tool list still open."""

    def __init__(self, header: str) -> None:
        self.out = [f'<div class="{RECORD_CLASS}">', f"<p><small>{escape(header)}</small></p>"]
        self.tools: list[list[str]] = []
        """The rows of the list being written: [tool_use_id or "", row]."""
        self.text = ""
        self.replay = False
        """The run's model is a replay (``Model.is_replay``): no cost is shown."""

    def flush(self) -> None:
        """Close the open tool list, then the open text."""
        if self.tools:
            self.out.append("<ul>" + "".join(f"<li>{row}</li>" for _, row in self.tools) + "</ul>")
            self.tools.clear()
        if self.text:
            self.out.append(_paragraphs(self.text))
            self.text = ""

    def block(self, html: str) -> None:
        self.flush()
        self.out.append(html)

    def add(self, event: ev.Event) -> None:
        match event:
            case ev.AgentStartEvent():
                self.replay = event.replay
                self.block(_start_html(event))
            case ev.TextDeltaEvent() | ev.TextEvent():
                self._text(event)
            case ev.ToolStartEvent():
                if self.text:
                    self.flush()
                self.tools.append([event.tool_use_id, f"⚙ {_e(event.summary)}"])
            case ev.ToolEndEvent():
                self._tool_end(event)
            case ev.UsageEvent():
                self.block(f"<p><small>{_e(usage_line(event, replay=self.replay))}</small></p>")
            case (
                ev.PermissionRequestEvent()
                | ev.PermissionResponseEvent()
                | ev.SubagentSpawnedEvent()
                | ev.SubagentCompleteEvent()
            ):
                self.tools.append(["", _row_html(event)])
            case _:
                html = _block_html(event)
                if html is not None:
                    self.block(html)

    def _text(self, event: ev.TextDeltaEvent | ev.TextEvent) -> None:
        if self.tools:
            self.flush()
        if isinstance(event, ev.TextDeltaEvent):
            self.text += event.text
            return
        self.text = event.text + (" [interrupted]" if event.interrupted else "")
        self.flush()

    def _tool_end(self, event: ev.ToolEndEvent) -> None:
        lines = visible(event.result).splitlines() or [""]
        more = f" (+{plural(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
        mark = "✗" if event.is_error else "✓"
        row = f"{mark} {_e(lines[0][:200])}{more}"
        started = next((r for r in self.tools if r[0] == event.tool_use_id), None)
        if started is not None:
            started[1] += f" — {row}"
        elif event.is_error:
            self.tools.append(["", row])
        # else its row was closed by what the tool showed (a plan, a question)


def _start_html(event: ev.AgentStartEvent) -> str:
    caption = f" — {event.model_label}" if event.model_label else ""
    started = f"<p><strong>▶ {_e(event.role)}</strong> on {_e(event.model)}{_e(caption)}</p>"
    if event.action == "execute_plan":
        return started + "\n<p><em>Executing the plan</em></p>"
    if event.action == "compact":
        return started + "\n<p><em>Compacting the conversation</em></p>"
    if event.action is None:
        return started + f"\n<p>Task: {_e(event.task)}</p>"
    assert_never(event.action)


def _row_html(event: _Row) -> str:
    match event:
        case ev.PermissionRequestEvent():
            reason = f" ({event.reason})" if event.reason else ""
            return f"⚠ Approval needed: {_e(event.summary + reason)}"
        case ev.PermissionResponseEvent():
            verdict = "allowed" if event.allowed else "denied"
            rule = f"; remembered: {event.rule}" if event.rule else ""
            return f"→ {_e(verdict + rule)}"
        case ev.SubagentSpawnedEvent():
            return _e(f"↳ subagent {event.child_session_id}: {event.task}")
        case ev.SubagentCompleteEvent():
            ended = f"↳ subagent {event.child_session_id} ended {event.state.value}"
            if event.result:  # what it reported: the record keeps what the parent got
                ended += f": {visible(event.result.strip().splitlines()[0])}"
            return _e(ended)
        case _:
            assert_never(event)


def _block_html(event: _Block | _Unshown) -> str | None:
    """An event's own block, or ``None`` for one the record does not show."""
    match event:
        case ev.PlanEvent():
            return plan_html(event.plan)
        case ev.QuestionEvent():
            return _question_html(event)
        case ev.AnswerEvent():
            return f"<p>→ {_e(event.label or event.value)}</p>"
        case ev.RequestInputTimeoutEvent():
            return f"<p>No answer within {event.timeout:g} s.</p>"
        case ev.UpdateEvent():
            return f"<p>ℹ {_e(event.message)}</p>"
        case ev.WarningEvent():
            return f"<p>⚠ {_e(event.message)}</p>"
        case ev.RetryEvent():
            return f"<p>↻ The reply broke off ({_e(event.reason)}); retrying.</p>"
        case ev.StoppedEvent() | ev.CompletedEvent() | ev.ErrorEvent():
            return _end_html(event)
        case ev.CompactionEvent():
            return f"<p><em>⇣ {_e(event.describe())}</em></p>"
        case (
            ev.TurnStartEvent()
            | ev.ThinkingDeltaEvent()
            | ev.ReasonEvent()
            | ev.ObserveEvent()
            | ev.ToolProgressEvent()
            | ev.StateEvent()
            | ev.ContextEvent()
            | ev.SubagentOutputEvent()
            | ev.PlanStepEvent()
        ):
            return None
        case _:
            assert_never(event)


def _question_html(event: ev.QuestionEvent) -> str:
    q = event.question
    parts = [f"<p><strong>? {_e(q.question)}</strong></p>"]
    if q.context:
        parts.append(_paragraphs(q.context))
    if q.options:
        items = "".join(
            f"<li>{_e(o.label)}"
            + (" (default)" if o.value == q.default else "")
            + (f" — {_e(o.description)}" if o.description else "")
            + "</li>"
            for o in q.options
        )
        parts.append(f"<ul>{items}</ul>")
    return "\n".join(parts)


def _end_html(event: ev.StoppedEvent | ev.CompletedEvent | ev.ErrorEvent) -> str:
    if isinstance(event, ev.StoppedEvent):
        return f"<p><strong>■ {_e(event.describe())}</strong></p>"
    if isinstance(event, ev.CompletedEvent):
        summary = f": {_e(event.summary)}" if event.summary else ""
        return f"<p><strong>✔ Completed</strong>{summary}</p>"
    return f"<p><strong>✗ Error:</strong> {_e(event.message)}</p>"


def plan_html(plan: Plan) -> str:
    """A plan as an HTML table, its goal, total time, risks and prerequisites (escaped)."""
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td{_LEFT}>{_e(cell)}</td>"
            for cell in (
                str(s.step_number),
                s.action,
                s.reason,
                ", ".join(s.tools_needed),
                s.estimated_time,
            )
        )
        + "</tr>"
        for s in plan.steps
    )
    parts = [
        f"<p><strong>Plan.</strong> <strong>Goal:</strong> {_e(plan.goal)}</p>",
        "<table><thead><tr>"
        + "".join(
            f"<th{_LEFT}>{title}</th>" for title in ("#", "Action", "Reason", "Tools", "Time")
        )
        + f"</tr></thead><tbody>{rows}</tbody></table>",
    ]
    if plan.estimated_total_time:
        parts.append(f"<p><strong>Estimated total:</strong> {_e(plan.estimated_total_time)}</p>")
    for title, items in (("Risks", plan.risks), ("Prerequisites", plan.prerequisites)):
        if items:
            listed = "".join(f"<li>{_e(item)}</li>" for item in items)
            parts.append(f"<p><strong>{title}:</strong></p><ul>{listed}</ul>")
    return "\n".join(parts)


def usage_line(usage: ev.UsageEvent, *, replay: bool) -> str:
    """A run's tokens, and its cost unless the model is a replay (which costs nothing)."""
    u = usage
    cached = u.run_cache_read_input_tokens / u.run_input_tokens if u.run_input_tokens else 0.0
    line = f"tokens: {u.run_input_tokens:,} in ({cached:.0%} cached), {u.run_output_tokens:,} out"
    return line if replay else f"{line} · {cost_text(u.run_cost_usd, u.run_unpriced_calls)}"


def _e(text: str) -> str:
    return escape(visible(text))


def _paragraphs(text: str) -> str:
    """Text as paragraphs (blank lines) and line breaks, every character escaped."""
    blocks = [b for b in visible(text).strip().split("\n\n") if b.strip()]
    return "\n".join(
        "<p>" + "<br>".join(escape(line) for line in block.strip("\n").split("\n")) + "</p>"
        for block in blocks
    )
