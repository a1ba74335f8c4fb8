"""What one program invocation does (:class:`Effect`): the answer a :data:`Judge` of the
program table gives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ._parsed import Word

Kind = Literal["inert", "reads", "writes", "runs_code", "unknown"]

NO_FILE_EFFECTS = "no file effects"
"""What the approval card says of a builtin whose effects stay inside the shell (``sleep``,
``echo``, ``cd``): it is read-only for the rules, but reads no file either."""


@dataclass(frozen=True)
class RunTarget:
    """A file (or the files of a folder) whose code an invocation runs."""

    target: Word
    what: str
    """How the approval card names it: "the script", "the Makefile", "the test files"."""
    folder: bool = False


@dataclass(frozen=True)
class Effect:
    kind: Kind
    key: tuple[str, ...] = ()
    """For ``reads``: the program (and subcommand) a read-only rule names."""
    writes: tuple[Word, ...] = ()
    """Files and folders it writes, creates, moves or deletes (those its words name)."""
    spreads: tuple[Word, ...] = ()
    """Folders it writes files into whose names only its input knows (an archive it
    extracts, a patch, a tree it copies whole): what lands there is unknown before it runs."""
    runs: tuple[RunTarget, ...] = ()
    note: str = ""
    """What it does, in a few words for the approval card when its kind does not say it:
    why it is not read-only, or :data:`NO_FILE_EFFECTS` for a read-only builtin that
    reads no file either (``sleep 30`` does not "only read")."""
    problem: str = ""
    """Set when no rule may ever cover it (it asks every time)."""


def code(note: str, *runs: RunTarget) -> Effect:
    """It runs code (given to it, or found in ``runs``)."""
    return Effect("runs_code", runs=runs, note=note)


Judge = Callable[[str, tuple[Word, ...]], Effect]
"""What a program does, from its name (as invoked) and its arguments."""


def is_version(args: Sequence[Word]) -> bool:
    """A lone ``--version``/``--help`` (or its short form): the program only prints."""
    return len(args) == 1 and args[0].value in ("--version", "-V", "-v", "--help", "-h")
