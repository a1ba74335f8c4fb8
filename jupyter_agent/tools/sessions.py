"""The memory tools: what past sessions of this workspace said.

``search_sessions`` reads the workspace's session index (:mod:`jupyter_agent.sessions.index`)
and nothing else; it writes nothing but the index itself, which is derived from the
histories. ``read_session`` reads one session's files. Neither changes anything, so a
Planner has both. The query is the model's text: it is searched for as words, never parsed
as search syntax, in a worker thread under a time budget, so the event loop (and Stop)
keeps running. Passages match, rank and are quoted by what the model may read of them
(secrets hidden as in any tool result), so a search tells nothing of what is hidden; a
hit's outcome and a session read are shown as the model may read them too.

Each session names its notebook: a session of another notebook names cells of that
notebook, which the results say, so the model does not take them for this notebook's.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable

from ..errors import SessionError, ToolError
from ..messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ..permissions import Permission
from ..sessions.index import SESSIONS_DIR, SearchError, SessionHit, SessionIndex
from ..sessions.notebooks import UNKNOWN, without_notes
from ..sessions.store import Session, SessionMetadata
from ._masked import secrets_for
from ._tool import ToolContext, ToolOutput, tool

SEARCH_LIMIT = 20
TITLE_CHARS = 80
READ_CHARS = 12_000
"""Characters of a session one read_session call gives at most (then it says where the
next part starts)."""
MESSAGE_CHARS = 2_000
"""Characters of one message's text (a plan, a summary) shown."""
CALL_CHARS = 300
"""Characters of a tool call's input shown."""
RESULT_CHARS = 600
"""Characters of a tool result shown."""

_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary=lambda a: f"Search past sessions for {a.get('query', '')!r}",
)
async def search_sessions(
    ctx: ToolContext, query: str, limit: int = 5, include_current: bool = False
) -> ToolOutput:
    """Search the past agent sessions of this workspace (earlier conversations, possibly
    from other days, kernels or notebooks) for words: what the user asked, plans,
    summaries, the assistant's answers, tool names and the start of tool results. Use it to
    recall how a similar task was done before or what was decided. Each result gives the
    session's id, title, date and notebook, who said the matching passage, the passage with
    matches in **bold**, and the session's outcome (its last summary, plan or answer). Read
    more of a session with read_session. Words are matched in any order, and forms of a
    word match each other (clean, cleaning).

    Args:
        query: The words to look for, e.g. "sales outliers". Search syntax (quotes, *,
            AND/OR, NEAR) is not used: only the words count.
        limit: Most sessions to return (1 to 20).
        include_current: Also search this session (it is left out by default: you have it
            already).
    """
    if not 1 <= limit <= SEARCH_LIMIT:
        raise ToolError(f"limit must be between 1 and {SEARCH_LIMIT}, got {limit}.")
    index = SessionIndex.of(ctx.workspace / SESSIONS_DIR)
    exclude = () if include_current or not ctx.session_id else (ctx.session_id,)
    secrets = secrets_for(ctx)

    def search() -> tuple[list[SessionHit], str | None]:
        # Passages match, rank and are quoted as the model would read them.
        visible = secrets.masker().redact
        hits = index.search(query, limit=limit, exclude=exclude, visible=visible)
        return hits, _this_notebook(ctx)

    try:
        hits, here = await asyncio.to_thread(search)
    except SearchError as exc:
        raise ToolError(str(exc)) from None
    return ToolOutput(
        describe_hits(query, hits, here),
        data={"sessions": [h.session_id for h in hits]},
    )


def describe_hits(query: str, hits: list[SessionHit], here: str | None = None) -> str:
    """The results as the model reads them; ``here``: the notebook of the session that
    searched (its sessions are said to be this notebook's)."""
    shown = query if len(query) <= 60 else query[:59] + "…"
    if not hits:
        return f"No past session of this workspace mentions {shown!r}."
    lines = [f"Past sessions matching {shown!r}, best first:"]
    for number, hit in enumerate(hits, 1):
        title = hit.title or "(untitled)"
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "…"
        who = f"{hit.role} ({hit.label})" if hit.label else hit.role
        more = f"; {hit.matches} matching passages" if hit.matches > 1 else ""
        lines += [
            "",
            f"{number}. {title} — session {hit.session_id}, {when(hit.said_at)}, "
            f"{notebook_words(hit.notebook, here)}{more}",
            f"   {who}: {hit.marked()}",
        ]
        if hit.outcome:
            ended = f", {hit.stop_reason}" if hit.stop_reason not in (None, "completed") else ""
            lines.append(f"   outcome ({hit.outcome_kind}{ended}): {hit.outcome}")
    lines += ["", "read_session(session_id) reads more of a session."]
    return "\n".join(lines)


def notebook_words(notebook: str | None, here: str | None) -> str:
    """A session's notebook in the tools' words, seen from the notebook ``here``."""
    if not notebook:
        return UNKNOWN
    if here and notebook == here:
        return f"notebook {notebook} (this one)"
    if here:
        return f"notebook {notebook} (another notebook: its cell ids are not this one's)"
    return f"notebook {notebook}"


def _this_notebook(ctx: ToolContext) -> str | None:
    """The notebook the calling session works on, as its metadata names it."""
    if not ctx.session_id:
        return None
    try:
        return Session.metadata_of(ctx.workspace, ctx.session_id).notebook
    except SessionError:
        return None  # kept in memory only, or not written yet


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary=lambda a: f"Read past session {a.get('session_id', '')}",
)
async def read_session(ctx: ToolContext, session_id: str, start: int = 1) -> ToolOutput:
    """Read a past session of this workspace (an id search_sessions gave): its title,
    notebook, plan and how it ended, then its conversation from message ``start`` on —
    what the user asked, the assistant's answers, plans and summaries, each tool call with
    the start of its result. A long session comes in parts: the text ends by saying where
    the next part starts. Cell ids in a session of another notebook are that notebook's.

    Args:
        session_id: The session's id, as search_sessions gives it.
        start: The number of the message to start from (1: the first).
    """
    if not _SESSION_ID.fullmatch(session_id):
        raise ToolError(f"{session_id!r} is not a session id: use one search_sessions gave.")
    if start < 1:
        raise ToolError(f"start must be 1 or more, got {start}.")
    secrets = secrets_for(ctx)

    def read() -> tuple[Session, str | None]:
        return Session.load(ctx.workspace, session_id), _this_notebook(ctx)

    try:
        session, here = await asyncio.to_thread(read)
    except SessionError as exc:
        message = str(exc).split(" (known:")[0]  # not a list of every session
        raise ToolError(f"{message}. Search for it with search_sessions.") from None
    text = describe_session(session, start, here, secrets.masker().redact)
    return ToolOutput(text, data={"session": session.id})


def describe_session(
    session: Session, start: int, here: str | None, visible: Callable[[str], str]
) -> str:
    """A session as read_session gives it: a header, then its messages from ``start`` on,
    within :data:`READ_CHARS`; ``visible``: text as the model may read it."""
    meta = session.metadata
    history = session.history
    lines = _header(meta, here, visible) if start == 1 else []
    if start > len(history):
        lines.append(f"The session has {len(history)} messages: nothing from message {start}.")
        return "\n".join(lines)
    lines.append(f"Messages {start} to {len(history)}:" if start > 1 else "Conversation:")
    used = sum(len(line) + 1 for line in lines)
    names: dict[str, str] = {}
    for message in history[: start - 1]:
        names.update((b.id, b.name) for b in message.tool_uses)
    for number, message in enumerate(history[start - 1 :], start):
        shown = [f"#{number} {line}" for line in _message_lines(message, names, visible)]
        size = sum(len(line) + 1 for line in shown)
        if used + size > READ_CHARS and number > start:
            lines.append(
                f"[Messages {number} to {len(history)} follow: "
                f"read_session(session_id={meta.session_id!r}, start={number})]"
            )
            break
        lines += shown
        used += size
    return "\n".join(lines)


def _header(meta: SessionMetadata, here: str | None, visible: Callable[[str], str]) -> list[str]:
    ended = meta.stop_reason or ("running" if meta.state == "running" else "not run")
    lines = [
        f"Session {meta.session_id}: {visible(meta.title) or '(untitled)'}",
        f"Notebook: {notebook_words(meta.notebook, here)}",
        f"Role {meta.agent_type}, {meta.runs} run(s), last written {when(meta.updated_at)}, "
        f"last run: {ended}",
    ]
    if meta.moved is not None:
        lines.append(
            f"It went on in this notebook after {meta.moved.messages} messages held in "
            f"{meta.moved.from_notebook} (their cell ids are that notebook's)."
        )
    if meta.plan is not None:
        lines.append(f"Plan: {_cut(visible(meta.plan.goal), MESSAGE_CHARS)}")
        progress = {p.step_number: p.status for p in meta.plan_progress}
        for step in meta.plan.steps:
            status = progress.get(step.step_number, "pending")
            lines.append(f"  {step.step_number}. [{status}] {_cut(visible(step.action), 200)}")
    return [*lines, ""]


def _message_lines(
    message: Message, names: dict[str, str], visible: Callable[[str], str]
) -> list[str]:
    """One message as lines of read_session's text (thinking and images left out)."""
    if message.context is not None:
        summary = message.text.strip()
        return (
            [f"summary of the earlier conversation: {_cut(visible(summary), MESSAGE_CHARS)}"]
            if summary
            else []
        )
    lines = []
    who = message.role
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.strip():
            text = without_notes(block.text) if who == "user" else block.text
            if message.message_type == "execute_plan":
                text = "(Execute plan)"
            lines.append(f"{who}: {_cut(visible(text), MESSAGE_CHARS)}")
        elif isinstance(block, ToolUseBlock):
            names[block.id] = block.name
            shown = json.dumps(block.input, ensure_ascii=False, default=str)
            lines.append(f"tool call {block.name}: {_cut(visible(shown), CALL_CHARS)}")
        elif isinstance(block, ToolResultBlock):
            error = " (error)" if block.is_error else ""
            name = names.get(block.tool_use_id, "")
            lines.append(f"tool result{error} {name}: {_cut(visible(block.text), RESULT_CHARS)}")
    return lines


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def when(timestamp: float) -> str:
    """A time as a date and minute, in the kernel's local time."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


SESSION_TOOLS = (search_sessions, read_session)
