"""The notebook as a file: :class:`FileBridge` edits the ``.ipynb`` on disk.

Used when no notebook frontend answers (VS Code, Colab, nbclient, papermill, scripts).
It works on the notebooks people have:

- **Ids.** Cells of files without stored ids (nbformat before 4.5), and later cells that
  repeat a stored id, get ids derived from their content, identical on every read. An id
  stays with its cell across the agent's edits and across edits someone else saves
  (cells are matched by content, then by position), and, with an :class:`IdMemory`, in
  the next session and in other processes too. An id never moves to another cell: when
  a saved change leaves it unclear which of several identical cells one now is, or the
  cell is gone, the id is retired, and using it is refused with the cells that hold what
  it held. Ids are written only to files that store ids.
- **The file's own form.** Only the cells an edit touches change, in the file's version,
  indentation, key order and line endings (:mod:`jupyter_agent.notebook.ipynb`).
- **Nothing lost.** A file that changed on disk since it was read is not written over; a
  file that cannot be read is not written at all; an edit that would make a valid file
  invalid is refused; a write replaces the file atomically.
- **Only the notebook.** The file is read and written through the path gate
  (:mod:`jupyter_agent.workspace.paths`) beneath its folder (or the workspace it was given): a
  notebook path that is a link out of that folder, or a folder on the way swapped for a
  link during a run of edits, is refused; nothing outside is read or written.

File work runs in a worker thread, so a large notebook never holds the kernel's event loop
(a Stop is seen at once); one edit at a time. An edit lands whole or not at all: what it
returns is made before the file is written, and a Stop before the write keeps it from
ever being written, while a Stop during the write waits for it (:class:`EditLanded`).
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from .._tasks import to_the_end
from ..errors import ToolError
from ..workspace.paths import NotRegularFile, PathRefused, Root
from . import _bounded_json
from .bridge import (
    BridgeMode,
    Cell,
    CellType,
    EditLanded,
    Executor,
    RunningExecutor,
    RunResult,
    SourceChanged,
    new_cell_id,
)
from .id_memory import IdMemory, Remembered, retire
from .ipynb import Document, NotebookFormatError, derive_ids, fingerprint

T = TypeVar("T")


class FileBridge:
    """Edits a ``.ipynb`` file directly; runs cells through an optional executor."""

    mode: BridgeMode = "file"

    def __init__(
        self,
        path: str | Path,
        executor: Executor | None = None,
        *,
        root: Path | None = None,
        memory: IdMemory | None = None,
    ) -> None:
        """``root``: the folder the notebook must lie beneath (default: its own folder);
        it is pinned when the bridge first opens the file. ``memory``: where the ids given
        out are kept for the next session (default: this bridge's lifetime only)."""
        self.file = Path(os.path.abspath(os.path.expanduser(path)))
        self.path = str(path)
        if self.file.is_dir():
            raise NotebookFormatError(
                f"{path} is a folder, not a notebook file. Give the path of an .ipynb file."
            )
        self.executor = executor
        self._root = Path(os.path.abspath(root)) if root is not None else self.file.parent
        self._gate: Root | None = None
        self._seen: str | None = None
        """Hash of the file as this bridge last read or wrote it."""
        self._ids: list[str] = []
        self._prints: list[str] = []
        """The cells' ids and content fingerprints as last read or written."""
        self._valid: dict[str, bool] = {}
        """Whether the file as last written (by its hash) is a valid notebook."""
        self._aliases: dict[str, str] = {}
        """Ids the model was given that the file has since replaced (a frontend saved ids)."""
        self._retired: dict[str, str] = {}
        """Ids given out that no cell has any more, with the fingerprint of the cell each
        named: never given to another cell."""
        self._memory = memory
        self._recalled = False
        self._known: str | None = None
        """The hash of the file the ids kept in ``memory`` describe."""
        self._ran: dict[str, str] = {}
        """For code cells edited since they ran: the print of the source their outputs
        are of (:func:`_source_print`)."""
        self._kept: tuple[object, ...] | None = None
        """What ``memory`` holds now, to write it only on change."""
        self._running: str | None = None
        """The cell the executor runs now."""
        self._lock = asyncio.Lock()
        self._file_lock = threading.Lock()
        """Held by the worker thread: a cancelled call's write finishes before the next."""
        self._commit: _Commit | None = None
        """The edit the worker thread makes now (under the file lock)."""

    def describe(self) -> str:
        running = "cells run in this kernel" if self.executor else "cells cannot be run"
        return (
            f"{self.path} — file mode: no notebook frontend answered, so edits are written "
            f"to the .ipynb on disk ({running}); reload the notebook to see them"
        )

    # --- the notebook tools' operations -------------------------------------------------

    async def read(self) -> list[Cell]:
        def work() -> list[Cell]:
            doc, ids = self._open(check=False)
            return [self._report(doc, i, ids[i]) for i in range(len(doc.cells))]

        return await self._in_thread(work)

    async def read_cell(self, cell_id: str) -> Cell:
        def work() -> Cell:
            doc, ids = self._open(check=False)
            i = self._find(ids, cell_id)
            return self._report(doc, i, ids[i])

        return await self._in_thread(work)

    async def insert(
        self,
        source: str,
        cell_type: CellType = "code",
        *,
        before: str | None = None,
        after: str | None = None,
        cell_id: str | None = None,
    ) -> Cell:
        def work() -> Cell:
            doc, ids = self._open(check=True)
            position = self._place(ids, before, after)
            new_id = cell_id if cell_id and cell_id not in ids else _fresh_id(self._taken(ids))
            doc.insert(position, _new_cell(cell_type, source, new_id))
            ids.insert(position, new_id)
            inserted = self._report(doc, position, new_id)
            self._save(doc, ids)
            return inserted

        return await self._in_thread(work, edit=True)

    async def update(self, cell_id: str, source: str) -> Cell:
        def work() -> Cell:
            doc, ids = self._open(check=True)
            i = self._find(ids, cell_id)
            cell = doc.cell(i)
            ran = dict(self._ran)
            if cell.get("outputs") or cell.get("execution_count") is not None:
                ran.setdefault(ids[i], _source_print(cell.get("source", "")))
            cell["source"] = source
            doc.replace(i, cell)
            updated = self._report(doc, i, ids[i], ran)
            self._save(doc, ids, ran=ran)
            return updated

        return await self._in_thread(work, edit=True)

    async def delete(self, cell_id: str) -> tuple[Cell, int]:
        def work() -> tuple[Cell, int]:
            doc, ids = self._open(check=True)
            i = self._find(ids, cell_id)
            cell = self._report(doc, i, ids[i])
            doc.delete(i)
            ids.pop(i)
            self._save(doc, ids)
            return cell, i

        return await self._in_thread(work, edit=True)

    async def move(
        self, cell_id: str, *, before: str | None = None, after: str | None = None
    ) -> int:
        def work() -> int:
            doc, ids = self._open(check=True)
            i = self._find(ids, cell_id)
            rest = ids[:i] + ids[i + 1 :]
            try:
                to = self._place(rest, before, after)
            except ToolError:
                raise ToolError(f"Cannot move cell {cell_id} next to itself.") from None
            doc.move(i, to)
            ids.insert(to, ids.pop(i))
            self._save(doc, ids)
            return to

        return await self._in_thread(work, edit=True)

    async def set_type(self, cell_id: str, cell_type: CellType) -> Cell:
        def work() -> Cell:
            doc, ids = self._open(check=True)
            i = self._find(ids, cell_id)
            old = doc.cell(i)
            new = _new_cell(cell_type, old.get("source", ""), cell_id)
            new["metadata"] = old.get("metadata", {})
            if cell_type != "code" and "attachments" in old:
                new["attachments"] = old["attachments"]
            doc.replace(i, new)
            ran = {k: v for k, v in self._ran.items() if k != ids[i] or cell_type == "code"}
            changed = self._report(doc, i, ids[i], ran)
            self._save(doc, ids, ran=ran)
            return changed

        return await self._in_thread(work, edit=True)

    async def run(
        self, cell_id: str, timeout: float | None = None, *, source: str | None = None
    ) -> RunResult:
        if self.executor is None:
            raise ToolError(
                f"Cells of {self.path} cannot be run here: no notebook frontend is connected "
                "and no kernel was given to run them."
            )

        def read() -> Cell:
            doc, ids = self._open(check=False)
            i = self._find(ids, cell_id)
            found = self._report(doc, i, ids[i])
            # Compared under the file lock, and what runs is this very text: a change saved
            # after this read cannot reach the executor.
            if found.cell_type == "code" and source is not None and found.source != source:
                raise SourceChanged(cell_id)
            return found

        cell = await self._in_thread(read)
        if cell.cell_type != "code":
            raise ToolError(f"Cell {cell_id} is a {cell.cell_type} cell; only code cells run.")
        self._running = cell_id
        try:
            result = await self.executor(cell.source, timeout)
        finally:
            self._running = None

        def store() -> None:
            doc, ids = self._open(check=True)
            i = self._find(ids, cell_id)
            stored = doc.cell(i)
            stored["outputs"] = [dict(o) for o in result.outputs]
            stored["execution_count"] = result.execution_count
            doc.replace(i, stored)
            self._save(doc, ids, ran={k: v for k, v in self._ran.items() if k != ids[i]})

        await self._in_thread(store, edit=True)
        return result

    async def outputs(self, cell_id: str) -> list[dict[str, Any]]:
        executor = self.executor
        if self._running == cell_id and isinstance(executor, RunningExecutor):
            so_far = executor.outputs_so_far()
            if so_far is not None:
                return so_far
        return (await self.read_cell(cell_id)).outputs

    async def interrupt(self, cell_id: str | None = None) -> None:
        # The executor runs in this process: it stops its own code (a cancel also does).
        executor = self.executor
        if (cell_id is None or self._running == cell_id) and isinstance(executor, RunningExecutor):
            executor.interrupt()

    async def save(self) -> None:
        return None  # every edit is already on disk

    # --- the file -----------------------------------------------------------------------

    async def _in_thread(self, work: Callable[[], T], *, edit: bool = False) -> T:
        """``work`` in a worker thread, one at a time. Cancelled, a read or an edit not yet
        written is abandoned (it never writes); an edit being written is waited for, and
        :class:`EditLanded` carries its result."""
        commit = _Commit() if edit else None

        def locked() -> T:
            with self._file_lock:
                self._commit = commit
                try:
                    return work()
                finally:
                    self._commit = None

        async with self._lock:
            task = asyncio.ensure_future(asyncio.to_thread(locked))
            # Abandoned work ends in the background; its error is nobody's to report.
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if commit is None or commit.abandon():
                    raise
                result, _ = await to_the_end(task)  # raises if the write failed
                raise EditLanded(result) from None

    def _open(self, *, check: bool) -> tuple[Document, list[str]]:
        """The file as a document, and its cells' ids; ``check``: refuse if changed on disk."""
        try:
            raw = self._folder().read(self.file)
        except FileNotFoundError:
            raise ToolError(f"The notebook {self.path} does not exist.") from None
        except NotRegularFile as exc:
            if exc.what != "a folder":
                raise ToolError(f"The notebook {self.path} cannot be opened: {exc}") from None
            raise NotebookFormatError(
                f"{self.path} is a folder, not a notebook file; nothing was written. "
                "Give the path of an .ipynb file."
            ) from None
        except OSError as exc:  # a link out of its folder
            raise ToolError(f"The notebook {self.path} cannot be opened: {exc}") from None
        digest = hashlib.sha256(raw).hexdigest()
        if check and self._seen is not None and digest != self._seen:
            raise ToolError(
                f"{self.path} changed on disk since it was last read (someone saved it). "
                "Nothing was written, so no edit is lost: call read_notebook again, then retry."
            )
        try:
            text = _bounded_json.decode_utf8(raw)  # a large file in steps: the loop runs
        except UnicodeDecodeError as e:
            raise NotebookFormatError(
                f"{self.path} is not UTF-8 text ({e.reason} at byte {e.start}); "
                "it is not a notebook, and it was not changed."
            ) from None
        doc = Document.parse(text, self.path)
        prints = [fingerprint(c.value) for c in doc.cells]
        self._recall()
        if digest == (self._seen or self._known) and len(self._ids) == len(prints):
            ids = list(self._ids)
        else:
            ids = self._identify(doc, prints)
        self._seen = digest
        self._settle(ids, prints)
        return doc, ids

    def _recall(self) -> None:
        """Once, before the first read: the ids the memory kept from earlier sessions."""
        if self._memory is None or self._recalled:
            return
        self._recalled = True
        kept = self._memory.load()
        if kept is not None and self._seen is None:
            self._ids, self._prints, self._retired = kept.ids, kept.prints, kept.retired
            self._ran, self._known = kept.ran, kept.digest
            self._kept = _state(kept)

    def _settle(self, ids: list[str], prints: list[str]) -> None:
        """The cells' ids and prints from now on (of the file whose hash is ``_seen``):
        ids no cell has any more are retired, and the memory keeps it all."""
        if ids != self._ids:  # most reads find the cells as they were: nothing to retire
            retire(self._retired, dict(zip(self._ids, self._prints, strict=True)), ids)
            current = set(ids)
            self._ran = {k: v for k, v in self._ran.items() if k in current}
        self._ids, self._prints = list(ids), prints
        if self._memory is None or self._seen is None:
            return
        now = Remembered(self._seen, list(ids), prints, self._retired, self._ran)
        state = _state(now)
        if state != self._kept:
            self._memory.save(now)
            self._kept = state

    def _taken(self, ids: Sequence[str]) -> set[str]:
        """Ids a new cell may not get: those in use and those retired."""
        return {*ids, *self._retired}

    def _find(self, ids: Sequence[str], cell_id: str) -> int:
        """The position of ``cell_id`` in ``ids``; a clear refusal when it is not there."""
        cell_id = self._aliases.get(cell_id, cell_id)
        try:
            return ids.index(cell_id)
        except ValueError:
            pass
        if cell_id in self._retired:
            held = self._retired[cell_id]
            same = [
                f"{c} (cell {n})"
                for n, (c, p) in enumerate(zip(self._ids, self._prints, strict=True), 1)
                if p == held
            ]
            where = (
                f"The cells that hold what it held: {', '.join(same[:20])}."
                if same
                else "No cell holds what it held now."
            )
            raise ToolError(
                f"Cell {cell_id} is no longer in the notebook as you read it: it was deleted, "
                "or the notebook was saved with changes that leave it unclear which cell it "
                f"is now, so nothing was changed. {where} Read the notebook again "
                "(read_notebook) and use the ids it gives."
            )
        known = ", ".join(ids[:40]) + (f" … ({len(ids)} cells)" if len(ids) > 40 else "")
        raise ToolError(f"There is no cell with id {cell_id!r}. The cell ids are: {known}.")

    def _place(self, ids: Sequence[str], before: str | None, after: str | None) -> int:
        """Where a cell goes: before or after the cell named, or at the end."""
        if before is not None and after is not None:
            raise ToolError("Give either before or after, not both.")
        if before is not None:
            return self._find(ids, before)
        if after is not None:
            return self._find(ids, after) + 1
        return len(ids)

    def _folder(self) -> Root:
        """The notebook's folder through the path gate, pinned from the first use on."""
        if self._gate is None:
            self._gate = Root(self._root)
        return self._gate

    def _identify(self, doc: Document, prints: list[str]) -> list[str]:
        """Each cell's id: stored in the file, kept from earlier in the session, or derived."""
        ids: list[str | None] = []
        taken: set[str] = set()
        for i in range(len(doc.cells)):
            stored = doc.stored_id(i)
            ids.append(stored if stored not in taken else None)
            if stored is not None:
                taken.add(stored)
        taken |= self._retired.keys()
        for old, new in _matches(self._prints, prints):
            kept = self._ids[old]
            if ids[new] is None and kept not in taken:
                ids[new] = kept
                taken.add(kept)
            elif (current := ids[new]) is not None and current != kept:
                self._aliases[kept] = current  # e.g. JupyterLab saved the file with its own ids
        # An id that named a cell no pairing carried over is retired: not derived again.
        taken |= set(self._ids)
        derived = list(derive_ids(prints, set(taken)))
        out: list[str] = []
        for i, cell_id in enumerate(ids):
            if cell_id is None:
                cell_id = derived[i] if derived[i] not in taken else _fresh_id(taken)
                taken.add(cell_id)
            out.append(cell_id)
        return out

    def _report(
        self, doc: Document, index: int, cell_id: str, ran: dict[str, str] | None = None
    ) -> Cell:
        """Cell ``index`` as the bridge reports it, flagged when edited since it ran
        (``ran``: the record as the edit under way leaves it)."""
        cell = _cell(doc, index, cell_id, self.path)
        of = (self._ran if ran is None else ran).get(cell_id)
        cell.edited_since_run = of is not None and of != _source_print(cell.source)
        return cell

    def _save(self, doc: Document, ids: list[str], *, ran: dict[str, str] | None = None) -> None:
        """Write ``doc``, unless that would turn a valid notebook into an invalid one;
        ``ran``: the sources the cells' outputs are of, as of this write."""
        text = doc.render()
        problem = _validation_error(text)
        if problem is not None:
            was_valid = self._valid.get(self._seen or "")
            if was_valid is None:
                was_valid = _validation_error(doc.text) is None
            if was_valid:
                raise ToolError(
                    f"This edit would make {self.path} an invalid notebook ({problem[:300]}), "
                    "so it was not written."
                )
        data = text.encode("utf-8")
        if self._commit is not None:
            self._commit.commit()  # the last moment a Stop keeps the edit from landing
        try:
            self._folder().write(self.file, data)
        except (PathRefused, IsADirectoryError) as exc:  # swapped for a link or a folder
            raise ToolError(f"{self.path} was not written: {exc}") from None
        self._seen = hashlib.sha256(data).hexdigest()
        self._valid = {self._seen: problem is None}
        if ran is not None:
            self._ran = ran
        self._settle(ids, [fingerprint(c.value) for c in doc.cells])


def _state(kept: Remembered) -> tuple[object, ...]:
    return kept.digest, tuple(kept.ids), len(kept.retired), tuple(sorted(kept.ran.items()))


def _source_print(source: str) -> str:
    """A code cell's source, for telling whether it is still the one that ran."""
    return fingerprint({"cell_type": "code", "source": source})


class _Abandoned(Exception):
    """The edit's caller was stopped before the edit was written: it never is."""


class _Commit:
    """One edit's race between its writer (a worker thread) and a Stop (the loop):
    whichever comes first decides whether the edit lands."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: Literal["open", "abandoned", "committed"] = "open"

    def abandon(self) -> bool:
        """Keep the edit from landing; False when it is already being written."""
        with self._lock:
            if self._state == "open":
                self._state = "abandoned"
            return self._state == "abandoned"

    def commit(self) -> None:
        """Start writing; raises :class:`_Abandoned` when a Stop came first."""
        with self._lock:
            if self._state == "abandoned":
                raise _Abandoned
            self._state = "committed"


# --- helpers --------------------------------------------------------------------------


def _matches(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (old index, new index) of the same cell: same content, or edited in place.

    A cell whose content others share (empty cells, a repeated ``df.head()``) is paired
    only when its neighbours are paired too (or both are the notebook's end): delete the
    second of three empty cells and it cannot be told whether the second or the third
    went, so neither is paired and the ids they had are retired, never moved."""
    if not old:
        return []
    aligned: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            aligned.extend(zip(range(i1, i2), range(j1, j2), strict=True))
    paired = set(aligned)
    old_count, new_count = Counter(old), Counter(new)

    def neighbours_paired(i: int, j: int, step: int) -> bool:
        a, b = i + step, j + step
        ends = (not 0 <= a < len(old), not 0 <= b < len(new))
        return ends == (True, True) or (a, b) in paired

    return [
        (i, j)
        for i, j in aligned
        if old[i] != new[j]  # edited in place between paired neighbours
        or (old_count[old[i]] == 1 and new_count[new[j]] == 1)
        or (neighbours_paired(i, j, -1) and neighbours_paired(i, j, 1))
    ]


def _validation_error(text: str) -> str | None:
    """The first way ``text`` breaks the notebook format of its own version, if any."""
    from nbformat.validator import get_validator

    data = _bounded_json.loads(text)  # a large file in steps; a byte-order mark skipped
    validator = get_validator(data.get("nbformat"), data.get("nbformat_minor"))
    if validator is None:
        return None
    error = next(iter(validator.iter_errors(data)), None)
    return None if error is None else str(error.message)


def _cell(doc: Document, index: int, cell_id: str, name: str) -> Cell:
    raw = doc.cell(index)
    try:
        return Cell(
            id=cell_id,
            cell_type=str(raw.get("cell_type", "code")),
            source=raw.get("source", ""),
            execution_count=raw.get("execution_count"),
            outputs=[dict(o) for o in raw.get("outputs") or []],
            metadata=dict(raw.get("metadata") or {}),
        )
    except (TypeError, ValueError) as e:
        raise NotebookFormatError(
            f"Cell {index + 1} of {name} is not a valid notebook cell "
            f"({str(e).splitlines()[0][:200]}); the notebook was not changed."
        ) from None


def _new_cell(cell_type: CellType, source: str, cell_id: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "id": cell_id, "metadata": {}}
    cell["source"] = source
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def _fresh_id(taken: Sequence[str] | set[str]) -> str:
    while (cell_id := new_cell_id()) in taken:
        pass
    return cell_id
