"""The panel's transcript, DOM-free: what the panel has shown and what it has yet to send.

:class:`Transcript` keeps the log a view gets as a snapshot (after a page reload, say) and
the batch the next flush sends, merging consecutive pieces of a stream in both; when a text
block ends, its pieces give way to the finished text, and a view that streamed it gets only
``text_end``. The log stays within :data:`LOG_BUDGET` characters over a days-long session.
:func:`history_entries` turns a saved conversation into entries, for a resumed session.
Entries are dicts in the shapes :mod:`~jupyter_agent.jupyter.panel.protocol` defines.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from ...agent import Agent, Session
from ...errors import SessionError
from ...events import (
    CompactionEvent,
    Event,
    PlanEvent,
    PlanStepEvent,
    SubagentCompleteEvent,
    SubagentOutputEvent,
    SubagentSpawnedEvent,
    TextEvent,
    ToolEndEvent,
    ToolOutcome,
    ToolStartEvent,
)
from ...messages import (
    DECLINED_LINE,
    DECLINED_RESULT,
    INTERRUPTED_RESULT,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ...sessions.notebooks import without_notes
from ...sessions.store import NotebookMove
from ...states import AgentState
from .protocol import Entry, NoteEntry, PlanStoppedEntry, TextEndEntry, UserEntry, to_entry

LOG_BUDGET = 2_000_000
"""Characters of transcript the kernel keeps for views that connect later (a reload).
Past it, old long fields shrink to head and tail, then the oldest entries go."""
LOG_KEEP_RECENT = 20
"""The newest entries are never trimmed."""
FIELD_KEEP = 2_000

_MERGEABLE = frozenset({"text_delta", "thinking_delta", "tool_progress"})


def _size(entry: Entry) -> int:
    return len(json.dumps(entry, default=str))


def _holders(entry: Entry) -> list[Entry]:
    """The entry, and the subagent's events it wraps (a subagent's subagent's too)."""
    chain = [entry]
    while chain[-1]["kind"] == "subagent_output":
        chain.append(chain[-1]["event"])
    return chain


def _stream_key(entry: Entry) -> str:
    return "output" if entry["kind"] == "tool_progress" else "text"


def _piece(entry: Entry) -> str:
    """A stream piece's text (a subagent's: in the event its entry wraps)."""
    inner = _holders(entry)[-1]
    text: str = inner[_stream_key(inner)]
    return text


def _set_piece(entry: Entry, text: str) -> None:
    inner = _holders(entry)[-1]
    inner[_stream_key(inner)] = text


def _mergeable(entry: Entry) -> bool:
    return _holders(entry)[-1]["kind"] in _MERGEABLE


def _copy(entry: Entry) -> Entry:
    """A copy the log may grow in place without touching the entry sent."""
    copy = dict(entry)
    if entry["kind"] == "subagent_output":
        copy["event"] = _copy(entry["event"])
    return copy


def _same_stream(previous: Entry, entry: Entry) -> bool:
    """Whether ``entry`` continues the stream ``previous`` is a piece of (a subagent's
    continues only its own)."""
    kind = entry["kind"]
    if previous["kind"] != kind:
        return False
    if kind == "subagent_output":
        return bool(previous["child_session_id"] == entry["child_session_id"]) and _same_stream(
            previous["event"], entry["event"]
        )
    if kind not in _MERGEABLE:
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
        self.entries: list[Entry] = []
        self.pending: list[Entry] = []
        self.pending_since = 0.0
        self.n = 0
        self._open: Entry | None = None  # the log's stream entry still growing
        self._parts: list[str] = []
        self._block: list[str] = []  # the text block being streamed, for its end
        self._last_text = ""
        self._chars = 0  # about the size of entries, for LOG_BUDGET
        self._dropped = 0

    def add(self, entry: Entry, *, live: bool = True) -> None:
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
            entry["summary"] = ""
        self._log(entry)
        if not live:
            return
        if not self.pending:
            self.pending_since = time.monotonic()
        last = self.pending[-1] if self.pending else None
        if last is not None and _same_stream(last, sent):
            _set_piece(last, _piece(last) + _piece(sent))
            last["n"] = sent["n"]
        else:
            self.pending.append(sent)

    def _log(self, entry: Entry) -> None:
        open_ = self._open
        if open_ is not None and self.entries[-1] is open_ and _same_stream(open_, entry):
            part = _piece(entry)
            self._parts.append(part)
            open_["n"] = entry["n"]
            self._grow(len(part))
            return
        self._close()
        copy = _copy(entry)
        self.entries.append(copy)
        if _mergeable(entry):
            self._open, self._parts = copy, [_piece(entry)]
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
            if entry is self._open:
                continue
            for holder in _holders(entry):  # a subagent's long result too
                for key, value in list(holder.items()):
                    if isinstance(value, str) and len(value) > FIELD_KEEP:
                        cut = (
                            f"{value[: FIELD_KEEP // 2]}\n… {len(value) - FIELD_KEEP:,} "
                            f"characters of this earlier entry trimmed …\n"
                            f"{value[-FIELD_KEEP // 2 :]}"
                        )
                        self._chars -= len(value) - len(cut)
                        holder[key] = cut
        first = 1 if self.entries and self.entries[0].get("trimmed") else 0
        while self._chars > target and len(self.entries) - first > LOG_KEEP_RECENT:
            gone = self.entries.pop(first)
            self._chars -= _size(gone)
            self._dropped += 1
        if self._dropped:
            note = dict(
                NoteEntry(
                    kind="note",
                    trimmed=True,
                    text=f"{self._dropped:,} earlier entries of this session are not shown.",
                )
            )
            if first:
                self.entries[0] = note
            else:
                self.entries.insert(0, note)

    def _close(self) -> None:
        if self._open is not None:
            _set_piece(self._open, "".join(self._parts))
            self._open, self._parts = None, []

    def _end_block(self, entry: Entry) -> Entry:
        """A text block ended: log its whole text instead of its pieces, and send the
        view only its end (``text_end``) when the view has streamed that text already."""
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
        end = TextEndEntry(
            kind="text_end", phase=entry.get("phase"), interrupted=entry["interrupted"]
        )
        if entry.get("run_id"):
            end["run_id"] = entry["run_id"]
        end["n"] = entry["n"]
        return dict(end)

    def drop_partial_turn(self) -> None:
        """A retried model call starts its turn again: the partial text is void."""
        self._close()
        while self.entries and self.entries[-1]["kind"] in ("text_delta", "thinking_delta"):
            self.entries.pop()

    def snapshot(self) -> list[Entry]:
        if self._open is not None:
            _set_piece(self._open, "".join(self._parts))
            self._parts = [_piece(self._open)]
        return self.entries

    def take(self) -> list[Entry]:
        batch, self.pending = self.pending, []
        return batch

    def pending_is_short_text(self, chars: int) -> bool:
        """Only streamed text is waiting, and less than ``chars`` of it."""
        return all(e["kind"] == "text_delta" for e in self.pending) and (
            sum(len(e["text"]) for e in self.pending) < chars
        )


def history_entries(history: list[Message], agent: Agent) -> list[Entry]:
    """A saved conversation as transcript entries (for a resumed session). The whole
    history shows, compacted or not; a ``context`` record is the marker of a compaction
    where it happened (its summary, never as a message of the user's); a subagent's own
    session shows nested under the ``delegate`` call that started it, as it did live. Where
    the session went on from another notebook, a note says so: a view shows the cell
    references before it as text (:class:`~.protocol.NoteEntry` ``cells_of``)."""
    meta = agent.session.metadata
    entries = [
        item if isinstance(item, dict) else to_entry(item)
        for item in _replayed(history, agent, meta.child_session_ids, meta.moved)
    ]
    if meta.plan is not None:
        entries.append(to_entry(PlanEvent(plan=meta.plan)))
        marked = [p for p in meta.plan_progress if p.status != "pending"]
        entries.extend(
            to_entry(PlanStepEvent(step_number=p.step_number, status=p.status, note=p.note))
            for p in marked
        )
        unfinished = any(p.status in ("pending", "in_progress") for p in meta.plan_progress)
        if marked and unfinished and meta.stop_reason not in (None, "completed"):
            # Its execution was cut short: the panel offers to carry on (execute_plan does).
            entries.append(dict(PlanStoppedEntry(kind="plan_stopped")))
    if history:
        entries.append(dict(NoteEntry(kind="note", text=f"Resumed session {agent.session.id}.")))
    return entries


def _replayed(
    history: list[Message],
    agent: Agent,
    children: list[str],
    moved: NotebookMove | None = None,
) -> Iterator[Event | Entry]:
    """The events (and the user's messages, as entries) a saved conversation shows.
    ``children``: the sessions of the subagents it started, replayed where they began;
    ``moved``: where it went on from another notebook (a note marks the place)."""
    names: dict[str, str] = {}
    index = {m.id: i for i, m in enumerate(history)}
    started = _subagents_by_call(agent, children)
    summarised_from = 0  # where the next summary's messages start
    for number, message in enumerate(history):
        if moved is not None and number == moved.messages:
            yield _moved_note(moved)
        change = message.context
        if change is not None:
            summarised = 0
            if change.compacted_through in index:
                through = index[change.compacted_through] + 1
                part = history[summarised_from:through]
                summarised = sum(1 for m in part if m.context is None)
                summarised_from = through
            yield CompactionEvent(
                reason=change.reason,
                cleared=len(change.cleared),
                summarised=summarised,
                tokens_before=change.tokens_before,
                tokens_after=change.tokens_after,
                summary=_summary(message) if summarised else "",
            )
            continue
        if message.role == "user" and message.message_type != "tool_result":
            text = without_notes(message.text)
            if message.message_type == "execute_plan":
                yield dict(UserEntry(kind="user", text=text, action="execute_plan"))
            elif text:
                yield dict(UserEntry(kind="user", text=text))
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                yield TextEvent(text=block.text, interrupted=message.interrupted)
            elif isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                tool = agent.tools.get(block.name)
                summary = tool.summary(block.input) if tool else block.name
                yield ToolStartEvent(
                    tool_use_id=block.id, name=block.name, input=block.input, summary=summary
                )
                for child in started.get(block.id, []):
                    yield from _subagent(agent, child, block)
            elif isinstance(block, ToolResultBlock):
                yield _tool_end(block, names.get(block.tool_use_id, ""))
    if moved is not None and moved.messages >= len(history):
        yield _moved_note(moved)


def _tool_end(block: ToolResultBlock, name: str) -> ToolEndEvent:
    """A saved result as its row showed it live: a call the user denied or stopped says so
    (the history keeps only what the model read, in the words the dispatcher wrote)."""
    outcome, line = (ToolOutcome.error, None) if block.is_error else (ToolOutcome.ok, None)
    if block.is_error and block.text == DECLINED_RESULT:
        outcome, line = ToolOutcome.denied, DECLINED_LINE
    elif block.is_error and block.text.endswith(INTERRUPTED_RESULT):
        outcome = ToolOutcome.interrupted
        did = block.text.removesuffix(INTERRUPTED_RESULT).strip()  # what stopping did
        line = did.splitlines()[0] if did else None
    return ToolEndEvent(
        tool_use_id=block.tool_use_id,
        name=name,
        result=block.text,
        is_error=block.is_error,
        outcome=outcome,
        error_line=line,
    )


def _moved_note(moved: NotebookMove) -> Entry:
    """The note between a conversation held in another notebook and what followed here."""
    before = moved.from_notebook
    text = (
        f"The conversation above was held in {before}; it goes on in this notebook. "
        f"Its cell references name cells of {before}: they are not links here."
    )
    return dict(NoteEntry(kind="note", text=text, cells_of=before))


def _subagents_by_call(agent: Agent, children: list[str]) -> dict[str, list[Session]]:
    """The saved sessions of ``children`` by the tool call that started each (a session
    that cannot be read is left out: the parent's own conversation still shows)."""
    found: dict[str, list[Session]] = {}
    if agent.session.root is None:
        return found
    for child_id in children:
        try:
            child = Session.load(agent.workspace, child_id)
        except (SessionError, OSError):
            continue
        call = child.metadata.parent_tool_use_id
        if call is not None:
            found.setdefault(call, []).append(child)
    return found


def _subagent(agent: Agent, child: Session, call: ToolUseBlock) -> Iterator[Event]:
    """A subagent's session as its parent's stream carried it live."""
    meta = child.metadata
    yield SubagentSpawnedEvent(
        child_session_id=meta.session_id,
        agent_type=meta.agent_type,
        parent_tool_use_id=call.id,
        task=str(call.input.get("task", "")),
    )
    for item in _replayed(child.history, agent, meta.child_session_ids):
        if not isinstance(item, dict):  # its task is the spawn's, not a message to repeat
            yield SubagentOutputEvent(child_session_id=meta.session_id, event=item)
    try:
        state = AgentState(meta.state)
    except ValueError:
        state = AgentState.completed
    yield SubagentCompleteEvent(child_session_id=meta.session_id, state=state)


def _summary(record: Message) -> str:
    """A compaction record's summary as the model wrote it, without the line that tells
    the model what it is (``[Summary of the earlier conversation …]``)."""
    text = record.text
    head, end, summary = text.partition("]\n\n")
    return summary if end and head.startswith("[Summary") else text
