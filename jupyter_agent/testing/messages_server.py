"""A scripted Anthropic Messages API server on loopback, for tests, benchmarks and tutorials.

The model layer talks to Claude through the real ``anthropic`` SDK, and what matters
most (SSE parsing, the SDK's retries, errors in the middle of a stream, dropped
connections, cancelling a stream) lives in the SDK and its HTTP stack. Mocking the SDK
would test none of it, so this server speaks the real wire protocol instead: point
``anthropic.Anthropic(base_url=server.url)`` (or ``ANTHROPIC_BASE_URL``) at it and
script what it answers::

    with MessagesServer() as server:
        server.push(Reply([text("Hi"), tool_use("read_file", {"path": "a.txt"})], "tool_use"))
        server.push(Fault.status(529))      # the next request gets HTTP 529
        ...
        server.requests[0].body              # what the client sent

Standard library only: a ``ThreadingHTTPServer`` in a daemon thread, HTTP/1.1 with
keep-alive, and streams sent with ``Transfer-Encoding: chunked`` so that a dropped
connection (socket closed mid-body) is a real protocol error for the client.
Nothing here imports the rest of ``jupyter_agent``.
"""

from __future__ import annotations

import json
import secrets
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "Fault",
    "MessagesServer",
    "RecordedRequest",
    "Reply",
    "text",
    "thinking",
    "tool_use",
]

Block = dict[str, Any]
Event = tuple[str, dict[str, Any]]

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
_EXHAUSTED = "MessagesServer script exhausted"
_PING_INTERVAL = 0.05  # how often a held stream checks that the client is still there


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

    @classmethod
    def status(
        cls,
        code: int,
        error_type: str | None = None,
        message: str | None = None,
        retry_after: float | None = 0,
    ) -> Fault:
        """An HTTP error response with the API's error body (``retry_after`` in seconds)."""
        kind = error_type or _ERROR_TYPES.get(code, "api_error")
        message = message or _MESSAGES.get(kind, f"HTTP {code}")
        return cls("status", code, kind, message, retry_after)

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


Answer = Reply | Fault
Responder = Callable[[dict[str, Any]], Answer]


class _Aborted(Exception):
    """The server is closing: stop writing and drop the connection."""


class MessagesServer:
    """A loopback Messages API server that answers from a script (see the module docstring)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.requests: list[RecordedRequest] = []
        self.responder: Responder | None = None
        # Unexpected handler failures; a test can assert this stays empty.
        self.errors: list[BaseException] = []
        self._queue: deque[Answer] = deque()
        self._cond = threading.Condition()
        self._releases = 0  # release() generation, so a release is never missed
        self._closed = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer((host, port), self)
        self.url = f"http://{host}:{self._httpd.server_address[1]}"
        # A short poll interval keeps close() (which waits for the loop) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="MessagesServer",
            daemon=True,
        )
        self._thread.start()

    # -- scripting ---------------------------------------------------------------

    def push(self, answer: Answer) -> None:
        """Queue an answer for the next request that has none."""
        with self._cond:
            self._queue.append(answer)

    def script(self, answers: Iterable[Answer]) -> None:
        """Replace the queue of answers."""
        with self._cond:
            self._queue = deque(answers)

    def release(self) -> None:
        """Let every stream that has already been requested go past its ``hold_after``."""
        with self._cond:
            self._releases += 1
            self._cond.notify_all()

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``n`` requests have arrived; raise TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"MessagesServer got {len(self.requests)} of {n} requests")
            return list(self.requests)

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Block until every recorded request has been answered (``outcome`` set)."""
        with self._cond:
            if not self._cond.wait_for(lambda: all(r.outcome for r in self.requests), timeout):
                raise TimeoutError("MessagesServer is still answering a request")

    # -- lifecycle ---------------------------------------------------------------

    def close(self) -> None:
        """Stop serving, end held streams and idle keep-alive connections. Idempotent."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._cond:
            self._cond.notify_all()
            connections = list(self._connections)
        self._httpd.shutdown()
        self._httpd.server_close()
        # Handler threads blocked reading an idle keep-alive connection wake up on this.
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=2)

    def __enter__(self) -> MessagesServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- used by the handler -----------------------------------------------------

    def _record(self, request: RecordedRequest) -> int:
        with self._cond:
            self.requests.append(request)
            self._cond.notify_all()
            return self._releases

    def _finish(self, request: RecordedRequest, outcome: str) -> None:
        with self._cond:
            request.outcome = outcome
            self._cond.notify_all()

    def _next_answer(self, body: dict[str, Any]) -> Answer | None:
        with self._cond:
            if self._queue:
                return self._queue.popleft()
        responder = self.responder
        return responder(body) if responder else None

    def _wait_release(self, seen: int) -> bool:
        """Wait up to one ping interval; True once released. Raises _Aborted on close."""
        with self._cond:
            if self._releases <= seen and not self._closed.is_set():
                self._cond.wait(_PING_INTERVAL)
            if self._closed.is_set():
                raise _Aborted
            return self._releases > seen


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], owner: MessagesServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn, a DNS lookup that can stall.
        TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Record instead of printing a traceback to stderr. A client that resets an idle
        # keep-alive connection, or a connection cut by close(), is no server error.
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError) or (
            isinstance(error, OSError) and self.owner._closed.is_set()
        ):
            return
        self.owner.errors.append(error or RuntimeError("unknown error"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked responses
    disable_nagle_algorithm = True  # small SSE writes go out at once
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.owner._cond:
            self.server.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.owner._cond:
            self.server.owner._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests stay quiet

    def do_POST(self) -> None:
        self._serve()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    # -- one request -------------------------------------------------------------

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        request = RecordedRequest(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else {},
            raw=raw,
            time=time.time(),
            method=self.command,
        )
        seen_releases = owner._record(request)
        if len(raw) < length:
            # The client went away while sending (a Stop mid-request): nothing to answer,
            # and no scripted reply may be used up by it.
            self.close_connection = True
            owner._finish(request, "disconnected")
            return
        try:
            outcome = self._answer(request, body, seen_releases)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            outcome = "disconnected"
        except _Aborted:
            outcome = "aborted"
        except Exception:
            self.close_connection = True
            owner._finish(request, "error")
            raise  # recorded by handle_error
        if outcome != "complete":
            self.close_connection = True
        owner._finish(request, outcome)

    def _answer(self, request: RecordedRequest, body: Any, seen: int) -> str:
        if self.command != "POST" or urlsplit(self.path).path != "/v1/messages":
            return self._error(404, "not_found_error", f"{self.command} {self.path} is not served")
        if not isinstance(body, dict):
            return self._error(400, "invalid_request_error", "the body is not a JSON object")
        try:
            answer = self.server.owner._next_answer(body)
        except Exception as exc:
            self.server.owner.errors.append(exc)
            message = f"MessagesServer responder raised {exc!r}"
            return self._error(500, "api_error", message, {"x-should-retry": "false"})
        if answer is None:
            # No retry: an unscripted request must fail the test at once, not hang or loop.
            return self._error(500, "api_error", _EXHAUSTED, {"x-should-retry": "false"})
        stream = bool(body.get("stream"))

        if isinstance(answer, Reply):
            if stream:
                return self._stream(answer, _events(answer, request), seen)
            return self._json(answer, request, seen)
        if answer.kind == "status":
            retry = _retry_headers(answer.retry_after)
            return self._error(answer.status_code, answer.error_type, answer.message, retry)
        events = _events(answer.reply, request)[: answer.after_events]
        if answer.kind == "midstream_error":
            if not stream:
                return self._error(answer.status_code, answer.error_type, answer.message)
            error = _error_body(answer.error_type, answer.message)
            return self._stream(answer.reply, [*events, ("error", error)], seen, hold=False)
        if answer.kind == "cut":
            if not stream:
                return self._drop_json(answer.reply, request)
            self._stream(answer.reply, events, seen, hold=False)
            return "cut"
        # drop
        if not stream:
            return self._drop_json(answer.reply, request)
        self._stream(answer.reply, events, seen, hold=False, terminate=False)
        return "dropped"

    # -- writing -----------------------------------------------------------------

    def _head(self, status: int, headers: dict[str, str]) -> None:
        reason = {529: "Overloaded"}.get(status)
        self.send_response(status, reason)
        self.send_header("request-id", f"req_{secrets.token_hex(12)}")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> str:
        data = json.dumps(obj).encode()
        json_headers = {"content-type": "application/json", "content-length": str(len(data))}
        self._head(status, {**json_headers, **(headers or {})})
        self.wfile.write(data)
        return "complete"

    def _error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> str:
        return self._send_json(status, _error_body(kind, message), headers)

    def _json(self, reply: Reply, request: RecordedRequest, seen: int) -> str:
        # The same total delay as the stream would take, and the same hold.
        self._pause(reply.delay * len(_events(reply, request)))
        if reply.hold_after is not None:
            self._hold(seen, ping=False)
        return self._send_json(200, _message(reply, request))

    def _drop_json(self, reply: Reply, request: RecordedRequest) -> str:
        data = json.dumps(_message(reply, request)).encode()
        self._head(200, {"content-type": "application/json", "content-length": str(len(data))})
        self.wfile.write(data[: len(data) // 2])
        return "dropped"

    def _stream(
        self,
        reply: Reply,
        events: list[Event],
        seen: int,
        *,
        hold: bool = True,
        terminate: bool = True,
    ) -> str:
        sse = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        self._head(200, {**sse, "transfer-encoding": "chunked"})
        hold_after = reply.hold_after if hold else None
        for sent, (name, data) in enumerate(events):
            if sent == hold_after:
                self._hold(seen, ping=True)
            self._pause(reply.delay)
            self._write_event(name, data)
        if len(events) == hold_after:
            self._hold(seen, ping=True)
        if terminate:
            self.wfile.write(b"0\r\n\r\n")
        return "complete"

    def _write_event(self, name: str, data: dict[str, Any]) -> None:
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        # One write per chunk, so a chunk is never left half-sent between events.
        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self.server.owner._closed.wait(seconds):
            raise _Aborted

    def _hold(self, seen: int, *, ping: bool) -> None:
        """Block until released; find out meanwhile whether the client has gone away."""
        while not self.server.owner._wait_release(seen):
            if ping:
                # A write to a closed peer fails (on the second try at the latest).
                self._write_event("ping", {"type": "ping"})
            elif self._peer_closed():
                raise ConnectionResetError("the client closed the connection")

    def _peer_closed(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


# -- the wire format ---------------------------------------------------------------


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _retry_headers(retry_after: float | None) -> dict[str, str]:
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


def _message(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    """The whole Message, as a non-streaming request gets it."""
    return {
        "id": f"msg_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": reply.model or request.body.get("model") or "claude-test",
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": reply.stop_sequence,
        "usage": _usage(reply, request),
    }


def _events(reply: Reply, request: RecordedRequest) -> list[Event]:
    """The SSE events of a streamed reply, in the order the real API sends them."""
    message = _message(reply, request)
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
