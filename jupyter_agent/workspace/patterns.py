"""Patterns from settings files, matched under a time bound.

A settings file may hold regular expressions and globs (a rule's ``regex`` and ``path``
matchers, an ``mcp`` matcher's server and tool names, ``[secrets] environment``), and a
folder's file is written by whoever wrote the folder. Python's ``re`` backtracks without
end on ``(.|.)*!``, holding the event loop, and Stop with it. So every such pattern is
compiled with the ``regex`` package and matched with its ``timeout=``.

Invariants kept here:

- One match holds the thread for at most :data:`MATCH_LIMIT`, and the matches of one
  :class:`Budget` (one permission decision, one look at the environment) for at most its
  total, :data:`DECISION_LIMIT` by default: past it a match is not even tried.
- A match that could not finish in time is *unsure* (``None``), never a quiet "no": the
  caller says what unsure means, failing closed (a deny or ask rule matches, an allow rule
  does not; a secret pattern hides). Each pattern that ran out of time is logged once.
- Patterns are compiled when the settings load (:func:`compile_regex`, :func:`compile_name`,
  :func:`~jupyter_agent.workspace.globs.compile_glob`): a bad one is a settings error naming
  the file,
  never a surprise at the first call.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TypeAlias

import regex

log = logging.getLogger(__name__)

MATCH_LIMIT = 0.05
"""Seconds of computing one match of a settings pattern may take (the ``regex`` package
counts the time the match computes: on a busy machine it lasts longer by the clock)."""
DECISION_LIMIT = 0.25
"""Seconds of computing all the matches of one decision may take together (the thread's
CPU time: by the clock, a decision on a loaded machine ran out while its thread waited for
a core, and a plain ``.env`` pattern counted as unsure): no match starts after it, and
none is given more than what is left."""
MAX_PATTERN = 2_000
"""Characters a settings pattern may have."""

Pattern: TypeAlias = "regex.Pattern[str]"

_reported: set[str] = set()


def compile_regex(pattern: str) -> Pattern:
    """A regular expression (Python syntax) from a settings file, compiled; raises
    :class:`ValueError` saying what is wrong with it."""
    check_length(pattern)
    return _compiled(pattern, 0)


def compile_name(pattern: str, *, ignore_case: bool = False) -> Pattern:
    """A shell-style pattern for one name (``search_*``, ``MYCO_?``), as :mod:`fnmatch`
    reads it, compiled to match the whole name."""
    check_length(pattern)
    flags = regex.IGNORECASE if ignore_case else 0
    return _compiled(fnmatch.translate(pattern), flags)


def check_length(pattern: str) -> None:
    """:class:`ValueError` for a pattern longer than :data:`MAX_PATTERN`."""
    if len(pattern) > MAX_PATTERN:
        raise ValueError(
            f"the pattern is {len(pattern):,} characters long; the limit is {MAX_PATTERN:,}"
        )


@lru_cache(maxsize=4096)
def _compiled(source: str, flags: int) -> Pattern:
    try:
        return regex.compile(source, flags)
    except (regex.error, RecursionError, OverflowError) as exc:
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(f"not a valid pattern: {why}") from None


class Budget:
    """The time the pattern matches of one decision may take together.

    ``search``, ``match`` and ``fullmatch`` answer ``True`` or ``False``, or ``None`` when
    the match ran out of time (its own :data:`MATCH_LIMIT`, or what is left of the budget).
    """

    def __init__(self, total: float = DECISION_LIMIT) -> None:
        self._deadline = time.thread_time() + total  # one decision runs in one thread
        self.unsure: list[str] = []
        """The patterns whose match ran out of time, in order."""

    def search(self, pattern: Pattern, text: str) -> bool | None:
        return self._run(pattern, pattern.search, text)

    def match(self, pattern: Pattern, text: str) -> bool | None:
        return self._run(pattern, pattern.match, text)

    def fullmatch(self, pattern: Pattern, text: str) -> bool | None:
        return self._run(pattern, pattern.fullmatch, text)

    def _run(
        self, pattern: Pattern, method: Callable[..., regex.Match[str] | None], text: str
    ) -> bool | None:
        left = self._deadline - time.thread_time()
        if left > 0:
            try:
                # concurrent: the GIL is let go while it matches (decisions run off the loop)
                found = method(text, timeout=min(MATCH_LIMIT, left), concurrent=True)
            except TimeoutError:
                pass
            else:
                return found is not None
        self.unsure.append(pattern.pattern)
        if pattern.pattern not in _reported and len(_reported) < 1000:
            _reported.add(pattern.pattern)
            log.warning(
                "a settings pattern took longer than %.0f ms to match and counts as unsure: %r",
                MATCH_LIMIT * 1000,
                pattern.pattern[:200],
            )
        return None
