"""What an approval card shows, what "Always allow" may remember, and what an Allow binds.

A :data:`ApprovalPreview` is the call as the user judges it — the cell's code, the command
line with what each of its programs does, the diff a file write would make — computed by
the tool's ``preview=`` hook before anything runs. A :class:`RememberOption` is one scope
"Always allow" can take, with the rules it would add, said before the click. Both are plain
data carried on :class:`~jupyter_agent.events.PermissionRequestEvent`; text in them comes
from the model or the workspace and is shown as text, never as markup.

**An approval is bound to what its card showed.** The preview hook returns, with the card,
a :class:`Bound` for each thing the call will act on (the cell's source, the file's bytes the
diff was computed from, the scripts a command runs, an MCP call's arguments): a key and the
SHA-256 of exactly the content shown. The user's Allow becomes a :class:`Grant` holding
those digests, and the tool, at the moment it acts, hands what it is about to act on to
:meth:`Grant.check`. Content that differs raises :class:`ChangedSinceShown`, which the
dispatcher turns into a fresh card showing the content as it is now (a bounded number of
times): nothing runs that the user did not see. A call allowed by a rule shows no card and
binds nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal

from pydantic import Discriminator
from typing_extensions import assert_never

from .errors import ToolError

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
    """What it does, in a few words: why it is not read-only; "no file effects" for a
    builtin that reads no file either (``sleep 30``); else what its kind says."""
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
    """The scope in a few words, as the menu of "Always allow" lists it ("this exact
    command"; the button itself says only "Always allow")."""
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


# --- what an Allow binds -----------------------------------------------------------------

ABSENT = "absent"
"""The digest of nothing (no cell, no arguments)."""


def digest(content: str | bytes | None) -> str:
    """The digest a card binds: SHA-256 of ``content`` (text as UTF-8), :data:`ABSENT` for
    ``None``. The same text gives the same digest whether read as bytes or as text."""
    if content is None:
        return ABSENT
    return hashlib.sha256(_bytes(content)).hexdigest()


def file_hash(real_path: str, kind: Literal["file", "absent", "other"] = "file") -> Any:
    """A SHA-256 started on where a path led (``real_path``) and what was there; feed it
    the file's bytes. Shared by :func:`file_digest` and whoever hashes a file in chunks."""
    mark = {"file": b"\0", "absent": b"\1", "other": b"\2"}[kind]
    return hashlib.sha256(os.fsencode(real_path) + mark)


def file_digest(real_path: str, content: str | bytes | None) -> str:
    """The digest a card binds of a file: the path it resolved to and its bytes (``None``:
    no file there), so a link pointed elsewhere since the card counts as a change."""
    hasher = file_hash(real_path, "absent" if content is None else "file")
    if content is not None:
        hasher.update(_bytes(content))
    return str(hasher.hexdigest())


def _bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content


def cell_key(cell_id: str) -> str:
    """The key of a cell's source."""
    return f"cell:{cell_id}"


def file_key(path: str) -> str:
    """The key of a file's bytes, by the path the call names it with."""
    return f"file:{path}"


ARGUMENTS_KEY = "arguments"
"""The key of a call's arguments as the card showed them."""


@dataclass(frozen=True, slots=True)
class Bound:
    """One thing an approval card showed that the call will act on, by digest."""

    key: str
    """What it is: :func:`cell_key`, :func:`file_key` or :data:`ARGUMENTS_KEY`."""
    what: str
    """How the card and the messages name it ("cell load", "script.py")."""
    digest: str
    """:func:`digest` (or :func:`file_digest`) of exactly the content the card showed."""

    @property
    def path(self) -> str | None:
        """The file it binds, for a :func:`file_key`."""
        return self.key.removeprefix("file:") if self.key.startswith("file:") else None


@dataclass(frozen=True, slots=True)
class Shown:
    """What a preview hook returns when the card binds content: the card, and the bound."""

    card: CellPreview | CommandPreview | FilePreview | None = None
    bound: tuple[Bound, ...] = ()
    unavailable: str = ""
    """Why the card could not show what the call acts on (its preview failed or was slow):
    then no Allow of that card runs the call (see :attr:`Grant.blind`)."""


class ChangedSinceShown(ToolError):
    """What the call was about to act on is not what its approval card showed (or, for a
    call allowed without a card, not what the decision saw): it is decided again.

    Raised by a tool at the moment it acts, before it acts; the dispatcher then shows a fresh
    card. Should it reach the model, the message says that nothing ran."""

    def __init__(self, what: str, *, key: str = "") -> None:
        super().__init__(
            f"Not run: {what} changed after the call was approved, so nothing ran. "
            "Read it again before you retry."
        )
        self.what = what
        """What changed, in words ("cell load", "script.py")."""
        self.key = key


class NotShown(ChangedSinceShown):
    """The approval card could not show what the call acts on (its preview failed or was
    slow), so an Allow of it binds nothing and runs nothing: it is decided again."""

    def __init__(self, why: str) -> None:
        super().__init__(f"what it would act on ({why})")
        self.why = why


@dataclass(frozen=True)
class Grant:
    """The user's Allow of one call: the digest of everything its card showed that the
    call acts on (see the module doc)."""

    bound: tuple[Bound, ...] = ()
    warnings: tuple[str, ...] = ()
    """The warnings the card showed (a command's checks that made it ask)."""
    blind: str = ""
    """Why the card showed nothing of what the call acts on: an Allow of it binds nothing,
    so the call is not run on it; it is asked about again."""

    def get(self, key: str) -> Bound | None:
        return next((b for b in self.bound if b.key == key), None)

    def check(self, key: str, now: str) -> None:
        """Raise :class:`ChangedSinceShown` when the card showed ``key`` and ``now``, the
        digest of what the tool is about to act on, is not the digest it showed."""
        bound = self.get(key)
        if bound is not None and now != bound.digest:
            raise ChangedSinceShown(bound.what, key=key)

    def files(self) -> list[Bound]:
        """The files the card bound (a file's diff base, the scripts a command runs)."""
        return [b for b in self.bound if b.path is not None]
