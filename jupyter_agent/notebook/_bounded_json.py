"""JSON and UTF-8 decoded in steps that each hold the GIL briefly.

``json``'s C decoder holds the GIL for the whole value it decodes: a notebook cell whose
output is a 50 MB string keeps every other thread waiting until it is done, and with them
the kernel's event loop (a Stop waits too), though the file is read in a worker thread.
Here no C call reads more than :data:`WINDOW` characters: a longer value is decoded part by
part (an object member by member, a list item by item, a long string in pieces cut between
two escapes), and between two parts the interpreter lets other threads run. The values are
exactly those ``json`` gives.

A text of at most :data:`WINDOW` characters (most notebooks) goes to the C decoder in one
call, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.decoder import JSONDecodeError
from typing import Any

WINDOW = 1 << 20
"""The most characters one call of the C decoder reads: a few milliseconds of holding the
GIL (2–3 ms for a string, up to ~15 ms for a list of numbers, on a 2-core machine)."""
_FIRST = 1 << 12
_GROWTH = 16
_DECODER = json.JSONDecoder()
# The C string scanner json uses (not in typeshed's stubs).
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")
_HIGH = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
"""The two escapes of a surrogate pair, which ``json`` joins into one character only when
they are decoded together."""


def raw_decode(text: str, start: int) -> tuple[Any, int]:
    """The JSON value at ``text[start]`` and the index just past it, as
    ``json.JSONDecoder().raw_decode(text, start)`` gives them."""
    if len(text) - start <= WINDOW:
        return _DECODER.raw_decode(text, start)
    return _value(text, start)


def loads(text: str) -> Any:
    """``text`` as one JSON value, as ``json.loads`` reads it; a leading byte-order mark is
    skipped (``json.loads`` refuses it), as in a file written with one."""
    start = _skip(text, 1 if text.startswith("\ufeff") else 0)
    value, end = raw_decode(text, start)
    end = _skip(text, end)
    if end != len(text):
        raise JSONDecodeError("Extra data", text, end)
    return value


def decode_utf8(raw: bytes) -> str:
    """``raw.decode("utf-8")``, a few megabytes per call (errors as it raises them)."""
    step = 4 * WINDOW
    if len(raw) <= step:
        return raw.decode("utf-8")
    view = memoryview(raw)
    parts: list[str] = []
    at = 0
    while at < len(raw):
        cut = min(at + step, len(raw))
        for _ in range(3):  # not inside a character: back to its first byte
            if cut < len(raw) and raw[cut] & 0xC0 == 0x80:
                cut -= 1
        try:
            parts.append(str(view[at:cut], "utf-8"))
        except UnicodeDecodeError:
            return raw.decode("utf-8")  # raises, with the position in the whole file
        at = cut
    return "".join(parts)


def search(pattern: re.Pattern[str], text: str, longest: int) -> re.Match[str] | None:
    """``pattern.search(text)`` a window at a time; ``longest``: the most characters a
    match spans (the windows overlap by that much)."""
    step = 4 * WINDOW
    at = 0
    while True:
        end = min(len(text), at + step + longest)
        found = pattern.search(text, at, end)
        if found is not None or end == len(text):
            return found
        at += step


# --- a value longer than a window --------------------------------------------------------


def _value(text: str, start: int) -> tuple[Any, int]:
    """Tried in growing windows (most values are short); past :data:`WINDOW`, in parts."""
    first = text[start : start + 1]
    if first not in ("{", "[", '"'):
        # A number or a literal: short (the C decoder reads the token alone), and a window
        # could cut it into a shorter number.
        return _DECODER.raw_decode(text, start)
    width = min(_FIRST, WINDOW)
    while True:
        if len(text) - start <= width:
            return _DECODER.raw_decode(text, start)
        try:
            # An object, a list or a string decoded whole in a window is the whole value.
            value, end = _DECODER.raw_decode(text[start : start + width])
        except JSONDecodeError:
            pass  # cut short by the window, or not valid: a wider look tells which
        else:
            return value, start + end
        if width >= WINDOW:
            break
        width = min(width * _GROWTH, WINDOW)
    if first == "{":
        return _object(text, start)
    if first == "[":
        return _array(text, start)
    return _string(text, start)


def _object(text: str, start: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    i = _skip(text, start + 1)
    if text.startswith("}", i):
        return out, i + 1
    while True:
        if not text.startswith('"', i):
            raise JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
        key, i = raw_decode(text, i)
        i = _skip(text, i)
        if not text.startswith(":", i):
            raise JSONDecodeError("Expecting ':' delimiter", text, i)
        out[key], i = raw_decode(text, _skip(text, i + 1))
        i = _skip(text, i)
        if text.startswith("}", i):
            return out, i + 1
        if not text.startswith(",", i):
            raise JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _skip(text, i + 1)


def _array(text: str, start: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    i = _skip(text, start + 1)
    if text.startswith("]", i):
        return out, i + 1
    while True:
        batch = _batch(text, i)
        if batch is None:
            value, i = raw_decode(text, i)
            out.append(value)
        else:
            items, i, closed = batch
            out.extend(items)
            if closed:
                return out, i
        i = _skip(text, i)
        if text.startswith("]", i):
            return out, i + 1
        if not text.startswith(",", i):
            raise JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _skip(text, i + 1)


def _batch(text: str, start: int) -> tuple[list[Any], int, bool] | None:
    """The items of a list from ``text[start]`` (an item's start) up to a comma within a
    window, decoded in one call (the lines of a long output, the numbers of a chart), or
    None when no comma there ends an item. Returns the items, the index of that comma (or
    just past the list, when it ends first), and whether the list ended.

    ``[`` + the text up to a comma + ``]`` is valid JSON only when that comma separates
    two items of this list: a comma inside a string leaves the string unterminated, one
    inside an item's own object or list leaves a bracket open."""
    end = text.rfind(",", start, start + WINDOW)
    for _ in range(2):  # that comma, then the last one before the item the first cut
        if end <= start:
            return None
        try:
            items, n = _DECODER.raw_decode("[" + text[start:end] + "]")
        except JSONDecodeError as e:
            end = text.rfind(",", start, start + e.pos - 1)
            continue
        if n == end - start + 2:
            return items, end, False
        return items, start + n - 1, True  # this list's own "]" came first
    return None


def _string(text: str, start: int) -> tuple[str, int]:
    """The string whose opening quote is ``text[start]``, decoded a window at a time."""
    parts: list[str] = []
    piece = start + 1
    while True:
        cut = _cut(text, piece, piece + WINDOW)
        try:
            value, end = scanstring(text[piece:cut] + '"', 0, True)
        except JSONDecodeError as e:
            if e.msg.startswith("Unterminated"):  # the text ends in a backslash
                raise JSONDecodeError("Unterminated string starting at", text, start) from None
            raise JSONDecodeError(e.msg, text, piece + e.pos) from None
        parts.append(value)
        if end <= cut - piece:  # its own closing quote, not the one added
            return "".join(parts), piece + end
        if cut >= len(text):
            raise JSONDecodeError("Unterminated string starting at", text, start)
        piece = cut


def _cut(text: str, start: int, cut: int) -> int:
    """Where a piece of string from ``start`` (not inside an escape) may end, at about
    ``cut``: not inside an escape, nor between the two escapes of a surrogate pair.

    A run of backslashes begins outside any escape (the character before it is no
    backslash, so it ends an escape or is none), and an escape covering ``cut`` begins
    with a backslash among the five characters before it."""
    if cut >= len(text):
        return len(text)
    slash = text.rfind("\\", cut - 5, cut)
    if slash >= 0:
        run = _run_start(text, start, slash)
        # Backslashes all the way from ``start`` (itself outside an escape) pair up.
        cut = run if run > start else start + 2 * ((slash + 1 - start) // 2)
    if cut - 6 >= start and _HIGH.match(text, cut - 6, cut) and _LOW.match(text, cut):
        cut += 6  # the second escape of the pair joins the first
    return cut


def _run_start(text: str, floor: int, end: int) -> int:
    """Where the run of backslashes that ``text[end]`` ends begins (not before ``floor``)."""
    while end > floor:
        low = max(floor, end - 256)
        kept = text[low:end].rstrip("\\")
        if kept or low == floor:
            return low + len(kept)
        end = low
    return end


def _skip(text: str, i: int) -> int:
    """Past the JSON whitespace at ``i``."""
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]  # `[...]*` always matches
