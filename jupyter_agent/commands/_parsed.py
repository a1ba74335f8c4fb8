"""What a shell command line holds once read: its words, assignments, redirections and
simple commands (:class:`Script`, the result of :func:`~._syntax.parse_script`).

Invariant: a word's ``value`` is what the shell makes of it before running, or ``None`` when
only run time knows it; only a :attr:`Word.static` word may be trusted as written.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """One shell word."""

    text: str
    """As written."""
    value: str | None
    """After quote removal, when known before running; ``None`` when only run time knows."""
    glob: bool = False
    """Holds unquoted ``*``, ``?`` or ``[``: the shell replaces it with matching file names."""

    @property
    def static(self) -> bool:
        """Known exactly before running."""
        return self.value is not None and not self.glob


@dataclass(frozen=True)
class Assignment:
    """``NAME=value``, for one command or for the rest of the line."""

    name: str
    value: Word
    text: str


@dataclass(frozen=True)
class Redirect:
    """A redirection to or from a file (not ``2>&1``-style descriptor copies)."""

    operator: str
    target: Word
    writes: bool
    reads: bool
    cwds: frozenset[str | None]
    text: str


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[Word, ...]
    """The command name and its arguments."""
    assignments: tuple[Assignment, ...]
    """``NAME=value`` words before the name: the command's own environment."""
    cwds: frozenset[str | None]
    text: str


@dataclass(frozen=True)
class Script:
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[Assignment, ...]
    """Variables set for the rest of the line (``x=1``, ``export``, ``declare``, ``for x``)."""
    functions: frozenset[str]
    """Names of the functions the line defines (their bodies are among ``commands``)."""
    problems: tuple[str, ...]
    """What could not be understood; each one makes the line ask."""
