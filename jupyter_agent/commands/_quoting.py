"""A shell word's value as bash computes it before running: quote removal and escapes.

Invariant: an escape this reader does not know gives ``None`` (only run time knows the
value), never a guess; an unquoted ``*``, ``?`` or ``[`` is reported, since the shell turns
the word into file names.
"""

from __future__ import annotations

import re

_GLOB = re.compile(r"[*?\[]")


def has_glob(raw: str) -> bool:
    """Whether an unquoted word holds ``*``, ``?`` or ``[`` that no backslash quotes."""
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if _GLOB.match(c):
            return True
        i += 1
    return False


def unescape_word(raw: str) -> str:
    """An unquoted word's value: a backslash quotes the next character; \\<newline> vanishes."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def unescape_double(raw: str) -> str:
    """Inside double quotes a backslash quotes only $ ` " \\ and newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(body: str) -> str | None:
    """The value of $'…' (bash's escapes); ``None`` for an escape the checker does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(rf"[0-9A-Fa-f]{{1,{size}}}", body[i + 2 :])
            if m is None:
                return None
            try:
                out.append(chr(int(m.group(), 16)))
            except ValueError:
                return None
            i += 2 + len(m.group())
        else:
            return None  # \cX and the like
    return "".join(out)
