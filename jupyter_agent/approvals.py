"""What an approval card shows: the thing itself, and what "Always allow" may remember.

A :data:`ApprovalPreview` is the call as the user judges it — the cell's code, the command
line with what each of its programs does, the diff a file write would make — computed by
the tool's ``preview=`` hook before anything runs. A :class:`RememberOption` is one scope
"Always allow" can take, with the rules it would add, said before the click.

Both are plain data carried on :class:`~jupyter_agent.events.PermissionRequestEvent`; text
in them comes from the model or the workspace and is shown as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from pydantic import Discriminator
from typing_extensions import assert_never

ProgramKind = Literal["inert", "reads", "writes", "runs_code", "unknown"]


@dataclass(frozen=True, kw_only=True, slots=True)
class CellPreview:
    """A cell about to run."""

    kind: Literal["cell"] = "cell"
    cell_id: str
    source: str
    language: str = "python"
    index: int | None = None
    """Its 1-based position among the notebook's cells (``None``: not found)."""
    count: int | None = None
    """How many cells the notebook has."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProgramPreview:
    """One program of a command line and what our analysis says it does."""

    text: str
    """The simple command as written."""
    program: str | None
    effect: ProgramKind
    note: str = ""
    """Why it is not read-only, in a few words (empty when it only reads)."""
    writes: list[str] = field(default_factory=list)
    """Files and folders its words name that it writes, creates, moves or deletes."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandPreview:
    """A shell command about to run."""

    kind: Literal["command"] = "command"
    command: str
    working_dir: str = "."
    programs: list[ProgramPreview] = field(default_factory=list)
    redirects: list[str] = field(default_factory=list)
    """Redirections that write a file (``> out.txt``)."""
    sandbox: str = ""
    """One line: what the OS sandbox lets the command do."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FilePreview:
    """A file about to be written or deleted."""

    kind: Literal["file"] = "file"
    path: str
    action: Literal["create", "overwrite", "edit", "delete"]
    diff: str | None = None
    """The unified diff the call would make (``None``: not a text file)."""


ApprovalPreview = Annotated[CellPreview | CommandPreview | FilePreview, Discriminator("kind")]


@dataclass(frozen=True, kw_only=True, slots=True)
class RememberOption:
    """One scope "Always allow" can take for a call."""

    id: str
    """``"read_only"``, ``"exact"`` or ``"tool"``; sent back with the approval."""
    label: str
    """The button's label, which states the scope ("Always allow this exact command")."""
    rules: list[str] = field(default_factory=list)
    """The descriptions of the session rules it would add."""


def map_text(
    preview: CellPreview | CommandPreview | FilePreview, fn: Callable[[str], str]
) -> CellPreview | CommandPreview | FilePreview:
    """``preview`` with ``fn`` applied to every text it shows (to hide secrets)."""
    match preview:
        case CellPreview():
            return replace(preview, source=fn(preview.source))
        case CommandPreview():
            programs = [
                replace(p, text=fn(p.text), writes=[fn(w) for w in p.writes])
                for p in preview.programs
            ]
            return replace(
                preview,
                command=fn(preview.command),
                working_dir=fn(preview.working_dir),
                programs=programs,
                redirects=[fn(r) for r in preview.redirects],
            )
        case FilePreview():
            return replace(
                preview,
                path=fn(preview.path),
                diff=fn(preview.diff) if preview.diff is not None else None,
            )
        case _:
            assert_never(preview)
