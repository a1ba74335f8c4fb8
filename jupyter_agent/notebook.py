"""The notebook an agent works on, behind one protocol with two implementations.

:class:`NotebookBridge` is what the notebook tools use. ``LiveBridge`` (in
``jupyter_agent.jupyter.bridge``) talks to the notebook open in JupyterLab through the
lab extension, so edits appear at once and each is one undo step there.
:class:`FileBridge` edits the ``.ipynb`` on disk with nbformat when no frontend answers
(VS Code, Colab, nbclient, papermill, scripts); it refuses to write over a file that
changed on disk since it last read it, so no one's edit is lost.

Cells are addressed by their nbformat cell id, never by index alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from .errors import ToolError
from .sandbox import atomic_write_bytes

CellType = Literal["code", "markdown", "raw"]
BridgeMode = Literal["live", "file"]


class Cell(BaseModel):
    """One cell as the bridges report it (nbformat fields, outputs as nbformat dicts)."""

    id: str
    cell_type: CellType = "code"
    source: str = ""
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunResult(BaseModel):
    status: Literal["ok", "error", "aborted", "timeout"]
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    error: dict[str, Any] | None = None
    """``ename``, ``evalue`` and ``traceback`` when the cell raised."""


@runtime_checkable
class NotebookBridge(Protocol):
    """Read and edit one notebook; run its cells."""

    mode: BridgeMode
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

    async def run(self, cell_id: str, timeout: float = 120.0) -> RunResult: ...

    async def interrupt(self) -> None: ...

    async def save(self) -> None: ...


# --- running code without a frontend -------------------------------------------------

Executor = Callable[[str, float], Awaitable[RunResult]]
"""Runs a cell's code somewhere (the agent's own kernel, in file mode) and reports outputs."""


# --- the file implementation ----------------------------------------------------------


def new_cell_id() -> str:
    return uuid.uuid4().hex[:8]


class FileBridge:
    """Edits a ``.ipynb`` file directly; runs cells through an optional executor."""

    mode: BridgeMode = "file"

    def __init__(self, path: str | Path, executor: Executor | None = None) -> None:
        self.file = Path(path).resolve()
        self.path = str(path)
        self.executor = executor
        self._seen: str | None = None
        """Hash of the file as this bridge last read or wrote it."""
        self._lock = asyncio.Lock()

    def describe(self) -> str:
        running = "cells run in this kernel" if self.executor else "cells cannot be run"
        return (
            f"{self.path} — file mode: no notebook frontend answered, so edits are written "
            f"to the .ipynb on disk ({running}); reload the notebook to see them"
        )

    # nbformat is imported lazily: the framework does not need it until a notebook is used
    def _load(self, *, check: bool) -> Any:
        import nbformat

        try:
            raw = self.file.read_bytes()
        except FileNotFoundError:
            raise ToolError(f"The notebook {self.path} does not exist.") from None
        digest = hashlib.sha256(raw).hexdigest()
        if check and self._seen is not None and digest != self._seen:
            raise ToolError(
                f"{self.path} changed on disk since it was last read (someone saved it). "
                "Nothing was written, so no edit is lost: call read_notebook again, then retry."
            )
        self._seen = digest
        nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
        for cell in nb.cells:
            if not cell.get("id"):
                cell["id"] = new_cell_id()  # nbformat < 4.5 files: give every cell an id
        return nb

    def _store(self, nb: Any) -> None:
        import nbformat

        data = nbformat.writes(nb).encode("utf-8")
        if not data.endswith(b"\n"):
            data += b"\n"
        atomic_write_bytes(self.file, data)
        self._seen = hashlib.sha256(data).hexdigest()

    async def read(self) -> list[Cell]:
        async with self._lock:
            return [_cell(c) for c in self._load(check=False).cells]

    async def read_cell(self, cell_id: str) -> Cell:
        async with self._lock:
            nb = self._load(check=False)
            return _cell(nb.cells[_index(nb.cells, cell_id)])

    async def insert(
        self,
        source: str,
        cell_type: CellType = "code",
        *,
        before: str | None = None,
        after: str | None = None,
        cell_id: str | None = None,
    ) -> Cell:

        async with self._lock:
            nb = self._load(check=True)
            cell = _new_cell(cell_type, source, cell_id or new_cell_id())
            nb.cells.insert(_position(nb.cells, before, after), cell)
            self._store(nb)
            return _cell(cell)

    async def update(self, cell_id: str, source: str) -> Cell:
        async with self._lock:
            nb = self._load(check=True)
            cell = nb.cells[_index(nb.cells, cell_id)]
            cell["source"] = source
            self._store(nb)
            return _cell(cell)

    async def delete(self, cell_id: str) -> tuple[Cell, int]:
        async with self._lock:
            nb = self._load(check=True)
            index = _index(nb.cells, cell_id)
            cell = nb.cells.pop(index)
            self._store(nb)
            return _cell(cell), index

    async def move(
        self, cell_id: str, *, before: str | None = None, after: str | None = None
    ) -> int:
        async with self._lock:
            nb = self._load(check=True)
            cell = nb.cells.pop(_index(nb.cells, cell_id))
            try:
                index = _position(nb.cells, before, after)
            except ToolError:
                raise ToolError(f"Cannot move cell {cell_id} next to itself.") from None
            nb.cells.insert(index, cell)
            self._store(nb)
            return index

    async def set_type(self, cell_id: str, cell_type: CellType) -> Cell:

        async with self._lock:
            nb = self._load(check=True)
            index = _index(nb.cells, cell_id)
            old = nb.cells[index]
            new = _new_cell(cell_type, old["source"], old["id"])
            new["metadata"] = old.get("metadata", {})
            nb.cells[index] = new
            self._store(nb)
            return _cell(new)

    async def run(self, cell_id: str, timeout: float = 120.0) -> RunResult:
        if self.executor is None:
            raise ToolError(
                f"Cells of {self.path} cannot be run here: no notebook frontend is connected "
                "and no kernel was given to run them."
            )
        cell = await self.read_cell(cell_id)
        if cell.cell_type != "code":
            raise ToolError(f"Cell {cell_id} is a {cell.cell_type} cell; only code cells run.")
        result = await self.executor(cell.source, timeout)
        async with self._lock:
            nb = self._load(check=True)
            stored = nb.cells[_index(nb.cells, cell_id)]
            import nbformat

            stored["outputs"] = [nbformat.from_dict(o) for o in result.outputs]
            stored["execution_count"] = result.execution_count
            self._store(nb)
        return result

    async def interrupt(self) -> None:
        return None  # the executor runs in-process; a cancel is what stops it

    async def save(self) -> None:
        return None  # every edit is already on disk


def _new_cell(cell_type: CellType, source: str, cell_id: str) -> Any:
    import nbformat

    make = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }[cell_type]
    return make(source, id=cell_id)


def _cell(raw: Any) -> Cell:
    source = raw.get("source", "")
    if isinstance(source, list):
        source = "".join(source)
    return Cell(
        id=raw["id"],
        cell_type=raw.get("cell_type", "code"),
        source=source,
        execution_count=raw.get("execution_count"),
        outputs=[dict(o) for o in raw.get("outputs", [])],
        metadata=dict(raw.get("metadata", {})),
    )


def _index(cells: Sequence[Any], cell_id: str) -> int:
    for i, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return i
    known = ", ".join(str(c.get("id")) for c in cells[:40])
    raise ToolError(f"There is no cell with id {cell_id!r}. The cell ids are: {known}.")


def _position(cells: Sequence[Any], before: str | None, after: str | None) -> int:
    if before is not None and after is not None:
        raise ToolError("Give either before or after, not both.")
    if before is not None:
        return _index(cells, before)
    if after is not None:
        return _index(cells, after) + 1
    return len(cells)


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
    """The notebook edits of an agent, by run, so a run's edits can be undone in one call."""

    changes: list[Change] = field(default_factory=list)

    def record(self, change: Change) -> None:
        self.changes.append(change)

    def of_run(self, run_id: str) -> list[Change]:
        return [c for c in self.changes if c.run_id == run_id]

    async def undo(self, bridge: NotebookBridge, run_id: str) -> list[str]:
        """Undo every change of ``run_id``, newest first; return what was done."""
        done: list[str] = []
        for change in reversed(self.of_run(run_id)):
            done.append(await _revert(bridge, change))
            self.changes.remove(change)
        return done


async def _revert(bridge: NotebookBridge, change: Change) -> str:
    if change.kind == "insert":
        await bridge.delete(change.cell_id)
        return f"removed inserted cell {change.cell_id}"
    if change.kind == "update":
        assert change.before is not None
        await bridge.update(change.cell_id, change.before.source)
        return f"restored cell {change.cell_id}"
    if change.kind == "set_type":
        assert change.before is not None
        await bridge.set_type(change.cell_id, change.before.cell_type)
        return f"restored the type of cell {change.cell_id}"
    if change.kind == "delete":
        assert change.before is not None
        cells = await bridge.read()
        ids = [c.id for c in cells]
        before = change.neighbour if change.neighbour in ids else None
        await bridge.insert(
            change.before.source, change.before.cell_type, before=before, cell_id=change.cell_id
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
