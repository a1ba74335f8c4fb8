"""The OpenAI-compatible model layer: the real ``openai`` client against the loopback
Chat Completions server, played from the same scripts as the Messages API server."""

from __future__ import annotations

import asyncio
import base64
import http.server
import io
import sys
import threading
from typing import Any

import inline_snapshot
import pytest
from helpers import assert_valid, chat_problems, sent_key, until

from jupyter_agent import Agent
from jupyter_agent.errors import MissingAPIKey, ModelError, PromptTooLong
from jupyter_agent.messages import ImageBlock, ImageSource, ThinkingBlock, ToolUseBlock
from jupyter_agent.models import ModelRequest, OpenAIModel, StreamDone, StreamThinking
from jupyter_agent.models.openai import NO_KEY_SENT
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, Reply, text, thinking, tool_use
from jupyter_agent.tools import ToolOutput, tool

HI = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


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
    return OpenAIModel(
        "gpt-4o", api_key="test-key", base_url=chat_server.base_url, retry_delay=0.001
    )


def deltas(handle, kind: str = "text_delta") -> str:
    return "".join(e.text for e in handle.events_so_far if e.kind == kind)


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


# --- errors the SDK gave up on -------------------------------------------------------------


async def test_a_rate_limit_is_retried_by_the_sdk(workspace, model, chat_server):
    chat_server.script([Fault.status(429), Fault.status(503), Reply([text("Finally.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Finally."
    assert len(chat_server.requests) == 3


async def test_a_lasting_rate_limit_says_what_was_retried(workspace, chat_server):
    model = OpenAIModel(
        "gpt-4o", api_key="k", base_url=chat_server.base_url, sdk_options={"max_retries": 1}
    )
    chat_server.script([Fault.status(429)] * 2)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert handle.stop_message.startswith(
        "The model server's rate limit was reached; retried 1 time over "
    )
    assert handle.stop_message.endswith(" s. Wait a minute, then try again.")
    assert len(chat_server.requests) == 2


async def test_an_exhausted_quota_says_so_instead_of_wait(workspace, chat_server):
    model = OpenAIModel(
        "gpt-4o", api_key="k", base_url=chat_server.base_url, sdk_options={"max_retries": 0}
    )
    message = "You exceeded your current quota, please check your plan and billing details."
    chat_server.push(Fault.status(429, "insufficient_quota", message))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == inline_snapshot.snapshot(
        "The model server says the account has no quota left (429): You exceeded your current "
        "quota, please check your plan and billing details. Check its plan and billing."
    )


async def test_a_rejected_key_says_so_and_is_remembered(workspace, chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    model = OpenAIModel("gpt-4o")
    chat_server.push(Fault.status(401))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == (
        f"The model server at {chat_server.base_url} rejected the API key from OPENAI_API_KEY "
        "(401). Check the key in the panel's key field, or enter it again with %agent login."
    )
    assert model.key_rejected
    assert sent_key(chat_server.requests[0]) == "wrong"
    monkeypatch.setenv("OPENAI_API_KEY", "another")
    assert not model.key_rejected  # a new key has not been refused yet


async def test_an_unknown_model_names_the_model_and_the_address(workspace, chat_server):
    model = OpenAIModel("gpt-nine", api_key="k", base_url=chat_server.base_url)
    chat_server.push(Fault.status(404))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == (
        "The model server does not know this (404): The model `gpt-nine` does not exist or you "
        f"do not have access to it. Check the model id (now 'gpt-nine') and the address "
        f"({chat_server.base_url})."
    )


async def test_a_model_ollama_has_not_pulled_says_how_to_pull_it(workspace, chat_server):
    model = OpenAIModel("qwen3", provider="ollama", base_url=chat_server.base_url)
    chat_server.push(
        Fault.status(404, "api_error", 'model "qwen3" not found, try pulling it first')
    )
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == inline_snapshot.snapshot(
        'Ollama does not have this model (404): model "qwen3" not found, try pulling it first. '
        "Pull it first (ollama pull qwen3), or check the model id."
    )


@pytest.mark.parametrize(
    ("message", "tokens", "limit"),
    [
        (  # OpenAI, with the code context_length_exceeded
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130512 tokens. Please reduce the length of the messages.",
            130512,
            128000,
        ),
        (  # vLLM
            "This model's maximum context length is 32768 tokens. However, you requested "
            "40000 tokens (39000 in the messages, 1000 in the completion).",
            40000,
            32768,
        ),
        ("The prompt is longer than the maximum model length of 8192", None, None),
        ("the input length exceeds the context length", None, None),  # Ollama
    ],
)
async def test_a_prompt_too_long_for_the_window_is_prompt_too_long(
    message, tokens, limit, model, chat_server
):
    code = "context_length_exceeded" if "reduce" in message else "invalid_request_error"
    chat_server.push(Fault.status(400, code, message))
    with pytest.raises(PromptTooLong) as caught:
        [p async for p in model.stream(ModelRequest(system="s", messages=HI))]
    assert (caught.value.tokens, caught.value.limit) == (tokens, limit)
    assert str(caught.value).startswith("The conversation no longer fits the model's context")


async def test_an_answer_that_is_no_event_stream_says_to_check_the_address(workspace):
    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            page = b"<html>Welcome</html>"
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{site.server_port}/v1"
        model = OpenAIModel("gpt-4o", api_key="k", base_url=url)
        handle = await Agent("actor", model, workspace=workspace).run("go")
        site.shutdown()
    assert handle.stop_message == (
        f"The model server at {url} answered with text/html instead of an event stream: "
        "check the base_url."
    )


async def test_a_server_that_is_not_there_says_where_it_looked(workspace):
    model = OpenAIModel("qwen3", provider="ollama", base_url="http://127.0.0.1:9/v1")
    model.check()  # no key needed
    with pytest.raises(ModelError) as caught:
        [p async for p in model.stream(ModelRequest(system="s", messages=HI))]
    assert str(caught.value).startswith("Could not reach Ollama at http://127.0.0.1:9/v1")
    assert str(caught.value).endswith(
        "Is Ollama running (ollama serve)? Check OLLAMA_HOST or the base_url."
    )


# --- keys, addresses, the package ---------------------------------------------------------


async def test_a_missing_openai_key_is_one_clear_sentence_at_start(workspace):
    agent = Agent("planner", OpenAIModel("gpt-5"), workspace=workspace)
    with pytest.raises(MissingAPIKey, match=r"^No OpenAI API key found: set OPENAI_API_KEY"):
        agent.start("go")
    assert agent.state is AgentState.idle


def test_a_compatible_server_without_an_address_says_to_give_one(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ModelError, match=r"pass base_url= to OpenAIModel, or set OPENAI_BASE_URL"):
        OpenAIModel("llama", provider="openai-compatible").check()
    OpenAIModel("llama", provider="openai-compatible", base_url="http://127.0.0.1:9/v1").check()


async def test_ollama_needs_no_key_and_finds_the_server_at_ollama_host(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "an-openai-key")  # never sent to Ollama
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    model = OpenAIModel("qwen3", provider="ollama")
    chat_server.push(Reply([text("local hello")]))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "local hello"
    assert sent_key(chat_server.requests[0]) == NO_KEY_SENT
    body = chat_server.requests[0].body
    assert body["max_tokens"] == model.max_tokens and "max_completion_tokens" not in body
    assert model.secret_values() == {}
    assert handle.usage.unpriced_calls == 1


async def test_the_environment_gives_key_and_address_and_the_key_is_a_secret(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    model = OpenAIModel("gpt-5-mini")
    assert list(model.secret_values().values()) == ["sk-env-key-0123456789"]
    chat_server.script(
        [
            Reply([tool_use("lookup", {"key": "sk-env-key-0123456789"})], "tool_use"),
            Reply([text("ok")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    await agent.run("go")
    assert sent_key(chat_server.requests[0]) == "sk-env-key-0123456789"
    result = chat_server.requests[1].body["messages"][-1]
    assert result["role"] == "tool"
    assert "sk-env-key-0123456789" not in result["content"]  # hidden, as Claude's key is
    assert chat_server.requests[0].body["max_completion_tokens"] == model.max_tokens


async def test_without_the_openai_package_the_message_says_what_to_install(workspace, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    agent = Agent("actor", OpenAIModel("gpt-5", api_key="k"), workspace=workspace)
    with pytest.raises(ModelError, match=r"pip install jupyter-in-kernel-agent\[openai\]"):
        agent.start("go")


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


def _warnings(handle) -> list[str]:
    return [e.message for e in handle.events_so_far if e.kind == "warning"]


async def test_ollama_that_cuts_the_conversation_to_its_context_is_said_once(
    workspace, chat_server, monkeypatch
):
    """Ollama's Chat Completions endpoint runs a model with the context it was started
    with (4,096 tokens by default) and cuts the rest without an error: the agent asks
    Ollama that context after a reply, and says plainly when a request filled it."""
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [
        {"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 4096}
    ]
    model = OpenAIModel("qwen3", provider="ollama")
    filled = {"prompt_tokens": 4000, "completion_tokens": 96}
    chat_server.script(
        [
            Reply([text("I saw only the end.")], usage=filled),
            Reply([text("Again.")], usage=filled),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    first = await agent.run("go")
    said = _warnings(first)
    assert len(said) == 1, said
    assert "Ollama runs qwen3 with a context of 4,096 tokens" in said[0]
    assert "filled it (4,096 tokens)" in said[0]
    assert "OLLAMA_CONTEXT_LENGTH" in said[0] and "num_ctx" in said[0]
    assert model.context_window is None  # too small to plan for: compaction cannot help
    second = await agent.run("again")
    assert _warnings(second) == []  # said once
    asked = [r.path for r in chat_server.requests if r.method == "GET"]
    assert asked and all(p == "/api/ps" for p in asked)


async def test_a_roomy_ollama_context_is_planned_for_and_not_warned_of(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [
        {"name": "llama3.2:latest", "context_length": 8192},
        {"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 32768},
    ]
    model = OpenAIModel("qwen3:8b", provider="ollama")
    chat_server.push(Reply([text("Fine.")], usage={"prompt_tokens": 5000}))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert _warnings(handle) == []
    assert model.context_window == 32768  # the gauge and compaction use Ollama's window
    # A window the user gave is theirs; an Ollama that does not say leaves all as it was.
    given = OpenAIModel("qwen3:8b", provider="ollama", context_window=20000)
    chat_server.push(Reply([text("Fine.")]))
    await Agent("actor", given, workspace=workspace).run("go")
    assert given.context_window == 20000
    chat_server.running_models = None  # an older Ollama, or no /api/ps: a 404
    silent = OpenAIModel("qwen3:8b", provider="ollama")
    chat_server.push(Reply([text("Fine.")]))
    assert _warnings(await Agent("actor", silent, workspace=workspace).run("go")) == []
    assert silent.context_window is None


async def test_a_small_ollama_context_is_said_before_it_fills(workspace, chat_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [{"name": "qwen3:latest", "context_length": 8192}]
    model = OpenAIModel("qwen3", provider="ollama")
    chat_server.push(Reply([text("ok")], usage={"prompt_tokens": 4700, "completion_tokens": 5}))
    said = _warnings(await Agent("actor", model, workspace=workspace).run("go"))
    assert len(said) == 1 and "will soon outgrow" in said[0], said


def test_what_ollama_says_of_its_models_is_read_with_care(chat_server):
    from jupyter_agent.models._ollama_window import served_window

    root = chat_server.url
    for listed, found in [
        ([{"name": "qwen3:latest", "context_length": 4096}], 4096),
        ([{"model": "qwen3", "context_length": 40960}], 40960),
        ([{"name": "qwen3:8b", "context_length": 4096}], None),  # another tag
        ([{"name": "qwen3:latest", "context_length": True}], None),
        ([{"name": "qwen3:latest", "context_length": -1}], None),
        ([{"name": "qwen3:latest", "context_length": "4096"}], None),
        (["junk", 5, None], None),
    ]:
        chat_server.running_models = listed
        assert served_window(root, "qwen3") == found, listed
    chat_server.running_models = None
    assert served_window(root, "qwen3") is None  # 404
    assert served_window("http://127.0.0.1:9", "qwen3") is None  # nobody there
