"""Prompt files: plain markdown under prompts/, shipped inside the wheel."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parents[1]
# Installed: jupyter_agent/prompts (the wheel carries them there). From a source
# checkout or an editable install: the top-level prompts/ folder.
_FOLDERS = (_PACKAGE / "prompts", _PACKAGE.parent / "prompts")


@functools.cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>`` (``.md`` added when missing)."""
    filename = name if name.endswith(".md") else f"{name}.md"
    for folder in _FOLDERS:
        path = folder / filename
        if path.is_file():
            return path.read_text(encoding="utf-8").strip()
    raise FileNotFoundError(f"prompt {filename!r} not found in {', '.join(map(str, _FOLDERS))}")


_FIELD = re.compile(r"\{(\w+)\}")


def render(template: str, **values: Any) -> str:
    """Fill ``{name}`` fields; unknown names and other braces (JSON examples) stay as written."""
    return _FIELD.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)
