"""Gitignore-style globs over slash paths, for deny rules, path rules and file searches.

A glob compiles to a backtracking regular expression, and a rule's glob comes from a
settings file: globs are compiled with the ``regex`` package and matched under the time
bound of :mod:`jupyter_agent.workspace.patterns` (:func:`glob_test` says when a match ran out of
time; :func:`glob_matches` counts that as a match, for its callers refuse or warn on one).
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

from .patterns import Budget, Pattern, check_length, compile_name


@lru_cache(maxsize=4096)
def glob_to_regex(pattern: str, *, ignore_case: bool = True) -> Pattern:
    """A gitignore-style glob for a slash path: ``*`` stays in one folder, ``**`` crosses."""
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
                body = pattern[i + 1 : end].replace("\\", "\\\\").replace("[", "\\[")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    flags = regex.DOTALL | (regex.IGNORECASE if ignore_case else 0)
    try:
        return regex.compile("".join(out) + r"\Z", flags)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"not a valid glob: {exc}") from None


def compile_glob(pattern: str) -> None:
    """Check a glob from a settings file; :class:`ValueError` says what is wrong."""
    check_length(pattern)
    body = pattern.rstrip("/")
    if "/" in body:
        glob_to_regex(body.lstrip("/"))
    else:
        compile_name(body.lower())


def glob_test(
    pattern: str, parts: list[str], is_dir: bool | None = None, budget: Budget | None = None
) -> bool | None:
    """Whether a gitignore-style ``pattern`` matches the path made of ``parts``; ``None``
    when a match ran out of time (see :mod:`jupyter_agent.workspace.patterns`).

    A pattern matching a folder matches everything inside it. Names compare without
    case, so a case-insensitive file system cannot be used to slip past a rule.
    """
    budget = budget or Budget()
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern or not parts:
        return False
    last = len(parts) - 1
    if "/" not in pattern:
        compiled = compile_name(pattern.lower())
        candidates = [
            p.lower() for i, p in enumerate(parts) if not _skip(dir_only, i, last, is_dir)
        ]
    else:
        compiled = glob_to_regex(pattern.lstrip("/"))
        candidates = [
            "/".join(parts[: i + 1])
            for i in range(len(parts))
            if not _skip(dir_only, i, last, is_dir)
        ]
    unsure = False
    for candidate in candidates:
        found = budget.match(compiled, candidate)
        if found:
            return True
        unsure = unsure or found is None
    return None if unsure else False


def _skip(dir_only: bool, i: int, last: int, is_dir: bool | None) -> bool:
    """A pattern for folders only (``build/``) does not match the last part when it is a file."""
    return dir_only and i == last and is_dir is False


def glob_matches(pattern: str, parts: list[str], is_dir: bool | None = None) -> bool:
    """Whether ``pattern`` matches the path made of ``parts``, a match that ran out of time
    counting as one: the callers refuse, or warn, on a match (fail closed)."""
    return glob_test(pattern, parts, is_dir) is not False
