"""Claude on Amazon Bedrock, through the SDK's ``AsyncAnthropicBedrock``
(``pip install "jupyter-in-kernel-agent[bedrock]"``).

Credentials are the AWS SDK's, found where boto3 finds them: keys in the environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``), a profile
(``AWS_PROFILE``, ``~/.aws/config``: SSO, assumed roles, credential processes), a
container's or an instance's role; or a Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``).
The SDK resolves and signs them (SigV4) in a thread as it sends, so a slow credential
source never holds the kernel's event loop. :meth:`BedrockModel.check` looks only at
what can be read at once (the environment, the AWS config files, whether this is an EC2
instance); the request itself has the last word, and a failure there is told in the
same words.

The request is the Messages API's, posted to ``/model/{model}/invoke-with-response-stream``
with the model in the URL and ``anthropic_version`` in the body, as the SDK's own
``messages.create()`` sends it (encoded here, once per turn, like on the direct API);
the reply's events come back in AWS's event-stream framing (``_bedrock_stream.py``).
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ModelError
from ..workspace.paths import read_regular
from ._bedrock_stream import bedrock_events
from ._cloud import CloudModel, api_version, raised_by
from .anthropic import ClientSetup

_ENVIRONMENT = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)
"""What the SDK and boto3 read from the environment; a change makes a new client."""

_ROLE_VARIABLES = {
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "the container's role",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "the container's role",
    "AWS_WEB_IDENTITY_TOKEN_FILE": "the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE)",
}

NO_REGION = (
    "No AWS region for Amazon Bedrock: set AWS_REGION (e.g. us-east-1), pass "
    "aws_region=, or give your AWS profile a region."
)
_HOW_TO_SIGN_IN = (
    "set AWS_PROFILE to a profile in ~/.aws/config (aws configure, or aws sso login), "
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or set AWS_BEARER_TOKEN_BEDROCK "
    "to a Bedrock API key"
)
NO_CREDENTIALS = f"No AWS credentials for Amazon Bedrock: {_HOW_TO_SIGN_IN}."


class BedrockModel(CloudModel):
    """Claude on Amazon Bedrock. ``name`` is a Bedrock model id
    (``anthropic.claude-sonnet-4-5-20250929-v1:0``) or inference profile
    (``us.anthropic.claude-…``, or its ARN)."""

    provider = "bedrock"
    service = "Amazon Bedrock"
    base_url_variable = "ANTHROPIC_BEDROCK_BASE_URL"
    stream_type = "application/vnd.amazon.eventstream"
    extra = "bedrock"
    _extra_modules = ("boto3", "botocore")

    def __init__(
        self,
        name: str,
        *,
        aws_region: str | None = None,
        aws_profile: str | None = None,
        aws_access_key: str | None = None,
        aws_secret_key: str | None = None,
        aws_session_token: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        """
        Args:
            name: The Bedrock model id or inference profile.
            aws_region: Overrides ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile's.
            aws_profile: An AWS profile; overrides ``AWS_PROFILE``.
            aws_access_key: With ``aws_secret_key`` (and ``aws_session_token``): keys
                to sign with instead of the environment's (kept in memory only).
            api_key: A Bedrock API key; overrides ``AWS_BEARER_TOKEN_BEDROCK``.
            client: An ``anthropic.AsyncAnthropicBedrock`` to use instead of making one.
            base_url: Overrides ``ANTHROPIC_BEDROCK_BASE_URL`` (a VPC endpoint, say).
            options: As for :class:`~jupyter_agent.models.AnthropicModel` (max_tokens,
                thinking, cache, retries, pricing, sdk_options…).
        """
        super().__init__(name, client=client, base_url=base_url, **options)
        self.aws_region = aws_region
        self.aws_profile = aws_profile
        self._aws_keys = (aws_access_key, aws_secret_key, aws_session_token)
        self._bearer = api_key

    def __repr__(self) -> str:
        return f"BedrockModel({self.name!r})"

    # --- where, and with which credentials ---------------------------------------------------

    @property
    def region(self) -> str | None:
        """The AWS region requests go to: as given, from the environment, or the profile's."""
        if self._client is not None:
            return getattr(self._client, "aws_region", None)
        found = self.aws_region or os.environ.get("AWS_REGION")
        found = found or os.environ.get("AWS_DEFAULT_REGION")
        if found or not _installed_botocore():
            return found
        config = Path(os.environ.get("AWS_CONFIG_FILE") or Path.home() / ".aws" / "config")
        return _profile_region(self._profile(), config, _modified(config))

    def _profile(self) -> str | None:
        return self.aws_profile or os.environ.get("AWS_PROFILE")

    def _bearer_token(self) -> str | None:
        return self._bearer or os.environ.get("AWS_BEARER_TOKEN_BEDROCK")

    def _credentials_source(self) -> str | None:
        if self._bearer:
            return "the Bedrock API key given in code"
        if os.environ.get("AWS_BEARER_TOKEN_BEDROCK"):
            return "the Bedrock API key in AWS_BEARER_TOKEN_BEDROCK"
        if any(self._aws_keys):
            return "the AWS keys given in code"
        if self.aws_profile:
            return f"the AWS profile {self.aws_profile!r}"
        if os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"):
            return "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        if os.environ.get("AWS_PROFILE"):
            return f"the AWS profile {os.environ['AWS_PROFILE']!r} (AWS_PROFILE)"
        for variable, source in _ROLE_VARIABLES.items():
            if os.environ.get(variable):
                return source
        if _default_profile_configured():
            return "the default AWS profile"
        if _on_ec2():
            return "the EC2 instance's role"
        return None

    def _where(self) -> str:
        return f"region {self.region or '(none)'}"

    def check(self) -> None:
        if self._client is not None:
            return
        self._require_extra()
        if not self.region:
            raise ModelError(NO_REGION)
        if self._bearer_token() and (any(self._aws_keys) or self.aws_profile):
            raise ModelError(
                "Both a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK or api_key=) and AWS "
                "credentials were given to Amazon Bedrock: keep one of them."
            )
        if self._credentials_source() is None:
            raise ModelError(NO_CREDENTIALS)

    def secret_values(self) -> dict[str, str]:
        """The credentials this model signs with, so the agent hides them wherever they
        appear (those in the environment are hidden by their names already)."""
        found: dict[str, str] = {}
        _, secret, token = self._aws_keys
        given = {
            "AWS secret access key": secret,
            "AWS session token": token,
            "Bedrock API key": self._bearer,
        }
        client = self._client
        if client is not None:
            given["AWS secret access key"] = getattr(client, "aws_secret_key", None) or secret
            given["AWS session token"] = getattr(client, "aws_session_token", None) or token
            given["Bedrock API key"] = getattr(client, "api_key", None) or self._bearer
        for name, value in given.items():
            if isinstance(value, str) and value:
                found[name] = value
        return found

    # --- the client and the request ----------------------------------------------------------

    def _client_setup(self) -> ClientSetup:
        import anthropic

        env = tuple(map(os.environ.get, _ENVIRONMENT))
        options: dict[str, Any] = {"aws_region": self.region}
        access, secret, token = self._aws_keys
        if self._bearer:
            options["api_key"] = self._bearer
        elif any(self._aws_keys) or self.aws_profile:
            options.update(
                aws_access_key=access,
                aws_secret_key=secret,
                aws_session_token=token,
                aws_profile=self.aws_profile,
            )
        elif os.environ.get("AWS_BEARER_TOKEN_BEDROCK"):
            pass  # the SDK reads it
        # The environment's keys, else its profile, are handed over as given (in the order
        # boto3 takes them): the SDK keeps one AWS session per set of arguments, which
        # would go on signing with what the environment said when it was made.
        elif os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"):
            options.update(
                aws_access_key=os.environ["AWS_ACCESS_KEY_ID"],
                aws_secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                aws_session_token=os.environ.get("AWS_SESSION_TOKEN"),
            )
        elif os.environ.get("AWS_PROFILE"):
            options["aws_profile"] = os.environ["AWS_PROFILE"]
        if self._base_url:
            options["base_url"] = self._base_url
        return anthropic.AsyncAnthropicBedrock, options, env

    def _endpoint(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        # As the SDK's client rewrites a /v1/messages request: the model into the URL,
        # the API version into the body, and the streaming endpoint instead of "stream".
        fields = {key: value for key, value in params.items() if key != "model"}
        fields["anthropic_version"] = api_version("bedrock", "bedrock-2023-05-31")
        return f"/model/{quote(params['model'], safe=':')}/invoke-with-response-stream", fields

    def _read_events(self, response: Any) -> AsyncGenerator[dict[str, Any], None]:
        return bedrock_events(response)

    # --- failures, in sentences --------------------------------------------------------------

    def _credentials_problem(self, exc: Exception, client: Any) -> str | None:
        if raised_by(exc, "botocore", "boto3") or (
            isinstance(exc, RuntimeError) and not _session_signs(client)
        ):
            source = self._credentials_source() or "the AWS SDK's usual places"
            return (
                f"The AWS credentials for Amazon Bedrock could not be loaded from {source} "
                f"({exc}): {_HOW_TO_SIGN_IN}."
            )
        return None

    def _refusal(self, status: int, message: str, kind: str | None) -> str:
        source = self._credentials_source() or "the AWS SDK's usual places"
        code = f"{status} {kind}" if kind else str(status)
        if status == 401 or kind in _REJECTED_CREDENTIALS:
            return (
                f"Amazon Bedrock rejected the AWS credentials from {source} ({code}): "
                f"{message}. Renew them (aws sso login, fresh keys) or choose others "
                "(AWS_PROFILE)."
            )
        return (
            f"Amazon Bedrock refused the request ({code}): {message}. The credentials from "
            f"{source} must be allowed bedrock:InvokeModelWithResponseStream on "
            f"{self.name!r} in {self._where()}, and the model enabled there (Bedrock "
            "console, Model access)."
        )


def _session_signs(client: Any) -> bool:
    """Whether boto3, given what ``client`` (the SDK's Bedrock client) signs with, finds
    credentials: the SDK raises a plain RuntimeError when it does not."""
    if getattr(client, "api_key", None):
        return True  # a Bedrock API key: nothing to load
    try:
        import boto3

        session = boto3.Session(
            profile_name=getattr(client, "aws_profile", None),
            region_name=getattr(client, "aws_region", None),
            aws_access_key_id=getattr(client, "aws_access_key", None),
            aws_secret_access_key=getattr(client, "aws_secret_key", None),
            aws_session_token=getattr(client, "aws_session_token", None),
        )
        return session.get_credentials() is not None
    except Exception:
        return False  # boto3 cannot even make the session: no credentials either


_REJECTED_CREDENTIALS = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "IncompleteSignatureException",
        "MissingAuthenticationTokenException",
    }
)


def _installed_botocore() -> bool:
    try:
        importlib.import_module("botocore.session")
    except ImportError:
        return False
    return True


def _modified(file: Path) -> float | None:
    try:
        return file.stat().st_mtime
    except OSError:
        return None


@functools.lru_cache(maxsize=16)
def _profile_region(profile: str | None, config: Path, modified: float | None) -> str | None:
    """The region of an AWS profile in the config files (read again once ``config`` has
    changed: after an ``aws configure``, say)."""
    import botocore.exceptions
    import botocore.session

    try:
        region = botocore.session.Session(profile=profile).get_config_variable("region")
    except botocore.exceptions.ProfileNotFound:
        raise ModelError(
            f"The AWS profile {profile!r} is not in ~/.aws/config or ~/.aws/credentials: "
            "run aws configure --profile NAME (or aws configure sso), or choose another "
            "with AWS_PROFILE."
        ) from None
    return region if isinstance(region, str) and region else None


def _default_profile_configured() -> bool:
    """Whether the AWS config or credentials file has a default profile."""
    home = Path.home() / ".aws"
    files = (
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / "credentials",
        os.environ.get("AWS_CONFIG_FILE") or home / "config",
    )
    for file in files:
        try:
            text = read_regular(file, 1 << 20)[0].decode(errors="replace")
        except OSError:
            continue
        if any(line.strip() == "[default]" for line in text.splitlines()):
            return True
    return False


def _on_ec2() -> bool:
    """Whether this is an EC2 instance (whose role may give credentials), as AWS says
    to tell it: without asking the network."""
    for file, mark in (
        ("/sys/devices/virtual/dmi/id/board_asset_tag", "i-"),
        ("/sys/hypervisor/uuid", "ec2"),
        ("/sys/devices/virtual/dmi/id/sys_vendor", "Amazon EC2"),
    ):
        try:
            if read_regular(file, 4096)[0].decode(errors="replace").strip().startswith(mark):
                return True
        except OSError:
            continue
    return False
