"""Gitignore-style globs over slash paths, for deny rules, path rules and file searches."""

from __future__ import annotations

import fnmatch
import re

_GLOB_CACHE: dict[tuple[str, bool], re.Pattern[str]] = {}


def glob_to_regex(pattern: str, *, ignore_case: bool = True) -> re.Pattern[str]:
    """A gitignore-style glob for a slash path: ``*`` stays in one folder, ``**`` crosses."""
    key = (pattern, ignore_case)
    cached = _GLOB_CACHE.get(key)
    if cached is not None:
        return cached
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    compiled = re.compile("".join(out) + r"\Z", flags)
    _GLOB_CACHE[key] = compiled
    return compiled


def glob_matches(pattern: str, parts: list[str], is_dir: bool | None = None) -> bool:
    """Whether a gitignore-style ``pattern`` refuses the path made of ``parts``.

    A pattern matching a folder refuses everything inside it. Names compare without
    case, so a case-insensitive file system cannot be used to slip past a rule.
    """
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern or not parts:
        return False
    last = len(parts) - 1
    if "/" not in pattern:
        for i, part in enumerate(parts):
            if dir_only and i == last and is_dir is False:
                continue
            if fnmatch.fnmatchcase(part.lower(), pattern.lower()):
                return True
        return False
    regex = glob_to_regex(pattern.lstrip("/"))
    for i in range(len(parts)):
        if dir_only and i == last and is_dir is False:
            continue
        if regex.match("/".join(parts[: i + 1])):
            return True
    return False
