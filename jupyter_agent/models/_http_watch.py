"""Watching a model SDK's HTTP requests: how many tries a call took, and when it was sent;
and restarting a call whose reply broke off mid-stream.

An SDK retries a failed request on its own; an HTTP event hook on the client we make
counts the tries (:class:`Tries`), so an error can say honestly what was retried
already. The same hook wraps the request body so that a request's ``on_sent`` is called
once all of it went to the connection (see :class:`~jupyter_agent.models.ModelRequest`).
Both are found through context variables the model sets around its call.

Generic over the HTTP package: the ``openai`` SDK is built on one, ``anthropic`` on
another; both models use this.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from ..errors import ModelError
from ._base import StreamRestart

log = logging.getLogger(__name__)


class Tries:
    """The HTTP requests of one call: the SDK retries a failed one on its own."""

    def __init__(self) -> None:
        self.count = 0
        self.started = time.monotonic()


TRIES: contextvars.ContextVar[Tries | None] = contextvars.ContextVar(
    "jupyter_agent_http_tries", default=None
)
ON_SENT: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "jupyter_agent_http_on_sent", default=None
)
"""The ``on_sent`` of the request the current task is sending."""


@contextlib.contextmanager
def sending(on_sent: Callable[[], None] | None) -> Iterator[Tries]:
    """Around opening one try of a call: its HTTP requests are counted, and ``on_sent``
    is told once the request is out (through the hook of :func:`watched_http_client`)."""
    tries = Tries()
    watching = ON_SENT.set(on_sent)
    counting = TRIES.set(tries)
    try:
        yield tries
    finally:
        TRIES.reset(counting)
        ON_SENT.reset(watching)


class BrokenStreams:
    """The restarts of one call whose reply broke off mid-stream (the SDKs retry only a
    request that failed before its stream began): how long to wait before each, jittered
    exponential back-off, and when to give up."""

    def __init__(self, retries: int, delay: float) -> None:
        self.retries = retries
        self.delay = delay
        self.attempt = 0

    def restart(self, reason: str, exc: Exception) -> StreamRestart:
        """The next restart, or :class:`ModelError` when there have been enough."""
        self.attempt += 1
        if self.attempt > self.retries:
            raise ModelError(
                f"The model's reply broke off {self.attempt} times ({reason}); giving up.",
                retryable=True,
            ) from exc
        wait = self.delay * 2 ** (self.attempt - 1) * (0.5 + random.random() / 2)
        return StreamRestart(self.attempt, reason, wait)


def retry_note(tries: Tries | None) -> str:
    """What was retried already, honestly: counted on our client, vague on a caller's."""
    if tries is None:
        return "after the SDK's retries"
    retries = tries.count - 1
    if retries < 1:
        return ""
    elapsed = time.monotonic() - tries.started
    took = f"{elapsed:.1f} s" if elapsed < 10 else f"{elapsed:.0f} s"
    return f"retried {retries} time{'s' if retries > 1 else ''} over {took}"


def sentence(head: str, note: str, advice: str) -> str:
    return f"{head}; {note}. {advice}" if note else f"{head}. {advice}"


def unreachable(
    who: str, url: str, *, timed_out: bool, tries: Tries | None, advice: str
) -> ModelError:
    """A server that could not be reached, or did not answer in time, in sentences (a
    retryable error). ``who``: the server as a sentence names it mid-way ("the Anthropic
    API", "Ollama")."""
    head = (
        f"{who[:1].upper() + who[1:]} at {url} did not answer in time"
        if timed_out
        else f"Could not reach {who} at {url}"
    )
    return ModelError(
        sentence(head, retry_note(tries), advice), error_type="connection_error", retryable=True
    )


def network_advice(url: str, setting: str = "") -> str:
    """What to check when a server is out of reach: the network, and ``setting`` (where
    its address came from: "ANTHROPIC_BASE_URL", "the model's base_url") if it is not the
    default one."""
    if setting:
        return f"Check the network, or {setting} (now {url})."
    return "Check the network connection."


AUTH_FAILURES = (401, 403)
"""A key refused or not allowed: another try sends the same key, so none is made, whatever
the server's ``x-should-retry`` says (a gateway may ask); the user hears it at once."""


def watched_http_client(client_class: Any) -> Any:
    """An SDK's default async HTTP client (``client_class``) with the hooks that count
    tries, tell a request's ``on_sent``, and keep the SDK from retrying an auth failure."""
    package = http_package_of(client_class)

    async def watch(request: Any) -> None:
        tries = TRIES.get()
        if tries is not None:
            tries.count += 1
        on_sent = ON_SENT.get()
        if on_sent is not None:
            request.stream = _signalling_stream(package)(request.stream, on_sent)

    async def final_on_auth_failure(response: Any) -> None:
        if response.status_code in AUTH_FAILURES:
            response.headers["x-should-retry"] = "false"  # both SDKs obey it

    return client_class(event_hooks={"request": [watch], "response": [final_on_auth_failure]})


def http_package_of(client_class: Any) -> Any:
    """The HTTP package an SDK's client class is built on (httpx or httpx2)."""
    sdk = client_class.__module__.partition(".")[0]
    base = next(c for c in client_class.__mro__ if c.__module__.partition(".")[0] != sdk)
    return importlib.import_module(base.__module__.partition(".")[0])


@functools.cache
def _signalling_stream(package: Any) -> type:
    # The HTTP package checks the body's base class.
    class SignallingStream(package.AsyncByteStream):  # type: ignore[misc]  # found at run time
        """A request body that calls ``on_sent`` once all of it went to the connection
        (the HTTP stack asks for more only after writing the last chunk)."""

        def __init__(self, body: Any, on_sent: Callable[[], None]) -> None:
            self.body = body
            self.on_sent = on_sent

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.body:
                yield chunk
            try:
                self.on_sent()
            except Exception:  # bookkeeping must never break the request
                log.exception("a request's on_sent callback failed")

        async def aclose(self) -> None:
            await self.body.aclose()

    return SignallingStream
