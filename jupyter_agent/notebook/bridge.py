"""The notebook an agent works on, behind one protocol with two implementations.

:class:`NotebookBridge` is what the notebook tools use. ``LiveBridge`` (in
``jupyter_agent.jupyter.bridge.live``) talks to the notebook open in JupyterLab through the
lab extension, so edits appear at once and each is one undo step there.
:class:`~jupyter_agent.notebook.file.FileBridge` edits the ``.ipynb`` on disk when no
frontend answers (VS Code, Colab, nbclient, papermill, scripts).

Cells are addressed by their nbformat cell id, never by index alone. A run may name the
source it expects the cell to hold (what the user approved): a bridge then runs the cell
only if that is exactly its source, checked at the moment the execution starts, and
raises :class:`SourceChanged` otherwise.

An edit cancelled (a Stop) either never lands, and the bridge re-raises the cancel; or it
was being written, and the bridge waits for the write and raises :class:`EditLanded`
with the edit's result, so the caller records what the notebook now holds.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field

from ..errors import ToolError

CellType = Literal["code", "markdown", "raw"]
BridgeMode = Literal["live", "file", "connecting"]
"""How edits reach the notebook: through the frontend, in the file, or not known yet (the
kernel still waits for a frontend's answer)."""


class Cell(BaseModel):
    """One cell as the bridges report it (nbformat fields, outputs as nbformat dicts)."""

    id: str
    cell_type: str = "code"
    """code, markdown or raw; older files may also hold others (such as heading cells)."""
    source: str = ""
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    edited_since_run: bool = False
    """A code cell whose source changed since it last ran: its outputs and execution count
    are those of its earlier source (JupyterLab's ``isDirty``; in file mode, the bridge's
    own record of its edits and runs)."""


class RunResult(BaseModel):
    status: Literal["ok", "error", "aborted", "timeout"]
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    error: dict[str, Any] | None = None
    """``ename``, ``evalue`` and ``traceback`` when the cell raised."""


@runtime_checkable
class NotebookBridge(Protocol):
    """Read and edit one notebook; run its cells."""

    @property
    def mode(self) -> BridgeMode: ...

    path: str
    """The notebook's path, as shown to the user."""

    def describe(self) -> str:
        """One line for prompts and the panel: which notebook, and how edits reach it."""
        ...

    async def read(self) -> list[Cell]: ...

    async def read_cell(self, cell_id: str) -> Cell: ...

    async def insert(
        self,
        source: str,
        cell_type: CellType = "code",
        *,
        before: str | None = None,
        after: str | None = None,
        cell_id: str | None = None,
    ) -> Cell: ...

    async def update(self, cell_id: str, source: str) -> Cell: ...

    async def delete(self, cell_id: str) -> tuple[Cell, int]:
        """Remove a cell; return it and the index it had."""
        ...

    async def move(
        self, cell_id: str, *, before: str | None = None, after: str | None = None
    ) -> int:
        """Move a cell next to another; return its new index."""
        ...

    async def set_type(self, cell_id: str, cell_type: CellType) -> Cell: ...

    async def run(
        self, cell_id: str, timeout: float | None = None, *, source: str | None = None
    ) -> RunResult:
        """Run a code cell and return how it ended, however long that takes; with
        ``timeout``, interrupt it after that many seconds (status ``timeout``). With
        ``source``, run it only if its source is exactly that when the execution starts,
        else raise :class:`SourceChanged` (nothing runs)."""
        ...

    async def outputs(self, cell_id: str) -> list[dict[str, Any]]:
        """The outputs a cell has now: while it runs, what it has printed so far."""
        ...

    async def interrupt(self, cell_id: str | None = None) -> None:
        """Interrupt the kernel; with ``cell_id``, only if that cell, run by this bridge,
        is still running (a late interrupt must not hit what the user ran next)."""
        ...

    async def save(self) -> None: ...


class EditLanded(asyncio.CancelledError):
    """A Stop came while an edit was being written: the edit landed (``result`` is what
    the bridge call returns) and the Stop goes on. A cancellation: re-raise it."""

    def __init__(self, result: Any) -> None:
        super().__init__("the edit was written before the stop")
        self.result = result


class SourceChanged(ToolError):
    """A cell was not run: its source was not the one the run expected (it changed after
    it was read and approved)."""

    def __init__(self, cell_id: str) -> None:
        super().__init__(
            f"Cell {cell_id} was not run: its code changed after it was read and approved, "
            "so nothing ran. Read it again (read_cell) before running it."
        )
        self.cell_id = cell_id


# --- running code without a frontend -------------------------------------------------

Executor = Callable[[str, float | None], Awaitable[RunResult]]
"""Runs a cell's code somewhere (the agent's own kernel, in file mode) and reports outputs;
the second argument is its timeout in seconds (None: none)."""


@runtime_checkable
class RunningExecutor(Protocol):
    """An executor that can show the code it runs as it runs, and interrupt it."""

    def outputs_so_far(self) -> list[dict[str, Any]] | None:
        """The outputs of the code running now (None when nothing runs)."""
        ...

    def interrupt(self) -> bool:
        """Interrupt the code running now; whether something was running."""
        ...


def new_cell_id() -> str:
    return uuid.uuid4().hex[:8]


# --- what the agent changed, and undoing it -----------------------------------------------


@dataclass
class Change:
    """One edit an agent made: enough to put things back."""

    kind: Literal["insert", "update", "delete", "move", "set_type"]
    cell_id: str
    run_id: str
    before: Cell | None = None
    """The cell as it was (update, delete, set_type)."""
    index: int | None = None
    """Where a deleted cell was, or where a moved cell was."""
    neighbour: str | None = None
    """For delete and move: the id of the cell that followed it, to put it back before."""


@dataclass
class ChangeLog:
    """The notebook edits of an agent, by run, so a run's edits can be undone in one call;
    and where its new cells go when the model names no place."""

    changes: list[Change] = field(default_factory=list)
    anchor: str | None = None
    """The cell that started the agent (the ``%agent`` cell, as the frontend names it):
    a run's first new cell goes after it, where the user is looking, not at the end."""

    def record(self, change: Change) -> None:
        self.changes.append(change)

    def of_run(self, run_id: str) -> list[Change]:
        return [c for c in self.changes if c.run_id == run_id]

    def places(self, run_id: str) -> list[str]:
        """Cells a new cell of ``run_id`` may follow, best first: the run's newest insert
        (so its cells stay in the order it wrote them), then the anchor."""
        inserted = [c.cell_id for c in self.of_run(run_id) if c.kind == "insert"]
        return [*inserted[-1:], *([self.anchor] if self.anchor else [])]

    async def undo(self, bridge: NotebookBridge, run_id: str) -> list[str]:
        """Undo every change of ``run_id``, newest first; return what was done."""
        done: list[str] = []
        for change in reversed(self.of_run(run_id)):
            try:
                done.append(await _revert(bridge, change))
            except EditLanded:  # stopped, but this one was undone
                self.changes.remove(change)
                raise
            self.changes.remove(change)
        return done


async def _revert(bridge: NotebookBridge, change: Change) -> str:
    # A cell's type goes back as the bridge reported it (cast: a type only older files
    # hold, such as heading, is the bridge's to refuse).
    if change.kind == "insert":
        await bridge.delete(change.cell_id)
        return f"removed inserted cell {change.cell_id}"
    if change.kind == "update":
        assert change.before is not None
        await bridge.update(change.cell_id, change.before.source)
        return f"restored cell {change.cell_id}"
    if change.kind == "set_type":
        assert change.before is not None
        await bridge.set_type(change.cell_id, cast(CellType, change.before.cell_type))
        return f"restored the type of cell {change.cell_id}"
    if change.kind == "delete":
        assert change.before is not None
        cells = await bridge.read()
        ids = [c.id for c in cells]
        before = change.neighbour if change.neighbour in ids else None
        await bridge.insert(
            change.before.source,
            cast(CellType, change.before.cell_type),
            before=before,
            cell_id=change.cell_id,
        )
        return f"put back deleted cell {change.cell_id}"
    # move: put it back before the cell that used to follow it
    cells = await bridge.read()
    ids = [c.id for c in cells]
    if change.neighbour in ids and change.neighbour != change.cell_id:
        await bridge.move(change.cell_id, before=change.neighbour)
    elif ids and ids[-1] != change.cell_id:
        await bridge.move(change.cell_id, after=ids[-1])
    return f"moved cell {change.cell_id} back"
