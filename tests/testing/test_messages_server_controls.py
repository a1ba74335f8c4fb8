"""The scripted Messages API server's own controls, driven by the real anthropic SDK (no
mocks): a stream held, released, slowed, or ended by closing; a request refused as the API
refuses it; the requests it records; its script, its responder and its other paths."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time

import anthropic
import httpx2
import pytest
from anthropic.types import (
    MessageParam,
    ThinkingBlockParam,
    ThinkingConfigParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)
from helpers import until
from messages_sdk import HI, MODEL, error_json, first_text

from jupyter_agent.testing import MessagesServer, Reply, text


async def test_hold_after_blocks_the_stream_until_release(server: MessagesServer) -> None:
    server.push(Reply([text("abcdefghijkl")], chunk_size=4, hold_after=4))
    seen: list[str] = []

    async with anthropic.AsyncAnthropic(base_url=server.url, api_key="test-key") as client:

        async def consume() -> str:
            async with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
                async for event in stream:
                    if event.type == "text":
                        seen.append(event.text)
                return await stream.get_final_text()

        task = asyncio.create_task(consume())
        await until(lambda: seen == ["abcd"])
        await asyncio.sleep(0.2)  # pings only, meanwhile
        assert seen == ["abcd"]
        assert server.requests[0].outcome is None
        server.release()
        assert await asyncio.wait_for(task, 5) == "abcdefghijkl"

    server.wait_idle()  # the client can read the last event before the server marks it
    assert server.requests[0].outcome == "complete"


def test_a_release_before_the_hold_point_is_not_lost(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.push(Reply([text("slow")], delay=0.02, hold_after=4))
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(
            client.messages.create(model=MODEL, max_tokens=10, messages=HI, stream=True)
            .response.read()
            .decode()
        )
    )
    worker.start()
    server.wait_for_requests(1)
    server.release()  # the stream has not reached its hold point yet
    worker.join(5)
    assert result and "message_stop" in result[0]


def test_closing_a_held_stream_ends_the_server_handler_quietly(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.script([Reply([text("never finished")], hold_after=3), Reply([text("next")])])

    with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
        for event in stream:
            if event.type == "content_block_start":
                break  # the client gives up on a held stream

    server.wait_idle(timeout=10)  # the handler noticed through its pings and ended
    assert server.requests[0].outcome == "disconnected"
    with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
        assert stream.get_final_text() == "next"
    # The fixture checks that no handler exception leaked (server.errors == []).


def test_closing_the_server_ends_a_held_stream(client: anthropic.Anthropic) -> None:
    server = MessagesServer()
    server.push(Reply([text("held")], hold_after=3))
    local = anthropic.Anthropic(base_url=server.url, api_key="test-key")

    with local.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
        server.wait_for_requests(1)
        threading.Timer(0.1, server.close).start()
        with pytest.raises(httpx2.RemoteProtocolError):
            stream.get_final_message()

    server.close()  # idempotent
    assert server.requests[0].outcome == "aborted"
    assert server.errors == []


def test_delay_slows_the_stream(server: MessagesServer, client: anthropic.Anthropic) -> None:
    # Three text events a quarter second apart: the server sleeps before each event, so
    # the total is a hard floor; the spread at the client only assumes it is never
    # descheduled for a whole quarter second (gaps of a few ms merge under load).
    delay = 0.25
    server.push(Reply([text("x" * 30)], chunk_size=10, delay=delay))

    started = time.monotonic()
    with client.messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
        arrivals = [time.monotonic() for event in stream if event.type == "text"]

    assert len(arrivals) == 3
    assert time.monotonic() - started >= 3 * delay
    assert arrivals[-1] - arrivals[0] >= delay


def test_a_tool_loop_without_claudes_thinking_is_refused_with_thinking_on_as_the_api_does(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.push(Reply([text("answered")]))
    call: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {}}
    result: ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "seen",
    }
    loop: list[MessageParam] = [
        *HI,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    on: ThinkingConfigParam = {"type": "enabled", "budget_tokens": 1024}

    with pytest.raises(anthropic.BadRequestError, match="must start with a thinking block"):
        client.messages.create(model=MODEL, max_tokens=2048, messages=loop, thinking=on)
    # Claude's own signed thinking first, or thinking off: taken, and the script was kept.
    signed: ThinkingBlockParam = {"type": "thinking", "thinking": "t", "signature": "sig"}
    loop[1] = {"role": "assistant", "content": [signed, call]}
    reply = client.messages.create(model=MODEL, max_tokens=2048, messages=loop, thinking=on)
    assert reply.content[0].text == "answered"  # type: ignore[union-attr]


def test_requests_record_headers_and_body(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.push(Reply([text("ok")]))
    before = time.time()

    client.messages.create(model=MODEL, max_tokens=50, messages=HI, system="Be brief.")

    [request] = server.wait_for_requests(1)
    assert request.path == "/v1/messages"
    # anthropic 2.12 sends api_key as "authorization: Bearer ...", older SDKs as x-api-key.
    assert "Bearer test-key" in request.headers.get("authorization", "") or (
        request.headers.get("x-api-key") == "test-key"
    )
    assert "anthropic-version" in request.headers
    assert request.body == json.loads(request.raw)
    assert request.body["system"] == "Be brief."
    assert request.body["messages"] == HI
    assert before <= request.time <= time.time()


def test_wait_for_requests_times_out_loudly(server: MessagesServer) -> None:
    with pytest.raises(TimeoutError, match="0 of 1"):
        server.wait_for_requests(1, timeout=0.05)


def test_an_exhausted_script_fails_at_once_with_a_clear_message(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    with pytest.raises(anthropic.InternalServerError, match="MessagesServer script exhausted"):
        client.messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert len(server.requests) == 1  # x-should-retry: false, so the SDK did not retry


def test_the_responder_answers_when_the_queue_is_empty(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    server.push(Reply([text("scripted")]))
    server.responder = lambda body: Reply([text(f"echo: {body['messages'][-1]['content']}")])

    answers = [
        first_text(client.messages.create(model=MODEL, max_tokens=10, messages=HI))
        for _ in range(2)
    ]

    assert answers == ["scripted", "echo: hi"]


def test_script_replaces_the_queue(server: MessagesServer, client: anthropic.Anthropic) -> None:
    server.push(Reply([text("dropped from the queue")]))
    server.script([Reply([text("one")]), Reply([text("two")])])

    answers = [
        first_text(client.messages.create(model=MODEL, max_tokens=10, messages=HI))
        for _ in range(2)
    ]

    assert answers == ["one", "two"]


def test_other_paths_get_a_404_json_error(server: MessagesServer) -> None:
    client = anthropic.Anthropic(base_url=server.url, api_key="test-key", max_retries=0)

    with pytest.raises(anthropic.NotFoundError) as caught:
        client.models.list()

    assert error_json(caught.value)["error"]["type"] == "not_found_error"
    assert server.requests[0].method == "GET"


def test_a_request_cut_off_while_sending_uses_up_no_reply(
    server: MessagesServer, client: anthropic.Anthropic
) -> None:
    """A Stop while the request body is on the wire: the half-sent request is recorded as
    disconnected, and the scripted reply is left for the request that follows."""
    server.push(Reply([text("for the next request")]))
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    connection.putrequest("POST", "/v1/messages")
    connection.putheader("content-type", "application/json")
    connection.putheader("content-length", "5000")
    connection.endheaders()  # then the client goes away before sending the body
    connection.close()
    server.wait_for_requests(1)
    server.wait_idle(timeout=10)
    assert server.requests[0].outcome == "disconnected"

    reply = client.messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert first_text(reply) == "for the next request"
