"""Claude through the official ``anthropic`` SDK, streaming, with prompt caching.

The SDK already retries failed HTTP requests (429, 5xx, connection errors before
the response starts). It does not retry a stream that breaks after it began (an
``error`` event mid-stream, a dropped connection, an early end): that is done here, by
re-running the whole turn and telling the consumer to discard the partial one.

On a client of our own, the request body is encoded here and the reply's events are
read as JSON (see ``_anthropic_request`` for the body, and ``_anthropic_stream`` for the
reading); a client of the caller's is used through its ``messages.create()``.

Claude on Amazon Bedrock and Google Vertex AI (``bedrock.py``, ``vertex.py``) is this
model on the SDK's client for that platform: a subclass says which client it makes
(:meth:`AnthropicModel._client_setup`), where a request goes and what its body holds
besides the messages (:meth:`AnthropicModel._endpoint`), and how the reply's stream is
framed (:meth:`AnthropicModel._read_events`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from ..errors import MissingAPIKey, ModelError, PromptTooLong
from ..secrets import credentials
from ..secrets.environment import JUPYTER_ENVIRONMENT, gateway_key_note, key_environment
from ..secrets.shapes import mask_secrets
from ._anthropic_request import CACHE, open_sdk_stream, request_body, with_breakpoint_on_last
from ._anthropic_stream import EventStream, ReplyBuilder, StreamFault, server_sent_events
from ._base import ModelRequest, StreamDone, StreamPart
from ._catalog import model_string
from ._foreign_turns import claude_turns, thinking_fits
from ._http_watch import (
    BrokenStreams,
    Tries,
    http_package_of,
    network_advice,
    retry_note,
    sending,
    sentence,
    unreachable,
    watched_http_client,
)
from ._preload import loaded, preload
from ._usage import Pricing, pricing_for

DEFAULT_MODEL = "claude-sonnet-4-6"
_RETRYABLE_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
    # the same, as Amazon Bedrock names them in the middle of a stream
    | {"throttlingException", "serviceUnavailableException", "internalServerException"}
    | {"modelStreamErrorException", "modelTimeoutException"}
)

NO_KEY = (
    "No Anthropic API key found. Any of these gets you going: "
    "an Anthropic key (the agent panel's key field or %agent login, which keep it out of "
    "the notebook, or ANTHROPIC_API_KEY in the environment Jupyter starts in); an OpenAI "
    "key (OPENAI_API_KEY, then %agent --model openai:gpt-5); a model Ollama serves on this "
    "machine (%agent --model ollama:qwen3); Claude on Bedrock or Vertex "
    "(--model bedrock:… or vertex:…); or an offline scripted replay (--model scripted)."
)
REJECTED = (
    "The Anthropic API rejected the API key{source} (401). Check the key in the panel's "
    "key field, or enter it again with %agent login."
)


def default_model_name() -> str:
    """``$JUPYTER_AGENT_MODEL`` when it names a Claude model of the Anthropic API, else a
    current Claude model."""
    from ._catalog import ModelStringError, parse_model

    chosen = os.environ.get("JUPYTER_AGENT_MODEL")
    try:
        spec = parse_model(chosen) if chosen else None
    except ModelStringError:
        spec = None
    return spec.name if spec is not None and spec.config.type == "anthropic" else DEFAULT_MODEL


def has_anthropic_key() -> bool:
    """Whether a key for the Anthropic API is at hand (the environment, this session's,
    or the saved one; an unsafe credentials file counts, so its problem gets said)."""
    if _environment_key() or credentials.session_key():
        return True
    try:
        return credentials.saved_key() is not None
    except credentials.CredentialsError:
        return True


ClientSetup = tuple[Callable[..., Any], dict[str, Any], tuple[object, ...]]
"""How a model makes its client: the SDK's client class, the options to make it with,
and the settings it reads from the environment (a change of which makes a new client)."""


class AnthropicModel:
    """A Claude model. ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` work as in the SDK."""

    provider = "anthropic"
    label: str | None = None
    is_replay = False
    service = "the Anthropic API"
    """What the model's errors call the service it talks to."""
    base_url_variable = "ANTHROPIC_BASE_URL"
    """The environment variable the SDK reads the service's address from."""
    stream_type = "text/event-stream"
    """The content type of the reply's stream."""

    def __init__(
        self,
        name: str | None = None,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        thinking: int | str | None = None,
        stream_retries: int = 3,
        retry_delay: float = 1.0,
        pricing: Pricing | None = None,
        cache: bool = True,
        sdk_options: dict[str, Any] | None = None,
    ) -> None:
        """
        Args:
            name: Model id; defaults to ``$JUPYTER_AGENT_MODEL`` or a current Claude model.
            client: An ``anthropic.AsyncAnthropic`` to use instead of making one.
            api_key: Overrides ``ANTHROPIC_API_KEY`` (kept in memory only, never written).
            base_url: Overrides ``ANTHROPIC_BASE_URL``.
            max_tokens: Output limit per call.
            thinking: Extended thinking: a token budget, ``"adaptive"``, or None for off.
            stream_retries: How often a turn that broke mid-stream is retried.
            retry_delay: First back-off delay in seconds (doubles each attempt, jittered).
            pricing: Prices to use instead of the built-in table.
            cache: Put prompt-caching breakpoints on the tools, the system prompt and
                the newest message.
            sdk_options: Extra keyword arguments for ``AsyncAnthropic`` (timeout, max_retries…).
        """
        self.name = name or default_model_name()
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.stream_retries = stream_retries
        self.retry_delay = retry_delay
        self.pricing = pricing or pricing_for(self.name)
        self.cache = cache
        self._client = client
        self._api_key = api_key
        self._base_url = base_url
        self._sdk_options = sdk_options or {}
        self._last_client: tuple[Any, tuple[object, ...], Any] | None = None
        self._rejected: str | None = None
        preload("anthropic")  # for the first call: see _preload

    def __repr__(self) -> str:
        return f"AnthropicModel({self.name!r})"

    def model_string(self) -> str | None:
        """The model string that makes this model again (a session records it), or None
        when none can: a ``base_url`` or client of the caller's is no string's to say."""
        if self._base_url or self._client is not None:
            return None
        return model_string(self.provider, self.name)

    def reached_at(self) -> str | None:
        """The address its requests go to (None: Anthropic's own)."""
        if self._client is not None:
            return str(getattr(self._client, "base_url", "") or "") or None
        return self._base_url or os.environ.get(self.base_url_variable) or None

    def secret_values(self) -> dict[str, str]:
        """The credential this model sends, so the agent hides it wherever it appears."""
        found = {credentials.SECRET_NAME: self._api_key} if self._api_key else {}
        client_key = getattr(self._client, "api_key", None) if self._client is not None else None
        if isinstance(client_key, str) and client_key:
            found[credentials.SECRET_NAME] = client_key
        return found

    @property
    def has_own_client(self) -> bool:
        """Whether the caller gave the client (which then holds the key)."""
        return self._client is not None

    def use_key(self, key: str) -> None:
        """Send ``key`` from now on (kept in memory only; it wins over the environment)."""
        self._api_key = credentials.check_key(key)
        self._last_client = None

    def _stored_key(self) -> str | None:
        """The key of this session or the saved one, when neither code nor the
        environment gives one (see :mod:`jupyter_agent.secrets.credentials`)."""
        if self._api_key or _environment_key():
            return None
        try:
            return credentials.stored_key()
        except credentials.CredentialsError as exc:
            raise MissingAPIKey(str(exc)) from None

    def check(self) -> None:
        if self._client is None and not (self._api_key or _environment_key() or self._stored_key()):
            # On a gateway's kernel the environment Jupyter starts in is not this one's.
            raise MissingAPIKey(
                NO_KEY.replace(JUPYTER_ENVIRONMENT, key_environment()),
                headline=f"No Anthropic API key found. {gateway_key_note()}".strip(),
            )

    @property
    def key_rejected(self) -> bool:
        """Whether the API answered 401 to the key this model would send now."""
        return self._rejected is not None and self._rejected == self._current_key()

    def _current_key(self) -> str:
        if self._client is not None:
            return str(getattr(self._client, "api_key", "") or "")
        try:
            return self._api_key or _environment_key() or self._stored_key() or ""
        except MissingAPIKey:
            return ""

    @property
    def client(self) -> Any:
        if self._client is not None:
            return self._client
        # Asked at every request: the shared client is looked up again only when the
        # event loop, or the environment the SDK reads, has changed since the last time.
        loop = asyncio.get_running_loop()
        make, options, env = self._client_setup()
        last = self._last_client
        if last is not None and last[0]() is loop and last[1] == env:
            return last[2]
        self.check()
        client = _shared_client(make, {**self._sdk_options, **options}, env)
        self._last_client = (weakref.ref(loop), env, client)
        return client

    def _client_setup(self) -> ClientSetup:
        """The client to make: ``anthropic.AsyncAnthropic`` with the key and base URL."""
        import anthropic

        key = self._api_key or self._stored_key()  # a key given or saved since
        options: dict[str, Any] = {}
        if key:
            options["api_key"] = key
        if self._base_url:
            options["base_url"] = self._base_url
        return anthropic.AsyncAnthropic, options, (*map(os.environ.get, _SDK_ENVIRONMENT), key)

    def _endpoint(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Where a streamed request for ``params`` goes, and its fields (the messages and
        tools among them, which are encoded apart)."""
        return "/v1/messages", {**params, "stream": True}

    def _read_events(self, response: Any) -> AsyncGenerator[dict[str, Any], None]:
        """The events of a reply's stream, as the API's JSON dicts."""
        return server_sent_events(response)

    async def _open(
        self, client: Any, request: ModelRequest, params: dict[str, Any]
    ) -> EventStream:
        """Send the request and return the reply's events. A client of the caller's goes
        through its messages.create(), whatever it may be wrapped in (tracing, another
        cloud); our own sends the request as we encode it."""
        if self._client is not None:
            return await open_sdk_stream(client, request, params)
        path, fields = self._endpoint(params)
        response = await client.post(
            path,
            cast_to=_http_package().Response,
            content=request_body(fields, request.tools),
            stream=True,
        )
        kind = response.headers.get("content-type", "")
        if not kind.startswith(self.stream_type):
            await response.aclose()
            raise ModelError(
                f"{_capital(self.service)} at {client.base_url} answered with "
                f"{kind or 'no content type'} instead of an event stream: check "
                f"{self.base_url_variable}."
            )
        return EventStream(self._read_events(response), response.aclose)

    @property
    def _tells_when_sent(self) -> bool:
        """Whether requests go through a client of our own, which reports them sent."""
        return self._client is None and "http_client" not in self._sdk_options

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (cache breakpoints included)."""
        params: dict[str, Any] = {
            "model": self.name,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": claude_turns(request.messages),  # another provider's turns made fit
        }
        if request.system:
            system: dict[str, Any] = {"type": "text", "text": request.system}
            if self.cache:
                system["cache_control"] = CACHE
            params["system"] = [system]
        if request.tools:
            tools = list(request.tools)
            if self.cache:
                tools[-1] = {**tools[-1], "cache_control": CACHE}
            params["tools"] = tools
            params["tool_choice"] = {"type": request.tool_choice}
        if self.cache and request.messages:
            params["messages"] = with_breakpoint_on_last(params["messages"])
        # A tool-use loop begun without Claude's thinking (another provider's call) is
        # finished without it: the API keeps one thinking setting per assistant turn.
        if self.thinking is None or not thinking_fits(params["messages"]):
            return params
        if self.thinking == "adaptive":
            params["thinking"] = {"type": "adaptive"}
        elif isinstance(self.thinking, int):
            params["thinking"] = {"type": "enabled", "budget_tokens": self.thinking}
            params["max_tokens"] = max(params["max_tokens"], self.thinking + 1024)
        return params

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        anthropic = await loaded("anthropic")  # off the loop (see _preload)
        params = self.params(request)
        if request.on_sent is not None and not self._tells_when_sent:
            request.on_sent()  # a client of the caller's: we cannot tell, so go first
        broken = BrokenStreams(self.stream_retries, self.retry_delay)
        while True:
            with sending(request.on_sent) as tries:
                try:
                    events = await self._open(self.client, request, params)
                except anthropic.APIError as exc:
                    # Our own client counts the SDK's tries (each goes through our HTTP
                    # hook); through a caller's client we cannot tell how many there were.
                    raise self._failed(exc, tries if self._tells_when_sent else None) from exc
            turn = ReplyBuilder()
            try:
                try:
                    async for event in events:
                        part = turn.feed(event)
                        if part is not None:
                            yield part
                finally:
                    await events.aclose()  # also on Stop: the connection is released at once
                response = turn.response(self.pricing)
            except Exception as exc:
                reason = _mid_stream_reason(exc)
                if reason is None:
                    raise _model_error(exc, self.service) from exc
                restart = broken.restart(reason, exc)
                yield restart
                await asyncio.sleep(restart.delay)
                continue
            yield StreamDone(response)
            return

    def _failed(self, exc: Exception, tries: Tries | None) -> ModelError:
        """A request the SDK gave up on, in sentences: what happened, what was retried,
        what to do."""
        import anthropic

        if isinstance(exc, anthropic.AuthenticationError):
            self._rejected = self._current_key()
            source = " from ANTHROPIC_API_KEY" if _environment_key() and not self._api_key else ""
            return ModelError(
                REJECTED.format(source=source), status=401, error_type="authentication_error"
            )
        if isinstance(exc, anthropic.APIStatusError):
            return _status_error(exc, retry_note(tries), self.name, self.service)
        url = mask_secrets(str(getattr(self._client or self.client, "base_url", "")))
        setting = self.base_url_variable
        if os.environ.get(setting) and not self._base_url and self._client is None:
            advice = network_advice(url, setting)
        elif self._base_url:
            advice = network_advice(url, "the model's base_url")
        else:
            advice = network_advice(url)
        return unreachable(
            self.service,
            url,
            timed_out=isinstance(exc, anthropic.APITimeoutError),
            tries=tries,
            advice=advice,
        )


_TOO_LONG = re.compile(
    r"prompt is too long(?::\s*([\d,]+) tokens\s*>\s*([\d,]+))?"
    r"|context.window|context_length|context limit",
    re.IGNORECASE,
)
"""How the API says a request does not fit: "prompt is too long: 210000 tokens > 200000
maximum" (and the wordings of compatible servers)."""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def error_message(exc: Any) -> str:
    """What an HTTP error's body says, in the Messages API's form (``{"error": {"message":
    …}}``, also Google's), Bedrock's (``{"message": …}``), or a list of either."""
    body = getattr(exc, "body", None)
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"]).rstrip(".")
        if isinstance(body.get("message"), str):
            return str(body["message"]).rstrip(".")
    return str(getattr(exc, "message", exc)).rstrip(".")


def _status_error(
    exc: Any, note: str, model: str, service: str = "the Anthropic API"
) -> ModelError:
    """An HTTP error status the SDK gave up on, in plain sentences."""
    status = exc.status_code
    kind = _error_type(exc)
    message = error_message(exc)
    service = _capital(service)
    retryable = status in (429, 500, 502, 503, 504, 529)
    too_long = _TOO_LONG.search(message) if status in (400, 413) else None
    if too_long is not None:
        numbers = [int(n.replace(",", "")) for n in too_long.groups() if n]
        return PromptTooLong(
            f"The conversation no longer fits the model's context window ({message}).",
            tokens=numbers[0] if numbers else None,
            limit=numbers[1] if len(numbers) > 1 else None,
        )
    if status == 529 or kind == "overloaded_error":
        text = sentence(f"{service} was overloaded", note, "Try again in a minute.")
    elif status == 429 or kind == "rate_limit_error":
        text = sentence(
            f"{service}'s rate limit was reached", note, "Wait a minute, then try again."
        )
    elif status >= 500:
        status_page = service == "The Anthropic API"
        text = sentence(
            f"{service} had a server error ({status}: {message})",
            note,
            "Try again; if it keeps failing, see https://status.anthropic.com."
            if status_page
            else "Try again in a minute.",
        )
    elif status == 403:
        text = f"The API key may not do this (403): {message}. Check the key's permissions."
    elif status == 404:
        text = (
            f"{service} does not know this (404): {message}. Check the model id "
            f"(now {model!r}; --model or JUPYTER_AGENT_MODEL)."
        )
    else:
        text = f"{service} refused the request ({status}, {kind or 'error'}): {message}."
    return ModelError(text, status=status, error_type=kind, retryable=retryable)


# One client per event loop and settings: making one costs ~30 ms (TLS setup), and a
# shared client keeps its connections alive between runs. Keyed by loop because an
# async HTTP client's connections belong to the loop that opened them.
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


_SDK_ENVIRONMENT = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def _environment_key() -> str | None:
    return os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")


def _shared_client(
    make: Callable[..., Any], options: dict[str, Any], env: tuple[object, ...]
) -> Any:
    """The ``make`` client for ``options`` under the SDK environment ``env`` on this loop."""
    import anthropic

    key = f"{make.__qualname__}|{sorted(options.items())!r}|{env!r}"
    per_loop = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(key)
    if client is None:
        if "http_client" not in options:
            options = {
                **options,
                "http_client": watched_http_client(anthropic.DefaultAsyncHttpxClient),
            }
        client = per_loop[key] = make(**options)
    return client


@functools.cache
def _http_package() -> Any:
    """The HTTP package the SDK is built on (httpx, or httpx2 in newer SDKs)."""
    import anthropic

    return http_package_of(anthropic.DefaultAsyncHttpxClient)


def _mid_stream_reason(exc: Exception) -> str | None:
    """Why a started stream broke, if it is worth another try; None if it is not."""
    import anthropic

    if isinstance(exc, StreamFault):
        if exc.error_type is None:
            return str(exc)  # it ended early
        return exc.error_type if exc.error_type in _RETRYABLE_TYPES else None
    if isinstance(exc, anthropic.APIStatusError):
        kind = _error_type(exc)
        if kind in _RETRYABLE_TYPES or exc.status_code in (429, 500, 502, 503, 504, 529):
            return kind or f"HTTP {exc.status_code}"
        return None
    if isinstance(exc, anthropic.APIError):  # connection and timeout errors
        return type(exc).__name__
    module = type(exc).__module__.split(".")[0]
    if module in ("httpx", "httpx2", "httpcore", "httpcore2", "h11") or isinstance(
        exc, (ConnectionError, TimeoutError)
    ):
        return f"connection lost ({type(exc).__name__})"
    return None


def _error_type(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(kind := err.get("type"), str):
            return kind
    return None


def _model_error(exc: Exception, service: str) -> ModelError:
    import anthropic

    if isinstance(exc, StreamFault):
        return ModelError(
            f"{_capital(service)} reported an error mid-stream ({exc.error_type}): {exc}",
            error_type=exc.error_type,
        )
    if isinstance(exc, (KeyError, TypeError, ValueError)):  # an event not as documented
        return ModelError(f"The model's reply could not be read ({exc}).")
    if isinstance(exc, anthropic.AuthenticationError):
        return ModelError(REJECTED.format(source=""), status=401, error_type="authentication_error")
    if isinstance(exc, anthropic.APIStatusError):
        return _status_error(exc, "", "", service)
    return ModelError(f"The model call failed: {exc or type(exc).__name__}.")
