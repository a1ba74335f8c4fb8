"""Claude on Amazon Bedrock and Google Vertex AI: the SDK's real ``AsyncAnthropicBedrock``
and ``AsyncAnthropicVertex`` clients against the loopback server's Bedrock route (AWS
event-stream framing, SigV4-signed with fake AWS keys) and Vertex route (server-sent
events, a bearer access token).

Everything the agent does on the direct API holds on both: streaming, caching
breakpoints, retries of a broken stream, Stop closing the connection, a history that
stays valid, a session that moves between providers. Refusals and missing credentials
say which credentials, which region or project, and what to do.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import PLAN, assert_valid, until

from jupyter_agent import Agent, AnthropicModel
from jupyter_agent.errors import ModelError
from jupyter_agent.messages import TextBlock
from jupyter_agent.models import (
    BedrockModel,
    ModelRequest,
    StreamDone,
    StreamRestart,
    VertexModel,
    context_window,
    pricing_for,
)
from jupyter_agent.models.bedrock import NO_CREDENTIALS as NO_AWS_CREDENTIALS
from jupyter_agent.models.bedrock import NO_REGION as NO_AWS_REGION
from jupyter_agent.models.vertex import NO_CREDENTIALS as NO_GOOGLE_CREDENTIALS
from jupyter_agent.models.vertex import NO_PROJECT
from jupyter_agent.models.vertex import NO_REGION as NO_GOOGLE_REGION
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, MessagesServer, Reply, text, tool_use
from jupyter_agent.tools import tool

BEDROCK_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_ID = "claude-sonnet-4-5@20250929"
AWS_KEY_ID = "AKIDEXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
GOOGLE_TOKEN = "ya29.test-access-token-0123456789"

_AWS_VARIABLES = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)
_GOOGLE_VARIABLES = (
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "ANTHROPIC_VERTEX_BASE_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "K_SERVICE",
)


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.fixture(autouse=True)
def cloud_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake AWS keys and a Google project, and config folders of the test's own: nothing
    of the machine's own AWS or Google set-up is read."""
    for name in (*_AWS_VARIABLES, *_GOOGLE_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(home / "gcloud"))
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "test-project")
    return home


@dataclass
class Cloud:
    """One platform under test: how to make its model, and what its requests look like."""

    platform: str
    make: Callable[..., Any]
    model_id: str
    path: str

    def check_signed(self, headers: dict[str, str]) -> None:
        auth = headers["authorization"]
        if self.platform == "bedrock":
            # SigV4 with the environment's keys, for Bedrock in the environment's region
            assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/"), auth
            assert "/us-west-2/bedrock/aws4_request" in auth
            assert "x-amz-date" in headers
        else:
            assert auth == f"Bearer {GOOGLE_TOKEN}"


def _bedrock(server: MessagesServer, callers_client: bool) -> Cloud:
    import anthropic

    def make(**options: Any) -> BedrockModel:
        options.setdefault("retry_delay", 0.001)
        if callers_client:
            client = anthropic.AsyncAnthropicBedrock(base_url=server.url)
            return BedrockModel(BEDROCK_ID, client=client, **options)
        return BedrockModel(BEDROCK_ID, base_url=server.url, **options)

    return Cloud("bedrock", make, BEDROCK_ID, f"/model/{BEDROCK_ID}/invoke-with-response-stream")


def _vertex(server: MessagesServer, callers_client: bool) -> Cloud:
    import anthropic

    def make(**options: Any) -> VertexModel:
        options.setdefault("retry_delay", 0.001)
        if callers_client:
            client = anthropic.AsyncAnthropicVertex(
                base_url=server.url + "/v1", access_token=GOOGLE_TOKEN
            )
            return VertexModel(VERTEX_ID, client=client, **options)
        return VertexModel(
            VERTEX_ID, base_url=server.url + "/v1", access_token=GOOGLE_TOKEN, **options
        )

    path = (
        "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/"
        f"{VERTEX_ID}:streamRawPredict"
    )
    return Cloud("vertex", make, VERTEX_ID, path)


_MAKERS = {"bedrock": _bedrock, "vertex": _vertex}


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


def _request(**overrides: Any) -> ModelRequest:
    return ModelRequest(
        system="You are terse.",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[lookup.spec()],
        **overrides,
    )


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


# --- refusals and missing credentials ----------------------------------------------------


async def test_a_403_from_bedrock_names_the_credentials_the_model_and_the_region(
    workspace, messages_server
):
    denied = (
        "User: arn:aws:iam::123456789012:user/ana is not authorized to perform: "
        "bedrock:InvokeModelWithResponseStream"
    )
    messages_server.push(Fault.status(403, message=denied))
    agent = Agent("actor", _bedrock(messages_server, False).make(), workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.error
    message = handle.stop_message
    assert "Amazon Bedrock refused the request (403 AccessDeniedException)" in message
    assert denied in message
    assert "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in message
    assert BEDROCK_ID in message and "region us-west-2" in message
    assert len(messages_server.requests) == 1  # a refusal is not retried


async def test_rejected_aws_credentials_say_so(workspace, messages_server, monkeypatch):
    for name in ("AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_PROFILE", "analytics")
    (workspace.parent / "home" / "aws-config").write_text(
        "[profile analytics]\nregion = eu-west-1\n"
        "aws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n"
    )
    messages_server.push(
        Fault.status(403, "UnrecognizedClientException", "The security token is invalid")
    )
    model = _bedrock(messages_server, False).make()
    with pytest.raises(ModelError) as raised:
        _ = [part async for part in model.stream(_request())]
    message = str(raised.value)
    assert "rejected the AWS credentials from the AWS profile 'analytics' (AWS_PROFILE)" in (
        message
    )
    sent = messages_server.requests[0]
    # the profile's keys and region, not the environment's keys
    assert "Credential=AKIDPROFILE/" in sent.headers["authorization"]
    assert "/eu-west-1/bedrock/" in sent.headers["authorization"]


async def test_a_403_from_vertex_names_the_project_and_the_region(workspace, messages_server):
    denied = "Permission 'aiplatform.endpoints.predict' denied on resource"
    messages_server.push(Fault.status(403, message=denied))
    agent = Agent("actor", _vertex(messages_server, False).make(), workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.error
    message = handle.stop_message
    assert "Vertex AI refused the request (403 PERMISSION_DENIED)" in message
    assert denied in message
    assert "project test-project, region us-east5" in message
    assert "access token given in code" in message


async def test_bedrock_without_a_region_or_credentials_says_what_to_set(monkeypatch, workspace):
    monkeypatch.delenv("AWS_REGION")
    with pytest.raises(ModelError) as raised:
        BedrockModel(BEDROCK_ID).check()
    assert str(raised.value) == NO_AWS_REGION
    assert "AWS_REGION" in NO_AWS_REGION
    with pytest.raises(ModelError, match="No AWS region"):
        Agent("actor", BedrockModel(BEDROCK_ID), workspace=workspace).start("go")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    BedrockModel(BEDROCK_ID).check()
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ModelError) as raised:
        BedrockModel(BEDROCK_ID).check()
    assert str(raised.value) == NO_AWS_CREDENTIALS
    assert "AWS_PROFILE" in NO_AWS_CREDENTIALS and "AWS_BEARER_TOKEN_BEDROCK" in NO_AWS_CREDENTIALS
    # each way of giving credentials is enough for check()
    BedrockModel(BEDROCK_ID, api_key="bedrock-api-key").check()
    BedrockModel(BEDROCK_ID, aws_access_key="AKID", aws_secret_key="s").check()
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    BedrockModel(BEDROCK_ID).check()
    with pytest.raises(ModelError, match="keep one of them"):
        BedrockModel(BEDROCK_ID, aws_profile="analytics").check()


def test_bedrock_region_and_credentials_from_a_profile(monkeypatch, cloud_environment):
    for name in ("AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    with pytest.raises(ModelError, match="The AWS profile 'analytics' is not in"):
        BedrockModel(BEDROCK_ID, aws_profile="analytics").check()
    # configured since (aws configure): seen at the next check
    (cloud_environment / "aws-config").write_text("[profile analytics]\nregion = eu-west-1\n")
    model = BedrockModel(BEDROCK_ID, aws_profile="analytics")
    model.check()
    assert model.region == "eu-west-1"
    with pytest.raises(ModelError, match=r"The AWS profile 'nobody' is not in ~/\.aws/config"):
        BedrockModel(BEDROCK_ID, aws_profile="nobody").check()
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    (cloud_environment / "aws-credentials").write_text("[default]\naws_access_key_id = A\n")
    BedrockModel(BEDROCK_ID).check()  # the default profile


async def test_aws_credentials_that_cannot_be_loaded_at_the_request_say_so(
    monkeypatch, cloud_environment, messages_server
):
    """check() passes on a profile that is configured; the SDK then finds no keys in it."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_PROFILE", "empty")
    (cloud_environment / "aws-config").write_text("[profile empty]\nregion = us-west-2\n")
    model = _bedrock(messages_server, False).make()
    model.check()
    with pytest.raises(ModelError) as raised:
        _ = [part async for part in model.stream(_request())]
    message = str(raised.value)
    assert message.startswith(
        "The AWS credentials for Amazon Bedrock could not be loaded from the AWS profile 'empty'"
    )
    assert "aws sso login" in message
    assert messages_server.requests == []  # nothing unsigned went out


def test_vertex_without_a_region_project_or_credentials_says_what_to_set(
    monkeypatch, cloud_environment
):
    monkeypatch.delenv("CLOUD_ML_REGION")
    with pytest.raises(ModelError) as raised:
        VertexModel(VERTEX_ID, access_token=GOOGLE_TOKEN).check()
    assert str(raised.value) == NO_GOOGLE_REGION
    monkeypatch.setenv("CLOUD_ML_REGION", "global")
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID")
    with pytest.raises(ModelError) as raised:
        VertexModel(VERTEX_ID, access_token=GOOGLE_TOKEN).check()
    assert str(raised.value) == NO_PROJECT
    VertexModel(VERTEX_ID, project_id="p", access_token=GOOGLE_TOKEN).check()
    with pytest.raises(ModelError) as raised:
        VertexModel(VERTEX_ID, project_id="p").check()  # no token, no default credentials
    assert str(raised.value) == NO_GOOGLE_CREDENTIALS
    assert "gcloud auth application-default login" in NO_GOOGLE_CREDENTIALS
    missing = cloud_environment / "nowhere.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    with pytest.raises(ModelError, match=r"names .*nowhere\.json, which is not a file"):
        VertexModel(VERTEX_ID, project_id="p").check()
    # a service account's key file gives the credentials and the project
    key_file = cloud_environment / "service-account.json"
    key_file.write_text(json.dumps({"type": "service_account", "project_id": "from-key"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    model = VertexModel(VERTEX_ID)
    model.check()
    assert "project from-key" in model._where()


async def test_google_credentials_that_cannot_be_used_at_the_request_say_so(
    monkeypatch, cloud_environment, messages_server
):
    key_file = cloud_environment / "broken.json"
    key_file.write_text(json.dumps({"type": "no_such_type", "project_id": "p"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    model = VertexModel(VERTEX_ID, base_url=messages_server.url + "/v1")
    model.check()
    with pytest.raises(ModelError) as raised:
        _ = [part async for part in model.stream(_request())]
    message = str(raised.value)
    assert message.startswith(
        "The Google Cloud credentials for Vertex AI could not be used, from "
        f"GOOGLE_APPLICATION_CREDENTIALS ({key_file})"
    )
    assert "gcloud auth application-default login" in message
    assert messages_server.requests == []


@pytest.mark.parametrize(
    ("make", "module", "extra"),
    [
        (lambda: BedrockModel(BEDROCK_ID), "boto3", "bedrock"),
        (lambda: VertexModel(VERTEX_ID), "google.auth", "vertex"),
    ],
    ids=["bedrock", "vertex"],
)
def test_a_missing_extra_names_the_pip_command(monkeypatch, make, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(ModelError) as raised:
        make().check()
    assert f'pip install "jupyter-in-kernel-agent[{extra}]"' in str(raised.value)
    assert module in str(raised.value)


def test_an_anthropic_key_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="Amazon Bedrock's credentials, not an Anthropic API key"):
        BedrockModel(BEDROCK_ID).use_key("sk-ant-api03-abc")


# --- secrets -------------------------------------------------------------------------------


async def test_the_credentials_the_model_sends_are_hidden_from_the_model(
    workspace, messages_server, monkeypatch
):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    session_token = "FwoGZXIvYXdzEJr//////////session-token-value"
    model = BedrockModel(
        BEDROCK_ID,
        aws_access_key="AKIDINCODE",
        aws_secret_key="secret-given-in-code-123456",
        aws_session_token=session_token,
        base_url=messages_server.url,
    )
    assert set(model.secret_values().values()) == {"secret-given-in-code-123456", session_token}
    assert BedrockModel(BEDROCK_ID, api_key="bedrock-key-0123456789").secret_values() == {
        "Bedrock API key": "bedrock-key-0123456789"
    }

    @tool
    def leak() -> str:
        """Show the configuration."""
        return f"secret=secret-given-in-code-123456 token={session_token}"

    messages_server.script([Reply([tool_use("leak", {})], "tool_use"), Reply([text("Done.")])])
    agent = Agent("actor", model, workspace=workspace, tools=[leak])
    handle = await agent.run("show it")
    assert handle.state is AgentState.completed, handle.stop_message
    sent = messages_server.requests[1].raw.decode()
    assert "secret-given-in-code-123456" not in sent and session_token not in sent
    assert "Credential=AKIDINCODE/" in messages_server.requests[0].headers["authorization"]


def test_a_vertex_access_token_is_a_secret():
    model = VertexModel(VERTEX_ID, access_token=GOOGLE_TOKEN)
    assert list(model.secret_values().values()) == [GOOGLE_TOKEN]


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


async def test_a_library_that_fails_to_import_at_the_request_names_the_pip_command(
    monkeypatch, cloud_environment, messages_server
):
    """The SDK imports google-auth only as it signs: a broken install shows then, and is
    told by its cause (an ImportError), not by the SDK's wording."""
    model = VertexModel(VERTEX_ID, base_url=messages_server.url + "/v1")
    key_file = cloud_environment / "service-account.json"
    key_file.write_text(json.dumps({"type": "service_account", "project_id": "p"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    model.check()
    monkeypatch.setitem(sys.modules, "google.auth", None)  # the import now fails
    with pytest.raises(ModelError) as raised:
        _ = [part async for part in model.stream(_request())]
    assert 'pip install "jupyter-in-kernel-agent[vertex]"' in str(raised.value)
    assert messages_server.requests == []
