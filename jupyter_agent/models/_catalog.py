"""One model string for every provider, and the models a user has configured.

A model string names a model and where it runs::

    claude-sonnet-4-6                   Claude, through the Anthropic API
    anthropic:claude-sonnet-4-6         the same, said explicitly
    openai:gpt-5                        OpenAI (OPENAI_API_KEY, OPENAI_BASE_URL)
    ollama:qwen3                        a model Ollama serves on this machine
    openai-compatible:NAME@URL          any server speaking OpenAI's Chat Completions API
    bedrock:us.anthropic.claude-…       Claude on Amazon Bedrock
    vertex:claude-sonnet-4-5@20250929   Claude on Google Vertex AI
    scripted                            a scripted replay (offline; nothing is called)
    gateway:gpt-4o                      a provider the user named in settings ([providers.gateway])

A bare name is Claude's, unless it is plainly OpenAI's (``gpt-…``, ``o3``…) or Bedrock's
(``anthropic.claude-…``, ``us.anthropic.claude-…``). The prefix is
read only when it names a provider, so a Bedrock id with its own colon
(``anthropic.claude-…-v1:0``) or an Ollama tag (``ollama:qwen3:8b``) parses as meant.

This module knows names and settings; the models themselves are made by their own modules,
imported only when used (their SDKs are optional extras).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..admin_policy import current_policy
from ._base import Model

ProviderType = Literal[
    "anthropic", "openai", "ollama", "openai-compatible", "bedrock", "vertex", "scripted"
]
PROVIDER_TYPES: tuple[ProviderType, ...] = (
    "anthropic",
    "openai",
    "ollama",
    "openai-compatible",
    "bedrock",
    "vertex",
    "scripted",
)
DEFAULT_MODELS: Mapping[ProviderType, str] = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5",
    "ollama": "qwen3",
}
"""What a bare provider name (``openai:``) means, and what the picker offers."""

_OPENAI_NAMES = re.compile(r"^(gpt-|chatgpt-|o[1-9](-|$))")
_BEDROCK_IDS = re.compile(r"^([a-z]{2,6}\.)?anthropic\.claude")
"""Bedrock's ids (``anthropic.claude-…-v1:0``, or a cross-region profile ``us.anthropic.…``)."""
_COMPATIBLE = re.compile(r"^(?P<name>[^@\s]+)@(?P<url>https?://\S+)$")
_ALIAS = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class ModelStringError(ValueError):
    """A model string that names no model; the message says what would."""


@dataclass(frozen=True)
class ProviderConfig:
    """A provider as a settings file describes it (``[providers.NAME]``)."""

    type: ProviderType
    base_url: str | None = None
    api_key_env: str | None = None
    """The environment variable holding its key (never the key itself)."""
    region: str | None = None
    project: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    """More keyword arguments for the model (max_tokens, context_window…)."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string: which provider, which model, and the provider's settings."""

    provider: str
    """The provider's name as written (``openai``, or a settings alias such as ``gateway``)."""
    name: str
    config: ProviderConfig

    def __str__(self) -> str:
        if self.provider != self.config.type:  # a provider named in the settings
            return f"{self.provider}:{self.name}"
        written = model_string(self.config.type, self.name, self.config.base_url)
        return written or "scripted"


def parse_model(text: str, providers: Mapping[str, ProviderConfig] | None = None) -> ModelSpec:
    """The :class:`ModelSpec` a model string names; :class:`ModelStringError` says why
    when it names none."""
    providers = providers or {}
    text = text.strip()
    if not text or any(ch.isspace() for ch in text):
        raise ModelStringError(f"{text!r} is not a model string: {EXAMPLES}")
    if text in ("scripted", "replay"):
        return ModelSpec("scripted", "scripted", ProviderConfig("scripted"))
    prefix, colon, rest = text.partition(":")
    if colon and (prefix in providers or prefix in PROVIDER_TYPES):
        config = providers.get(prefix) or ProviderConfig(_builtin(prefix))
        if config.type == "openai-compatible" and config.base_url is None:
            match = _COMPATIBLE.match(rest)
            if match is None:
                raise ModelStringError(
                    f"{text!r}: an OpenAI-compatible model is written "
                    "openai-compatible:NAME@URL (e.g. openai-compatible:llama3@http://gpu:8000/v1)"
                )
            rest = match["name"]
            config = ProviderConfig(
                "openai-compatible", base_url=match["url"], api_key_env=config.api_key_env
            )
        name = rest or DEFAULT_MODELS.get(config.type, "")
        if not name:
            raise ModelStringError(f"{text!r} names a provider but no model: {prefix}:MODEL")
        return ModelSpec(prefix, name, config)
    provider: ProviderType = (
        "openai"
        if _OPENAI_NAMES.match(text)
        else "bedrock"
        if _BEDROCK_IDS.match(text)
        else "anthropic"
    )
    return ModelSpec(provider, text, providers.get(provider) or ProviderConfig(provider))


def _builtin(prefix: str) -> ProviderType:
    for kind in PROVIDER_TYPES:
        if kind == prefix:
            return kind
    raise ModelStringError(f"unknown provider {prefix!r}")  # parse_model checked it


EXAMPLES = (
    "write a Claude model id (claude-sonnet-4-6), or openai:MODEL, ollama:MODEL, "
    "bedrock:MODEL, vertex:MODEL, openai-compatible:MODEL@URL, or scripted"
)


def check_alias(name: str) -> str:
    """``name`` if it may name a provider in settings (a built-in provider's name, such as
    ``openai``, configures that provider)."""
    if not _ALIAS.match(name):
        raise ValueError(
            f"provider name {name!r}: use lower-case letters, digits, - and _ (up to 32)"
        )
    return name


def make_model(spec: ModelSpec) -> Model:
    """The model ``spec`` names (its SDK is imported now; a missing one is said plainly)."""
    config = spec.config
    options = dict(config.options)
    kind = config.type
    if kind == "scripted":
        from .scripted import ScriptedModel

        return ScriptedModel()
    if config.base_url:
        options["base_url"] = config.base_url
    locked = current_policy().base_urls.get(kind)
    if locked is not None:  # the administrator's address, whatever else says otherwise
        options["base_url"] = locked
    if config.api_key_env and kind not in ("openai", "openai-compatible", "ollama"):
        options["api_key"] = os.environ.get(config.api_key_env) or None
    if kind == "anthropic":
        from .anthropic import AnthropicModel

        return AnthropicModel(spec.name, **options)
    if kind == "bedrock":
        from .bedrock import BedrockModel

        return BedrockModel(spec.name, aws_region=config.region, **options)
    if kind == "vertex":
        from .vertex import VertexModel

        options.pop("api_key", None)  # Vertex signs in with Google's credentials
        return VertexModel(spec.name, region=config.region, project_id=config.project, **options)
    from .openai import OpenAIModel

    if config.api_key_env:
        options["api_key_env"] = config.api_key_env  # its check() names it when unset
    return OpenAIModel(spec.name, provider=kind, **options)


def model_string(provider: str, name: str, base_url: str | None = None) -> str | None:
    """The model string of a model a session recorded (its provider and name), or None
    when it cannot be made again from them (a replay; a compatible server whose address
    is not known)."""
    if not name or provider == "scripted":
        return None
    if provider == "anthropic":
        return name if not _OPENAI_NAMES.match(name) else f"anthropic:{name}"
    if provider == "openai-compatible":
        return f"openai-compatible:{name}@{base_url}" if base_url else None
    if provider in PROVIDER_TYPES:
        return f"{provider}:{name}"
    return None


def allowed_by_policy(model: Model, written: str | None = None) -> Model:
    """``model``, if the administrator's policy allows it (its provider, its name, where
    it is reached); else :class:`~jupyter_agent.admin_policy.PolicyError` says why. Every
    model an agent uses comes through here (a string or an instance of the user's)."""
    policy = current_policy()
    if not policy.sources:
        return model
    provider = str(getattr(model, "provider", "") or type(model).__name__)
    say = getattr(model, "model_string", None)
    names = tuple(
        n
        for n in (written, say() if callable(say) else None, model.name, f"{provider}:{model.name}")
        if n
    )
    reach = getattr(model, "reached_at", None)
    policy.check_model(provider, names, reach() if callable(reach) else None)
    return model
