"""The context Ollama really runs a model with, and what to say when it is too small.

Ollama's OpenAI-compatible endpoint ignores any per-request context size: it runs a model
with the context it was started with (4,096 tokens unless ``OLLAMA_CONTEXT_LENGTH`` or a
model's ``PARAMETER num_ctx`` says otherwise), and cuts, without an error, whatever does
not fit. The agent's instructions and tools alone take about 4,000 tokens, so by default a
model would silently lose the start of its own conversation. Ollama says the context of
each model it has loaded (``GET /api/ps``, ``context_length``): asked after a reply, it
gives the window to plan for, and the words to warn with.
"""

from __future__ import annotations

import json
import urllib.request

ROOMY = 16_384
"""A context below this is too small for long work with the agent's tools."""
_MOST = 1 << 20  # bytes of an answer read at most
_FIX = (
    "Give Ollama a larger context: start it with OLLAMA_CONTEXT_LENGTH=32768 (or more) "
    "before `ollama serve`, or make a model with `PARAMETER num_ctx 32768`."
)


def served_window(root: str, name: str, timeout: float = 1.0) -> int | None:
    """The context Ollama at ``root`` runs model ``name`` with now, or None when it does
    not say (the model is not loaded, an Ollama too old to say, no Ollama). Blocks up to
    ``timeout`` seconds: call it in a thread."""
    try:
        with urllib.request.urlopen(f"{root}/api/ps", timeout=timeout) as answer:
            listed = json.loads(answer.read(_MOST))
    except (OSError, ValueError):
        return None
    models = listed.get("models") if isinstance(listed, dict) else None
    for entry in models if isinstance(models, list) else []:
        if not isinstance(entry, dict):
            continue
        names = {entry.get("name"), entry.get("model")}
        if name in names or f"{name}:latest" in names:
            size = entry.get("context_length")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                return size
    return None


def window_notice(name: str, served: int, used: int) -> tuple[str, str]:
    """What to tell the user of a context of ``served`` tokens, after a request that used
    ``used`` (prompt and answer), and its kind (``"filled"``, ``"small"``); empty when
    there is nothing to tell."""
    if used >= served * 0.95:
        return "filled", (
            f"Ollama runs {name} with a context of {served:,} tokens and cuts, without "
            f"saying so, what does not fit: this request filled it ({used:,} tokens), so "
            f"the model may not have seen all of it. {_FIX}"
        )
    if served < ROOMY:
        return "small", (
            f"Ollama runs {name} with a context of {served:,} tokens, which this "
            f"conversation will soon outgrow, and then cuts it without saying so. {_FIX}"
        )
    return "", ""
