"""Claude on Amazon Bedrock and Google Vertex AI, as the cloud model tests
(``test_cloud_runs.py``, ``test_cloud_credentials.py``) make it: fake AWS keys and a Google
project, each platform's model on the loopback Messages server (its Bedrock route, AWS
event-stream framing, SigV4-signed; its Vertex route, server-sent events, a bearer access
token), and a request to stream."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_agent.models import BedrockModel, ModelRequest, VertexModel
from jupyter_agent.testing import MessagesServer
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


def fake_cloud_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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


def _request(**overrides: Any) -> ModelRequest:
    return ModelRequest(
        system="You are terse.",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[lookup.spec()],
        **overrides,
    )
