"""Language models behind one small protocol: Claude, and a scripted replay."""

from __future__ import annotations

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
from ._usage import Pricing, Usage, pricing_for
from ._windows import DEFAULT_WINDOW, context_window, output_reserve
from .anthropic import AnthropicModel, default_model_name
from .openai import OpenAIModel
from .scripted import ScriptedModel, claude_or_replay

__all__ = [
    "DEFAULT_WINDOW",
    "AnthropicModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "Pricing",
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
    "claude_or_replay",
    "context_window",
    "default_model_name",
    "output_reserve",
    "pricing_for",
    "resolve_model",
]


def resolve_model(model: str | Model | None) -> Model:
    """A model from an id, an instance, or None (``$JUPYTER_AGENT_MODEL`` or the default)."""
    if model is None or isinstance(model, str):
        if model in ("scripted", "replay"):
            return ScriptedModel()
        return AnthropicModel(model)
    if isinstance(model, Model):
        return model
    raise TypeError(f"model must be a model id or a Model instance, got {type(model).__name__}")
