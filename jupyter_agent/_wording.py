"""Small helpers for the sentences the model and the user read."""

from __future__ import annotations

import json
import re


def plural(n: int, noun: str) -> str:
    """``n`` and the noun in the number it needs: "1 step", "3 steps", "1,200 cells"."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"


def byte_size(size: int) -> str:
    """A size for people: "512 B", "1.5 KB", "3.2 MB" (units of 1,024)."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TB"


def duration(seconds: float) -> str:
    """A time span for people, compact: "0.4 s", "12 s", "4 min 12 s", "2 h 5 min"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(whole, 3600)
    minutes = rest // 60
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""Characters a terminal or a page acts on instead of showing: control codes (``\\r``,
``ESC[…``), bidirectional overrides, zero-width and tag characters."""
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\b": "\\b", "\v": "\\v", "\f": "\\f", "\0": "\\0"}


def visible(text: str) -> str:
    """``text`` with every character that could hide or rewrite what is shown escaped
    (``\\r``, ``\\x1b``, ``\\u202e``); newlines and tabs stay."""
    return _HIDDEN.sub(lambda m: _NAMED.get(m[0]) or _escape(m[0]), text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


_PLAIN = re.compile(r"[A-Za-z0-9_.:/@-]{1,1000}")
"""A value shown bare: an identifier, a number, a simple path or name."""


def name(text: str) -> str:
    """A name from data, shown bare when it is a plain identifier (``run_cell``) and
    quoted as :func:`code` otherwise, so it can never read as our words."""
    return text if _PLAIN.fullmatch(text) else code(text)


def code(text: str) -> str:
    """Text from data (a settings file, a command) set in a sentence of ours as data:
    between backticks when it is one line without a backtick or a hidden character, else
    as a JSON string with every such character escaped. Either way it cannot end the
    quote early, start a new line, or hide part of itself."""
    if text and "`" not in text and "\n" not in text and visible(text) == text:
        return f"`{text}`"
    return visible(json.dumps(text, ensure_ascii=False))
