"""What the model sees of a history: cleared tool results as stubs, compacted turns as
their summary. The history itself is never changed.

A session's history is append-only and kept whole (``history.jsonl``, ``Agent.resume``).
Making room in the model's context window is done by appending ``context`` records
(:class:`~jupyter_agent.messages.ContextChange`): one that clears old tool results, one
that replaces earlier turns with a summary. :class:`ModelView` applies them, so a
resumed session shows the model the same view as before.

This module decides nothing about *when* to make room (``agent/_context.py`` does); it
says what a change would free (:func:`clearable`, :func:`compaction_boundary`) and how
big a view is (:func:`message_chars`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import ApiView, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

IMAGE_TOKENS = 1_600
"""What an image in a tool result costs, about (a 1,000 × 1,000 picture)."""
SMALL_RESULT_CHARS = 800
"""Results shorter than this are never cleared: a stub would save next to nothing."""


def stub(use: ToolUseBlock | None, result: ToolResultBlock) -> str:
    """The line a cleared result becomes: what was there and how to get it again."""
    text = result.text
    lines = text.count("\n") + 1 if text else 0
    size = f"{lines:,} line{'s' if lines != 1 else ''}"
    images = sum(isinstance(b, ImageBlock) for b in result.content)
    if images:
        size += f" and {images} image{'s' if images != 1 else ''}"
    if use is None:
        return f"[cleared: {size} of a tool result]"
    args = use.input
    name = use.name
    path = args.get("path")
    if name in ("read_file", "read_notebook") and isinstance(path, str):
        return f"[cleared: {size} of {path}; read it again if needed]"
    if name == "read_notebook":
        return f"[cleared: {size} of the notebook view; read_notebook again if needed]"
    if name in ("read_cell", "run_cell") and "cell_id" in args:
        return f"[cleared: {size} of cell {args['cell_id']}'s outputs; read_cell to see them]"
    if name == "execute_command" and isinstance(args.get("command"), str):
        command = _clip(args["command"], 80)
        return f"[cleared: {size} of output of `{command}`; run it again only if it is safe]"
    shown = _clip(json.dumps(args, ensure_ascii=False, sort_keys=True), 120)
    return f"[cleared: {size} of {name} {shown}; call it again if needed]"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_chars(message: Message) -> tuple[int, int]:
    """(characters, images) a message puts in a request, computed once per message."""
    cached: tuple[int, int] | None = message.__dict__.get("_size")
    if cached is None:
        chars = images = 0
        for block in message.content:
            match block:
                case TextBlock():
                    chars += len(block.text)
                case ToolUseBlock():
                    chars += len(block.name) + len(json.dumps(block.input, ensure_ascii=False))
                case ToolResultBlock():
                    for part in block.content:
                        if isinstance(part, TextBlock):
                            chars += len(part.text)
                        else:
                            images += 1
                case ImageBlock():
                    images += 1
                case _:
                    chars += len(json.dumps(block.to_api(), ensure_ascii=False))
            chars += 20  # the block's own framing
        cached = message.__dict__["_size"] = (chars, images)
    return cached


@dataclass
class ContextView:
    """The model's view of a history, as messages (not yet API turns)."""

    messages: list[Message]
    cleared: set[str]
    """Tool-use ids whose results are shown as stubs."""


class ModelView:
    """:class:`ContextView` and API turns of a history that only grows, kept up to date.

    Like :class:`~jupyter_agent.messages.ApiView`, each call converts only the records
    added since the last one; a new ``context`` record rebuilds the view (rare: a change
    frees much at once, so the prompt cache is broken once, not at every step)."""

    def __init__(self) -> None:
        self._seen = 0
        self._last: Message | None = None
        self._view = ContextView([], set())
        self._api = ApiView()
        self._stubbed: dict[tuple[str, frozenset[str]], Message] = {}

    def __call__(self, history: Sequence[Message]) -> ContextView:
        grew = self._seen <= len(history) and (
            not self._seen or history[self._seen - 1] is self._last
        )
        new = history[self._seen :] if grew else history
        if not grew or any(m.context is not None for m in new):
            self._rebuild(history)
        else:
            self._view.messages.extend(m for m in new if m.context is None)
        self._seen = len(history)
        self._last = history[-1] if history else None
        return self._view

    def api_messages(self, history: Sequence[Message]) -> list[dict[str, Any]]:
        messages = self(history).messages  # first: a rebuild starts a new ApiView
        return self._api(messages)

    def _rebuild(self, history: Sequence[Message]) -> None:
        cleared: set[str] = set()
        summary: Message | None = None
        start = 0
        index = {m.id: i for i, m in enumerate(history)}
        for message in history:
            change = message.context
            if change is None:
                continue
            cleared.update(change.cleared)
            if change.compacted_through is not None and change.compacted_through in index:
                summary, start = message, index[change.compacted_through] + 1
        uses = tool_uses(history) if cleared else {}
        kept = [self._stub(m, cleared, uses) for m in history[start:] if m.context is None]
        messages = [summary, *kept] if summary is not None else kept
        self._view = ContextView(messages, cleared)
        self._api = ApiView()  # the prefix changed: convert again from the start

    def _stub(self, message: Message, cleared: set[str], uses: dict[str, ToolUseBlock]) -> Message:
        """``message`` with its cleared results as stubs (the same copy each time)."""
        ids = frozenset(r.tool_use_id for r in message.tool_results) & cleared
        if not ids:
            return message
        key = (message.id, ids)
        copy = self._stubbed.get(key)
        if copy is None:
            content = [
                ToolResultBlock(
                    tool_use_id=block.tool_use_id,
                    content=[TextBlock(text=stub(uses.get(block.tool_use_id), block))],
                    is_error=block.is_error,
                )
                if isinstance(block, ToolResultBlock) and block.tool_use_id in ids
                else block
                for block in message.content
            ]
            copy = self._stubbed[key] = Message(
                role=message.role,
                content=content,
                message_type=message.message_type,
                id=message.id,
                created_at=message.created_at,
            )
        return copy


def tool_uses(history: Iterable[Message]) -> dict[str, ToolUseBlock]:
    """Every tool use of a history by id."""
    return {b.id: b for m in history if m.role == "assistant" for b in m.tool_uses}


def clearable(
    view: ContextView, uses: dict[str, ToolUseBlock], *, keep_newest: int, referenced: str
) -> list[tuple[str, int]]:
    """Results the model could do without, oldest first, each with the characters its
    stub would free. Never cleared: the results of the newest ``keep_newest`` steps, small
    ones, and any whose call names something ``referenced`` mentions (a file or a cell
    the user or the plan talks about)."""
    steps = [m for m in view.messages if m.role == "user" and m.tool_results]
    old = steps[: max(0, len(steps) - keep_newest)]
    found: list[tuple[str, int]] = []
    for message in old:
        for result in message.tool_results:
            if result.tool_use_id in view.cleared:
                continue
            chars = sum(len(b.text) for b in result.content if isinstance(b, TextBlock))
            images = sum(isinstance(b, ImageBlock) for b in result.content)
            if chars < SMALL_RESULT_CHARS and not images:
                continue
            use = uses.get(result.tool_use_id)
            if use is not None and _mentioned(use, referenced):
                continue
            found.append((result.tool_use_id, chars - 120 + images * IMAGE_TOKENS * 3))
    return found


def _mentioned(use: ToolUseBlock, referenced: str) -> bool:
    return any(
        isinstance(value, str) and len(value) >= 3 and value in referenced
        for value in use.input.values()
    )


def compaction_boundary(messages: Sequence[Message], keep_chars: int) -> int | None:
    """Where a summary should end: the index of the first message kept as it is, so the
    newest ``keep_chars`` (at least the newest step) stay and the kept part starts
    validly (never with tool results whose call was summarised). None: nothing to
    summarise."""
    kept = 0
    k = len(messages)
    while k > 1:
        size = message_chars(messages[k - 1])[0]
        if kept + size > keep_chars and k < len(messages) - 1:
            break
        kept += size
        k -= 1
    # Tool results must follow their call: keep the call too.
    while 0 < k < len(messages) and messages[k].role == "user" and messages[k].tool_results:
        k -= 1
    summarised = messages[:k]
    if not 1 <= k < len(messages) or not any(m.context is None for m in summarised):
        return None
    return k
