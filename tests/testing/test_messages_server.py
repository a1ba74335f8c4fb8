"""The scripted Messages API server's replies and faults, as the real anthropic SDK reads
them (no mocks), on Anthropic's route and the cloud platforms'.

Findings about the SDK (anthropic 2.12 on httpx2) that the model layer relies on:

- An SSE ``error`` event mid-stream raises ``anthropic.APIStatusError`` itself (not a
  subclass: the HTTP status was 200), with ``status_code == 200`` and the error JSON
  as ``.body``.
- A connection dropped mid-stream raises ``httpx2.RemoteProtocolError`` ("peer closed
  connection without sending complete message body"), NOT ``anthropic.APIConnectionError``:
  once the headers are in, the SDK neither wraps nor retries body errors.
- A non-streaming response dropped mid-body is read inside the SDK's retry loop, so it
  is retried, and surfaces as ``anthropic.APIConnectionError`` when retries run out.
- ``api_key`` goes out as ``authorization: Bearer <key>`` in 2.12 (no ``x-api-key``).
- HTTP 429 raises ``RateLimitError``, HTTP 529 ``OverloadedError`` (a subclass of
  ``InternalServerError``); both are retried by the SDK.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import ToolUseBlock
from messages_sdk import HI, MODEL, error_json, first_text

from jupyter_agent.testing import Fault, MessagesServer, Reply, text, thinking, tool_use

# Older SDKs raise the base class for 529.
OverloadedError = getattr(anthropic, "OverloadedError", anthropic.InternalServerError)


def raw_sse(server: MessagesServer, body: dict[str, Any]) -> tuple[http.client.HTTPResponse, bytes]:
    """POST with the standard library, to see the bytes the SDK parses."""
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request("POST", "/v1/messages", json.dumps(body), {"content-type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response, data


def test_streamed_text_and_tool_use_accumulate_into_the_final_message(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    call = tool_use("read_file", {"path": "a.txt", "lines": [1, 2, 3]}, id="toolu_fixed")
    server.push(Reply([text("Let me read the file first."), call], "tool_use", chunk_size=5))

    with client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        deltas = [event.delta for event in stream if event.type == "content_block_delta"]
        message = stream.get_final_message()

    assert [d.type for d in deltas].count("input_json_delta") > 1  # the JSON came in pieces
    assert message.id.startswith("msg_")
    assert message.model == MODEL
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text"
    assert message.content[0].text == "Let me read the file first."
    block = message.content[1]
    assert block.type == "tool_use"
    assert (block.id, block.name) == ("toolu_fixed", "read_file")
    assert block.input == {"path": "a.txt", "lines": [1, 2, 3]}
    assert message.usage.output_tokens > 1
    assert message.usage.input_tokens == len(server.requests[0].raw) // 4


def test_tool_use_ids_are_fresh_unless_given() -> None:
    first, second = tool_use("a", {}), tool_use("a", {})
    assert first["id"].startswith("toolu_") and len(first["id"]) == len("toolu_") + 20
    assert first["id"] != second["id"]
    assert tool_use("a", {}, id="toolu_x")["id"] == "toolu_x"


async def test_thinking_blocks_round_trip_with_their_signature(server: MessagesServer) -> None:
    server.push(Reply([thinking("Let me consider " * 5, signature="EqQBCkYI"), text("Done.")]))

    client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test-key")
    async with client, client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        message = await stream.get_final_message()

    first = message.content[0]
    assert first.type == "thinking"
    assert first.thinking == "Let me consider " * 5
    assert first.signature == "EqQBCkYI"
    assert message.content[1].type == "text"
    # The block goes back to the API unchanged in the next request.
    assert first.to_dict() == thinking("Let me consider " * 5, signature="EqQBCkYI")


def test_non_streaming_create_returns_the_same_content_and_usage(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    usage = {
        "input_tokens": 120,
        "output_tokens": 7,
        "cache_creation_input_tokens": 30,
        "cache_read_input_tokens": 900,
    }
    reply = Reply([text("Hi."), tool_use("f", {"x": 1})], "tool_use", usage=usage)
    server.script([reply, reply])

    created = client.messages.create(model=MODEL, max_tokens=100, messages=HI)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        streamed = stream.get_final_message()

    for message in (created, streamed):
        assert [b.to_dict() for b in message.content] == reply.content
        assert message.stop_reason == "tool_use"
        assert message.usage.model_dump(include=set(usage)) == usage
    assert "stream" not in server.requests[0].body
    assert server.requests[1].body["stream"] is True


def test_sse_follows_the_wire_format(server: MessagesServer) -> None:
    server.push(Reply([thinking("abc"), text("Hello"), tool_use("f", {})], "tool_use"))
    response, data = raw_sse(server, {"model": MODEL, "messages": HI, "stream": True})

    assert response.status == 200
    assert response.getheader("transfer-encoding") == "chunked"
    assert response.getheader("content-type") == "text/event-stream"
    events = [block.split("\n") for block in data.decode().split("\n\n") if block]
    for lines in events:
        assert len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: ")
    names = [lines[0].removeprefix("event: ") for lines in events]
    payloads = [json.loads(lines[1].removeprefix("data: ")) for lines in events]
    assert [p["type"] for p in payloads] == names
    block = ["content_block_start", "content_block_delta", "content_block_stop"]
    assert names == [
        "message_start",
        "ping",
        *block[:2], "content_block_delta", block[2],  # thinking, then its signature
        *block,
        *block,
        "message_delta",
        "message_stop",
    ]  # fmt: skip
    start = payloads[0]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["role"] == "assistant"
    assert start["usage"]["output_tokens"] == 1
    assert payloads[2]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert payloads[4]["delta"] == {"type": "signature_delta", "signature": "sig"}
    assert payloads[6]["content_block"] == {"type": "text", "text": ""}
    assert payloads[9]["content_block"]["input"] == {}
    assert payloads[10]["delta"] == {"type": "input_json_delta", "partial_json": "{}"}
    assert payloads[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert set(payloads[-2]["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }


@pytest.mark.parametrize("code", [429, 529])
def test_sdk_retries_reach_the_success_after_an_error_status(
    server: MessagesServer, client: anthropic.Anthropic, code: int, monkeypatch
) -> None:
    server.script([Fault.status(code), Reply([text("Finally.")])])
    waits: list[float] = []
    wait_for = client._calculate_retry_timeout

    def spied(*args: Any, **kwargs: Any) -> float:
        waits.append(wait_for(*args, **kwargs))
        return waits[-1]

    monkeypatch.setattr(client, "_calculate_retry_timeout", spied)

    with client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        assert stream.get_final_text() == "Finally."

    assert waits == [0.001]  # retry-after-ms makes the SDK's wait short, not its own backoff
    assert len(server.requests) == 2
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize(
    ("code", "error_class", "error_type"),
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ],
)
def test_without_retries_an_error_status_raises_its_sdk_class(
    server: MessagesServer, code: int, error_class: type[anthropic.APIStatusError], error_type: str
) -> None:
    server.push(Fault.status(code, message="nope"))
    client = anthropic.Anthropic(base_url=server.url, api_key="test-key", max_retries=0)

    with pytest.raises(error_class) as caught:
        client.messages.create(model=MODEL, max_tokens=100, messages=HI)

    assert caught.value.status_code == code
    assert caught.value.body == {"type": "error", "error": {"type": error_type, "message": "nope"}}
    assert issubclass(OverloadedError, anthropic.InternalServerError)


def test_retry_after_headers_follow_the_fault(server: MessagesServer) -> None:
    server.script([Fault.status(429, retry_after=2.5), Fault.status(529, retry_after=None)])
    response, _ = raw_sse(server, {"model": MODEL, "messages": HI})
    assert (response.getheader("retry-after"), response.getheader("retry-after-ms")) == (
        "2.5",
        "2500",
    )
    response, _ = raw_sse(server, {"model": MODEL, "messages": HI})
    assert (
        response.getheader("retry-after") is None and response.getheader("retry-after-ms") is None
    )


def test_midstream_error_raises_api_status_error_after_text_deltas(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.push(Fault.midstream_error(after_events=5))  # start, ping, block start, 2 deltas
    seen: list[str] = []

    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream,
    ):
        seen.extend(event.text for event in stream if event.type == "text")

    assert seen == ["partial ", "answer t"]
    error = caught.value
    assert type(error) is anthropic.APIStatusError  # the HTTP status was 200
    assert error.status_code == 200
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    server.wait_idle()
    assert server.requests[0].outcome == "complete"  # the stream itself ended cleanly


async def test_midstream_error_raises_the_same_in_the_async_client(server: MessagesServer) -> None:
    server.push(Fault.midstream_error(after_events=4, error_type="api_error"))

    async with anthropic.AsyncAnthropic(base_url=server.url, api_key="test-key") as client:
        with pytest.raises(anthropic.APIStatusError) as caught:
            async with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
                await stream.get_final_message()

    assert error_json(caught.value)["error"]["type"] == "api_error"


def test_dropped_stream_raises_httpx_remote_protocol_error(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.script([Fault.drop(after_events=5), Reply([text("next")])])
    seen: list[str] = []

    # Not anthropic.APIConnectionError: the SDK does not wrap errors in a body it streams.
    with (
        pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"),
        client.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream,
    ):
        seen.extend(event.text for event in stream if event.type == "text")

    assert seen == ["partial ", "answer t"]
    assert not isinstance(httpx2.RemoteProtocolError("x"), anthropic.APIError)
    server.wait_idle()
    assert server.requests[0].outcome == "dropped"
    # The client recovers on a new connection.
    assert first_text(client.messages.create(model=MODEL, max_tokens=10, messages=HI)) == "next"


async def test_dropped_stream_raises_the_same_in_the_async_client(server: MessagesServer) -> None:
    server.push(Fault.drop(after_events=2))

    async with anthropic.AsyncAnthropic(base_url=server.url, api_key="test-key") as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            async with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
                await stream.get_final_message()


def test_dropped_non_streaming_response_is_retried_then_an_api_connection_error(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.script([Fault.drop(), Reply([text("second try")]), Fault.drop()])
    # The SDK reads a whole JSON body inside its retry loop, so it retries a drop...
    assert first_text(client.messages.create(model=MODEL, max_tokens=10, messages=HI)) == (
        "second try"
    )
    # ...and without retries the drop surfaces wrapped.
    with pytest.raises(anthropic.APIConnectionError) as caught:
        client.with_options(max_retries=0).messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    server.wait_idle()
    assert [r.outcome for r in server.requests] == ["dropped", "complete", "dropped"]


# --- the cloud platforms' routes ---------------------------------------------------------------


@pytest.fixture
def bedrock(server: MessagesServer, monkeypatch: pytest.MonkeyPatch) -> anthropic.AnthropicBedrock:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="secret",
        aws_region="us-east-1",
        base_url=server.url,
    )


@pytest.fixture
def vertex(server: MessagesServer) -> anthropic.AnthropicVertex:
    return anthropic.AnthropicVertex(
        region="europe-west1", project_id="proj", access_token="token", base_url=server.url + "/v1"
    )


def test_the_same_script_is_served_on_bedrock_and_vertex_streamed_or_not(
    server: MessagesServer, bedrock: anthropic.AnthropicBedrock, vertex: anthropic.AnthropicVertex
) -> None:
    bedrock_id, vertex_id = "anthropic.claude-x-v1:0", "claude-x@20250929"
    for client, model in ((bedrock, bedrock_id), (vertex, vertex_id)):
        server.push(Reply([text("streamed "), tool_use("f", {"a": 1}, id="toolu_1")], "tool_use"))
        with client.messages.stream(model=model, max_tokens=10, messages=HI) as stream:
            message = stream.get_final_message()
        assert message.model == model
        assert first_text(message) == "streamed "
        call = message.content[1]
        assert isinstance(call, ToolUseBlock)
        assert call.input == {"a": 1}
        server.push(Reply([text("whole")]))
        assert client.messages.create(model=model, max_tokens=10, messages=HI).model == model
    routes = [(r.platform, r.model, r.path.rsplit("/", 1)[-1]) for r in server.requests]
    assert routes == [
        ("bedrock", bedrock_id, "invoke-with-response-stream"),
        ("bedrock", bedrock_id, "invoke"),
        ("vertex", vertex_id, f"{vertex_id}:streamRawPredict"),
        ("vertex", vertex_id, f"{vertex_id}:rawPredict"),
    ]


def test_errors_read_as_each_platform_words_them(
    server: MessagesServer, bedrock: anthropic.AnthropicBedrock, vertex: anthropic.AnthropicVertex
) -> None:
    server.push(Fault.status(403, message="not allowed"))
    with pytest.raises(anthropic.PermissionDeniedError) as on_bedrock:
        bedrock.messages.create(model="anthropic.claude-x", max_tokens=10, messages=HI)
    assert on_bedrock.value.body == {"message": "not allowed"}
    assert on_bedrock.value.response.headers["x-amzn-errortype"].startswith("AccessDeniedException")
    server.push(Fault.status(403, message="not allowed"))
    with pytest.raises(anthropic.PermissionDeniedError) as on_vertex:
        vertex.messages.create(model="claude-x@1", max_tokens=10, messages=HI)
    assert on_vertex.value.body == {
        "error": {"code": 403, "message": "not allowed", "status": "PERMISSION_DENIED"}
    }
    server.push(Fault.midstream_error(3, "overloaded_error"))
    with pytest.raises(anthropic.APIStatusError) as mid_stream:  # an AWS exception frame
        for _ in bedrock.messages.create(
            model="anthropic.claude-x", max_tokens=10, messages=HI, stream=True
        ):
            pass
    assert error_json(mid_stream.value)["error"]["type"] == "serviceUnavailableException"
