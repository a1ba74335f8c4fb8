"""A scripted OpenAI-compatible Chat Completions server on loopback, for tests and tutorials.

The twin of :class:`~jupyter_agent.testing.MessagesServer`, and driven by the same script
(``Reply``, ``Fault``, ``text``, ``tool_use``, ``thinking``), so one script can be played to
either provider. Point ``openai.AsyncOpenAI(base_url=server.base_url)`` (or
``OPENAI_BASE_URL``) at it::

    with ChatCompletionsServer() as server:
        server.push(Reply([thinking("Look first."), tool_use("read_file", {"path": "a"})],
                          "tool_use"))
        server.push(Fault.status(429))     # the next request gets HTTP 429
        server.style.tool_calls = "whole"  # stream as servers that send each call whole
        ...
        server.requests[0].body             # what the client sent

It streams ``data: {chunk}`` server-sent events ending in ``data: [DONE]``: tool-call
arguments in pieces keyed by ``index``, reasoning deltas, a last usage chunk when asked
for. A ``Fault`` is served as OpenAI serves it: an error status with OpenAI's error
body, an ``error`` object mid-stream, a dropped connection, a stream cut before its
``finish_reason``; ``hold_after`` holds a stream (for Stop) until ``release()``.
Standard library only, as the Messages API server it reuses.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ._chat_wire import ChatStyle, chat_chunks, chat_error_body
from ._script import Fault, RecordedRequest, Reply, text, thinking, tool_use
from ._wire import retry_headers
from .messages_server import _EXHAUSTED, MessagesServer, _Handler

__all__ = [
    "ChatCompletionsServer",
    "ChatStyle",
    "Fault",
    "RecordedRequest",
    "Reply",
    "text",
    "thinking",
    "tool_use",
]

_PATHS = ("/v1/chat/completions", "/chat/completions")


class ChatCompletionsServer(MessagesServer):
    """A loopback Chat Completions server that answers from a script (see the module
    docstring). ``style`` says how it streams where servers differ."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.style = ChatStyle()
        self.running_models: list[dict[str, Any]] | None = None
        """What ``GET /api/ps`` answers, as Ollama lists the models it has loaded
        (``{"name": "qwen3:latest", "context_length": 4096}``); None: not served."""
        super().__init__(host, port)

    @property
    def base_url(self) -> str:
        """The address to give the ``openai`` client (``/v1`` included)."""
        return f"{self.url}/v1"

    def _handler(self) -> type[_Handler]:
        return _ChatHandler


class _ChatHandler(_Handler):
    def _answer(self, request: RecordedRequest, body: Any, seen: int) -> str:
        owner = self.server.owner
        assert isinstance(owner, ChatCompletionsServer)
        path = urlsplit(self.path).path
        if self.command == "GET" and path == "/api/ps" and owner.running_models is not None:
            return self._send_json(200, {"models": owner.running_models})
        if self.command != "POST" or path not in _PATHS:
            return self._error(404, "not_found_error", f"{self.command} {self.path} is not served")
        if not isinstance(body, dict):
            return self._error(400, "invalid_request_error", "the body is not a JSON object")
        if not body.get("stream"):
            return self._error(400, "invalid_request_error", "this test server only streams")
        try:
            answer = owner._next_answer(body)
        except Exception as exc:
            owner.errors.append(exc)
            message = f"ChatCompletionsServer responder raised {exc!r}"
            return self._error(500, "api_error", message, {"x-should-retry": "false"})
        if answer is None:
            message = _EXHAUSTED.replace("MessagesServer", "ChatCompletionsServer")
            return self._error(500, "api_error", message, {"x-should-retry": "false"})
        if isinstance(answer, Reply):
            return self._stream(answer, _events(answer, request, owner.style), seen)
        if answer.kind == "status":
            retry = {**retry_headers(answer.retry_after), **answer.headers}
            model = str(body.get("model", ""))
            return self._error(
                answer.status_code, answer.error_type, answer.message, retry, model=model
            )
        events = _events(answer.reply, request, owner.style)[: answer.after_events]
        if answer.kind == "midstream_error":
            error = chat_error_body(answer.error_type, answer.message)
            return self._stream(answer.reply, [*events, ("error", error)], seen, hold=False)
        if answer.kind == "cut":
            self._stream(answer.reply, events, seen, hold=False)
            return "cut"
        self._stream(answer.reply, events, seen, hold=False, terminate=False)
        return "dropped"

    def _error(
        self,
        status: int,
        kind: str,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        model: str = "",
    ) -> str:
        return self._send_json(status, chat_error_body(kind, message, model), headers)

    def _write_event(self, name: str, data: dict[str, Any]) -> None:
        if name == "ping":  # a comment: clients skip it, and a closed peer fails the write
            chunk = b": ping\n\n"
        elif name == "done":
            chunk = b"data: [DONE]\n\n"
        else:
            chunk = f"data: {json.dumps(data)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _events(reply: Reply, request: RecordedRequest, style: ChatStyle) -> list[tuple[str, Any]]:
    return [
        ("done", {}) if chunk is None else ("chunk", chunk)
        for chunk in chat_chunks(reply, request, style)
    ]
