"""Claude on Amazon Bedrock and Google Vertex AI, running: the SDK's real
``AsyncAnthropicBedrock`` and ``AsyncAnthropicVertex`` clients against the loopback server's
Bedrock route (AWS event-stream framing, SigV4-signed with fake AWS keys) and Vertex route
(server-sent events, a bearer access token); ``cloud_platforms`` makes them.

Everything the agent does on the direct API holds on both: streaming, caching
breakpoints, retries of a broken stream, Stop closing the connection, a history that
stays valid, a session that moves between providers; a cloud model id is priced and sized
as the model it names, and the test server's Bedrock frames are real AWS event-stream
messages.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest
from cloud_platforms import (
    _MAKERS,
    BEDROCK_ID,
    Cloud,
    _bedrock,
    _request,
    fake_cloud_environment,
    lookup,
)
from helpers import PLAN, assert_valid, until

from jupyter_agent import Agent, AnthropicModel
from jupyter_agent.errors import ModelError
from jupyter_agent.messages import TextBlock
from jupyter_agent.models import (
    BedrockModel,
    StreamDone,
    StreamRestart,
    context_window,
    pricing_for,
)
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, MessagesServer, Reply, text, tool_use


@pytest.fixture(autouse=True)
def cloud_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_cloud_environment(home, monkeypatch)


@pytest.fixture(params=["bedrock", "vertex"])
def cloud(request: pytest.FixtureRequest, messages_server: MessagesServer) -> Cloud:
    """Each platform on a client the model makes itself."""
    return _MAKERS[request.param](messages_server, callers_client=False)


@pytest.fixture(
    params=[
        ("bedrock", False),
        ("bedrock", True),
        ("vertex", False),
        ("vertex", True),
    ],
    ids=[
        "bedrock-our-client",
        "bedrock-callers-client",
        "vertex-our-client",
        "vertex-callers-client",
    ],
)
def each_cloud(request: pytest.FixtureRequest, messages_server: MessagesServer) -> Cloud:
    """Each platform on a client of the model's own (our encoded request), then on a client
    of the caller's (read through the SDK's own messages.create())."""
    platform, callers = request.param
    return _MAKERS[platform](messages_server, callers_client=callers)


# --- a run, streamed -----------------------------------------------------------------------


async def test_a_run_streams_text_and_tool_calls_on_each_platform(
    workspace, messages_server, each_cloud
):
    messages_server.script(
        [
            Reply(
                [text("Let me look that up for you."), tool_use("lookup", {"key": "alpha"})],
                "tool_use",
                chunk_size=5,
            ),
            Reply([text("Alpha is known.")], usage={"cache_read_input_tokens": 900}),
        ]
    )
    model = each_cloud.make()
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    handle = await agent.run("What is alpha?")
    assert handle.state is AgentState.completed, handle.stop_message
    assert handle.summary == "Alpha is known."
    deltas = [e.text for e in handle.events_so_far if e.kind == "text_delta"]
    assert len(deltas) > 2  # streamed, not delivered whole
    assert "".join(deltas) == "Let me look that up for you.Alpha is known."
    assert agent.history[1].tool_uses[0].input == {"key": "alpha"}
    assert agent.history[2].tool_results[0].text == "value of alpha"
    assert_valid(agent.history)
    assert agent.session.metadata.provider == each_cloud.platform
    assert handle.usage.cache_read_input_tokens == 900
    assert handle.usage.cost_usd > 0

    for sent in messages_server.requests:
        assert sent.platform == each_cloud.platform
        assert sent.path == each_cloud.path
        assert sent.model == each_cloud.model_id
        each_cloud.check_signed(sent.headers)
        assert "model" not in sent.body  # it is in the URL
        assert sent.body["anthropic_version"]
    second = messages_server.requests[1].body
    # the prompt-caching breakpoints: the tools, the system prompt, the newest message
    assert second["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second["system"][-1]["cache_control"] == {"type": "ephemeral"}
    newest = second["messages"][-1]["content"][-1]
    assert newest["type"] == "tool_result"
    assert newest["cache_control"] == {"type": "ephemeral"}


async def test_our_request_is_the_one_the_sdks_own_client_sends(messages_server, cloud):
    """The model encodes the body itself (once per turn) and posts it to the platform's
    route: the URL and the body are what the SDK's messages.create() would send."""
    ours = cloud.make()
    theirs = _MAKERS[cloud.platform](messages_server, callers_client=True).make()
    for model in (ours, theirs):
        messages_server.push(Reply([text("hello")]))
        parts = [part async for part in model.stream(_request())]
        assert isinstance(parts[-1], StreamDone)
        said = parts[-1].response.content[0]
        assert isinstance(said, TextBlock)
        assert said.text == "hello"
    mine, sdks = messages_server.requests
    assert mine.path == sdks.path == cloud.path
    assert mine.body == sdks.body
    if cloud.platform == "bedrock":
        assert "stream" not in mine.body  # Bedrock says it with its streaming endpoint
        assert mine.headers["content-type"] == sdks.headers["content-type"]
    else:
        assert mine.body["stream"] is True


async def test_a_planner_run_ends_with_its_plan_on_each_platform(workspace, messages_server, cloud):
    messages_server.script(
        [
            Reply([tool_use("list_directory", {"path": "."})], "tool_use"),
            Reply([text("Here is my plan."), tool_use("submit_plan", PLAN)], "tool_use"),
        ]
    )
    (workspace / "sales.csv").write_text("region,total\nnorth,10\n")
    agent = Agent("planner", cloud.make(), workspace=workspace)
    handle = await agent.run("Clean the sales data")
    assert handle.state is AgentState.completed, handle.stop_message
    assert handle.plan is not None and handle.plan.goal == PLAN["goal"]
    listing = messages_server.requests[1].body["messages"][-1]["content"][0]
    assert "sales.csv" in json.dumps(listing["content"])
    assert_valid(agent.history)


# --- what breaks, and Stop -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [Fault.drop(after_events=4), Fault.midstream_error(4, "overloaded_error")],
    ids=["connection-dropped", "error-mid-stream"],
)
async def test_a_stream_that_breaks_midway_is_retried(messages_server, each_cloud, fault):
    """On Bedrock the error mid-stream is an AWS ``exception`` frame
    (serviceUnavailableException); on Vertex an SSE ``error`` event."""
    messages_server.script([fault, Reply([text("whole answer")])])
    parts = [part async for part in each_cloud.make().stream(_request())]
    restarts = [part for part in parts if isinstance(part, StreamRestart)]
    assert len(restarts) == 1
    assert isinstance(parts[-1], StreamDone)
    said = parts[-1].response.content[0]
    assert isinstance(said, TextBlock)
    assert said.text == "whole answer"
    assert len(messages_server.requests) == 2


async def test_a_throttled_request_is_retried_by_the_sdk_on_each_platform(messages_server, cloud):
    messages_server.script([Fault.status(429), Fault.status(503), Reply([text("at last")])])
    parts = [part async for part in cloud.make().stream(_request())]
    assert parts[-1].response.content[0].text == "at last"
    assert len(messages_server.requests) == 3


async def test_a_throttled_request_that_stays_throttled_says_how_often_it_was_retried(
    messages_server, cloud
):
    model = cloud.make(sdk_options={"max_retries": 1})
    messages_server.script([Fault.status(429), Fault.status(429)])
    with pytest.raises(ModelError) as raised:
        _ = [part async for part in model.stream(_request())]
    assert f"{model.service}'s rate limit was reached; retried 1 time" in str(raised.value)


async def test_a_bedrock_stream_error_that_is_not_worth_retrying_ends_the_call(messages_server):
    messages_server.push(Fault.midstream_error(4, "validationException"))
    model = _bedrock(messages_server, callers_client=False).make()
    with pytest.raises(ModelError, match=r"Amazon Bedrock reported an error mid-stream"):
        _ = [part async for part in model.stream(_request())]
    assert len(messages_server.requests) == 1


async def test_stop_while_streaming_closes_the_connection_on_each_platform(
    workspace, messages_server, cloud
):
    answer = "a long streamed answer " * 20
    messages_server.push(Reply([text(answer)], chunk_size=4, hold_after=12))
    agent = Agent("actor", cloud.make(), workspace=workspace)
    handle = agent.start("go")
    await until(lambda: any(e.kind == "text_delta" for e in handle.events_so_far))
    handle.stop()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    # The server, holding the stream, finds the connection gone.
    await asyncio.to_thread(messages_server.wait_idle, 3)
    assert messages_server.requests[0].outcome == "disconnected"
    partial = agent.history[-1].text
    assert agent.history[-1].interrupted
    assert partial and answer.startswith(partial) and len(partial) < len(answer)
    assert_valid(agent.history)
    messages_server.push(Reply([text("next")]))
    again = await agent.run("continue")
    assert again.summary == "next"


# --- across providers ----------------------------------------------------------------------


async def test_a_session_started_on_the_direct_api_resumes_on_each_platform(
    workspace, messages_server, monkeypatch, cloud
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    messages_server.script(
        [
            Reply([text("Looking."), tool_use("lookup", {"key": "alpha"})], "tool_use"),
            Reply([text("Alpha is known.")]),
        ]
    )
    direct = AnthropicModel("claude-sonnet-4-5", base_url=messages_server.url)
    first = Agent("actor", direct, workspace=workspace, tools=[lookup])
    assert (await first.run("What is alpha?")).state is AgentState.completed
    assert first.session.metadata.provider == "anthropic"

    messages_server.push(Reply([text("Beta too.")]))
    resumed = Agent.resume(
        first.session.id, workspace=workspace, model=cloud.make(), tools=[lookup]
    )
    handle = await resumed.run("And beta?")
    assert handle.state is AgentState.completed, handle.stop_message
    sent = messages_server.requests[-1]
    assert sent.platform == cloud.platform
    messages = sent.body["messages"]
    kinds = [[block["type"] for block in m["content"]] for m in messages]
    assert kinds == [["text"], ["text", "tool_use"], ["tool_result"], ["text"], ["text"]]
    assert messages[2]["content"][0]["tool_use_id"] == messages[1]["content"][1]["id"]
    assert resumed.session.metadata.provider == cloud.platform
    assert_valid(resumed.history)


# --- model ids -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
            "us.anthropic.claude-opus-4-1-20250805-v1:0",
            "claude-opus-4-1",
        ),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-opus-4@20250514", "claude-opus-4-20250514"),
        ("claude-opus-4-1@20250805", "claude-opus-4-1"),
    ],
)
def test_cloud_model_ids_are_priced_and_sized_as_the_model_they_name(model_id, family):
    price = pricing_for(model_id)
    assert price == pricing_for(family)
    assert not price.estimated
    assert context_window(BedrockModel(model_id)) == context_window(AnthropicModel(family))


# --- the test server's Bedrock framing -----------------------------------------------------


def test_the_servers_bedrock_frames_are_aws_event_stream_messages(messages_server):
    """botocore (the decoder the SDK uses) reads the frames and checks their CRCs."""
    import http.client

    from botocore.eventstream import EventStreamBuffer

    messages_server.push(Reply([text("hi")]))
    host, port = messages_server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5})
    connection.request("POST", f"/model/{BEDROCK_ID}/invoke-with-response-stream", body)
    response = connection.getresponse()
    assert response.getheader("content-type") == "application/vnd.amazon.eventstream"
    frames = EventStreamBuffer()
    frames.add_data(response.read())
    events = []
    for message in frames:
        assert message.headers[":message-type"] == "event"
        assert message.headers[":event-type"] == "chunk"
        events.append(json.loads(base64.b64decode(json.loads(message.payload)["bytes"])))
    assert events[0]["type"] == "message_start"
    assert events[0]["message"]["model"] == BEDROCK_ID
    assert events[-1]["type"] == "message_stop"
    connection.close()
