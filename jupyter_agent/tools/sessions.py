"""The memory tool, search_sessions: what past sessions of this workspace said.

It reads the workspace's session index (:mod:`jupyter_agent.sessions.index`) and nothing
else; it writes nothing but the index itself, which is derived from the histories, so a
Planner has it. The query is the model's text: it is searched for as words, never parsed
as search syntax, in a worker thread under a time budget, so the event loop (and Stop)
keeps running. Passages match, rank and are quoted by what the model may read of them
(secrets hidden as in any tool result), so a search tells nothing of what is hidden.
"""

from __future__ import annotations

import asyncio
import time

from ..errors import ToolError
from ..permissions import Permission
from ..sessions.index import SESSIONS_DIR, SearchError, SessionHit, SessionIndex
from ._masked import secrets_for
from ._tool import ToolContext, ToolOutput, tool

SEARCH_LIMIT = 20
TITLE_CHARS = 80


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary=lambda a: f"Search past sessions for {a.get('query', '')!r}",
)
async def search_sessions(
    ctx: ToolContext, query: str, limit: int = 5, include_current: bool = False
) -> ToolOutput:
    """Search the past agent sessions of this workspace (earlier conversations, possibly
    from other days or kernels) for words: what the user asked, plans, summaries, the
    assistant's answers, tool names and the start of tool results. Use it to recall how a
    similar task was done before or what was decided. Each result gives the session's id,
    title and date, who said the matching passage, and the passage with matches in **bold**.
    Words are matched in any order, and forms of a word match each other (clean, cleaning).

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

    def search() -> list[SessionHit]:
        # Passages match, rank and are quoted as the model would read them.
        visible = secrets.masker().redact
        return index.search(query, limit=limit, exclude=exclude, visible=visible)

    try:
        hits = await asyncio.to_thread(search)
    except SearchError as exc:
        raise ToolError(str(exc)) from None
    return ToolOutput(
        describe_hits(query, hits),
        data={"sessions": [h.session_id for h in hits]},
    )


def describe_hits(query: str, hits: list[SessionHit]) -> str:
    """The results as the model reads them."""
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
            f"{number}. {title} — session {hit.session_id}, {when(hit.said_at)}{more}",
            f"   {who}: {hit.marked()}",
        ]
    return "\n".join(lines)


def when(timestamp: float) -> str:
    """A time as a date and minute, in the kernel's local time."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


SESSION_TOOLS = (search_sessions,)
