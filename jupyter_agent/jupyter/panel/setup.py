"""Getting a kernel's agent a model: whether it can call one, and taking a key for it.

The panel's set-up box and ``%agent login`` both come here. The key goes where
:mod:`jupyter_agent.secrets.credentials` says (this process's memory; the user's own credentials
file only when asked), to the model's client, and into the agent's secret redaction; it
is never put in the environment, a trait, an event or a reply.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...agent import Agent
from ...errors import AgentError, MissingAPIKey
from ...models import (
    DEFAULT_MODELS,
    Model,
    ModelStringError,
    context_window,
    model_string,
    resolve_model,
)
from ...models._local import LOCAL_MODELS
from ...models.anthropic import REJECTED, has_anthropic_key
from ...secrets import credentials
from ...secrets.environment import JUPYTER_ENVIRONMENT, key_environment
from ...secrets.shapes import mask_secrets
from .protocol import ModelChoice


def model_setup(model: Model, *, headline: bool = False) -> str:
    """Why ``model`` cannot be called yet, in a sentence; '' when it can. ``headline``: for
    the set-up box, which shows the ways to get going itself (its key field and its list),
    a missing key is said in one sentence rather than with every way again."""
    try:
        model.check()
    except MissingAPIKey as exc:
        return exc.headline if headline else str(exc)
    except AgentError as exc:
        return str(exc)
    if getattr(model, "key_rejected", False):
        return getattr(model, "rejected_message", "") or REJECTED.format(source="")
    return ""


def use_api_key(agent: Agent, key: str, *, save: bool = False) -> Path | None:
    """Give ``agent``'s model ``key`` for this session (and save it for the user when
    ``save``): an Anthropic key for Claude, an OpenAI key for OpenAI's models. Returns the
    credentials file when it was saved."""
    key = credentials.check_key(key)
    model = agent.model
    provider = model.provider
    use_key = getattr(model, "use_key", None)
    if provider not in credentials.PROVIDERS or use_key is None:
        raise ValueError(
            f"This agent's model ({model.name}, {provider}) takes no key here: " + keyless(provider)
        )
    if getattr(model, "has_own_client", False):
        raise ValueError("This agent's model uses a client of your own: give that client the key.")
    path = credentials.save_key(key, provider) if save else None
    credentials.use_for_session(key, provider)
    agent.secrets.add(key, credentials.SECRET_NAME)
    use_key(key)
    return path


def keyless(provider: str) -> str:
    """How a model of ``provider``, which takes no key from the panel, gets going."""
    advice = _KEYLESS.get(provider, "give the model its key in code.")
    return advice.replace(JUPYTER_ENVIRONMENT, key_environment())


_KEYLESS = {
    "bedrock": "it signs with your AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID "
    "and AWS_SECRET_ACCESS_KEY, in the environment Jupyter starts in).",
    "vertex": "it uses your Google Cloud credentials (gcloud auth application-default "
    "login, or GOOGLE_APPLICATION_CREDENTIALS).",
    "ollama": "Ollama needs no key.",
    "openai-compatible": "name the variable holding its key in your settings "
    "([providers.NAME] api_key_env).",
    "scripted": "a scripted replay needs no key.",
}


def model_choices(agent: Agent) -> list[ModelChoice]:
    """What the model picker lists (see :func:`offered_models`)."""
    return [choice for _, choice in offered_models(agent)]


def offered_models(agent: Agent) -> list[tuple[str, ModelChoice]]:
    """What the model picker lists, each with its model string: the model in use, the
    settings' ``[models] choices``, the default model of each provider whose key is at
    hand and the models Ollama serves here, each saying whether it can be called now.
    A choice shows its string with any credential in it masked (a URL's password, a key
    in its query): the string itself stays in the kernel."""
    current = agent.model
    current_id = (
        model_string(current.provider, current.name, getattr(current, "base_url", None))
        or current.name
    )
    offered = [(current_id, _choice(current_id, current, current=True))]
    wanted = [*agent.model_choices]
    if has_anthropic_key():
        wanted.append(DEFAULT_MODELS["anthropic"])
    if os.environ.get("OPENAI_API_KEY") or _saved_openai_key():
        wanted.append(f"openai:{DEFAULT_MODELS['openai']}")
    wanted.extend(LOCAL_MODELS.known())  # what Ollama serves here, when it runs
    seen = {current_id}
    for given in wanted:
        if given in seen:
            continue
        seen.add(given)
        try:
            model = resolve_model(given, providers=agent.providers)
        except (ModelStringError, AgentError, ImportError) as exc:
            shown = mask_secrets(given)
            problem = mask_secrets(str(exc))
            choice = ModelChoice(
                id=shown, label=shown, provider="", current=False, ready=False, setup=problem
            )
            offered.append((given, choice))
            continue
        offered.append((given, _choice(given, model, current=False)))
    return offered


def _saved_openai_key() -> bool:
    try:
        return credentials.stored_key("openai") is not None
    except credentials.CredentialsError:
        return False  # the file's problem is said by a model that would use it


def _choice(given: str, model: Model, *, current: bool) -> ModelChoice:
    setup = model_setup(model)
    shown = mask_secrets(given)
    return ModelChoice(
        id=shown,
        label=shown if model.provider != "scripted" else "scripted replay",
        provider=model.provider,
        current=current,
        ready=not setup,
        setup=setup,
    )


def model_notes(model: Model) -> str:
    """What ``model``'s provider lacks, or what is assumed of it, in a sentence (empty
    when nothing)."""
    notes = []
    if getattr(model, "images", True) is False:
        notes.append("it takes no images (plots reach it as a note only)")
    if getattr(model, "cache", True) is False:
        notes.append("prompt caching is off (each step is sent at full price)")
    if model.provider in _SERVED and getattr(model, "pricing", True) is None:
        notes.append("its price is unknown, so costs show as unknown")
    if model.provider in ("ollama", "openai-compatible") and not getattr(
        model, "context_window", None
    ):
        notes.append(
            f"its context window is taken to be {context_window(model):,} tokens "
            "(set context_window in its [providers] settings if it holds fewer)"
        )
    if not notes:
        return ""
    return f"{model.name}: " + "; ".join(notes) + "."


_SERVED = ("openai", "ollama", "openai-compatible")
