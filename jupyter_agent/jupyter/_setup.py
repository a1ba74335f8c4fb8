"""Getting a kernel's agent a model: whether it can call one, and taking a key for it.

The panel's set-up box and ``%agent login`` both come here. The key goes where
:mod:`jupyter_agent.credentials` says (this process's memory; the user's own credentials
file only when asked), to the model's client, and into the agent's secret redaction; it
is never put in the environment, a trait, an event or a reply.
"""

from __future__ import annotations

from pathlib import Path

from .. import credentials
from ..agent import Agent
from ..errors import AgentError
from ..models import AnthropicModel, Model
from ..models.anthropic import REJECTED


def model_setup(model: Model) -> str:
    """Why ``model`` cannot be called yet, in a sentence; '' when it can."""
    try:
        model.check()
    except AgentError as exc:
        return str(exc)
    if getattr(model, "key_rejected", False):
        return REJECTED.format(source="")
    return ""


def use_api_key(agent: Agent, key: str, *, save: bool = False) -> Path | None:
    """Give ``agent``'s model ``key`` for this session (and save it for the user when
    ``save``). Returns the credentials file when it was saved."""
    key = credentials.check_key(key)
    model = agent.model
    if isinstance(model, AnthropicModel) and model.has_own_client:
        raise ValueError(
            "This agent's model uses an Anthropic client of your own: give that client the key."
        )
    path = credentials.save_key(key) if save else None
    credentials.use_for_session(key)
    agent.secrets.add(key, credentials.SECRET_NAME)
    if isinstance(model, AnthropicModel):
        model.use_key(key)
    return path
