"""Requests the Messages API refuses, and the words it refuses them with.

The server refuses them too, so a test finds out as a user would. Only rules the API's
documentation states are here, in the words its errors use (this module, like the rest of
the server, imports nothing of ``jupyter_agent``: the model's own check is its own):

- With extended thinking on (``"type": "enabled"``), a tool-use loop is one assistant
  turn with one thinking setting: when the last message answers tool calls, the
  assistant message that made them must start with a thinking block (Claude's own,
  signed). A turn another provider wrote, or one made with thinking off, has none.
"""

from __future__ import annotations

from typing import Any

_THINKING_FIRST = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
    "We recommend you include thinking blocks from previous turns. To avoid this "
    "requirement, disable `thinking`."
)


def refusal(body: dict[str, Any]) -> str | None:
    """Why the API would answer ``body`` with a 400 invalid_request_error, or None."""
    thinking = body.get("thinking")
    messages = body.get("messages")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    if not isinstance(messages, list) or len(messages) < 2:
        return None
    last, before = messages[-1], messages[-2]
    if not (_role(last) == "user" and _role(before) == "assistant"):
        return None
    if not any(_kind(b) == "tool_result" for b in _blocks(last)):
        return None
    blocks = _blocks(before)
    first = _kind(blocks[0]) if blocks else "text"
    if first in ("thinking", "redacted_thinking"):
        return None
    return _THINKING_FIRST.format(index=len(messages) - 2, found=first)


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _kind(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else None
