"""The Claude model layer: the real ``anthropic`` client against the loopback Messages API."""

from __future__ import annotations

import asyncio
import http.server
import itertools
import json
import os
import threading
from typing import Any

import pytest
from helpers import assert_valid, sent_key, until
from inline_snapshot import snapshot

from jupyter_agent import Agent, AnthropicModel
from jupyter_agent.errors import MissingAPIKey
from jupyter_agent.messages import ThinkingBlock, ToolUseBlock, to_api_messages
from jupyter_agent.models import ModelRequest, StreamDone, StreamRestart, pricing_for
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, MessagesServer, Reply, text, thinking, tool_use
from jupyter_agent.tools import tool


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.fixture
def model(messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return AnthropicModel("claude-sonnet-4-6", base_url=messages_server.url, retry_delay=0.001)


@pytest.fixture(params=["our client", "the caller's client"])
def each_client(request, messages_server, monkeypatch):
    """Makes the model on a client of its own, then (a second run of the test) on a client
    of the caller's, which it reads through the SDK's own ``messages.create()``."""
    import anthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

    def make(**options):
        if request.param == "our client":
            return AnthropicModel(base_url=messages_server.url, **options)
        client = anthropic.AsyncAnthropic(base_url=messages_server.url)
        return AnthropicModel(client=client, **options)

    return make


async def test_a_run_streams_text_and_tool_calls_through_the_real_client(
    workspace, model, messages_server
):
    messages_server.script(
        [
            Reply(
                [text("Let me look that up for you."), tool_use("lookup", {"key": "alpha"})],
                "tool_use",
            ),
            Reply([text("Alpha is known.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("What is alpha?")
    assert handle.state is AgentState.completed
    assert handle.summary == "Alpha is known."
    deltas = [e.text for e in handle.events_so_far if e.kind == "text_delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "Let me look that up for you.Alpha is known."
    assert agent.history[1].tool_uses[0].input == {"key": "alpha"}
    assert agent.history[2].tool_results[0].text == "value of alpha"
    body = messages_server.requests[1].body
    assert body["model"] == "claude-sonnet-4-6"
    assert body["stream"] is True
    assert body["messages"][-1]["content"][0]["type"] == "tool_result"
    assert_valid(agent.history)


async def test_requests_carry_cache_breakpoints_on_tools_system_and_newest_message(
    workspace, model, messages_server
):
    messages_server.script(
        [Reply([tool_use("lookup", {"key": k})], "tool_use") for k in "abc"] + [Reply([text("ok")])]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    await agent.run("go")
    assert len(messages_server.requests) == 4
    for request in messages_server.requests:
        body = request.body
        marked = [t["name"] for t in body["tools"] if "cache_control" in t]
        assert marked == [body["tools"][-1]["name"]]
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        last = body["messages"][-1]["content"][-1]
        assert last["cache_control"] == {"type": "ephemeral"}
        # Only the newest turn is marked: the API takes at most four breakpoints, and an
        # older turn sent once as the newest must not keep its mark.
        assert str(body).count("cache_control") == 3
    first, second = (r.body for r in messages_server.requests[:2])
    # the second request repeats the first one's prefix: tools, system, the first turn
    assert first["tools"] == second["tools"]
    assert first["system"] == second["system"]


async def test_each_request_sends_the_history_as_it_stood(workspace, model, messages_server):
    messages_server.script(
        [
            Reply(
                [text("Looking — naïve 日本語 “quotes”."), tool_use("lookup", {"key": "ä"})],
                "tool_use",
            ),
            Reply([tool_use("lookup", {"key": "b"})], "tool_use"),
            Reply([text("Done: ✓")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    await agent.run("Find ä and b")
    replies = [i for i, m in enumerate(agent.history) if m.role == "assistant"]
    for request, end in zip(messages_server.requests, replies, strict=True):
        sent = request.body["messages"]
        del sent[-1]["content"][-1]["cache_control"]
        assert sent == to_api_messages(agent.history[:end])
    assert agent.history[-1].text == "Done: ✓"


async def test_usage_and_cost_are_counted_per_call_and_per_run(workspace, model, messages_server):
    usage = {
        "input_tokens": 1000,
        "output_tokens": 200,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 5000,
    }
    messages_server.script(
        [
            Reply([tool_use("lookup", {"key": "a"})], "tool_use", usage=usage),
            Reply([text("ok")], usage=usage),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    events = [e for e in handle.events_so_far if e.kind == "usage"]
    assert [e.cache_read_input_tokens for e in events] == [5000, 5000]
    price = pricing_for("claude-sonnet-4-6")
    one_call = (1000 * 3 + 200 * 15 + 300 * 3.75 + 5000 * 0.3) / 1e6
    assert events[0].cost_usd == pytest.approx(one_call)
    assert events[-1].run_cost_usd == pytest.approx(2 * one_call)
    assert handle.usage.cache_creation_input_tokens == 600
    assert handle.usage.cached_share == pytest.approx(10000 / 12600)
    assert agent.session.metadata.usage.cost_usd == pytest.approx(2 * one_call)
    assert not price.estimated


async def test_an_error_event_mid_stream_retries_the_turn(workspace, model, messages_server):
    messages_server.script([Fault.midstream_error(after_events=6), Reply([text("Whole answer.")])])
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.completed
    retries = [e for e in handle.events_so_far if e.kind == "retry"]
    assert len(retries) == 1
    assert retries[0].reason == "overloaded_error"
    assert agent.history[-1].text == "Whole answer."  # the broken partial turn is not kept
    assert len(messages_server.requests) == 2


async def test_a_dropped_connection_mid_stream_retries_the_turn(workspace, model, messages_server):
    messages_server.script([Fault.drop(after_events=5), Reply([text("Made it.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Made it."
    assert [e.kind for e in handle.events_so_far].count("retry") == 1


async def test_a_stream_that_ends_before_its_reply_did_retries_the_turn(
    workspace, model, messages_server
):
    messages_server.script([Fault.cut(after_events=5), Reply([text("Whole this time.")])])
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("go")
    assert handle.summary == "Whole this time."
    retries = [e for e in handle.events_so_far if e.kind == "retry"]
    assert [r.reason for r in retries] == ["the stream ended before the reply did"]
    assert [m.text for m in agent.history if m.role == "assistant"] == ["Whole this time."]


async def test_an_error_event_not_worth_retrying_ends_the_run_with_its_message(
    workspace, model, messages_server
):
    messages_server.script(
        [Fault.midstream_error(after_events=4, error_type="invalid_request_error")]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.error
    assert handle.stop_message == snapshot(
        "The Anthropic API reported an error mid-stream (invalid_request_error): Invalid request"
    )
    assert len(messages_server.requests) == 1
    assert_valid(agent.history)


async def test_an_answer_that_is_no_event_stream_says_to_check_the_address(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            page = b"<html>Welcome</html>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{site.server_port}"
        handle = await Agent("actor", AnthropicModel(base_url=url), workspace=workspace).run("go")
        site.shutdown()
    assert handle.state is AgentState.error
    assert handle.stop_message == (
        f"The Anthropic API at {url} answered with text/html instead of an event stream:"
        " check ANTHROPIC_BASE_URL."
    )


async def test_a_callers_messages_are_sent_as_they_are_at_each_call(model, messages_server):
    messages_server.script([Reply([text("one")]), Reply([text("two")])])
    turn: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "first"}]}
    request = ModelRequest(system="s", messages=[turn])
    [p async for p in model.stream(request)]
    turn["content"][0]["text"] = "changed since"  # a caller's own dicts: nothing is kept
    [p async for p in model.stream(request)]
    sent = [r.body["messages"][0]["content"][0]["text"] for r in messages_server.requests]
    assert sent == ["first", "changed since"]


async def test_events_are_read_whole_however_the_bytes_arrive():
    from jupyter_agent.models._anthropic_stream import server_sent_events
    from jupyter_agent.models.anthropic import _http_package

    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "é\n✓"},
        },
        {"type": "message_stop"},
    ]
    wire = (
        b": a comment\r\n"
        + b"".join(
            b"event: %s\r\ndata: %s\r\n\r\n" % (e["type"].encode(), json.dumps(e).encode())
            for e in events[:2]
        )
        # one event's data over two lines, no space after the colon
        + b'event: message_stop\ndata:{"type":\ndata: "message_stop"}\n\n'
        + b"data: [DONE]\n\n"  # a proxy's unnamed end marker: not an event of the API
    )
    http = _http_package()

    async def arriving(cuts: list[int]):
        for start, end in itertools.pairwise([0, *cuts, len(wire)]):
            yield wire[start:end]

    splits = [[cut] for cut in range(1, len(wire))] + [list(range(1, len(wire)))]
    for cuts in splits:  # in two pieces at every place, and byte by byte
        response = http.Response(200, content=arriving(cuts))
        assert [e async for e in server_sent_events(response)] == events, cuts


async def test_retries_give_up_with_a_clear_error(workspace, messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = AnthropicModel(base_url=messages_server.url, stream_retries=2, retry_delay=0.001)
    messages_server.script([Fault.drop(after_events=3)] * 3)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert "broke off 3 times" in handle.stop_message


async def test_http_overload_is_retried_by_the_sdk(workspace, model, messages_server):
    messages_server.script([Fault.status(529), Fault.status(429), Reply([text("Finally.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Finally."
    assert len(messages_server.requests) == 3


async def test_persistent_server_errors_end_the_run_with_the_api_message(
    workspace, messages_server, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = AnthropicModel(base_url=messages_server.url, sdk_options={"max_retries": 1})
    messages_server.script([Fault.status(500, message="internal trouble")] * 2)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert handle.stop_message == (
        "The Anthropic API had a server error (500: internal trouble); retried 1 time over "
        f"{handle.stop_message.split(' over ')[1].split(' s.')[0]} s. Try again; if it keeps "
        "failing, see https://status.anthropic.com."
    )


async def test_a_rejected_key_says_so(workspace, messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    messages_server.push(Fault.status(401))
    handle = await Agent(
        "actor", AnthropicModel(base_url=messages_server.url), workspace=workspace
    ).run("go")
    assert handle.stop_message == snapshot(
        "The Anthropic API rejected the API key from ANTHROPIC_API_KEY (401). Check the key in "
        "the panel's key field, or enter it again with %agent login."
    )


@pytest.mark.parametrize("status", [401, 403])
async def test_an_auth_failure_is_said_at_once_never_retried(
    workspace, messages_server, monkeypatch, status
):
    """The same key would be refused again: one request, even when the server (a gateway)
    asks for another try; the SDK would otherwise wait and retry twice."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    messages_server.script(
        [Fault.status(status, headers={"x-should-retry": "true"})] * 3
        + [Reply([text("A retried key is never sent.")])]
    )
    model = AnthropicModel(base_url=messages_server.url)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert len(messages_server.requests) == 1
    assert handle.state is AgentState.error
    assert f"({status}" in handle.stop_message and "retried" not in handle.stop_message


def test_the_sdk_is_imported_before_the_first_call_and_never_on_the_loop() -> None:
    """A fresh interpreter: making the model starts importing the SDK in a thread (it
    takes a second or more), so a first call (a wrong key's 401) does not wait for it;
    a call made meanwhile awaits it while the loop goes on."""
    import subprocess
    import sys

    script = """
import asyncio, sys, threading
from jupyter_agent.models import _preload
from jupyter_agent import AnthropicModel
assert "anthropic" not in sys.modules
AnthropicModel("claude-sonnet-4-6")
assert "import anthropic" in [t.name for t in threading.enumerate()]  # made: importing
ticks = 0
async def tick():
    global ticks
    while True:
        ticks += 1
        await asyncio.sleep(0.005)
async def main():
    ticker = asyncio.create_task(tick())
    module = await _preload.loaded("anthropic")
    ticker.cancel()
    return module
module = asyncio.run(main())
assert module is sys.modules["anthropic"]
print(ticks)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 5  # the loop ran while the SDK was imported


def test_a_stop_while_the_sdk_imports_leaves_the_import_to_finish():
    # A Stop during the first call cancels its wait for the import; the next call must
    # find the SDK, not a cancelled import (every later call failed with CancelledError).
    import subprocess
    import sys

    script = """
import asyncio, sys
from jupyter_agent.models import _preload
async def main():
    first = asyncio.create_task(_preload.loaded("anthropic"))
    await asyncio.sleep(0)
    first.cancel()
    try:
        await first
    except asyncio.CancelledError:
        pass
    return await _preload.loaded("anthropic")
module = asyncio.run(main())
assert module is sys.modules["anthropic"]
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


async def test_a_missing_key_names_every_way_to_get_going(workspace):
    agent = Agent("planner", "claude-sonnet-4-6", workspace=workspace)
    with pytest.raises(MissingAPIKey, match=r"^No Anthropic API key found\. ") as raised:
        agent.start("go")
    said = str(raised.value)
    for way in (
        "key field",
        "%agent login",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "--model openai:",
        "Ollama",
        "ollama:",
        "bedrock:",
        "vertex:",
        "--model scripted",
    ):
        assert way in said
    assert agent.state is AgentState.idle


async def test_the_environment_chooses_key_url_and_model(workspace, messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("JUPYTER_AGENT_MODEL", "claude-haiku-4-5")
    messages_server.push(Reply([text("hi")]))
    agent = Agent("planner", workspace=workspace)
    await agent.run("go")
    request = messages_server.requests[0]
    assert sent_key(request) == "env-key"
    assert request.body["model"] == "claude-haiku-4-5"
    assert agent.session.metadata.model == "claude-haiku-4-5"

    # A key or an address set later (say with %env in the next cell) is used from then on.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "new-key")
    with MessagesServer() as other:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", other.url)
        other.push(Reply([text("again")]))
        await agent.run("go on")
        assert sent_key(other.requests[0]) == "new-key"
    assert len(messages_server.requests) == 1


async def test_extended_thinking_streams_and_is_sent_back_unchanged(
    workspace, messages_server, each_client
):
    model = each_client(thinking=2048)
    messages_server.script(
        [
            Reply(
                [
                    thinking("Need the key first.", signature="sig-123"),
                    tool_use("lookup", {"key": "b"}),
                ],
                "tool_use",
            ),
            Reply([text("done")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert (
        "".join(e.text for e in handle.events_so_far if e.kind == "thinking_delta")
        == "Need the key first."
    )
    first, second = (r.body for r in messages_server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] >= 2048 + 1024
    sent_back = second["messages"][1]["content"][0]
    assert sent_back["type"] == "thinking"
    assert sent_back["signature"] == "sig-123"
    assert isinstance(agent.history[1].content[0], ThinkingBlock)


async def test_stop_while_streaming_closes_the_connection_and_keeps_the_partial_text(
    workspace, model, messages_server
):
    answer = "a long streamed answer " * 20
    messages_server.push(Reply([text(answer)], chunk_size=4, hold_after=12))
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("go")
    await until(lambda: any(e.kind == "text_delta" for e in handle.events_so_far))
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    assert agent.history[-1].interrupted
    partial = agent.history[-1].text  # what had streamed when Stop came: at least a delta
    assert partial and len(partial) < len(answer) and answer.startswith(partial)
    assert_valid(agent.history)
    messages_server.push(Reply([text("next")]))
    again = await agent.run("continue")  # the next start works on the same client
    assert again.summary == "next"


async def test_tool_choice_none_is_sent_for_plain_phases(model, messages_server):
    messages_server.push(Reply([text("thinking aloud")]))
    request = ModelRequest(
        system="s",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[lookup.spec()],
        tool_choice="none",
    )
    parts = [p async for p in model.stream(request)]
    assert isinstance(parts[-1], StreamDone)
    assert not any(isinstance(p, StreamRestart) for p in parts)
    assert messages_server.requests[0].body["tool_choice"] == {"type": "none"}


async def test_on_sent_comes_once_the_request_is_out_before_the_answer(model, messages_server):
    """A run writes its session at this moment, so it must be after the request went out
    (it never delays the request) and before the answer (it overlaps with the wait)."""
    messages_server.push(Reply([text("answer")], hold_after=0))
    calls: list[int] = []

    def on_sent() -> None:
        # Blocks the loop: a callback made before the request was written would wait in vain.
        calls.append(len(messages_server.wait_for_requests(1, timeout=5)))

    request = ModelRequest(
        system="s",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        on_sent=on_sent,
    )
    parts = model.stream(request)
    first = asyncio.ensure_future(parts.__anext__())
    await until(lambda: calls)
    await asyncio.sleep(0.05)
    assert not first.done()  # the server holds the answer back: nothing has come yet
    messages_server.release()
    rest = [await first] + [p async for p in parts]
    assert isinstance(rest[-1], StreamDone)
    assert calls == [1]


async def test_with_a_client_of_the_callers_on_sent_comes_before_the_request(messages_server):
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=messages_server.url)
    model = AnthropicModel(client=client)
    messages_server.push(Reply([text("answer")]))
    calls: list[int] = []
    request = ModelRequest(
        system="s",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        on_sent=lambda: calls.append(len(messages_server.requests)),
    )
    parts = [p async for p in model.stream(request)]
    assert isinstance(parts[-1], StreamDone)
    assert calls == [0]  # it cannot tell when that client sends, so the caller goes first


async def test_a_callers_client_is_called_through_its_messages_create(workspace, messages_server):
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=messages_server.url)
    create = client.messages.create
    traced: list[str] = []

    async def traced_create(**params):  # as a tracing library wraps a client
        traced.append(params["messages"][-1]["role"])
        return await create(**params)

    client.messages.create = traced_create  # type: ignore[method-assign]  # as a tracer does
    messages_server.script(
        [
            Reply([text("Let me see."), tool_use("lookup", {"key": "k"})], "tool_use"),
            Reply([text("Seen.")]),
        ]
    )
    agent = Agent("actor", AnthropicModel(client=client), workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert handle.summary == "Seen."
    assert traced == ["user", "user"]
    assert agent.history[1].text == "Let me see."
    assert agent.history[2].tool_results[0].text == "value of k"
    assert handle.usage.calls == 2


def test_a_tool_call_cut_off_by_max_tokens_is_flagged_not_parsed():
    from jupyter_agent.models._anthropic_stream import ReplyBuilder

    turn = ReplyBuilder()
    events: list[dict[str, Any]] = [  # as the API streams them
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"key": "a very long va'},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": {"output_tokens": 4096},
        },
        {"type": "message_stop"},
    ]
    for event in events:
        turn.feed(event)
    response = turn.response(pricing_for("claude-sonnet-4-6"))
    assert response.stop_reason == "max_tokens"
    assert response.truncated_tool_ids == ["toolu_1"]
    call = response.content[0]
    assert isinstance(call, ToolUseBlock)
    assert call.input == {}
    assert response.usage.output_tokens == 4096


async def test_text_that_is_not_valid_unicode_is_sent_and_stored_as_replacement_characters(
    workspace, model, messages_server
):
    # On Linux a file name with a byte that is not UTF-8 becomes a lone surrogate in
    # Python; as is, it can be neither sent as JSON nor written to the session.
    (workspace / os.fsdecode(b"caf\xe9.csv")).write_text("a,b\n")
    messages_server.script(
        [
            Reply([tool_use("list_directory", {"path": "."})], "tool_use"),
            Reply([text("There is one file.")]),
        ]
    )
    agent = Agent("planner", model, workspace=workspace)
    handle = await agent.run("What is in here? \udce9")
    assert handle.state is AgentState.completed, handle.stop_message
    first, second = (r.body["messages"] for r in messages_server.requests)
    assert first[0]["content"][0]["text"] == "What is in here? \ufffd"
    assert "caf\ufffd.csv" in second[-1]["content"][0]["content"][0]["text"]
    assert "caf\ufffd.csv" in agent.history[2].tool_results[0].text
    resumed = Agent.resume(agent.session.id, workspace=workspace)
    assert [m.text for m in resumed.history] == [m.text for m in agent.history]
    assert resumed.history[0].text == "What is in here? \ufffd"


async def test_a_reply_with_a_lone_surrogate_is_kept_and_sent_back_as_a_replacement_character(
    workspace, messages_server, each_client
):
    model = each_client()
    # JSON may escape a lone surrogate ("\\udce9"); decoded, it is text no file takes.
    messages_server.script(
        [
            Reply([text("Reading caf\udce9.csv"), tool_use("lookup", {"key": "k"})], "tool_use"),
            Reply([text("Done.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert handle.state is AgentState.completed, handle.stop_message
    sent = messages_server.requests[1].body["messages"][1]["content"][0]["text"]
    assert sent == "Reading caf\ufffd.csv"
    resumed = Agent.resume(agent.session.id, workspace=workspace)
    assert resumed.history[1].text == "Reading caf\ufffd.csv"
    assert len(resumed.history) == len(agent.history)
