"""Models behind the Chat Completions API through the official ``openai`` SDK: OpenAI
itself, and every server that speaks the same API (Ollama, vLLM, LM Studio, LiteLLM's
proxy, OpenRouter, Together, Groq).

The SDK retries failed HTTP requests (429, 5xx, connection errors before the response
starts). It does not retry a stream that breaks after it began (an ``error`` object
mid-stream, a dropped connection, an end before the ``finish_reason``): that is done
here, by re-running the whole turn and telling the consumer to discard the partial one.

The history is Anthropic-shaped (see :mod:`jupyter_agent.messages`); ``_chat_format``
translates it for each request, and ``_chat_stream`` reads the reply's chunks back into
our blocks. The ``openai`` package is an optional extra, imported only when needed.
"""

from __future__ import annotations

import asyncio
import os
import re
import weakref
from collections.abc import AsyncGenerator
from typing import Any, Literal

from ..errors import MissingAPIKey, ModelError, PromptTooLong
from ..messages import encodable
from ..secrets import credentials
from ..secrets.environment import JUPYTER_ENVIRONMENT, gateway_key_note, key_environment
from ..secrets.shapes import mask_secrets
from ._anthropic_stream import StreamFault
from ._base import ModelRequest, StreamDone, StreamPart
from ._catalog import model_string
from ._chat_format import chat_messages, chat_tool_choice, chat_tools
from ._chat_stream import ChatReply
from ._http_watch import (
    BrokenStreams,
    Tries,
    network_advice,
    retry_note,
    sending,
    sentence,
    unreachable,
    watched_http_client,
)
from ._local import ollama_url
from ._ollama_window import ROOMY, served_window, window_notice
from ._usage import Pricing, Usage, openai_pricing_for

Provider = Literal["openai", "ollama", "openai-compatible"]

NO_KEY_SENT = "not-needed"
"""What is sent as the key to a server that needs none (the SDK insists on one)."""
INSTALL = (
    "The openai package is not installed; it is needed for OpenAI and OpenAI-compatible "
    "models (Ollama, vLLM, LM Studio…): pip install jupyter-in-kernel-agent[openai]"
)
NO_KEY = (
    "No OpenAI API key found: set OPENAI_API_KEY in the environment Jupyter starts in, or "
    "pass api_key= to OpenAIModel. For a local model, run Ollama and use ollama:MODEL; for "
    "an offline run, use a ScriptedModel."
)
NO_URL = (
    "The model {name!r} is served by an OpenAI-compatible server, but no address was given: "
    "pass base_url= to OpenAIModel, or set OPENAI_BASE_URL."
)
_RETRYABLE = frozenset(
    {"server_error", "rate_limit_exceeded", "rate_limit_error", "overloaded", "timeout"}
)
"""Error types and codes of a mid-stream error worth another try."""
_TOO_LONG = re.compile(
    r"maximum context length is ([\d,]+) tokens.*?(?:resulted in|requested) ([\d,]+) tokens"
    r"|context.length|context.window|too many tokens|prompt is too long|exceeds? the"
    r" (?:model's )?(?:maximum )?context",
    re.IGNORECASE | re.DOTALL,
)
"""How servers say a request does not fit: OpenAI ("This model's maximum context length is
128000 tokens. However, your messages resulted in 130000 tokens"), vLLM (the same words,
or "…longer than the maximum model length"), Ollama and others."""
_MAX_MODEL_LEN = re.compile(r"maximum model length|max_model_len|num_ctx", re.IGNORECASE)


class OpenAIModel:
    """A model behind the Chat Completions API. ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``
    work as in the SDK (for ``provider="ollama"``: ``OLLAMA_HOST``, and no key)."""

    label: str | None = None
    is_replay = False

    def __init__(
        self,
        name: str,
        *,
        provider: Provider = "openai",
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        reasoning_effort: str | None = None,
        images: bool = True,
        stream_retries: int = 3,
        retry_delay: float = 1.0,
        pricing: Pricing | None = None,
        context_window: int | None = None,
        sdk_options: dict[str, Any] | None = None,
        api_key_env: str | None = "",
    ) -> None:
        """
        Args:
            name: Model id as the server knows it (``gpt-5``, ``qwen3``…).
            provider: ``"openai"``, ``"ollama"`` (a local server, no key) or
                ``"openai-compatible"`` (any other server; ``base_url`` says which).
            client: An ``openai.AsyncOpenAI`` to use instead of making one.
            api_key: Overrides ``OPENAI_API_KEY`` (kept in memory only, never written).
            base_url: Overrides ``OPENAI_BASE_URL`` (``OLLAMA_HOST`` for Ollama).
            max_tokens: Output limit per call.
            reasoning_effort: For reasoning models: ``"minimal"``, ``"low"``,
                ``"medium"`` or ``"high"``; None: the server's default.
            images: Whether the model takes images; when not, each image in the history
                is sent as a note saying so.
            stream_retries: How often a turn that broke mid-stream is retried.
            retry_delay: First back-off delay in seconds (doubles each attempt, jittered).
            pricing: Prices to use; default: OpenAI's list price for its models, and an
                unknown cost for any other (counted in ``Usage.unpriced_calls``).
            context_window: The model's window in tokens, if the built-in table does not
                know it (a local model's, say).
            sdk_options: Extra keyword arguments for ``AsyncOpenAI`` (timeout, max_retries…).
            api_key_env: The environment variable holding the key (a gateway's, named in
                settings); default ``OPENAI_API_KEY``, and none for Ollama.
        """
        if provider not in ("openai", "ollama", "openai-compatible"):
            raise ValueError(
                f"provider must be 'openai', 'ollama' or 'openai-compatible', not {provider!r}"
            )
        self.name = name
        self.provider: str = provider
        self.max_tokens = max_tokens
        self.reasoning_effort = reasoning_effort
        self.images = images
        self.stream_retries = stream_retries
        self.retry_delay = retry_delay
        self.pricing = pricing or openai_pricing_for(name)
        self.context_window = context_window
        self._window_given = context_window is not None
        self._served_window: int | None = None
        """The context Ollama runs this model with, once it said (see _ollama_window)."""
        self._window_asks = 0
        self._windows_said: set[str] = set()
        self._client = client
        self._api_key = api_key
        self.api_key_env = (
            api_key_env
            if api_key_env != ""
            else (None if provider == "ollama" else "OPENAI_API_KEY")
        )
        self._base_url = base_url
        self._sdk_options = sdk_options or {}
        self._last_client: tuple[Any, tuple[str | None, ...], Any] | None = None
        self._rejected: str | None = None
        self.rejected_message = ""
        """What the last 401 said (the panel's set-up box shows it while the key is the same)."""

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, provider={self.provider!r})"

    # --- key and address ---------------------------------------------------------------

    def _key(self) -> str | None:
        """The key to send: given, else the environment's (``api_key_env``), else for
        OpenAI itself the one given for this session or saved (never OpenAI's to Ollama,
        nor a saved OpenAI key to another server)."""
        if self._api_key:
            return self._api_key
        if self.api_key_env is None:
            return None
        found = os.environ.get(self.api_key_env)
        if found or self.provider != "openai":
            return found or None
        try:
            return credentials.stored_key("openai")
        except credentials.CredentialsError as exc:
            raise MissingAPIKey(str(exc)) from None

    def use_key(self, key: str) -> None:
        """Send ``key`` from now on (kept in memory only; it wins over the environment)."""
        self._api_key = credentials.check_key(key)
        self._last_client = None

    @property
    def base_url(self) -> str | None:
        """The server's address (where requests go), when known."""
        return self._url()

    def model_string(self) -> str | None:
        """The model string that makes this model again (a session records it), or None
        when none can: a client of the caller's, or a ``base_url`` its provider's string
        does not carry (only ``openai-compatible:NAME@URL`` does)."""
        if self._client is not None:
            return None
        if self.provider == "openai-compatible":
            return model_string(self.provider, self.name, self._base_url)
        return None if self._base_url else model_string(self.provider, self.name)

    def _url(self) -> str | None:
        if self._base_url:
            return self._base_url
        if self.provider == "ollama":
            return f"{ollama_url()}/v1"
        return os.environ.get("OPENAI_BASE_URL") or None

    def reached_at(self) -> str | None:
        """The address its requests go to (None: OpenAI's own)."""
        if self._client is not None:
            return str(getattr(self._client, "base_url", "") or "") or None
        return self._url()

    def secret_values(self) -> dict[str, str]:
        """The credential this model sends, so the agent hides it wherever it appears."""
        key = getattr(self._client, "api_key", None) if self._client is not None else self._key()
        if isinstance(key, str) and key and key != NO_KEY_SENT:
            return {credentials.SECRET_NAME: key}
        return {}

    def check(self) -> None:
        try:
            import openai  # noqa: F401
        except ImportError:
            raise ModelError(INSTALL) from None
        if self._client is not None:
            return
        if self.provider == "openai" and not self._key():
            raise MissingAPIKey(
                NO_KEY.replace(JUPYTER_ENVIRONMENT, key_environment()),
                headline=f"No OpenAI API key found. {gateway_key_note()}".strip(),
            )
        if self.api_key_env not in (None, "OPENAI_API_KEY") and not self._key():
            raise MissingAPIKey(
                f"No key for {self.name}: the settings say it is in ${self.api_key_env}, "
                f"which is not set in {key_environment()}."
            )
        if self.provider == "openai-compatible" and not self._url():
            raise ModelError(NO_URL.format(name=self.name))

    @property
    def key_rejected(self) -> bool:
        """Whether the server answered 401 to the key this model would send now."""
        return self._rejected is not None and self._rejected == self._current_key()

    def _current_key(self) -> str:
        if self._client is not None:
            return str(getattr(self._client, "api_key", "") or "")
        return self._key() or ""

    @property
    def client(self) -> Any:
        if self._client is not None:
            return self._client
        # Asked at every request: the shared client is looked up again only when the
        # event loop, or the environment the SDK reads, has changed since the last time.
        loop = asyncio.get_running_loop()
        env = (self._key(), self._url())
        last = self._last_client
        if last is not None and last[0]() is loop and last[1] == env:
            return last[2]
        self.check()
        options: dict[str, Any] = {**self._sdk_options, "api_key": env[0] or NO_KEY_SENT}
        if env[1]:
            options["base_url"] = env[1]
        client = _shared_client(options)
        self._last_client = (weakref.ref(loop), env, client)
        return client

    @property
    def _tells_when_sent(self) -> bool:
        """Whether requests go through a client of our own, which reports them sent."""
        return self._client is None and "http_client" not in self._sdk_options

    # --- the request -------------------------------------------------------------------

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create``."""
        limit = request.max_tokens or self.max_tokens
        params: dict[str, Any] = {
            "model": self.name,
            "messages": chat_messages(request.system, request.messages, images=self.images),
            "stream": True,
            "stream_options": {"include_usage": True},
            # OpenAI's reasoning models take only the newer name; other servers know the older.
            "max_completion_tokens" if self.provider == "openai" else "max_tokens": limit,
        }
        if request.tools:
            params["tools"] = chat_tools(request.tools)
            params["tool_choice"] = chat_tool_choice(request.tool_choice)
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        return params

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        try:
            import openai
        except ImportError:
            raise ModelError(INSTALL) from None

        params = self.params(request)
        if request.on_sent is not None and not self._tells_when_sent:
            request.on_sent()  # a client of the caller's: we cannot tell, so go first
        broken = BrokenStreams(self.stream_retries, self.retry_delay)
        while True:
            with sending(request.on_sent) as tries:
                try:
                    stream = await _create(self.client, params)
                except openai.APIError as exc:
                    raise self._failed(exc, tries if self._tells_when_sent else None) from exc
            await self._expect_events(stream)
            turn = ChatReply()
            chunks = _chunks(stream)
            try:
                try:
                    async for chunk in chunks:
                        for part in turn.feed(chunk):
                            yield part
                finally:
                    await chunks.aclose()
                    await stream.close()  # also on Stop: the connection is released at once
                response = turn.response(self.pricing)
            except Exception as exc:
                reason = _mid_stream_reason(exc)
                if reason is None:
                    raise self._stream_error(exc) from exc
                restart = broken.restart(reason, exc)
                yield restart
                await asyncio.sleep(restart.delay)
                continue
            if self.provider == "ollama":
                response.notice = await self._served_window_notice(response.usage)
            yield StreamDone(response)
            return

    async def _served_window_notice(self, usage: Usage) -> str:
        """Ollama cuts what does not fit the context it runs a model with, and says that
        context only when asked: ask (until it says, and again when a reply fills it),
        plan for it when roomy, and say once, in words, when it is too small."""
        used = usage.total_input_tokens + usage.output_tokens
        known = self._served_window
        if (known is None and self._window_asks < 3) or (known and used >= known * 0.95):
            self._window_asks += 1
            root = (self._url() or "").rstrip("/").removesuffix("/v1")
            served = await asyncio.to_thread(served_window, root, self.name)
            self._served_window = served or known
            if served and served >= ROOMY and not self._window_given:
                self.context_window = served
        if not self._served_window:
            return ""
        kind, notice = window_notice(self.name, self._served_window, used)
        if not notice or kind in self._windows_said:
            return ""
        self._windows_said.add(kind)
        return notice

    async def _expect_events(self, stream: Any) -> None:
        """A server that answers a streaming request with a page or a whole JSON reply is
        the wrong address, or no Chat Completions server: say so, instead of retrying a
        stream that never comes."""
        response = getattr(stream, "response", None)
        kind = str(getattr(response, "headers", {}).get("content-type", "text/event-stream"))
        if kind.startswith("text/event-stream"):
            return
        await stream.close()
        where = (
            "the base_url"
            if self._base_url or self._client is not None
            else ("OLLAMA_HOST" if self.provider == "ollama" else "OPENAI_BASE_URL")
        )
        kind = kind.split(";")[0] or "no content type"
        raise ModelError(
            f"{self._who} at {self._address()} answered with {kind} instead of an event"
            f" stream: check {where}."
        )

    # --- errors, in sentences ----------------------------------------------------------

    @property
    def _who(self) -> str:
        """The server, as an error names it (at the start of a sentence)."""
        if self.provider == "ollama":
            return "Ollama"
        if self.provider == "openai" and not self._url():
            return "The OpenAI API"
        return "The model server"

    def _address(self) -> str:
        url = self._client.base_url if self._client is not None else self._url() or ""
        return mask_secrets(str(url or "https://api.openai.com/v1"))

    def _failed(self, exc: Exception, tries: Tries | None) -> ModelError:
        """A request the SDK gave up on: what happened, what was retried, what to do."""
        import openai

        if isinstance(exc, openai.AuthenticationError):
            self._rejected = self._current_key()
            from_env = not self._api_key and self._client is None and self.provider != "ollama"
            source = " from OPENAI_API_KEY" if from_env and os.environ.get("OPENAI_API_KEY") else ""
            self.rejected_message = (
                f"{self._who} at {self._address()} rejected the API key{source} (401). "
                + (
                    "Check the key in the panel's key field, or enter it again with %agent login."
                    if self.provider == "openai"
                    else "Check the key, or pass api_key= to the model."
                )
            )
            return ModelError(self.rejected_message, status=401, error_type="authentication_error")
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc, retry_note(tries))
        url, who = self._address(), self._who
        if self.provider == "ollama":
            advice = "Is Ollama running (ollama serve)? Check OLLAMA_HOST or the base_url."
        elif self._base_url:
            advice = network_advice(url, "the model's base_url")
        elif os.environ.get("OPENAI_BASE_URL") and self._client is None:
            advice = network_advice(url, "OPENAI_BASE_URL")
        else:
            advice = network_advice(url)
        return unreachable(
            who if who == "Ollama" else who[:1].lower() + who[1:],
            url,
            timed_out=isinstance(exc, openai.APITimeoutError),
            tries=tries,
            advice=advice,
        )

    def _status_error(self, exc: Any, note: str) -> ModelError:
        """An HTTP error status the SDK gave up on, in plain sentences."""
        status: int = exc.status_code
        body = exc.body if isinstance(exc.body, dict) else {}
        code = str(body.get("code") or "") or None
        kind = str(body.get("type") or "") or None
        message = str(body.get("message") or exc.message).rstrip(".")
        who = self._who
        if status in (400, 413, 422) and (
            code == "context_length_exceeded"
            or _TOO_LONG.search(message)
            or _MAX_MODEL_LEN.search(message)
        ):
            numbers = _too_long_numbers(message)
            return PromptTooLong(
                f"The conversation no longer fits the model's context window ({message}).",
                tokens=numbers[1] if numbers else None,
                limit=numbers[0] if numbers else None,
            )
        retryable = status in (408, 429, 500, 502, 503, 504)
        if status == 429 and code == "insufficient_quota":
            text = (
                f"{who} says the account has no quota left (429): {message}. "
                "Check its plan and billing."
            )
            retryable = False
        elif status == 429:
            text = sentence(
                f"{who}'s rate limit was reached", note, "Wait a minute, then try again."
            )
        elif status >= 500:
            text = sentence(
                f"{who} had a server error ({status}: {message})", note, "Try again in a minute."
            )
        elif status == 403:
            text = f"{who} refused access (403): {message}. Check the key's permissions."
        elif status == 404 and self.provider == "ollama":
            text = (
                f"Ollama does not have this model (404): {message}. Pull it first "
                f"(ollama pull {self.name}), or check the model id."
            )
        elif status == 404:
            text = (
                f"{who} does not know this (404): {message}. Check the model id (now "
                f"{self.name!r}) and the address ({self._address()})."
            )
        else:
            text = f"{who} refused the request ({status}, {code or kind or 'error'}): {message}."
        return ModelError(text, status=status, error_type=code or kind, retryable=retryable)

    def _stream_error(self, exc: Exception) -> ModelError:
        """What broke a started stream that is not worth another try."""
        import openai

        if isinstance(exc, ModelError):
            return exc
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc, "")
        kind: str | None = None
        if isinstance(exc, StreamFault):
            kind = exc.error_type
        elif isinstance(exc, openai.APIError):  # an error object in place of a chunk
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = str(body.get("type") or body.get("code") or "") or None
        else:
            if isinstance(exc, (KeyError, TypeError, ValueError, AttributeError)):
                return ModelError(f"The model's reply could not be read ({exc}).")
            return ModelError(
                f"The model call failed: {str(exc).rstrip('.') or type(exc).__name__}."
            )
        message = str(getattr(exc, "message", None) or exc).rstrip(".")
        return ModelError(
            f"{self._who} reported an error mid-stream ({kind or 'error'}): {message}.",
            error_type=kind,
        )


def _too_long_numbers(message: str) -> tuple[int, int] | None:
    """(the window, the request's size) when the message says them."""
    match = _TOO_LONG.search(message)
    if match is None or not match.group(1):
        return None
    return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))


async def _create(client: Any, params: dict[str, Any]) -> Any:
    try:
        return await client.chat.completions.create(**params)
    except UnicodeEncodeError:  # a lone surrogate somewhere: sent as U+FFFD
        import json

        return await client.chat.completions.create(
            **json.loads(encodable(json.dumps(params, ensure_ascii=False)))
        )


async def _chunks(stream: Any) -> AsyncGenerator[dict[str, Any], None]:
    """The SDK's typed chunks as the JSON dicts they came as (with any field a server
    adds, such as ``reasoning_content``)."""
    async for chunk in stream:
        yield chunk.model_dump() if hasattr(chunk, "model_dump") else dict(chunk)


def _mid_stream_reason(exc: Exception) -> str | None:
    """Why a started stream broke, if it is worth another try; None if it is not."""
    import openai

    if isinstance(exc, StreamFault):
        if exc.ended_early:
            return str(exc)
        return exc.error_type if exc.error_type in _RETRYABLE else None
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (429, 500, 502, 503, 504):
            return f"HTTP {exc.status_code}"
        return None
    if isinstance(exc, openai.APIConnectionError):  # connection and timeout errors
        return type(exc).__name__
    if isinstance(exc, openai.APIError):  # an error object mid-stream
        body = exc.body if isinstance(exc.body, dict) else {}
        kind = str(body.get("type") or body.get("code") or "")
        return kind if kind in _RETRYABLE else None
    module = type(exc).__module__.split(".")[0]
    if module in ("httpx", "httpx2", "httpcore", "httpcore2", "h11") or isinstance(
        exc, (ConnectionError, TimeoutError)
    ):
        return f"connection lost ({type(exc).__name__})"
    return None


# One client per event loop and settings: making one costs time (TLS setup), and a
# shared client keeps its connections alive between runs. Keyed by loop because an
# async HTTP client's connections belong to the loop that opened them.
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _shared_client(options: dict[str, Any]) -> Any:
    """The client for ``options`` on this loop."""
    import openai

    key = repr(sorted(options.items()))
    per_loop = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(key)
    if client is None:
        if "http_client" not in options:
            options = {
                **options,
                "http_client": watched_http_client(openai.DefaultAsyncHttpxClient),
            }
        client = per_loop[key] = openai.AsyncOpenAI(**options)
    return client
