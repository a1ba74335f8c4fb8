"""The OpenAI-compatible model layer, streaming: the real ``openai`` client against the
loopback Chat Completions server, played from the same scripts as the Messages API server.

A run streams text and tool calls (whole however the server splits them), counts usage and
cost, shows reasoning as thinking and never sends it back; a broken stream is retried with
the partial turn discarded, or ends the run with a clear error; the request says what we
ask in the API's words; Stop closes the connection, a tool result's images follow its tool
message, and an output limit or a content filter ends the turn plainly.
"""

from __future__ import annotations

import asyncio
import base64
import io
from typing import Any

import inline_snapshot
import pytest
from helpers import assert_valid, chat_problems, sent_key, until
from openai_runs import HI, deltas, lookup, loopback_gpt

from jupyter_agent import Agent
from jupyter_agent.messages import ImageBlock, ImageSource, ThinkingBlock, ToolUseBlock
from jupyter_agent.models import ModelRequest, OpenAIModel, StreamDone, StreamThinking
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, Reply, text, thinking, tool_use
from jupyter_agent.tools import ToolOutput, tool


def png() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


@tool
def snapshot() -> ToolOutput:
    """Take a picture of the chart."""
    image = ImageBlock(source=ImageSource(media_type="image/png", data=png()))
    return ToolOutput("the chart", images=[image])


@pytest.fixture
def model(chat_server):
    return loopback_gpt(chat_server)


async def test_a_run_streams_text_and_tool_calls_through_the_real_client(
    workspace, model, chat_server
):
    chat_server.script(
        [
            Reply([text("Let me look that up."), tool_use("lookup", {"key": "alpha"})], "tool_use"),
            Reply([text("Alpha is known.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("What is alpha?")
    assert handle.state is AgentState.completed, handle.stop_message
    assert handle.summary == "Alpha is known."
    assert len([e for e in handle.events_so_far if e.kind == "text_delta"]) > 2
    assert deltas(handle) == "Let me look that up.Alpha is known."
    assert agent.history[1].tool_uses[0].input == {"key": "alpha"}
    assert agent.history[2].tool_results[0].text == "value of alpha"
    assert agent.session.metadata.provider == "openai"

    first, second = (r.body for r in chat_server.requests)
    assert chat_server.requests[0].path == "/v1/chat/completions"
    assert sent_key(chat_server.requests[0]) == "test-key"
    assert first["model"] == "gpt-4o"
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][1] == {"role": "user", "content": "What is alpha?"}
    assert first["tool_choice"] == "auto"
    offered = {t["function"]["name"]: t for t in first["tools"]}
    assert offered["lookup"]["type"] == "function"
    assert offered["lookup"]["function"]["parameters"]["properties"]["key"]["type"] == "string"
    assert "cache_control" not in str(first)
    call_id = agent.history[1].tool_uses[0].id
    assert second["messages"][2] == {
        "role": "assistant",
        "content": "Let me look that up.",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"key": "alpha"}'},
            }
        ],
    }
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": call_id,
        "content": "value of alpha",
    }
    assert not chat_problems(second["messages"])
    assert_valid(agent.history)


@pytest.mark.parametrize("style", ["split", "whole", "repeat", "no_id"])
async def test_tool_calls_come_whole_however_the_server_streams_them(
    style, workspace, model, chat_server
):
    chat_server.style.tool_calls = style
    long_key = "a key long enough to be split over many deltas: ✓ “quoted” \\ end"
    chat_server.script(
        [
            Reply(
                [
                    tool_use("lookup", {"key": long_key}, id="call_A"),
                    tool_use("lookup", {"key": "b"}, id="call_B"),
                ],
                "tool_use",
                chunk_size=3,
            ),
            Reply([text("Both found.")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert handle.summary == "Both found.", handle.stop_message
    uses = agent.history[1].tool_uses
    assert [u.input for u in uses] == [{"key": long_key}, {"key": "b"}]
    ids = [u.id for u in uses]
    assert len(set(ids)) == 2 and all(ids)
    if style != "no_id":
        assert ids == ["call_A", "call_B"]
    sent = chat_server.requests[1].body["messages"]
    assert [c["id"] for c in sent[2]["tool_calls"]] == ids
    assert [m["tool_call_id"] for m in sent[3:5]] == ids
    assert [m["content"] for m in sent[3:5]] == [f"value of {long_key}", "value of b"]
    assert not chat_problems(sent)


async def test_usage_and_cost_of_an_openai_model_are_counted(workspace, model, chat_server):
    usage: dict[str, Any] = {
        "prompt_tokens": 1000,
        "completion_tokens": 200,
        "prompt_tokens_details": {"cached_tokens": 400},
        "completion_tokens_details": {"reasoning_tokens": 150},
    }
    chat_server.script(
        [
            Reply([tool_use("lookup", {"key": "a"})], "tool_use", usage=usage),
            Reply([text("ok")], usage=usage),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    one_call = (600 * 2.5 + 400 * 1.25 + 200 * 10.0) / 1e6
    assert handle.usage.input_tokens == 1200
    assert handle.usage.cache_read_input_tokens == 800
    assert handle.usage.output_tokens == 400  # reasoning tokens are in the output's count
    assert handle.usage.cost_usd == pytest.approx(2 * one_call)
    assert handle.usage.unpriced_calls == 0
    assert agent.session.metadata.usage.cost_usd == pytest.approx(2 * one_call)


async def test_a_model_without_a_known_price_has_an_unknown_cost(workspace, chat_server):
    model = OpenAIModel("qwen3:8b", provider="openai-compatible", base_url=chat_server.base_url)
    chat_server.script([Reply([text("one")]), Reply([text("two")])])
    agent = Agent("actor", model, workspace=workspace)
    await agent.run("go")
    handle = await agent.run("again")
    assert handle.usage.input_tokens > 0  # the tokens are known, their price is not
    assert handle.usage.cost_usd == 0
    assert handle.usage.unpriced_calls == 1
    assert agent.session.metadata.usage.unpriced_calls == 2
    assert agent.session.metadata.usage.calls == 2


async def test_a_server_that_reports_no_usage_leaves_the_call_unpriced(
    workspace, model, chat_server
):
    chat_server.style.usage = False
    chat_server.push(Reply([text("fine")]))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "fine"
    assert handle.usage.total_input_tokens == handle.usage.output_tokens == 0
    assert handle.usage.calls == handle.usage.unpriced_calls == 1
    assert handle.usage.cost_usd == 0


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_show_as_thinking_and_are_never_sent_back(
    field, workspace, model, chat_server
):
    chat_server.style.reasoning_field = field
    chat_server.script(
        [
            Reply(
                [thinking("Need the key first."), tool_use("lookup", {"key": "b"})],
                "tool_use",
                chunk_size=5,
            ),
            Reply([text("done")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert deltas(handle, "thinking_delta") == "Need the key first."
    kept = agent.history[1].content[0]
    assert isinstance(kept, ThinkingBlock) and kept.thinking == "Need the key first."
    assert kept.signature == ""  # not Claude's: never sent to Claude
    resent = chat_server.requests[1].body["messages"]
    assert "Need the key first" not in str(resent)
    assert not chat_problems(resent)


async def test_a_dropped_stream_is_retried_and_the_partial_turn_discarded(
    workspace, model, chat_server
):
    chat_server.script([Fault.drop(after_events=5), Reply([text("Made it.")])])
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("go")
    assert handle.summary == "Made it."
    assert [e.kind for e in handle.events_so_far].count("retry") == 1
    assert [m.text for m in agent.history if m.role == "assistant"] == ["Made it."]
    assert [r.outcome for r in chat_server.requests] == ["dropped", "complete"]


async def test_an_error_mid_stream_is_retried(workspace, model, chat_server):
    chat_server.script([Fault.midstream_error(after_events=4), Reply([text("Whole answer.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Whole answer."
    retries = [e for e in handle.events_so_far if e.kind == "retry"]
    assert [r.reason for r in retries] == ["server_error"]


async def test_a_stream_cut_before_its_finish_reason_is_retried(workspace, model, chat_server):
    chat_server.script([Fault.cut(after_events=4), Reply([text("Whole this time.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Whole this time."
    retries = [e for e in handle.events_so_far if e.kind == "retry"]
    assert [r.reason for r in retries] == ["the stream ended before the reply did"]


async def test_an_error_mid_stream_not_worth_retrying_ends_the_run_with_its_message(
    workspace, model, chat_server
):
    chat_server.push(Fault.midstream_error(after_events=3, error_type="invalid_request_error"))
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.error
    assert handle.stop_message == inline_snapshot.snapshot(
        "The model server reported an error mid-stream (invalid_request_error): Invalid request."
    )
    assert len(chat_server.requests) == 1
    assert_valid(agent.history)


async def test_retries_of_broken_streams_give_up_with_a_clear_error(workspace, chat_server):
    model = OpenAIModel(
        "gpt-4o", api_key="k", base_url=chat_server.base_url, stream_retries=2, retry_delay=0.001
    )
    chat_server.script([Fault.drop(after_events=3)] * 3)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert "broke off 3 times" in handle.stop_message


# --- the request ----------------------------------------------------------------------------


@pytest.mark.parametrize(("ours", "theirs"), [("any", "required"), ("none", "none")])
async def test_tool_choice_is_sent_in_the_apis_words(ours, theirs, model, chat_server):
    chat_server.push(Reply([text("ok")]))
    request = ModelRequest(system="s", messages=HI, tools=[lookup.spec()], tool_choice=ours)
    parts = [p async for p in model.stream(request)]
    assert isinstance(parts[-1], StreamDone)
    assert chat_server.requests[0].body["tool_choice"] == theirs


async def test_reasoning_effort_is_sent_when_set(chat_server):
    model = OpenAIModel(
        "o4-mini", api_key="k", base_url=chat_server.base_url, reasoning_effort="low"
    )
    chat_server.push(Reply([thinking("quick"), text("ok")]))
    parts = [p async for p in model.stream(ModelRequest(system="s", messages=HI))]
    assert any(isinstance(p, StreamThinking) for p in parts)
    assert chat_server.requests[0].body["reasoning_effort"] == "low"


async def test_on_sent_comes_once_the_request_is_out_before_the_answer(model, chat_server):
    chat_server.push(Reply([text("answer")], hold_after=0))
    calls: list[int] = []

    def on_sent() -> None:
        calls.append(len(chat_server.wait_for_requests(1, timeout=5)))

    parts = model.stream(ModelRequest(system="s", messages=HI, on_sent=on_sent))
    first = asyncio.ensure_future(parts.__anext__())
    await until(lambda: calls)
    await asyncio.sleep(0.05)
    assert not first.done()  # the server holds the answer back: nothing has come yet
    chat_server.release()
    rest = [await first] + [p async for p in parts]
    assert isinstance(rest[-1], StreamDone)
    assert calls == [1]


async def test_a_callers_client_is_used_as_it_is(workspace, chat_server):
    import openai

    client = openai.AsyncOpenAI(api_key="callers-key", base_url=chat_server.base_url)
    model = OpenAIModel("gpt-4o", client=client)
    chat_server.script(
        [Reply([tool_use("lookup", {"key": "k"})], "tool_use"), Reply([text("Seen.")])]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("go")
    assert handle.summary == "Seen."
    assert sent_key(chat_server.requests[0]) == "callers-key"
    assert list(model.secret_values().values()) == ["callers-key"]


# --- Stop, images, limits -------------------------------------------------------------------


async def test_stop_while_streaming_closes_the_connection_and_keeps_the_partial_text(
    workspace, model, chat_server
):
    answer = "a long streamed answer " * 20
    chat_server.push(Reply([text(answer)], chunk_size=4, hold_after=12))
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("go")
    await until(lambda: any(e.kind == "text_delta" for e in handle.events_so_far))
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    chat_server.wait_idle(timeout=10)  # the server saw the client go away
    assert chat_server.requests[0].outcome == "disconnected"
    partial = agent.history[-1].text
    assert agent.history[-1].interrupted
    assert partial and len(partial) < len(answer) and answer.startswith(partial)
    assert_valid(agent.history)
    chat_server.push(Reply([text("next")]))
    again = await agent.run("continue")
    assert again.summary == "next"
    assert not chat_problems(chat_server.requests[1].body["messages"])


@pytest.mark.parametrize("images", [True, False])
async def test_images_of_a_tool_result_follow_its_tool_message(images, workspace, chat_server):
    model = OpenAIModel("gpt-4o", api_key="k", base_url=chat_server.base_url, images=images)
    chat_server.script(
        [Reply([tool_use("snapshot", {})], "tool_use"), Reply([text("A red square.")])]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[snapshot])
    handle = await agent.run("What does the chart show?")
    assert handle.summary == "A red square.", handle.stop_message
    sent = chat_server.requests[1].body["messages"]
    assert not chat_problems(sent)
    tool_message, after = sent[3], sent[4]
    assert tool_message["role"] == "tool" and tool_message["content"] == "the chart"
    assert after["role"] == "user"
    if images:
        assert after["content"][0] == {
            "type": "text",
            "text": "The images of the tool result above:",
        }
        url = after["content"][1]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        base64.b64decode(url.partition(",")[2], validate=True)
    else:
        assert "this model does not take images" in after["content"]
        assert "image_url" not in str(sent)


def test_a_tool_call_cut_off_by_the_output_limit_is_flagged_not_parsed():
    from jupyter_agent.models._chat_stream import ChatReply

    def chunk(delta, finish=None):
        return {
            "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    reply = ChatReply()
    for c in [  # as a server streams them
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "lookup"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"key": "a very lo'}}]}),
        chunk({}, "length"),
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 4096}},
    ]:
        reply.feed(c)
    response = reply.response(None)
    assert response.stop_reason == "max_tokens"
    assert response.truncated_tool_ids == ["call_1"]
    call = response.content[0]
    assert isinstance(call, ToolUseBlock)
    assert call.input == {}
    assert response.usage.output_tokens == 4096


async def test_a_content_filter_stop_ends_the_run_as_a_refusal(workspace, model, chat_server):
    chat_server.push(Reply([text("I can")], "refusal"))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert "declined" in handle.stop_message
