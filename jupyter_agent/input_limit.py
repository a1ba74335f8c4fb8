"""How large a tool call's input may be: one limit, kept where the input arrives and where
it would run.

A model can write a tool input of any size (a 10 MB command line), and everything that
touches it costs time on the event loop the kernel and the Stop button share: decoding
it, the redaction pass over what a card echoes, the summary, validation, a command's
parse, the session file, the next request. So an input over :data:`TOOL_INPUT_LIMIT`
characters of JSON is refused before any of that:

- the stream parsers count each call's JSON as it streams in and stop keeping it past the
  limit (memory and work stay bounded), then give the call :func:`left_out` as its input:
  a small stand-in the conversation keeps, so the history stays valid and small;
- the dispatcher refuses a call whose input is over the limit, or is the stand-in, before
  it echoes, summarises, validates or parses anything (:func:`refusal`), with a result
  that says how to split the work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TOOL_INPUT_LIMIT = 256 * 1024
"""Characters of JSON one tool call's input may hold (a whole file's content fits)."""

LEFT_OUT = "input_left_out"
"""The key of the stand-in that replaces an input over the limit."""


def left_out(size: int) -> dict[str, Any]:
    """The input a call over the limit keeps in the conversation: its size, not its text."""
    return {LEFT_OUT: size}


def oversized(data: object, limit: int = TOOL_INPUT_LIMIT) -> int | None:
    """The size of ``data`` (a decoded tool input) when it is over ``limit`` characters of
    JSON or is the stand-in of one, else None. Counts no further than the limit: a
    string's length, a key's, and a few characters of punctuation per item."""
    if isinstance(data, Mapping) and len(data) == 1 and LEFT_OUT in data:
        size = data[LEFT_OUT]
        return size if isinstance(size, int) and size > 0 else limit + 1
    total = 0
    stack: list[object] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            for key, value in item.items():
                total += len(str(key)) + 4
                if total > limit:
                    return total
                stack.append(value)
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8  # a number, true, false or null
        if total > limit:
            return total
    return None


def refusal(size: int) -> str:
    """The result of a call whose input was over the limit."""
    return (
        f"Not run: this call's input was {size:,} characters or more, over the "
        f"{TOOL_INPUT_LIMIT:,} a tool call may send, so it was left out unread. Split the "
        "work into smaller calls: write a large file in parts (create_file with the first "
        "part, then update_file to add the rest), or have a command read its data from a "
        "file instead of passing it inline."
    )
