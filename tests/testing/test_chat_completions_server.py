"""The scripted Chat Completions server, driven by the real openai SDK (no mocks).

Findings about the SDK (openai 3.57 on httpx2) that the model layer relies on:

- Streamed chunks validate as ``ChatCompletionChunk``; fields a server adds (such as
  ``reasoning_content``) survive in ``model_dump()``.
- An ``error`` object in place of a chunk raises ``openai.APIError`` (not a status error:
  the HTTP status was 200) with the error object as ``.body``.
- A connection dropped mid-stream raises ``openai.APIConnectionError``: unlike the
  anthropic SDK, openai wraps the HTTP package's errors while streaming.
- An error status raises the SDK class for it, with OpenAI's ``code`` read from the body.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall, ChoiceDeltaToolCallFunction

from jupyter_agent.testing import ChatCompletionsServer, Fault, Reply, text, thinking, tool_use

HI: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def client(server: ChatCompletionsServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0) as client:
        yield client


def stream(client: openai.OpenAI, **extra: Any) -> list[ChatCompletionChunk]:
    return list(
        client.chat.completions.create(
            model="gpt-test",
            messages=HI,
            stream=True,
            stream_options={"include_usage": True},
            **extra,
        )
    )


def function_of(call: ChoiceDeltaToolCall) -> ChoiceDeltaToolCallFunction:
    """The function part of a streamed tool call (the server sends one in every piece)."""
    assert call.function is not None
    return call.function


def test_a_reply_streams_as_chunks_the_sdk_validates(server, client) -> None:
    server.push(
        Reply(
            [thinking("hmm"), text("Hello!"), tool_use("lookup", {"key": "a"}, id="call_1")],
            "tool_use",
            chunk_size=3,
            usage={"input_tokens": 7, "output_tokens": 5, "cache_read_input_tokens": 2},
        )
    )
    chunks = stream(client)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Hello!"
    assert "".join(d.model_dump().get("reasoning_content") or "" for d in deltas) == "hmm"
    calls = [call for d in deltas for call in d.tool_calls or ()]
    assert calls[0].id == "call_1" and function_of(calls[0]).name == "lookup"
    assert {call.index for call in calls} == {0}
    arguments = "".join(function_of(call).arguments or "" for call in calls)
    assert json.loads(arguments) == {"key": "a"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    usage = chunks[-1].usage
    assert not chunks[-1].choices
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (9, 5)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 2


def test_an_error_status_has_openais_body_and_code(server, client) -> None:
    server.script(
        [
            Fault.status(401),
            Fault.status(429),
            Fault.status(400, "context_length_exceeded", "maximum context length is 10 tokens"),
        ]
    )
    with pytest.raises(openai.AuthenticationError) as auth:
        stream(client)
    assert auth.value.code == "invalid_api_key"
    with pytest.raises(openai.RateLimitError) as limited:
        stream(client)
    assert limited.value.code == "rate_limit_exceeded"
    with pytest.raises(openai.BadRequestError) as too_long:
        stream(client)
    assert too_long.value.code == "context_length_exceeded"
    body = too_long.value.body
    assert isinstance(body, dict)
    assert body["message"] == "maximum context length is 10 tokens"


def test_an_error_mid_stream_raises_api_error_with_the_error_object(server, client) -> None:
    server.push(Fault.midstream_error(after_events=2))
    with pytest.raises(openai.APIError) as caught:
        stream(client)
    assert not isinstance(caught.value, openai.APIStatusError)
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "server_error"


def test_a_dropped_stream_raises_api_connection_error(server, client) -> None:
    server.push(Fault.drop(after_events=2))
    with pytest.raises(openai.APIConnectionError):
        stream(client)
    server.wait_idle()
    assert server.requests[0].outcome == "dropped"


def test_a_cut_stream_ends_without_a_finish_reason(server, client) -> None:
    server.push(Fault.cut(after_events=2))
    chunks = stream(client)
    assert chunks and all(c.choices[0].finish_reason is None for c in chunks)


def test_an_exhausted_script_fails_at_once_and_other_paths_get_a_404(server, client) -> None:
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        stream(client)
    assert len(server.requests) == 1
    request = urllib.request.Request(f"{server.url}/v1/messages", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 404
    assert "error" in json.loads(caught.value.read())
