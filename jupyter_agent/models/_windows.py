"""How many tokens a model's context window holds (prompt and answer together)."""

from __future__ import annotations

from typing import Any

DEFAULT_WINDOW = 200_000
"""For a model this table does not know: what current Claude models hold."""

_FAMILY_WINDOWS: list[tuple[str, int]] = [
    # Claude: 200k tokens (a 1M window is a beta that must be asked for per request).
    ("claude", 200_000),
    # OpenAI-compatible names, for models served behind the same seam.
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
]


def context_window(model: Any, override: int | None = None) -> int:
    """The window to plan for: ``override``, else what the model says of itself (a
    ``context_window`` attribute), else the table by name, else :data:`DEFAULT_WINDOW`."""
    if override:
        return override
    own = getattr(model, "context_window", None)
    if isinstance(own, int) and own > 0:
        return own
    name = str(getattr(model, "name", "")).lower()
    for key, window in _FAMILY_WINDOWS:
        if key in name:
            return window
    return DEFAULT_WINDOW


def output_reserve(model: Any) -> int:
    """The tokens to keep free for the answer: the model's output limit per call."""
    limit = getattr(model, "max_tokens", None)
    return limit if isinstance(limit, int) and limit > 0 else 8_192
