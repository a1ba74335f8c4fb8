"""Claude on Amazon Bedrock and Google Vertex AI, refused or unconfigured: the SDK's real
clients against the loopback server, and the models' own checks (``cloud_platforms``).

Refusals and missing credentials say which credentials, which region or project, and what
to do, whether found when the model is made or only at the request (a profile, a key file,
a library that fails to import); the credentials the model sends are secrets, hidden from
the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cloud_platforms import (
    BEDROCK_ID,
    GOOGLE_TOKEN,
    VERTEX_ID,
    _bedrock,
    _request,
    _vertex,
    fake_cloud_environment,
)

from jupyter_agent import Agent
from jupyter_agent.errors import ModelError
from jupyter_agent.models import BedrockModel, VertexModel
from jupyter_agent.models.bedrock import NO_CREDENTIALS as NO_AWS_CREDENTIALS
from jupyter_agent.models.bedrock import NO_REGION as NO_AWS_REGION
from jupyter_agent.models.vertex import NO_CREDENTIALS as NO_GOOGLE_CREDENTIALS
from jupyter_agent.models.vertex import NO_PROJECT
from jupyter_agent.models.vertex import NO_REGION as NO_GOOGLE_REGION
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, Reply, text, tool_use
from jupyter_agent.tools import tool


@pytest.fixture(autouse=True)
def cloud_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_cloud_environment(home, monkeypatch)


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


# --- a library missing at the request ------------------------------------------------------


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
