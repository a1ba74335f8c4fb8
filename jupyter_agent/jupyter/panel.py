"""The agent panel: one anywidget UI for a kernel's agent, inline under a cell or docked.

Traffic between the kernel and ``static/panel.js`` is split by purpose:

- **State** lives in small synced traits (status, detail, role, busy, usage, pending ids,
  running_code, kernel_id, dock…), written only by the kernel. The browser never sets a
  trait; it sends commands.
- **The transcript** travels as custom messages. A view that renders sends
  ``{"type": "hello", "view": <view id>}`` (again after a page reload); the kernel answers
  ``{"type": "snapshot", "view", "entries"}``: the transcript so far, each stream merged
  into one entry and each finished text block as its whole text. Then every view gets live
  ``{"type": "events", "entries"}`` batches, about 30 a second at most, consecutive pieces
  of a stream merged; a batch that is only streamed text goes as ``{"type": "text", "n",
  "text"}``, and streamed text shorter than 32 characters waits up to 0.1 s for more. A
  text block's end is sent as ``{"kind": "text", "streamed": true}`` without the text the
  view already has. Entries are events as :data:`~jupyter_agent.events.EventAdapter` dumps
  them, minus ``session_id``, ``seq`` and ``time``, plus ``n``, the entry's place in the
  panel's log, so a view drops what it already has; state and usage events only set
  traits. ``{"type": "snapshot", "view": null}`` (after a session was resumed) replaces
  every view's transcript.
- **Commands** from the browser are ``{"type": "command", "id", "name", ...arguments}``; each
  gets ``{"type": "reply", "id", "ok", "error"}``. Names: ``send`` (text, role),
  ``stop``, ``answer`` (question_id, value), ``approve`` (request_id, allow, remember),
  ``execute_plan``, ``set_role`` (role), ``set_max_steps`` (value), ``resume``
  (session_id), ``sessions``.

Comm messages arrive on the kernel's shell thread, or on a subshell thread when JupyterLab
runs comms over subshells; every one is handed to the agent's event loop with
``call_soon_threadsafe`` before it touches the agent, so both cases behave the same.

Without a widget frontend (nbconvert, nbclient, papermill) the panel's ``text/plain``
fallback is the transcript as :class:`~jupyter_agent.render.TextRenderer` writes it; the
kernel refreshes it (``update_display_data`` on the panel's display ids) after a plan, a
question, an approval request and the end of a run, as long as no view has said hello
(see :meth:`AgentPanel._refresh_text`). A widget frontend never gets those updates:
re-sending a widget's display re-creates its views, which would drop what the user types.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from ..agent import Agent
from ..errors import AgentError
from ..events import Event, EventAdapter
from ..messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ..permissions import Permission
from ..render import TextRenderer

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
FLUSH_INTERVAL = 1 / 30
"""Seconds between two transcript batches: about 30 a second."""
TEXT_BATCH = 32
TEXT_HOLD = 0.1
"""Streamed text shorter than TEXT_BATCH characters waits up to TEXT_HOLD seconds for more."""
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_REFRESH_KINDS = frozenset(
    {"plan", "question", "permission_request", "completed", "stopped", "error"}
)
"""Events after which a frontend without widgets gets the transcript again."""
URGENT_KINDS = TEXT_REFRESH_KINDS | {"answer", "permission_response", "request_input_timeout"}
"""Events sent at once rather than with the next batch: the user waits for them."""
TEXT_FALLBACK_LIMIT = 20_000
"""Characters of transcript kept in the text/plain fallback (the end of it)."""
TEXT_GRACE = 2.0
"""Seconds a new display has to say hello (be a widget) before its text is refreshed."""

LOG_BUDGET = 2_000_000
"""Characters of transcript the kernel keeps for views that connect later (a reload).
Past it, old long fields shrink to head and tail, then the oldest entries go."""
LOG_KEEP_RECENT = 20
"""The newest entries are never trimmed."""
FIELD_KEEP = 2_000

_MERGEABLE = frozenset({"text_delta", "thinking_delta", "tool_progress"})
# Kinds that change only traits: the status line and the usage line show them.
_STATE_ONLY = frozenset({"state", "usage"})
_DROP = ("session_id", "time", "seq")


def wire(event: Event) -> dict[str, Any]:
    """An event as the panel receives it: without the fields the panel never reads."""
    if event.kind == "text_delta":
        entry: dict[str, Any] = {"kind": "text_delta", "text": event.text}
        if event.phase:
            entry["phase"] = event.phase
        return entry
    data = EventAdapter.dump_python(event, mode="json")
    for key in _DROP:
        data.pop(key, None)
    return data


def _size(entry: dict[str, Any]) -> int:
    return len(json.dumps(entry, default=str))


def _stream_key(entry: dict[str, Any]) -> str:
    return "output" if entry["kind"] == "tool_progress" else "text"


def _same_stream(previous: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether ``entry`` continues the stream ``previous`` is a piece of."""
    kind = entry["kind"]
    if kind not in _MERGEABLE or previous["kind"] != kind:
        return False
    if kind == "tool_progress":
        return bool(previous["tool_use_id"] == entry["tool_use_id"])
    return previous.get("phase") == entry.get("phase")


class Transcript:
    """What the panel has shown (``entries``, for snapshots) and what it has yet to send
    (``pending``, the next batch). DOM-free: the browser side renders the same entries.

    Consecutive pieces of one stream are merged, in both. The log keeps a stream's pieces
    in a list until a snapshot needs them, so a long answer costs linear time; and when a
    text block ends, its pieces give way to the finished text, which the browser is sent
    without the text it already streamed.
    """

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []
        self.pending_since = 0.0
        self.n = 0
        self._open: dict[str, Any] | None = None  # the log's stream entry still growing
        self._parts: list[str] = []
        self._block: list[str] = []  # the text block being streamed, for its end
        self._last_text = ""
        self._chars = 0  # about the size of entries, for LOG_BUDGET
        self._dropped = 0

    def add(self, entry: dict[str, Any], *, live: bool = True) -> None:
        self.n += 1
        entry["n"] = self.n
        kind = entry["kind"]
        sent = entry
        if kind == "text_delta":
            self._block.append(entry["text"])
        elif kind == "text":
            sent = self._end_block(entry)
        elif kind in ("turn_start", "retry"):
            self._block = []
        elif kind == "completed" and entry.get("summary") and entry["summary"] == self._last_text:
            # A run that ended with its answer has that answer as summary: shown already.
            entry["summary"], entry["summary_is_answer"] = "", True
        self._log(entry)
        if not live:
            return
        if not self.pending:
            self.pending_since = time.monotonic()
        last = self.pending[-1] if self.pending else None
        if last is not None and _same_stream(last, sent):
            key = _stream_key(sent)
            last[key] += sent[key]
            last["n"] = sent["n"]
        else:
            self.pending.append(sent)

    def _log(self, entry: dict[str, Any]) -> None:
        open_ = self._open
        if open_ is not None and self.entries[-1] is open_ and _same_stream(open_, entry):
            part = entry[_stream_key(entry)]
            self._parts.append(part)
            open_["n"] = entry["n"]
            self._grow(len(part))
            return
        self._close()
        copy = dict(entry)
        self.entries.append(copy)
        if entry["kind"] in _MERGEABLE:
            self._open, self._parts = copy, [entry[_stream_key(entry)]]
        self._grow(_size(copy))

    def _grow(self, chars: int) -> None:
        self._chars += chars
        if self._chars > LOG_BUDGET:
            self._trim()

    def _trim(self) -> None:
        """Bring the log to half its budget: long fields of old entries first, then the
        oldest entries, leaving a note that says how many are not shown."""
        target = LOG_BUDGET // 2
        old = self.entries[: max(len(self.entries) - LOG_KEEP_RECENT, 0)]
        for entry in old:
            if self._chars <= target:
                return
            for key, value in list(entry.items()):
                if entry is not self._open and isinstance(value, str) and len(value) > FIELD_KEEP:
                    cut = (
                        f"{value[: FIELD_KEEP // 2]}\n… {len(value) - FIELD_KEEP:,} characters "
                        f"of this earlier entry trimmed …\n{value[-FIELD_KEEP // 2 :]}"
                    )
                    self._chars -= len(value) - len(cut)
                    entry[key] = cut
        first = 1 if self.entries and self.entries[0].get("trimmed") else 0
        while self._chars > target and len(self.entries) - first > LOG_KEEP_RECENT:
            gone = self.entries.pop(first)
            self._chars -= _size(gone)
            self._dropped += 1
        if self._dropped:
            note = {
                "kind": "note",
                "trimmed": True,
                "text": f"{self._dropped:,} earlier entries of this session are not shown.",
            }
            if first:
                self.entries[0] = note
            else:
                self.entries.insert(0, note)

    def _close(self) -> None:
        if self._open is not None:
            self._open[_stream_key(self._open)] = "".join(self._parts)
            self._open, self._parts = None, []

    def _end_block(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A text block ended: log its whole text instead of its pieces, and send the
        browser only the end marker when it has streamed that text already."""
        streamed, self._block = "".join(self._block), []
        self._last_text = entry["text"]
        last = self.entries[-1] if self.entries else None
        if (
            last is not None
            and last["kind"] == "text_delta"
            and last.get("phase") == entry.get("phase")
        ):
            self._close()
            self.entries.pop()
        if not streamed or streamed != entry["text"]:
            return entry
        sent = {k: v for k, v in entry.items() if k != "text"}
        sent["streamed"] = True
        return sent

    def drop_partial_turn(self) -> None:
        """A retried model call starts its turn again: the partial text is void."""
        self._close()
        while self.entries and self.entries[-1]["kind"] in ("text_delta", "thinking_delta"):
            self.entries.pop()

    def snapshot(self) -> list[dict[str, Any]]:
        if self._open is not None:
            self._open[_stream_key(self._open)] = "".join(self._parts)
            self._parts = [self._open[_stream_key(self._open)]]
        return self.entries

    def take(self) -> list[dict[str, Any]]:
        batch, self.pending = self.pending, []
        return batch

    def pending_is_short_text(self, chars: int) -> bool:
        """Only streamed text is waiting, and less than ``chars`` of it."""
        return all(e["kind"] == "text_delta" for e in self.pending) and (
            sum(len(e["text"]) for e in self.pending) < chars
        )


def history_entries(history: list[Message], agent: Agent) -> list[dict[str, Any]]:
    """A saved conversation as transcript entries (for a resumed session)."""
    entries: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    meta = agent.session.metadata
    for message in history:
        if message.role == "user" and message.message_type != "tool_result":
            text = message.text
            for prefix in ("[The user stopped the previous run before it finished.]",):
                text = text.removeprefix(prefix).lstrip()
            if text:
                entries.append({"kind": "user", "text": text})
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                entries.append(
                    {"kind": "text", "text": block.text, "interrupted": message.interrupted}
                )
            elif isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                tool = agent.tools.get(block.name)
                summary = tool.summary(block.input) if tool else block.name
                entries.append(
                    {
                        "kind": "tool_start",
                        "tool_use_id": block.id,
                        "name": block.name,
                        "input": block.input,
                        "summary": summary,
                    }
                )
            elif isinstance(block, ToolResultBlock):
                entries.append(
                    {
                        "kind": "tool_end",
                        "tool_use_id": block.tool_use_id,
                        "name": names.get(block.tool_use_id, ""),
                        "result": block.text,
                        "is_error": block.is_error,
                    }
                )
    if meta.plan is not None:
        entries.append({"kind": "plan", "plan": meta.plan.model_dump(mode="json")})
        marked = [p for p in meta.plan_progress if p.status != "pending"]
        entries.extend(
            {"kind": "plan_step", "step_number": p.step_number, "status": p.status, "note": p.note}
            for p in marked
        )
        unfinished = any(p.status in ("pending", "in_progress") for p in meta.plan_progress)
        if marked and unfinished and meta.stop_reason not in (None, "completed"):
            # Its execution was cut short: the panel offers to carry on (execute_plan does).
            entries.append({"kind": "plan_stopped"})
    if history:
        entries.append({"kind": "note", "text": f"Resumed session {agent.session.id}."})
    return entries


class AgentPanel(anywidget.AnyWidget):
    """The panel of one agent. Create it with the agent; show it with :meth:`show`."""

    # Built from js/src/panel (TypeScript) by `npm run build:panel`; tracked, so an install
    # without Node.js has it. js/test/panel-build.test.ts fails when it is stale.
    _esm = STATIC / "panel.js"
    _css = STATIC / "panel.css"

    status = t.Unicode("idle").tag(sync=True)
    """The run's state (idle, running, thinking, tool_executing, waiting_user, …)."""
    detail = t.Unicode("").tag(sync=True)
    """What the state is about: the tool being run, what the agent waits for, a stop message."""
    stop_reason = t.Unicode("").tag(sync=True)
    busy = t.Bool(False).tag(sync=True)
    role = t.Unicode("planner").tag(sync=True)
    roles = t.List(t.Dict()).tag(sync=True)
    """``[{"name", "description"}]``: the roles the selector offers."""
    model_name = t.Unicode("").tag(sync=True)
    model_label = t.Unicode("").tag(sync=True)
    """A caption the panel must show (e.g. that the model is a scripted replay)."""
    session_id = t.Unicode("").tag(sync=True)
    sessions = t.List(t.Dict()).tag(sync=True)
    """Saved sessions in the workspace, newest first, for the session picker."""
    notebook = t.Unicode("").tag(sync=True)
    """The notebook bridge's description: which notebook, and how edits reach it."""
    bridge_mode = t.Unicode("").tag(sync=True)
    """live, file, connecting, or empty when the agent has no notebook."""
    usage = t.Dict().tag(sync=True)
    max_steps = t.Int(30).tag(sync=True)
    pending_question = t.Unicode("").tag(sync=True)
    pending_approval = t.Unicode("").tag(sync=True)
    running_code = t.Bool(False).tag(sync=True)
    """The agent is running code in this kernel: Stop must also interrupt the kernel."""
    kernel_id = t.Unicode("").tag(sync=True)
    dock = t.Unicode("inline").tag(sync=True)
    """Where the user asked for the panel: inline, or side (the lab extension docks it)."""
    widget_id = t.Unicode("").tag(sync=True)
    """This widget's model id, for the lab extension to make a view of it in the sidebar."""
    sandbox = t.Unicode("").tag(sync=True)
    """What confines the agent's shell commands, in a few words for the header."""
    sandbox_detail = t.Unicode("").tag(sync=True)
    sandboxed = t.Bool(False).tag(sync=True)

    def __init__(
        self,
        agent: Agent,
        *,
        kernel_id: str = "",
        resume: Callable[[str], Agent] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(kernel_id=kernel_id)
        self.widget_id = self.model_id
        try:
            self._loop = loop or asyncio.get_running_loop()
        except RuntimeError:
            self._loop = asyncio.get_event_loop_policy().get_event_loop()
        self._resume = resume
        self._agent: Agent | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.transcript = Transcript()
        self._flush_handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._last_flush = 0.0
        self._display_ids: list[str] = []
        self.views_seen = 0
        """How many views said hello (a page reload or another display makes one more)."""
        self._shown_at = 0.0
        self._shell: Any = None
        self._text_stale = False
        self._tool = ""
        self._text = io.StringIO()
        self._renderer = TextRenderer(self._text, color=False)
        self.on_msg(self._on_msg)
        self.bind(agent)

    # --- the agent ---------------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        assert self._agent is not None
        return self._agent

    def bind(self, agent: Agent) -> None:
        """Show ``agent`` (a new one after a resume): its history, then its live events."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._agent = agent
        self.transcript = Transcript()
        if agent.running and agent.handle is not None:
            seed = [wire(e) for e in agent.handle.events_so_far if e.kind not in _STATE_ONLY]
        else:
            seed = history_entries(agent.history, agent)
        for entry in seed:
            self.transcript.add(entry, live=False)
        self._unsubscribe = agent.subscribe(self._on_event)
        run = agent.handle
        self.refresh()
        self.busy = agent.running
        self.status = agent.state.value
        self.detail = _short(run.stop_message) if run is not None and run.done else ""
        self.stop_reason = (run.stop_reason or "") if run is not None else ""
        self.pending_question = self.pending_approval = ""
        self.running_code = False
        self.refresh_notebook()
        self.refresh_sessions()
        if self.views_seen:
            self._post({"type": "snapshot", "view": None, "entries": self.transcript.snapshot()})

    def refresh(self) -> None:
        """Show the agent's settings again (after a magic changed its role, model, limits)."""
        agent = self.agent
        self.roles = [{"name": r.name, "description": r.description} for r in agent.roles.values()]
        self.role = agent.role
        self.model_name = agent.model.name
        self.model_label = agent.model.label or ""
        self.session_id = agent.session.id
        self.max_steps = agent.limits.max_steps
        confinement = agent.command_sandbox.status()
        self.sandbox = confinement.summary
        self.sandbox_detail = confinement.detail
        self.sandboxed = confinement.active

    def refresh_notebook(self) -> None:
        """Show how the agent reaches its notebook (after the bridge connected)."""
        bridge = self.agent.notebook
        if bridge is None:
            self.notebook, self.bridge_mode = "", ""
            return
        self.notebook = bridge.describe()
        self.bridge_mode = getattr(bridge, "mode", "") or ""

    def refresh_sessions(self) -> None:
        try:
            saved = Agent.sessions(self.agent.workspace)
        except OSError:
            saved = []
        self.sessions = [
            {
                "id": m.session_id,
                "title": m.title or "(untitled)",
                "updated": m.updated_at,
                "state": m.state,
                "runs": m.runs,
            }
            for m in saved
            if m.parent_session_id is None
        ][:30]

    # --- events → traits and transcript (on the loop's thread) -----------------------

    def _on_event(self, event: Event) -> None:
        kind = event.kind
        self._renderer(event)
        if kind == "state":
            self.status = event.state.value
            detail = event.detail
            if not detail and event.state.value == "tool_executing":
                detail = self._tool  # back from an approval: the state event names no tool
            elif event.state.value == "completed":
                detail = ""  # the summary, maybe the whole answer: the transcript shows it
            self.detail = _short(detail)
            self.busy = not event.state.terminal and event.state.value != "idle"
        elif kind == "usage":
            self.usage = {
                "run_input_tokens": event.run_input_tokens,
                "run_output_tokens": event.run_output_tokens,
                "run_cache_read_input_tokens": event.run_cache_read_input_tokens,
                "run_cost_usd": event.run_cost_usd,
                "session_cost_usd": event.session_cost_usd,
                "session_input_tokens": self.agent.session.usage.total_input_tokens,
                "session_output_tokens": self.agent.session.usage.output_tokens,
                "session_cache_read_input_tokens": (
                    self.agent.session.usage.cache_read_input_tokens
                ),
            }
        elif kind == "agent_start":
            self.busy = True
            self.stop_reason = ""
            self.role = event.role
            self.model_name = event.model
            self.model_label = event.model_label or ""
        elif kind == "tool_start":
            self._tool = event.name
            tool = self.agent.tools.get(event.name)
            self.running_code = tool is not None and Permission.EXECUTE_CODE in tool.permissions
        elif kind == "tool_end":
            self._tool = ""
            self.running_code = False
        elif kind == "question":
            self.pending_question = event.question_id
        elif kind in ("answer", "request_input_timeout"):
            self.pending_question = ""
        elif kind == "permission_request":
            self.pending_approval = event.request_id
        elif kind == "permission_response":
            self.pending_approval = ""
        elif kind in ("stopped", "completed", "error"):
            self.busy = False
            self.running_code = False
            self.pending_question = self.pending_approval = ""
            self.stop_reason = getattr(event, "reason", kind)
            self.refresh_sessions()
        if kind in _STATE_ONLY:
            return
        if kind == "retry":
            self.transcript.drop_partial_turn()
        self.transcript.add(wire(event))
        if kind in URGENT_KINDS:
            self._flush(force=True)
        else:
            self._schedule_flush()
        if kind in TEXT_REFRESH_KINDS:
            self._refresh_text()

    def _schedule_flush(self, delay: float | None = None) -> None:
        if self._flush_handle is not None:
            return
        if delay is None:
            delay = self._last_flush + FLUSH_INTERVAL - time.monotonic()
        if delay <= 0:
            self._flush_handle = self._loop.call_soon(self._flush)
        else:
            self._flush_handle = self._loop.call_later(delay, self._flush)

    def _flush(self, *, force: bool = False) -> None:
        """Send the entries gathered since the last batch (to every view)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        transcript = self.transcript
        if not transcript.pending:
            return
        now = time.monotonic()
        held = now - transcript.pending_since
        if not force and held < TEXT_HOLD and transcript.pending_is_short_text(TEXT_BATCH):
            # A trickle of text (a model writing slowly): wait for a few words more
            # rather than send each token with a message's overhead.
            self._schedule_flush(min(TEXT_HOLD - held, FLUSH_INTERVAL))
            return
        batch = transcript.take()
        self._last_flush = now
        if len(batch) == 1 and batch[0]["kind"] == "text_delta" and "phase" not in batch[0]:
            self._post({"type": "text", "n": batch[0]["n"], "text": batch[0]["text"]})
        else:
            self._post({"type": "events", "entries": batch})

    def _post(self, content: dict[str, Any]) -> None:
        if self.comm is None:
            return  # closed
        self.send(content)

    # --- messages from the browser (any thread) --------------------------------------

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._handle, content)

    def _handle(self, content: dict[str, Any]) -> None:
        kind = content.get("type")
        if kind == "hello":
            self.views_seen += 1
            self._flush(force=True)
            self.refresh_sessions()
            entries = self.transcript.snapshot()
            self._post({"type": "snapshot", "view": content.get("view"), "entries": entries})
        elif kind == "command":
            ok, error = True, None
            try:
                self.command(str(content.get("name", "")), content)
            except (AgentError, ValueError, KeyError, TypeError) as exc:
                message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
                ok, error = False, str(message) or type(exc).__name__
            except Exception as exc:
                log.exception("panel command %r failed", content.get("name"))
                ok, error = False, f"{type(exc).__name__}: {exc}"
            self._post({"type": "reply", "id": content.get("id"), "ok": ok, "error": error})

    def command(self, name: str, args: dict[str, Any]) -> None:
        """Carry out a command from the browser (on the loop's thread)."""
        agent = self.agent
        if name == "send":
            text = str(args.get("text", "")).strip()
            if not text:
                raise ValueError("Type a message first.")
            role = args.get("role")
            agent.start(text, role=str(role) if role else None)
        elif name == "stop":
            agent.stop()
        elif name == "answer":
            self._check_pending(self.pending_question, args.get("question_id"), "question")
            handle = agent.handle
            assert handle is not None
            handle.answer(str(args.get("value", "")))
        elif name == "approve":
            self._check_pending(self.pending_approval, args.get("request_id"), "approval")
            handle = agent.handle
            assert handle is not None
            handle.approve(bool(args.get("allow")), remember=bool(args.get("remember")))
        elif name == "execute_plan":
            agent.execute_plan()
        elif name == "set_role":
            agent.set_role(str(args.get("role", "")))
            self.role = agent.role
        elif name == "set_max_steps":
            value = int(args.get("value", 0))
            if value < 1:
                raise ValueError("Max iterations must be at least 1.")
            agent.limits.max_steps = value
            self.max_steps = value
        elif name == "resume":
            if self._resume is None:
                raise ValueError("This panel cannot resume sessions.")
            if agent.running:
                raise ValueError("Stop the running agent before resuming another session.")
            self.bind(self._resume(str(args.get("session_id", ""))))
        elif name == "sessions":
            self.refresh_sessions()
        elif name == "trust":
            agent.trust_workspace()
            self.refresh()
        else:
            raise ValueError(f"unknown command {name!r}")

    @staticmethod
    def _check_pending(current: str, given: Any, what: str) -> None:
        if not current or (given and given != current):
            raise ValueError(f"That {what} is no longer pending.")

    # --- showing it --------------------------------------------------------------------

    def text(self) -> str:
        """The text/plain fallback: a header and the transcript so far."""
        agent = self.agent
        label = f" — {agent.model.label}" if agent.model.label else ""
        header = f"jupyter_agent · {agent.role} · {agent.model.name}{label}"
        header += f" · session {agent.session.id}"
        bridge = agent.notebook
        if bridge is not None:
            header += f"\nnotebook: {bridge.describe()}"
        body = self._text.getvalue()
        if len(body) > TEXT_FALLBACK_LIMIT:
            body = "…" + body[-TEXT_FALLBACK_LIMIT:]
        if not body:
            body = "(The live panel needs a widget frontend; this text shows the transcript.)\n"
        return f"{header}\n{body}".rstrip("\n")

    def bundle(self) -> dict[str, Any]:
        return {
            "text/plain": self.text(),
            WIDGET_MIME: {"version_major": 2, "version_minor": 1, "model_id": self.model_id},
        }

    def _repr_mimebundle_(self, **_: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.bundle(), {}

    def show(self) -> str:
        """Display a view of the panel under the current cell; returns its display id."""
        from IPython import get_ipython
        from IPython.display import display

        display_id = uuid.uuid4().hex
        self._display_ids.append(display_id)
        self._shown_at = time.monotonic()
        display(self.bundle(), raw=True, display_id=display_id)
        shell = get_ipython()
        if shell is not None and self._shell is None:
            self._shell = shell
            shell.events.register("pre_run_cell", self._on_cell)
            shell.events.register("post_run_cell", self._on_cell)
        return display_id

    # The text fallback. No message tells the kernel that a frontend cannot show widgets;
    # a view that renders says hello, so the fallback is refreshed only while none has,
    # and only once the display is TEXT_GRACE seconds old or at a cell's start or end
    # (a view rendering in JupyterLab says hello well within that, and is never re-sent).

    def _text_fallback_wanted(self) -> bool:
        return bool(self._display_ids) and not self.views_seen and not widget_frontend_connected()

    def _refresh_text(self) -> None:
        self._text_stale = True
        if self._text_fallback_wanted() and time.monotonic() - self._shown_at >= TEXT_GRACE:
            self._publish_text()

    def _on_cell(self, *_: Any) -> None:
        # nbclient reads only the messages of the cell it runs: a transcript refreshed
        # between cells, or during one too early, reaches it at the next cell's start or
        # this cell's end.
        if self._text_stale and self._text_fallback_wanted():
            self._text_stale = False
            self._publish_text()

    def _publish_text(self) -> None:
        from IPython.display import update_display

        bundle = self.bundle()
        # The agent's task carries the parent header of the cell that started it, long
        # finished; send the update as part of the latest request instead (e.g. a cell
        # running ``await h.wait()``), which is the one a client is listening to.
        pub = getattr(self._shell, "display_pub", None)
        latest = getattr(pub, "_parent_header_global", None)  # ipykernel ≥ 6.26
        token = pub.set_thread_parent(latest) if latest else None  # type: ignore[union-attr]
        try:
            for display_id in self._display_ids:
                update_display(bundle, raw=True, display_id=display_id)
        finally:
            if token is not None:
                pub.reset_thread_parent(token)  # type: ignore[union-attr]

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._shell is not None:
            self._shell.events.unregister("pre_run_cell", self._on_cell)
            self._shell.events.unregister("post_run_cell", self._on_cell)
            self._shell = None
        super().close()


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def widget_frontend_connected() -> bool:
    """Whether a widget manager opened ipywidgets' control comm to this kernel (JupyterLab
    does when it restores widgets, e.g. after a page reload; not on first render)."""
    import ipywidgets

    return getattr(ipywidgets.Widget, "_control_comm", None) is not None
