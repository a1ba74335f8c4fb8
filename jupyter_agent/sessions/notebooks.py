"""Which notebook a session worked on, and what that means when another notebook resumes it.

A session records the notebook it works on (:attr:`~.store.SessionMetadata.notebook`: its
path relative to the workspace, in POSIX form; ``None`` in sessions saved before sessions
kept it, read as "notebook unknown"). Cell ids belong to one notebook (two notebooks made
from one file even share them), so a session continued in a notebook other than its own
keeps its conversation but not its cell references:

- the move is recorded (:class:`~.store.NotebookMove`: from which notebook, how many
  messages were held there);
- the panel shows the cell references of those messages as text, never as links into
  this notebook;
- the model's next task begins with :func:`moved_note`, so it reads this notebook before
  working on a cell it named earlier; the transcript and the search index leave that note
  out of the user's words (:func:`without_notes`).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from ..messages import STOPPED_NOTE

Where = Literal["here", "other", "unknown"]
"""A session's notebook seen from a notebook: this one, another one, or not known (a
session saved before sessions named their notebook, or one that had none)."""

UNKNOWN = "notebook unknown"
"""How a session that does not name its notebook is labelled."""

_MOVED = re.compile(
    r"\A\s*\[The conversation so far was held in the notebook .*? before working on its cells\.\]",
    re.DOTALL,
)


def notebook_name(workspace: Path, file: Path) -> str:
    """``file`` as a session records it: its path relative to ``workspace`` in POSIX form,
    or its absolute path when it lies outside."""
    return file.relative_to(workspace).as_posix() if _inside(file, workspace) else file.as_posix()


def _inside(file: Path, folder: Path) -> bool:
    return folder == file or folder in file.parents


def label(notebook: str | None) -> str:
    """A session's notebook as the picker and the tools name it."""
    return notebook or UNKNOWN


@dataclass(frozen=True)
class ThisNotebook:
    """The notebook a kernel's agent works on: its name as sessions record it, and where
    the Jupyter server puts the workspace (to name another notebook as the server does,
    so a frontend can open it)."""

    name: str
    """Relative to the workspace, as :attr:`~.store.SessionMetadata.notebook` holds it."""
    workspace: Path
    server_folder: str | None
    """The workspace as the Jupyter server names it ('' its root); None when not known (a
    frontend that names notebooks by absolute path, as VS Code does)."""

    @classmethod
    def of(cls, workspace: Path, file: Path, server_path: str) -> ThisNotebook:
        """The notebook ``file`` in ``workspace``, which the frontend calls ``server_path``
        (``__session__``: relative to the server's root in JupyterLab and Notebook 7)."""
        given = PurePosixPath(server_path.replace(os.sep, "/"))
        folder: str | None = None
        parts = given.parts
        if parts and not given.is_absolute() and file.parts[-len(parts) :] == parts:
            root = file.parents[len(parts) - 1]
            if _inside(workspace, root):
                relative = workspace.relative_to(root).as_posix()
                folder = "" if relative == "." else relative
        return cls(notebook_name(workspace, file), workspace, folder)

    def renamed(self, server_path: str) -> ThisNotebook:
        """This notebook once the Jupyter server calls it ``server_path`` (renamed or moved
        in the frontend); itself when the server's folder is not known."""
        if self.server_folder is None:
            return self
        depth = len(PurePosixPath(self.server_folder).parts)
        root = self.workspace.parents[depth - 1] if depth else self.workspace
        return ThisNotebook.of(self.workspace, root / server_path, server_path)

    def where(self, notebook: str | None) -> Where:
        """Where a session that worked on ``notebook`` stands from here."""
        if not notebook:
            return "unknown"
        return "here" if notebook == self.name else "other"

    def server_path(self, notebook: str | None) -> str:
        """``notebook`` (a session's) as the Jupyter server names it, for a frontend to
        open; empty when that cannot be said (the server's folder is not known, the path
        leaves it, or no notebook is there any longer)."""
        if not notebook or self.server_folder is None or PurePosixPath(notebook).is_absolute():
            return ""
        if not (self.workspace / notebook).is_file():
            return ""
        path = posixpath.normpath(posixpath.join(self.server_folder, notebook))
        return "" if path.startswith("../") or path == ".." else path


def where(here: ThisNotebook | None, notebook: str | None) -> Where:
    """:meth:`ThisNotebook.where`, or "unknown" when the notebook looking is not known."""
    return here.where(notebook) if here is not None else "unknown"


def moved_note(before: str, now: str) -> str:
    """What the model's next task begins with once a session moved to another notebook."""
    return (
        f"[The conversation so far was held in the notebook {before!r}; it continues now in "
        f"{now!r}. The cells it named are cells of {before!r}, not of this notebook: read "
        "this notebook before working on its cells.]"
    )


def without_notes(text: str) -> str:
    """The user's words of a task, without the notes the session put before them (the run
    before was stopped, the conversation moved to another notebook)."""
    while True:
        start = text.lstrip()
        moved = _MOVED.match(start)
        if moved is not None:
            text = start[moved.end() :]
        elif start.startswith(STOPPED_NOTE):
            text = start[len(STOPPED_NOTE) :]
        else:
            return start
