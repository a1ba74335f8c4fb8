"""Notebook tools: read, edit and run the cells of the agent's own notebook.

They work through the :class:`~jupyter_agent.notebook.bridge.NotebookBridge` in the agent's
resources (live in JupyterLab, or the .ipynb file). Every edit records what it changed
(for the diff shown in its tool card, and so a run's edits can be undone in one call). In
file mode no edit changes the ``.ipynb`` while a command the user approved runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from .._wording import plural
from ..errors import ToolError, ToolInterrupted
from ..messages import ImageBlock
from ..notebook.bridge import Cell, CellType, Change, ChangeLog, EditLanded, NotebookBridge
from ..notebook.file import FileBridge
from ..notebook.outputs import ViewLimits, render_output
from ..notebook.running_cells import CellRuns
from ..notebook.view import (
    ExecutionHistory,
    NotebookView,
    fits_whole,
    provenance,
    render_cell,
    render_notebook,
    render_outline,
)
from ..permissions import Permission
from ..secrets.redaction import Secrets
from ..secrets.shapes import mask_secrets
from ..workspace.provenance import WrittenFiles
from ._cell_run import interrupt_cell, run_cell, wait_for_cell
from ._masked import Found, edited, find_in_view, secrets_for
from ._notebook_access import bridge_of, positions
from ._tool import ToolContext, ToolOutput, tool

P = Permission
T = TypeVar("T")


def _record(ctx: ToolContext, change: Change) -> None:
    log = ctx.resources.get(ChangeLog)
    if log is not None:
        log.record(change)


_DONE = {
    "insert": "inserted",
    "update": "updated",
    "delete": "deleted",
    "move": "moved",
    "set_type": "changed the type of",
}


class _Edits:
    """The edits of one tool call, each recorded as it lands (also one a Stop came while
    it was written), so the change log and its undo always match the notebook; a Stop
    after one landed tells the model which."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.done: list[Change] = []

    async def make(self, edit: Awaitable[T], change: Callable[[T], Change]) -> T:
        """``edit`` (a bridge call), and ``change`` of its result recorded."""
        try:
            result = await edit
        except EditLanded as landed:
            self._record(change(landed.result))
            raise ToolInterrupted(self._note()) from None
        self._record(change(result))
        return result

    @contextlib.contextmanager
    def told_at_stop(self) -> Iterator[None]:
        """Around the rest of the call: a Stop there still says what landed."""
        try:
            yield
        except asyncio.CancelledError as stop:
            if isinstance(stop, ToolInterrupted) or not self.done:
                raise
            raise ToolInterrupted(self._note()) from None

    def _record(self, change: Change) -> None:
        self.done.append(change)
        _record(self.ctx, change)

    def _note(self) -> str:
        made = "; ".join(f"{_DONE[c.kind]} cell {c.cell_id}" for c in self.done)
        return f"Written before the stop: {made} (undo_notebook_changes undoes it)."


@contextlib.contextmanager
def _editing(ctx: ToolContext, bridge: NotebookBridge) -> Iterator[None]:
    """Around an edit: in file mode, refused while an approved command runs the file."""
    written = ctx.resources.get(WrittenFiles)
    if written is None or not isinstance(bridge, FileBridge):
        yield
        return
    with written.writing(bridge.file, bridge.path):
        yield


def _run_id(ctx: ToolContext) -> str:
    return ctx.run.id if ctx.run is not None else ""


def cell_diff(cell_id: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), f"a/cell {cell_id}", f"b/cell {cell_id}", lineterm=""
    )
    return "\n".join(lines)


def _edit_output(
    message: str,
    cell_id: str,
    kind: str,
    old: str,
    new: str,
    where: dict[str, int] | None = None,
) -> ToolOutput:
    diff = cell_diff(cell_id, old, new)
    shown = mask_secrets(diff)
    text = f"{message}\n{shown}" if shown else message
    data: dict[str, Any] = {"cell_id": cell_id, "change": kind}
    if where is not None:
        data["positions"] = where
    return ToolOutput(text, diff=diff, data=data)


# --- reading --------------------------------------------------------------------------------

CELL_LIMITS = ViewLimits(
    output_head=200,
    output_tail=50,
    output_chars=30_000,
    source_lines=5_000,
    images=5,
    image_side=768,
    error_chars=20_000,
)
"""read_cell: one cell in full."""
OUTPUT_LIMITS = ViewLimits(
    output_head=2_000,
    output_tail=200,
    output_chars=100_000,
    source_lines=5_000,
    images=1,
    image_side=1_280,
    error_chars=100_000,
    table_rows=200,
)
"""read_cell with an output number: that output as large as one read allows."""


def _running(ctx: ToolContext) -> dict[str, float]:
    """The cells the agent started that still run, with their seconds so far."""
    runs = ctx.resources.get(CellRuns)
    return {c.cell_id: c.elapsed for c in runs.running()} if runs is not None else {}


@tool(category="notebook", permissions={P.READ_NOTEBOOK}, summary="Read the notebook")
async def read_notebook(
    ctx: ToolContext, start: int | None = None, end: int | None = None, outline: bool = False
) -> ToolOutput:
    """Read the notebook. Without arguments: the whole notebook if it is small, else an
    outline (one line per cell: id, type, execution count, first line, outputs and their
    sizes). With start/end: those cells in full (sources, outputs trimmed, errors, plots
    attached as small images). Flags tell which cells have not run, ran out of order, or
    were edited since they ran.

    Args:
        start: First cell to show (1-based position, as the outline numbers them).
        end: Last cell to show (inclusive; default: as many as one read holds).
        outline: Give the outline from start instead of the cells in full.
    """
    bridge = bridge_of(ctx)
    cells = await bridge.read()
    history = ctx.resources.get(ExecutionHistory)  # type: ignore[type-abstract]  # keyed by the protocol
    title = f"Notebook {bridge.describe()}"
    first = max(1, start or 1)
    if cells and first > len(cells):
        raise ToolError(f"The notebook has {len(cells)} cells; start={first} is past the end.")

    running = _running(ctx)

    def render() -> NotebookView:
        if outline:
            return render_outline(cells, title, history, start=first, running=running)
        if start is None and end is None:
            whole = fits_whole(cells, history, title, running)
            return whole or render_outline(cells, title, history, running=running)
        return render_notebook(cells, title, history, start=first, end=end, running=running)

    view = await asyncio.to_thread(render)
    # Every cell's place, for the panel: later calls name cells by their ids, and their rows
    # say "cell 7" from the start (not sent to the model, which reads them in the view).
    places = {cell.id: n for n, cell in enumerate(cells, 1)}
    return ToolOutput(
        view.text, images=view.images, data={"cells": len(cells), "positions": places}
    )


@tool(category="notebook", permissions={P.READ_NOTEBOOK}, summary="Read cell {cell_id}")
async def read_cell(ctx: ToolContext, cell_id: str, output: int | None = None) -> ToolOutput:
    """Read one cell in full (longer outputs than read_notebook shows, larger images), or
    one of its outputs as large as possible.

    Args:
        cell_id: The cell's id, as read_notebook shows it.
        output: Show only this output (1-based, as numbered under the cell), in full.
    """
    bridge = bridge_of(ctx)
    cells = await bridge.read()
    position = next((i for i, c in enumerate(cells) if c.id == cell_id), None)
    if position is None:
        known = ", ".join(c.id for c in cells[:40])
        raise ToolError(f"There is no cell with id {cell_id!r}. The cell ids are: {known}.")
    cell = cells[position]
    if output is not None and not 1 <= output <= len(cell.outputs):
        raise ToolError(
            f"Cell {cell_id} has {plural(len(cell.outputs), 'output')}; "
            f"there is no output {output}."
        )
    history = ctx.resources.get(ExecutionHistory)  # type: ignore[type-abstract]  # keyed by the protocol
    images: list[ImageBlock] = []

    def render() -> str:
        if output is None:
            flags = provenance(cells, history, _running(ctx)).get(cell_id, "")
            return render_cell(cell, position + 1, flags, CELL_LIMITS, images, history)
        shown = render_output(cell.outputs[output - 1], OUTPUT_LIMITS, images)
        return f"── {position + 1} · {cell_id} · output {output} of {len(cell.outputs)}\n{shown}"

    text = await asyncio.to_thread(render)
    return ToolOutput(text, images=images)


# --- editing ---------------------------------------------------------------------------------


def _where(before: str | None, after: str | None) -> str:
    if before:
        return f" before {before}"
    if after:
        return f" after {after}"
    return ""


@tool(
    category="notebook",
    permissions={P.EDIT_NOTEBOOK},
    summary=lambda a: (
        f"Insert {a.get('cell_type', 'code')} cell{_where(a.get('before'), a.get('after'))}"
    ),
)
async def insert_cell(
    ctx: ToolContext,
    source: str,
    cell_type: CellType = "code",
    after: str | None = None,
    before: str | None = None,
) -> ToolOutput:
    """Insert a new cell. It is not run: call run_cell to run it.

    Args:
        source: The cell's content.
        cell_type: code, markdown or raw.
        after: Put it after the cell with this id.
        before: Put it before the cell with this id. Give after or before, or neither: then
            it goes after the last cell you inserted in this task, or else after the cell
            that started you (where the user is looking), or else at the end.
    """
    bridge = bridge_of(ctx)
    edits = _Edits(ctx)
    with edits.told_at_stop():
        with _editing(ctx, bridge):
            if before is None and after is None:
                cell, where, after = await _insert_in_view(edits, bridge, source, cell_type)
            else:
                inserting = bridge.insert(source, cell_type, before=before, after=after)
                cell = await edits.make(inserting, _inserted(ctx))
                where = _where(before, after)
        return _edit_output(
            f"Inserted {cell_type} cell {cell.id}{where}.",
            cell.id,
            "insert",
            "",
            source,
            await positions(bridge, cell.id, after, before),
        )


async def _insert_in_view(
    edits: _Edits, bridge: NotebookBridge, source: str, cell_type: CellType
) -> tuple[Cell, str, str | None]:
    """Insert where the user is looking: after the run's newest cell or the agent's own
    cell; at the end when neither is in the notebook any more (deleted, or a file whose
    cells the frontend named differently). Returns the cell, where it went in words, and
    the cell it follows (None: at the end)."""
    ctx = edits.ctx
    log = ctx.resources.get(ChangeLog)
    for place in log.places(_run_id(ctx)) if log is not None else []:
        try:
            cell = await edits.make(bridge.insert(source, cell_type, after=place), _inserted(ctx))
        except ToolError:
            continue  # that cell is gone: the next place
        return cell, f" after {place}", place
    cell = await edits.make(bridge.insert(source, cell_type), _inserted(ctx))
    return cell, " at the end", None


def _inserted(ctx: ToolContext) -> Callable[[Cell], Change]:
    return lambda cell: Change("insert", cell.id, _run_id(ctx))


@tool(category="notebook", permissions={P.EDIT_NOTEBOOK}, summary="Edit cell {cell_id}")
async def update_cell(
    ctx: ToolContext,
    cell_id: str,
    source: str | None = None,
    find: str | None = None,
    replace: str | None = None,
    cell_type: CellType | None = None,
) -> ToolOutput:
    """Change a cell: replace its whole source, or replace one exact piece of it (find and
    replace; the piece must occur exactly once), and/or change its type. The cell is not
    re-run: call run_cell afterwards if its output matters.

    Args:
        cell_id: The cell's id.
        source: The new full source.
        find: Exact text to replace (instead of source).
        replace: What replaces it.
        cell_type: A new type: code, markdown or raw.
    """
    if source is not None and (find is not None or replace is not None):
        raise ToolError("Give either source, or find and replace — not both.")
    if (find is None) != (replace is None):
        raise ToolError("find and replace go together.")
    if source is None and find is None and cell_type is None:
        raise ToolError("Nothing to change: give source, find and replace, or cell_type.")
    bridge = bridge_of(ctx)
    old = await bridge.read_cell(cell_id)
    new_source = old.source
    if source is not None or find is not None:
        new_source, shown = await asyncio.to_thread(
            _through_view, secrets_for(ctx), old.source, cell_id, source, find, replace
        )
    else:
        unchanged = await asyncio.to_thread(secrets_for(ctx).redact, old.source)
        shown = unchanged, unchanged
    changed = []
    edits = _Edits(ctx)
    with edits.told_at_stop():
        with _editing(ctx, bridge):
            if new_source != old.source:
                update = Change("update", cell_id, _run_id(ctx), before=old)
                await edits.make(bridge.update(cell_id, new_source), lambda _: update)
                changed.append("source")
            if cell_type is not None and cell_type != old.cell_type:
                retype = Change("set_type", cell_id, _run_id(ctx), before=old)
                await edits.make(bridge.set_type(cell_id, cell_type), lambda _: retype)
                changed.append(f"type ({old.cell_type} → {cell_type})")
        if not changed:
            return ToolOutput(f"Cell {cell_id} already had that content; nothing changed.")
        return _edit_output(
            f"Updated the {' and '.join(changed)} of cell {cell_id}.",
            cell_id,
            "update",
            *shown,
            await positions(bridge, cell_id),
        )


def _through_view(
    secrets: Secrets,
    old: str,
    cell_id: str,
    source: str | None,
    find: str | None,
    replace: str | None,
) -> tuple[str, tuple[str, str]]:
    """The cell's new source, matched and made through the cell as the model reads it
    (see ``tools/_masked.py``), and the old and new sources as the model reads them."""
    masker = secrets.masker()
    view = masker.view(old)
    where = f"cell {cell_id}"
    if source is not None:
        new, after = edited(masker, view, Found(view.text, source, [0]), where)
        return new, (view.text, after.text)
    assert find is not None
    assert replace is not None
    found = find_in_view(view, find, replace)
    if not found.starts:
        raise ToolError(
            f"The text to find does not occur in cell {cell_id}. Read the cell again "
            "(read_cell) and copy the exact text, including spaces."
        )
    if len(found.starts) > 1:
        raise ToolError(
            f"The text to find occurs {len(found.starts)} times in cell {cell_id}; include "
            "more of the surrounding text so it occurs once."
        )
    new, after = edited(masker, view, found, where)
    return new, (view.text, after.text)


@tool(category="notebook", permissions={P.EDIT_NOTEBOOK}, summary="Delete cell {cell_id}")
async def delete_cell(ctx: ToolContext, cell_id: str) -> ToolOutput:
    """Delete a cell (it can be undone).

    Args:
        cell_id: The cell's id.
    """
    bridge = bridge_of(ctx)
    cells = await bridge.read()
    ids = [c.id for c in cells]
    neighbour = ids[ids.index(cell_id) + 1] if cell_id in ids[:-1] else None
    with _editing(ctx, bridge):
        cell, index = await _Edits(ctx).make(
            bridge.delete(cell_id),
            lambda done: Change(
                "delete", cell_id, _run_id(ctx), before=done[0], index=done[1], neighbour=neighbour
            ),
        )
    return _edit_output(
        f"Deleted {cell.cell_type} cell {cell_id} (it was cell {index + 1}).",
        cell_id,
        "delete",
        cell.source,
        "",
    )


@tool(category="notebook", permissions={P.EDIT_NOTEBOOK}, summary="Move cell {cell_id}")
async def move_cell(
    ctx: ToolContext, cell_id: str, after: str | None = None, before: str | None = None
) -> ToolOutput:
    """Move a cell next to another one.

    Args:
        cell_id: The cell to move.
        after: Put it after the cell with this id.
        before: Put it before the cell with this id.
    """
    if (after is None) == (before is None):
        raise ToolError("Give exactly one of after or before.")
    bridge = bridge_of(ctx)
    ids = [c.id for c in await bridge.read()]
    if cell_id not in ids:
        raise ToolError(f"There is no cell with id {cell_id!r}.")
    position = ids.index(cell_id)
    neighbour = ids[position + 1] if position + 1 < len(ids) else None
    moved_from = Change("move", cell_id, _run_id(ctx), index=position, neighbour=neighbour)
    with _editing(ctx, bridge):
        index = await _Edits(ctx).make(
            bridge.move(cell_id, before=before, after=after), lambda _: moved_from
        )
    # The order after the move, from the order before it: no second read of the notebook.
    moved = [c for c in ids if c != cell_id]
    moved.insert(index, cell_id)
    named = {cell_id, after, before}
    return ToolOutput(
        f"Moved cell {cell_id}{_where(before, after)}; it is now cell {index + 1}.",
        data={
            "cell_id": cell_id,
            "change": "move",
            "positions": {c: n for n, c in enumerate(moved, 1) if c in named},
        },
    )


NOTEBOOK_TOOLS = (
    read_notebook,
    read_cell,
    insert_cell,
    update_cell,
    delete_cell,
    move_cell,
    run_cell,
    wait_for_cell,
    interrupt_cell,
)
