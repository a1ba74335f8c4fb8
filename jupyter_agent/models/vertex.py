"""Claude on Google Vertex AI, through the SDK's ``AsyncAnthropicVertex``
(``pip install "jupyter-in-kernel-agent[vertex]"``).

Where: a region (``CLOUD_ML_REGION``: ``us-east5``, ``europe-west1``, ``global``…) and
a project (``ANTHROPIC_VERTEX_PROJECT_ID``, else ``GOOGLE_CLOUD_PROJECT``, else the
project of the credentials file). Credentials: an access token given in code, or
Google's Application Default Credentials (``gcloud auth application-default login``,
``GOOGLE_APPLICATION_CREDENTIALS``, a Google Cloud VM's service account), which the
SDK loads and refreshes with google-auth in a thread as it sends.
:meth:`VertexModel.check` looks only at what can be read at once.

The request is the Messages API's, posted to
``/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict``
with ``anthropic_version`` in the body, as the SDK's ``messages.create()`` sends it
(encoded here, once per turn); the reply is server-sent events, as on the direct API.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ModelError
from ..workspace.paths import read_regular
from ._cloud import CloudModel, api_version, raised_by
from .anthropic import ClientSetup

_ENVIRONMENT = (
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "ANTHROPIC_VERTEX_BASE_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
)
"""What the SDK and google-auth read from the environment; a change makes a new client."""

_PROJECT_VARIABLES = ("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")

NO_REGION = (
    "No Google Cloud region for Vertex AI: set CLOUD_ML_REGION (e.g. us-east5, or "
    "global), or pass region=."
)
NO_PROJECT = (
    "No Google Cloud project for Vertex AI: set ANTHROPIC_VERTEX_PROJECT_ID (or "
    "GOOGLE_CLOUD_PROJECT), or pass project_id=."
)
_HOW_TO_SIGN_IN = (
    "run gcloud auth application-default login, set GOOGLE_APPLICATION_CREDENTIALS to a "
    "service account's key file, or pass access_token="
)
NO_CREDENTIALS = f"No Google Cloud credentials for Vertex AI: {_HOW_TO_SIGN_IN}."

# A segment of a URL path keeps these as they are (RFC 3986), as the SDK's paths do.
_SEGMENT_SAFE = "@:!$&'()*+,="


class VertexModel(CloudModel):
    """Claude on Google Vertex AI. ``name`` is a Vertex model id
    (``claude-sonnet-4-5@20250929``)."""

    provider = "vertex"
    service = "Vertex AI"
    base_url_variable = "ANTHROPIC_VERTEX_BASE_URL"
    extra = "vertex"
    _extra_modules = ("google.auth",)

    def __init__(
        self,
        name: str,
        *,
        region: str | None = None,
        project_id: str | None = None,
        access_token: str | None = None,
        credentials: Any = None,
        client: Any = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        """
        Args:
            name: The Vertex model id.
            region: Overrides ``CLOUD_ML_REGION``.
            project_id: Overrides ``ANTHROPIC_VERTEX_PROJECT_ID``.
            access_token: An OAuth access token to send instead of loading Google's
                default credentials (kept in memory only).
            credentials: google-auth credentials to use instead of the default ones.
            client: An ``anthropic.AsyncAnthropicVertex`` to use instead of making one.
            base_url: Overrides ``ANTHROPIC_VERTEX_BASE_URL`` (ends in ``/v1``).
            options: As for :class:`~jupyter_agent.models.AnthropicModel` (max_tokens,
                thinking, cache, retries, pricing, sdk_options…).
        """
        super().__init__(name, client=client, base_url=base_url, **options)
        self.region = region
        self.project_id = project_id
        self._access_token = access_token
        self._credentials = credentials

    def __repr__(self) -> str:
        return f"VertexModel({self.name!r})"

    # --- where, and with which credentials ---------------------------------------------------

    def _region(self) -> str | None:
        if self._client is not None:
            return getattr(self._client, "region", None)
        return self.region or os.environ.get("CLOUD_ML_REGION") or None

    def _project(self) -> str | None:
        if self._client is not None:
            return getattr(self._client, "project_id", None)
        if self.project_id:
            return self.project_id
        for variable in _PROJECT_VARIABLES:
            if os.environ.get(variable):
                return os.environ[variable]
        return _credentials_project(_credentials_file())

    def _where(self) -> str:
        return f"project {self._project() or '(none)'}, region {self._region() or '(none)'}"

    def _credentials_source(self) -> str | None:
        if self._access_token:
            return "the access token given in code"
        if self._credentials is not None:
            return "the credentials given in code"
        given = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
        if given:
            return f"GOOGLE_APPLICATION_CREDENTIALS ({given})"
        if _credentials_file() is not None:
            return "the application default credentials of gcloud"
        if _on_google_cloud():
            return "the VM's service account"
        return None

    def check(self) -> None:
        if self._client is not None:
            return
        if not self._region():
            raise ModelError(NO_REGION)
        if not self._project():
            raise ModelError(NO_PROJECT)
        if self._access_token:
            return
        self._require_extra()
        given = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
        if given and not Path(given).is_file():
            raise ModelError(
                f"GOOGLE_APPLICATION_CREDENTIALS names {given}, which is not a file: "
                f"{_HOW_TO_SIGN_IN}."
            )
        if self._credentials_source() is None:
            raise ModelError(NO_CREDENTIALS)

    def secret_values(self) -> dict[str, str]:
        """The access token this model sends (given, or loaded by the SDK), so the agent
        hides it wherever it appears."""
        clients = [self._client] if self._client is not None else []
        if self._last_client is not None:
            clients.append(self._last_client[2])
        tokens = [self._access_token, getattr(self._credentials, "token", None)]
        for client in clients:
            tokens.append(getattr(client, "access_token", None))
            tokens.append(getattr(getattr(client, "credentials", None), "token", None))
        found = dict.fromkeys(token for token in tokens if isinstance(token, str) and token)
        return {f"Google access token {n}": token for n, token in enumerate(found, 1)}

    # --- the client and the request ----------------------------------------------------------

    def _client_setup(self) -> ClientSetup:
        import anthropic

        env = tuple(map(os.environ.get, _ENVIRONMENT))
        options: dict[str, Any] = {"region": self._region(), "project_id": self._project()}
        if self._access_token:
            options["access_token"] = self._access_token
        if self._credentials is not None:
            options["credentials"] = self._credentials
        if self._base_url:
            options["base_url"] = self._base_url
        return anthropic.AsyncAnthropicVertex, options, (*env, id(self._credentials))

    def _endpoint(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        # As the SDK's client rewrites a /v1/messages request: the model into the URL,
        # the API version into the body.
        fields = {key: value for key, value in params.items() if key != "model"}
        fields["anthropic_version"] = api_version("vertex", "vertex-2023-10-16")
        fields["stream"] = True
        project, region, model = (
            quote(str(part), safe=_SEGMENT_SAFE)
            for part in (self._project(), self._region(), params["model"])
        )
        path = f"/projects/{project}/locations/{region}/publishers/anthropic/models/{model}"
        return f"{path}:streamRawPredict", fields

    # --- failures, in sentences --------------------------------------------------------------

    def _credentials_problem(self, exc: Exception, client: Any) -> str | None:
        # The SDK raises a plain RuntimeError when the credentials it loaded give no token.
        no_token = getattr(getattr(client, "credentials", None), "token", "") is None
        if raised_by(exc, "google") or (isinstance(exc, RuntimeError) and no_token):
            source = self._credentials_source() or "Google's application default credentials"
            return (
                f"The Google Cloud credentials for Vertex AI could not be used, from "
                f"{source} ({exc}): {_HOW_TO_SIGN_IN}."
            )
        return None

    def _refusal(self, status: int, message: str, kind: str | None) -> str:
        source = self._credentials_source() or "Google's application default credentials"
        code = f"{status} {kind}" if kind else str(status)
        if status == 401:
            return (
                f"Vertex AI rejected the Google Cloud credentials from {source} ({code}): "
                f"{message}. Sign in again (gcloud auth application-default login) or give "
                "a fresh access token."
            )
        return (
            f"Vertex AI refused the request ({code}): {message}. The credentials from "
            f"{source} must be allowed to use Claude in {self._where()} (the Vertex AI User "
            "role), and the model enabled there (Model Garden)."
        )


def _credentials_file() -> Path | None:
    """The credentials file Google's default credentials would read, if there is one."""
    given = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if given:
        return Path(given)
    folder = os.environ.get("CLOUDSDK_CONFIG")
    if folder:
        base = Path(folder)
    elif sys.platform == "win32" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"]) / "gcloud"
    else:
        base = Path.home() / ".config" / "gcloud"
    file = base / "application_default_credentials.json"
    return file if file.is_file() else None


def _credentials_project(file: Path | None) -> str | None:
    """The project a credentials file names (a service account's, or the quota project)."""
    if file is None:
        return None
    try:
        data = json.loads(read_regular(file, 1 << 20)[0])
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    project = data.get("project_id") or data.get("quota_project_id")
    return project if isinstance(project, str) and project else None


def _on_google_cloud() -> bool:
    """Whether this is a Google Cloud VM (whose service account gives credentials), told
    without asking the network."""
    if os.environ.get("K_SERVICE"):  # Cloud Run
        return True
    try:
        product = read_regular("/sys/class/dmi/id/product_name", 4096)[0].decode(errors="replace")
    except OSError:
        return False
    return "Google" in product
