"""The static record of a panel display: what a notebook viewer shows without a kernel.

When a later ``%agent`` cell shows the panel, the earlier display stops being live: the
kernel replaces it (``update_display_data``) with a record of the runs it showed, as
text/plain (the transcript as :class:`~jupyter_agent.render.TextRenderer` wrote it) and
as text/html, which JupyterLab, GitHub and nbviewer show with no kernel behind them.

Everything the model, a tool or the user wrote is escaped (``html.escape``) before it
reaches the HTML, and the HTML carries no script, style sheet, link or image of its own:
no markup from the model reaches the page. Model text is shown as text (paragraphs and
line breaks), never rendered as markdown.
"""

from __future__ import annotations

from html import escape

from typing_extensions import assert_never

from .. import events as ev
from .._wording import plural, visible
from ..models._usage import cost_text
from ..plans import Plan

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
    out: list[str] = [f'<div class="{RECORD_CLASS}">']
    out.append(f"<p><small>{escape(header)}</small></p>")
    if not events:
        out.append("<p><em>No run was started while this was the live panel.</em></p>")
    tools: list[list[str]] = []
    """The rows of the list being written: [tool_use_id or "", row]."""
    text = ""
    replay = False

    def flush() -> None:
        nonlocal text
        if tools:
            out.append("<ul>" + "".join(f"<li>{row}</li>" for _, row in tools) + "</ul>")
            tools.clear()
        if text:
            out.append(_paragraphs(text))
            text = ""

    for event in events:
        match event:
            case ev.AgentStartEvent():
                flush()
                replay = event.replay
                caption = f" — {event.model_label}" if event.model_label else ""
                out.append(
                    f"<p><strong>▶ {_e(event.role)}</strong> on {_e(event.model)}{_e(caption)}</p>"
                )
                if event.action == "execute_plan":
                    out.append("<p><em>Executing the plan</em></p>")
                elif event.action == "compact":
                    out.append("<p><em>Compacting the conversation</em></p>")
                elif event.action is None:
                    out.append(f"<p>Task: {_e(event.task)}</p>")
                else:
                    assert_never(event.action)
            case ev.TextDeltaEvent():
                if tools:
                    flush()
                text += event.text
            case ev.TextEvent():
                if tools:
                    flush()
                text = event.text + (" [interrupted]" if event.interrupted else "")
                flush()
            case ev.ToolStartEvent():
                if text:
                    flush()
                tools.append([event.tool_use_id, f"⚙ {_e(event.summary)}"])
            case ev.ToolEndEvent():
                lines = visible(event.result).splitlines() or [""]
                more = f" (+{plural(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
                mark = "✗" if event.is_error else "✓"
                row = f"{mark} {_e(lines[0][:200])}{more}"
                started = next((r for r in tools if r[0] == event.tool_use_id), None)
                if started is not None:
                    started[1] += f" — {row}"
                elif event.is_error:
                    tools.append(["", row])
                # else its row was closed by what the tool showed (a plan, a question)
            case ev.PlanEvent():
                flush()
                out.append(plan_html(event.plan))
            case ev.PlanStepEvent():
                pass  # the update_plan_step tool's row says it
            case ev.QuestionEvent():
                flush()
                q = event.question
                out.append(f"<p><strong>? {_e(q.question)}</strong></p>")
                if q.context:
                    out.append(_paragraphs(q.context))
                if q.options:
                    items = "".join(
                        f"<li>{_e(o.label)}"
                        + (" (default)" if o.value == q.default else "")
                        + (f" — {_e(o.description)}" if o.description else "")
                        + "</li>"
                        for o in q.options
                    )
                    out.append(f"<ul>{items}</ul>")
            case ev.AnswerEvent():
                flush()
                out.append(f"<p>→ {_e(event.label or event.value)}</p>")
            case ev.RequestInputTimeoutEvent():
                flush()
                out.append(f"<p>No answer within {event.timeout:g} s.</p>")
            case ev.PermissionRequestEvent():
                reason = f" ({event.reason})" if event.reason else ""
                tools.append(["", f"⚠ Approval needed: {_e(event.summary + reason)}"])
            case ev.PermissionResponseEvent():
                verdict = "allowed" if event.allowed else "denied"
                rule = f"; remembered: {event.rule}" if event.rule else ""
                tools.append(["", f"→ {_e(verdict + rule)}"])
            case ev.UpdateEvent():
                flush()
                out.append(f"<p>ℹ {_e(event.message)}</p>")
            case ev.WarningEvent():
                flush()
                out.append(f"<p>⚠ {_e(event.message)}</p>")
            case ev.RetryEvent():
                flush()
                out.append(f"<p>↻ The reply broke off ({_e(event.reason)}); retrying.</p>")
            case ev.UsageEvent():
                flush()
                out.append(f"<p><small>{_e(usage_line(event, replay=replay))}</small></p>")
            case ev.StoppedEvent():
                flush()
                out.append(
                    f"<p><strong>■ Stopped</strong> ({_e(event.reason)}): {_e(event.message)}</p>"
                )
            case ev.CompletedEvent():
                flush()
                summary = f": {_e(event.summary)}" if event.summary else ""
                out.append(f"<p><strong>✔ Completed</strong>{summary}</p>")
            case ev.ErrorEvent():
                flush()
                out.append(f"<p><strong>✗ Error:</strong> {_e(event.message)}</p>")
            case ev.CompactionEvent():
                flush()
                out.append(f"<p><em>⇣ {_e(event.describe())}</em></p>")
            case ev.SubagentSpawnedEvent():
                tools.append(["", _e(f"↳ subagent {event.child_session_id}: {event.task}")])
            case ev.SubagentCompleteEvent():
                ended = f"↳ subagent {event.child_session_id} ended {event.state.value}"
                if event.result:  # what it reported: the record keeps what the parent got
                    ended += f": {visible(event.result.strip().splitlines()[0])}"
                tools.append(["", _e(ended)])
            case (
                ev.TurnStartEvent()
                | ev.ThinkingDeltaEvent()
                | ev.ReasonEvent()
                | ev.ObserveEvent()
                | ev.ToolProgressEvent()
                | ev.StateEvent()
                | ev.ContextEvent()
                | ev.SubagentOutputEvent()
            ):
                pass  # the record shows what came of them
            case _:
                assert_never(event)
    flush()
    if note:
        out.append(f"<p><em>{escape(note)}</em></p>")
    out.append("</div>")
    return "\n".join(out)


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
