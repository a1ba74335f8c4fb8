"""A request in the Chat Completions format: the history's API view (Anthropic-shaped)
turned into the ``messages`` and ``tools`` that OpenAI-compatible servers take.

The history is stored close to the Messages API (see :mod:`jupyter_agent.messages`), so
this is a translation at the edge, made afresh for each request and never stored. It
keeps the one rule both APIs share, in the form Chat Completions wants it: every
``tool_calls`` entry of an assistant message is answered by a ``tool`` message right
after it, in order, whatever the history holds (a result that is missing is answered
with a note, a result that answers nothing becomes plain text).

What has no place in Chat Completions is dropped or said in words: thinking blocks (a
server's reasoning is not sent back; Claude's is signed for Claude alone), cache
breakpoints, and images where the model takes none. Images in a tool result go into a
user message after the tool messages, which may hold text only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ._base import ToolChoice

ERROR_PREFIX = "Error: "
"""Put before a tool result the tool reported as an error (``is_error``)."""
NO_RESULT = "(No result was recorded for this call.)"
NO_IMAGES = "[An image was here: this model does not take images.]"
TOOL_IMAGES = "The images of the tool result{s} above:"
_TOOL_CHOICES: dict[str, str] = {"auto": "auto", "any": "required", "none": "none"}
_MAX_ID = 40
"""OpenAI refuses a tool call id longer than this."""


def chat_messages(
    system: str, turns: Iterable[dict[str, Any]], *, images: bool = True
) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` for a system prompt and an API view of a history.

    ``images``: whether the model takes images; when it does not, each becomes a note."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    pending: list[str] = []  # tool call ids of the last assistant message not yet answered
    for turn in turns:
        blocks = [_as_dict(b) for b in _blocks(turn.get("content"))]
        if turn.get("role") == "assistant":
            _answer_missing(out, pending)
            message = _assistant(blocks)
            if message is not None:
                out.append(message)
                pending = [call["id"] for call in message.get("tool_calls", ())]
        else:
            _user(out, blocks, pending, images)
            pending = []
    _answer_missing(out, pending)
    return out


def chat_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool specs (name, description, input_schema) as Chat Completions functions."""
    functions = []
    for tool in tools:
        if "input_schema" not in tool:
            continue  # a provider's own server tool: nothing another provider can run
        function: dict[str, Any] = {"name": tool["name"], "parameters": tool["input_schema"]}
        if tool.get("description"):
            function["description"] = tool["description"]
        functions.append({"type": "function", "function": function})
    return functions


def chat_tool_choice(choice: ToolChoice) -> str:
    """Our tool choice in Chat Completions' words (``any`` is ``required`` there)."""
    return _TOOL_CHOICES[choice]


def call_id(tool_use_id: str) -> str:
    """The id a tool use is sent under: itself, unless it is too long for OpenAI (then a
    digest of it, the same each time, so a call and its result still match)."""
    if len(tool_use_id) <= _MAX_ID:
        return tool_use_id
    return "call_" + hashlib.sha256(tool_use_id.encode()).hexdigest()[:32]


# --- one turn --------------------------------------------------------------------------


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    texts = [b["text"] for b in blocks if b.get("type") == "text" and b.get("text", "").strip()]
    calls = [
        {
            "id": call_id(b["id"]),
            "type": "function",
            "function": {
                "name": b["name"],
                "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False),
            },
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    if not texts and not calls:
        return None  # thinking alone, or nothing: there is nothing to send back
    message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _user(
    out: list[dict[str, Any]], blocks: list[dict[str, Any]], pending: list[str], images: bool
) -> None:
    parts: list[dict[str, Any]] = []
    result_images: list[dict[str, Any]] = []
    results = 0
    answers: dict[str, dict[str, Any]] = {}
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            sent_id = call_id(block["tool_use_id"])
            text, pictures = _result_content(block)
            if sent_id in pending and sent_id not in answers:
                answers[sent_id] = _tool_message(sent_id, text)
                if pictures:
                    results += 1
                    result_images += _images(pictures, images)
            else:  # answers no call of the turn before: kept, as words
                parts.append(_text(f"[A tool result ({sent_id})]\n{text}"))
                parts += _images(pictures, images)
        elif kind == "text":
            if block.get("text", "").strip():
                parts.append(_text(block["text"]))
        elif kind == "image":
            parts += _images([block], images)
        # thinking and anything else a user turn cannot hold in this format: dropped
    # The tool messages come first and in the order of the calls, as the API wants.
    out += [answers.get(i) or _tool_message(i, NO_RESULT) for i in pending]
    if result_images:
        s = "s" if results > 1 else ""
        parts = [_text(TOOL_IMAGES.format(s=s)), *result_images, *parts]
    if parts:
        out.append({"role": "user", "content": _plain(parts)})


def _answer_missing(out: list[dict[str, Any]], pending: list[str]) -> None:
    """Tool calls the history never answered (a caller's own history): answered by a note."""
    out += [_tool_message(i, NO_RESULT) for i in pending]
    pending.clear()


def _result_content(block: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    content = block.get("content")
    texts: list[str] = []
    pictures: list[dict[str, Any]] = []
    for part in _blocks(content):
        part = _as_dict(part)
        if part.get("type") == "text":
            texts.append(part.get("text", ""))
        elif part.get("type") == "image":
            pictures.append(part)
    text = "\n".join(t for t in texts if t) or "(no output)"
    if block.get("is_error"):
        text = ERROR_PREFIX + text
    return text, pictures


def _images(blocks: Iterable[dict[str, Any]], accepted: bool) -> list[dict[str, Any]]:
    parts = []
    for block in blocks:
        source = block.get("source") or {}
        if not accepted:
            parts.append(_text(NO_IMAGES))
        elif source.get("type") == "base64":
            url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif source.get("type") == "url":
            parts.append({"type": "image_url", "image_url": {"url": source.get("url", "")}})
    return parts


def _plain(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Text alone as a plain string (what every compatible server takes), else parts."""
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def _tool_message(sent_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": sent_id, "content": text}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [_text(content)] if content else []
    return list(content or ())


def _as_dict(block: Any) -> dict[str, Any]:
    """A content block as its API dict (our blocks and SDK objects may stand in a caller's
    messages)."""
    if isinstance(block, dict):
        return block
    if hasattr(block, "to_api"):
        return dict(block.to_api())
    if hasattr(block, "model_dump"):
        return dict(block.model_dump(mode="json", exclude_none=True))
    raise TypeError(f"a {type(block).__name__} cannot be sent to the model")
