"""Language models behind one small protocol: Claude (on Anthropic's API, Amazon Bedrock
or Google Vertex AI), OpenAI-compatible servers (OpenAI, Ollama, vLLM, gateways), and a
scripted replay."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ._base import (
    Model,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamPart,
    StreamRestart,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
    ToolChoice,
)
from ._catalog import (
    DEFAULT_MODELS,
    ModelSpec,
    ModelStringError,
    ProviderConfig,
    allowed_by_policy,
    check_alias,
    make_model,
    model_string,
    parse_model,
)
from ._recorded import recorded_string, resumed_model, vouched_addresses
from ._usage import Pricing, Usage, pricing_for
from ._windows import DEFAULT_WINDOW, context_window, output_reserve
from .anthropic import AnthropicModel, default_model_name, has_anthropic_key
from .bedrock import BedrockModel
from .openai import OpenAIModel
from .scripted import ScriptedModel, claude_or_replay
from .vertex import VertexModel

__all__ = [
    "DEFAULT_MODELS",
    "DEFAULT_WINDOW",
    "AnthropicModel",
    "BedrockModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "ModelStringError",
    "OpenAIModel",
    "Pricing",
    "ProviderConfig",
    "ScriptedModel",
    "StreamDone",
    "StreamPart",
    "StreamRestart",
    "StreamText",
    "StreamThinking",
    "StreamToolInput",
    "StreamToolStart",
    "ToolChoice",
    "Usage",
    "VertexModel",
    "check_alias",
    "claude_or_replay",
    "context_window",
    "default_model_name",
    "default_model_string",
    "make_model",
    "model_string",
    "output_reserve",
    "parse_model",
    "pricing_for",
    "recorded_string",
    "resolve_model",
    "resumed_model",
    "vouched_addresses",
]


def resolve_model(
    model: str | Model | None,
    *,
    providers: Mapping[str, ProviderConfig] | None = None,
    default: str | None = None,
) -> Model:
    """A model from a model string, an instance, or None (see :func:`default_model_string`).
    ``providers``: the ``[providers]`` of the settings; ``default``: their ``[models] default``.
    Raises :class:`ModelStringError` for a string that names no model."""
    if isinstance(model, Model):
        return allowed_by_policy(model)
    if model is None:
        model = default_model_string(default)
    elif not isinstance(model, str):
        kind = type(model).__name__
        raise TypeError(f"model must be a model string or a Model instance, got {kind}")
    return allowed_by_policy(make_model(parse_model(model, providers)), model)


def default_model_string(configured: str | None = None) -> str:
    """The model an agent uses when none is given: ``$JUPYTER_AGENT_MODEL``, else the
    settings' ``[models] default``, else Claude when an Anthropic key is at hand, else
    OpenAI's default when ``OPENAI_API_KEY`` is set, else Claude (whose missing-key
    message then names every way to get going)."""
    chosen = os.environ.get("JUPYTER_AGENT_MODEL") or configured
    if chosen:
        return chosen
    if not has_anthropic_key() and os.environ.get("OPENAI_API_KEY"):
        return f"openai:{DEFAULT_MODELS['openai']}"
    return DEFAULT_MODELS["anthropic"]
