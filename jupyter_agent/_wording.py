"""Small helpers for the sentences the model and the user read."""

from __future__ import annotations

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
