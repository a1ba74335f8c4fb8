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

The same script is served on Amazon Bedrock's and Google Vertex AI's routes, for the
SDK's ``AnthropicBedrock`` and ``AnthropicVertex`` clients (``base_url=server.url``, and
``server.url + "/v1"`` for Vertex): ``/model/{model}/invoke-with-response-stream``, the
events framed in AWS's binary event-stream encoding, and
``/v1/projects/{p}/locations/{r}/publishers/anthropic/models/{model}:streamRawPredict``,
server-sent events as on the Messages API. Each request records its ``platform`` and
``model``; the platforms' own wording of errors is in ``_platforms.py``.

This module is the server: it records each request, takes the next scripted answer and
sends it, pausing, holding, cutting or dropping the stream as scripted. What a script is
made of (``Reply``, ``Fault``, content blocks) is in ``_script.py``; what the API sends
for it, byte for byte, in ``_wire.py``.
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
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any

from typing_extensions import Self

from ._api_rules import refusal
from ._platforms import (
    BEDROCK_STREAM_TYPE,
    Route,
    bedrock_event,
    bedrock_exception,
    error_response,
    route,
)
from ._script import Answer, Fault, RecordedRequest, Reply, Responder, text, thinking, tool_use
from ._wire import Event, message_json, retry_headers, stream_events

__all__ = [
    "Fault",
    "MessagesServer",
    "RecordedRequest",
    "Reply",
    "text",
    "thinking",
    "tool_use",
]

_EXHAUSTED = "MessagesServer script exhausted"
_PING_INTERVAL = 0.05  # how often a held stream checks that the client is still there


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
            name=type(self).__name__,
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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- used by the handler -----------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler (a server of another wire format gives its own)."""
        return _Handler

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
        super().__init__(address, owner._handler())

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn, a DNS lookup that can stall.
        TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        assert isinstance(host, str)  # an AF_INET address: (host, port)
        self.server_name = host

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
    _route: Route | None = None
    """The route of the request being answered."""

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
        where = route(self.command, self.path, body if isinstance(body, dict) else {})
        request = RecordedRequest(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else {},
            raw=raw,
            time=time.time(),
            method=self.command,
            platform=where.platform if where else "anthropic",
            model=where.model if where else None,
        )
        self._route = where
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
        if self._route is None:
            return self._error(404, "not_found_error", f"{self.command} {self.path} is not served")
        if not isinstance(body, dict):
            return self._error(400, "invalid_request_error", "the body is not a JSON object")
        refused = refusal(body)
        if refused is not None:  # as the API would: the script's next answer is kept
            return self._error(400, "invalid_request_error", refused)
        try:
            answer = self.server.owner._next_answer(body)
        except Exception as exc:
            self.server.owner.errors.append(exc)
            message = f"MessagesServer responder raised {exc!r}"
            return self._error(500, "api_error", message, {"x-should-retry": "false"})
        if answer is None:
            # No retry: an unscripted request must fail the test at once, not hang or loop.
            return self._error(500, "api_error", _EXHAUSTED, {"x-should-retry": "false"})
        stream = self._route.stream

        if isinstance(answer, Reply):
            if stream:
                return self._stream(answer, stream_events(answer, request), seen)
            return self._json(answer, request, seen)
        if answer.kind == "status":
            retry = {**retry_headers(answer.retry_after), **answer.headers}
            return self._error(answer.status_code, answer.error_type, answer.message, retry)
        events = stream_events(answer.reply, request)[: answer.after_events]
        if answer.kind == "midstream_error":
            if not stream:
                return self._error(answer.status_code, answer.error_type, answer.message)
            fault = ("error", {"type": "error", "error": _error(answer)})
            return self._stream(answer.reply, [*events, fault], seen, hold=False)
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
        platform = self._route.platform if self._route else "anthropic"
        body, own = error_response(platform, status, kind, message)
        return self._send_json(status, body, {**own, **(headers or {})})

    def _json(self, reply: Reply, request: RecordedRequest, seen: int) -> str:
        # The same total delay as the stream would take, and the same hold.
        self._pause(reply.delay * len(stream_events(reply, request)))
        if reply.hold_after is not None:
            self._hold(seen, ping=False)
        return self._send_json(200, message_json(reply, request))

    def _drop_json(self, reply: Reply, request: RecordedRequest) -> str:
        data = json.dumps(message_json(reply, request)).encode()
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
        if self._bedrock:
            kind = {"content-type": BEDROCK_STREAM_TYPE}
        else:
            kind = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        self._head(200, {**kind, "transfer-encoding": "chunked"})
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

    @property
    def _bedrock(self) -> bool:
        return self._route is not None and self._route.platform == "bedrock"

    def _write_event(self, name: str, data: dict[str, Any]) -> None:
        if not self._bedrock:
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        elif name == "error":
            chunk = bedrock_exception(data["error"]["type"], data["error"]["message"])
        else:
            chunk = bedrock_event(data)
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
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except OSError:
            return True


def _error(fault: Fault) -> dict[str, str]:
    return {"type": fault.error_type, "message": fault.message}
