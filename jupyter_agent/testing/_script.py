"""What a test scripts :class:`~jupyter_agent.testing.MessagesServer` with, and reads back.

One job: the plain data of a script — content blocks (:func:`text`, :func:`tool_use`,
:func:`thinking`), a :class:`Reply` to serve, a :class:`Fault` to serve instead — and the
:class:`RecordedRequest` the server keeps of each request. Nothing here touches a socket;
``_wire.py`` turns a reply into what the API sends, ``messages_server.py`` sends it.
A :class:`Fault` carries the error type and message the real API uses for its status.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

__all__ = [
    "Answer",
    "Block",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Responder",
    "text",
    "thinking",
    "tool_use",
]

Block = dict[str, Any]
"""A content block, as the API's JSON has it."""

# The error type the real API uses for each status code, and back.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_STATUS_OF = {kind: code for code, kind in _ERROR_TYPES.items()}
_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Permission denied",
    "not_found_error": "Not found",
    "request_too_large": "Request too large",
    "rate_limit_error": "Rate limit exceeded",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


def text(s: str) -> Block:
    """A text content block."""
    return {"type": "text", "text": s}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    """A tool_use content block (with a fresh ``toolu_...`` id unless one is given)."""
    block_id = id or f"toolu_{secrets.token_hex(10)}"
    return {"type": "tool_use", "id": block_id, "name": name, "input": input}


def thinking(s: str, signature: str = "sig") -> Block:
    """A thinking content block with its signature."""
    return {"type": "thinking", "thinking": s, "signature": signature}


@dataclass
class Reply:
    """One scripted assistant message, served as SSE or as JSON, whichever was asked for.

    ``usage`` entries override the defaults (input: request bytes // 4, output: content
    JSON // 4, cache: 0). ``chunk_size`` is the size of each text/thinking/JSON delta,
    ``delay`` the seconds slept before each SSE event, and ``hold_after=N`` stops the
    stream after N events until ``MessagesServer.release()``.
    """

    content: list[Block]
    stop_reason: str = "end_turn"
    _: KW_ONLY
    usage: dict[str, int] | None = None
    chunk_size: int = 16
    delay: float = 0.0
    hold_after: int | None = None
    model: str | None = None
    stop_sequence: str | None = None


def _partial_reply() -> Reply:
    return Reply([text("partial answer that never gets finished")], chunk_size=8)


@dataclass
class Fault:
    """A failure to serve instead of a reply. Build it with the classmethods."""

    kind: Literal["status", "midstream_error", "drop", "cut"]
    status_code: int = 500
    error_type: str = "api_error"
    message: str = ""
    retry_after: float | None = 0
    after_events: int = 3
    # The reply whose first ``after_events`` events precede a mid-stream fault.
    reply: Reply = field(default_factory=_partial_reply)
    headers: dict[str, str] = field(default_factory=dict)
    """Response headers of a status fault, beside the retry ones."""

    @classmethod
    def status(
        cls,
        code: int,
        error_type: str | None = None,
        message: str | None = None,
        retry_after: float | None = 0,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """An HTTP error response with the API's error body (``retry_after`` in seconds;
        ``headers`` sent too, e.g. a gateway's ``x-should-retry``)."""
        kind = error_type or _ERROR_TYPES.get(code, "api_error")
        message = message or _MESSAGES.get(kind, f"HTTP {code}")
        return cls("status", code, kind, message, retry_after, headers=headers or {})

    @classmethod
    def midstream_error(
        cls,
        after_events: int = 3,
        error_type: str = "overloaded_error",
        *,
        reply: Reply | None = None,
    ) -> Fault:
        """A 200 stream that sends ``after_events`` events, then an SSE ``error`` event."""
        message = _MESSAGES.get(error_type, error_type)
        code = _STATUS_OF.get(error_type, 500)  # what a non-streaming request gets instead
        return cls(
            "midstream_error",
            code,
            error_type,
            message,
            retry_after=None,
            after_events=after_events,
            reply=reply or _partial_reply(),
        )

    @classmethod
    def drop(cls, after_events: int = 3, *, reply: Reply | None = None) -> Fault:
        """A 200 stream that sends ``after_events`` events, then closes the socket mid-body."""
        return cls("drop", 200, after_events=after_events, reply=reply or _partial_reply())

    @classmethod
    def cut(cls, after_events: int = 3, *, reply: Reply | None = None) -> Fault:
        """A 200 stream that sends ``after_events`` events, then ends the body as if it
        were whole: no error, but no ``message_stop`` either (a proxy giving up)."""
        return cls("cut", 200, after_events=after_events, reply=reply or _partial_reply())


@dataclass
class RecordedRequest:
    """A request as the server received it. ``outcome`` is set once it has been answered:
    "complete", "disconnected" (the client went away), "dropped" (a ``Fault.drop``),
    "cut" (a ``Fault.cut``) or "aborted" (the server closed)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    time: float
    method: str = "POST"
    outcome: str | None = None
    platform: str = "anthropic"
    """Where the request went: "anthropic" (``/v1/messages``), "bedrock" or "vertex"."""
    model: str | None = None
    """The model asked for: in the body on the Messages API, in the URL on the others."""


Answer = Reply | Fault
Responder = Callable[[dict[str, Any]], Answer]
