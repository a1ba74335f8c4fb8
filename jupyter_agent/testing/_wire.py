"""The Messages API's wire format, for :class:`~jupyter_agent.testing.MessagesServer`.

One job: turn a scripted :class:`~jupyter_agent.testing.Reply` into what the real API
sends for it — the whole Message as JSON (:func:`message_json`), or its server-sent
events in the API's order (:func:`stream_events`) — and an error into the API's error
body and retry headers. Pure functions of the reply and the request: no I/O, so the
server decides when and how much of it to send.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from ._script import Block, RecordedRequest, Reply

__all__ = ["Event", "error_body", "message_json", "retry_headers", "stream_events"]

Event = tuple[str, dict[str, Any]]
"""An SSE event: its name and its JSON data."""


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def retry_headers(retry_after: float | None) -> dict[str, str]:
    if retry_after is None:
        return {}
    # The SDK ignores a zero wait and falls back to its own ~0.5 s backoff, so "retry at
    # once" is sent as 1 ms: retries in tests stay fast.
    ms = max(1, round(retry_after * 1000))
    return {"retry-after": f"{retry_after:g}", "retry-after-ms": str(ms)}


def _usage(reply: Reply, request: RecordedRequest) -> dict[str, int]:
    usage = {
        "input_tokens": len(request.raw) // 4,
        "output_tokens": max(1, len(json.dumps(reply.content)) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return {**usage, **(reply.usage or {})}


def message_json(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    """The whole Message, as a non-streaming request gets it."""
    return {
        "id": f"msg_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": reply.model or request.model or "claude-test",
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": reply.stop_sequence,
        "usage": _usage(reply, request),
    }


def stream_events(reply: Reply, request: RecordedRequest) -> list[Event]:
    """The SSE events of a streamed reply, in the order the real API sends them."""
    message = message_json(reply, request)
    usage = message["usage"]
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(reply.content):
        events += _block_events(index, block, max(1, reply.chunk_size))
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": reply.stop_sequence}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_events(index: int, block: Block, size: int) -> list[Event]:
    def pieces(s: str) -> list[str]:
        return [s[i : i + size] for i in range(0, len(s), size)]

    kind = block.get("type")
    deltas: list[dict[str, Any]]
    if kind == "text":
        start: Block = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        partial = pieces(json.dumps(block["input"]))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in partial]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:  # e.g. redacted_thinking: the API sends such blocks whole, in the start event
        start, deltas = block, []

    def event(name: str, **fields: Any) -> Event:
        return name, {"type": name, "index": index, **fields}

    return [
        event("content_block_start", content_block=start),
        *(event("content_block_delta", delta=delta) for delta in deltas),
        event("content_block_stop"),
    ]
