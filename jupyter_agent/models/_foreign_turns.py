"""A history another provider helped write, made fit for Claude.

A session may start on an OpenAI-compatible model and go on with Claude. Two things in
its API view the Messages API would refuse: a thinking block Claude did not sign (a
server's reasoning, kept with an empty signature), and a tool call id outside
``^[a-zA-Z0-9_-]{1,64}$`` (some servers use dots, colons or long ids). The first is
dropped, the second replaced by a digest of itself, the same for a ``tool_use`` and the
``tool_result`` that answers it. A turn with neither is handed on as the very object it
was, so what a model keeps on it (its encoding) stays valid.

With extended thinking on, a tool-use loop is one assistant turn with one thinking
setting, and the Messages API refuses to go on with thinking from a call another provider
made (its message has no thinking of Claude's to start with): such a loop is finished
with thinking off (:func:`thinking_fits`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from ..messages import ApiTurn

_SAFE_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
EMPTY_TURN = "(no reply)"
"""What an assistant turn that held only a foreign thinking block says instead."""


def claude_turns(turns: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``turns`` with foreign thinking dropped and unsafe tool ids replaced."""
    fitted = list(turns)
    for i, turn in enumerate(turns):
        if getattr(turn, "encoded", None) is not None:
            continue  # sent to Claude as it is before: nothing in it to change
        content = turn.get("content")
        if isinstance(content, str) or not content:
            continue
        blocks = [_fitted(b) for b in content if not _foreign_thinking(b)]
        same = len(blocks) == len(content)
        if same and all(a is b for a, b in zip(blocks, content, strict=True)):
            continue
        if not blocks:
            blocks = [{"type": "text", "text": EMPTY_TURN}]
        fitted[i] = ApiTurn(turn, content=blocks)
    return fitted


def thinking_fits(turns: Sequence[dict[str, Any]]) -> bool:
    """Whether a request with extended thinking on may go on from ``turns``: not when the
    last turn answers tool calls whose assistant message does not start with thinking."""
    if len(turns) < 2:
        return True
    last, before = turns[-1], turns[-2]
    if _field(last, "role") != "user" or _field(before, "role") != "assistant":
        return True
    answered = last.get("content")
    if isinstance(answered, str) or not any(
        _field(b, "type") == "tool_result" for b in answered or ()
    ):
        return True
    blocks = before.get("content")
    if isinstance(blocks, str) or not blocks:
        return False
    return _field(blocks[0], "type") in ("thinking", "redacted_thinking")


def safe_id(tool_use_id: str) -> str:
    """``tool_use_id`` if Claude takes it, else a digest of it (the same every time)."""
    if _SAFE_ID.fullmatch(tool_use_id):
        return tool_use_id
    return "toolu_" + hashlib.sha256(tool_use_id.encode()).hexdigest()[:32]


def _foreign_thinking(block: Any) -> bool:
    kind, signature = _field(block, "type"), _field(block, "signature")
    return kind == "thinking" and not signature


def _fitted(block: Any) -> Any:
    kind = _field(block, "type")
    key = "id" if kind == "tool_use" else "tool_use_id" if kind == "tool_result" else None
    if key is None:
        return block
    value = _field(block, key)
    if not isinstance(value, str) or _SAFE_ID.fullmatch(value):
        return block
    data = block if isinstance(block, dict) else block.to_api()
    return {**data, key: safe_id(value)}


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)
