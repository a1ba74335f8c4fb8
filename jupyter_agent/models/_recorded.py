"""The model string a session records, and which model a saved session goes on with.

A session file lives in the workspace, and a cloned repository can plant one. So the model
it names is taken as a name only: it goes on only where the user's own configuration would
send a model anyway. Every model string resolves to an *endpoint* (:func:`endpoint`): the
address its conversation and key go to (an ``openai-compatible`` URL, Ollama's address,
``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``…) or a cloud provider's own API (Anthropic's,
OpenAI's, Bedrock or Vertex AI in the user's own region). A recorded model resumes only on
an endpoint the user's configuration names (:func:`vouched_addresses`): a provider of their
settings, a model string of theirs (``[models]``, ``JUPYTER_AGENT_MODEL``), a base-URL
variable of their environment (``OLLAMA_HOST`` included), or the credentials they hold for
a provider. Any other endpoint would send the conversation, and perhaps the user's key,
wherever the file says, and take its replies (tool calls) from whatever answers there; "on
this machine" is no exception (Ollama's default ``localhost:11434`` included), since on a
shared host another user's program may listen there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from ._base import Model
from ._catalog import (
    _ALIAS,
    PROVIDER_TYPES,
    ModelStringError,
    ProviderConfig,
    ProviderType,
    parse_model,
)
from ._catalog import model_string as _model_string
from ._local import ollama_url
from .anthropic import has_anthropic_key

_LONGEST = 1000
"""A recorded string longer than any real one is not read (a file may say anything)."""

PUBLIC_ENDPOINTS: Mapping[ProviderType, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "bedrock": "Amazon Bedrock",
    "vertex": "Google Vertex AI",
    "scripted": "scripted",
}
"""Where a provider's models go when nothing names an address: its own API (Bedrock and
Vertex AI in the region the user's environment names; a session file names no region)."""
BASE_URL_VARIABLES: Mapping[ProviderType, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "ollama": "OLLAMA_HOST",
    "bedrock": "ANTHROPIC_BEDROCK_BASE_URL",
    "vertex": "ANTHROPIC_VERTEX_BASE_URL",
}
"""The environment variable that moves each provider's models to another address."""
CREDENTIAL_VARIABLES: Mapping[ProviderType, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "bedrock": (
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ),
    "vertex": ("CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID"),
}
"""Variables that say the user has an account with a cloud provider (Anthropic's: a key at
hand, see :func:`~jupyter_agent.models.anthropic.has_anthropic_key`). They vouch for the
provider's own API only, never for an address."""


def recorded_string(
    given: str | Model, model: Model, providers: Mapping[str, ProviderConfig]
) -> str:
    """The model string a session records for ``model``, chosen as ``given``; empty when
    it cannot be written again (a Model of the user's own class, a replay) or should not
    be (an address carrying credentials)."""
    if isinstance(given, str):
        spec = parse_model(given, providers)
        written = str(spec)
        url = spec.config.base_url if spec.provider not in providers else None
    else:  # the built-in models say which string makes them; a class of the user's cannot
        say = getattr(model, "model_string", None)
        written = (say() if callable(say) else None) or ""
        url = getattr(model, "base_url", None) if written.startswith("openai-compatible:") else None
    if written == "scripted" or (url and _carries_credentials(url)):
        return ""
    return written


def endpoint(config: ProviderConfig) -> str:
    """Where a model of this provider sends the conversation (and its key) as the
    environment stands now: its ``base_url``, else its provider's variable
    (:data:`BASE_URL_VARIABLES`; Ollama's default address when ``OLLAMA_HOST`` is unset),
    else the provider's own API (:data:`PUBLIC_ENDPOINTS`)."""
    kind = config.type
    if config.base_url:
        return _same(config.base_url)
    if kind == "ollama":
        return _same(f"{ollama_url()}/v1")
    variable = BASE_URL_VARIABLES.get(kind)
    if variable and os.environ.get(variable):
        return _same(os.environ[variable])
    return PUBLIC_ENDPOINTS.get(kind, kind)


def vouched_addresses(
    providers: Mapping[str, ProviderConfig], strings: Iterable[str | None]
) -> set[str]:
    """The endpoints the user's own configuration names: its providers', those of its
    model ``strings`` (``[models]``) and of ``JUPYTER_AGENT_MODEL``; each provider's whose
    base-URL variable is set (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``OLLAMA_HOST``…);
    and the own API of each cloud provider the user holds credentials for."""
    found = {endpoint(c) for c in providers.values()}
    for text in (*strings, os.environ.get("JUPYTER_AGENT_MODEL")):
        if not text:
            continue
        try:
            found.add(endpoint(parse_model(text, providers).config))
        except ModelStringError:
            continue
    for kind, variable in BASE_URL_VARIABLES.items():
        if os.environ.get(variable):
            found.add(endpoint(ProviderConfig(kind)))
    for kind, variables in CREDENTIAL_VARIABLES.items():
        if any(os.environ.get(v) for v in variables):
            found.add(endpoint(ProviderConfig(kind)))
    if has_anthropic_key():
        found.add(endpoint(ProviderConfig("anthropic")))
    return found


def resumed_model(
    recorded: str | None,
    provider: str,
    name: str,
    providers: Mapping[str, ProviderConfig],
    vouched: set[str] | frozenset[str] = frozenset(),
) -> tuple[str | None, str]:
    """The model string a saved session goes on with (None: the default model), and when
    that is not the model it ran on, a sentence saying why (else ``""``).

    ``recorded``: the session's model string (``""``: none could be written; None in
    sessions saved before it was kept); ``provider`` and ``name``: the model it last ran
    on; ``providers``: the ``[providers]`` of the user's settings; ``vouched``: the
    endpoints the user's configuration names (:func:`vouched_addresses`)."""
    ran_on = recorded if recorded is not None else _model_string(provider, name) or ""
    if not ran_on:
        if provider in ("", "scripted"):
            return None, ""
        return None, f"This session ran on {name[:80]} at a server whose address it did not keep."
    if len(ran_on) > _LONGEST:
        return None, "This session names a model no settings could name."
    prefix, colon, _ = ran_on.partition(":")
    if colon and _ALIAS.match(prefix) and prefix not in providers and prefix not in PROVIDER_TYPES:
        return None, (
            f"This session ran on {ran_on}, and your settings name no provider {prefix!r} now."
        )
    try:
        spec = parse_model(ran_on, providers)
    except ModelStringError:
        return None, f"This session names a model that is not one now ({ran_on[:80]})."
    where = endpoint(spec.config)
    if spec.provider not in providers and where != "scripted" and where not in vouched:
        return None, (
            f"This session ran on {ran_on[:120]} ({where[:120]}), which nothing of your own "
            "configuration names: a session file cannot choose the server your conversation "
            "and key go to. Name it in your settings ([providers] or [models] choices) to go "
            "on there by itself, or pass it as the model."
        )
    return ran_on, ""


def _same(url: str) -> str:
    """An address as compared: without the slash a user may or may not write at its end."""
    return url.strip().rstrip("/")


def _carries_credentials(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return bool(parts.username or parts.password or parts.query)
    except ValueError:
        return True  # not well formed: not kept
