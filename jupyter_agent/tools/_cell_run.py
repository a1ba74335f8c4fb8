"""Running cells: run_cell, wait_for_cell and interrupt_cell.

A cell runs in a task of its own (:mod:`jupyter_agent.notebook.running_cells`): run_cell waits a
short window and returns the result, or "still running" with the output so far; the cell
goes on, and wait_for_cell waits for it again. Nothing but interrupt_cell, the user's
Stop (as the ``[cells]`` settings say) or the cell's own timeout interrupts it. While a
call waits, its tool card shows the cell's last output line.

All three need ``execute_code``: wait_for_cell changes nothing itself, but a Stop while it
waits interrupts the cell, and only a role that may run code may have cells to wait for.

A run the user approved runs the code its card showed, or nothing: the card binds the
cell's source, run_cell checks it before starting, and the bridge compares it again in the
same step that starts the execution (the frontend in JupyterLab, under the file's lock in
file mode). Code changed meanwhile — by a sibling subagent, the user, a collaborator — is
shown on a fresh card instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from .._wording import duration
from ..approvals import ABSENT, Bound, CellPreview, ChangedSinceShown, Shown, cell_key, digest
from ..errors import ToolError, ToolInterrupted
from ..messages import ImageBlock
from ..notebook.bridge import NotebookBridge, RunResult, SourceChanged
from ..notebook.outputs import ViewLimits, as_text, render_output
from ..notebook.running_cells import MAX_WAIT, CellRun, CellRuns, wait_free
from ..permissions import Permission
from ..secrets.shapes import mask_secrets
from ._notebook_access import bridge_of, positions
from ._tool import ToolContext, ToolOutput, tool

P = Permission

PROGRESS_EVERY = 2.0
"""Seconds between looks at a waited-for cell's last output line (for its tool card)."""
LOOK_TIMEOUT = 5.0
"""Seconds (of free loop time) to wait for a running cell's outputs so far."""
INTERRUPT_WAIT = 10.0
"""Seconds interrupt_cell waits for the interrupted cell to end."""
WAIT_FOR_CELL = 300.0
"""Seconds wait_for_cell waits by default."""
LAST_LINE = 200
"""The most characters of a cell's last output line a tool card shows."""


def cell_runs(ctx: ToolContext) -> CellRuns:
    """The agent's running cells (made with the default policy if the agent has none)."""
    runs = ctx.resources.get(CellRuns)
    if runs is None:
        runs = CellRuns()
        ctx.resources.insert(runs)
    return runs


async def _preview_run(ctx: ToolContext, args: Mapping[str, Any]) -> Shown:
    """The cell about to run: its code, and where it is in the notebook; the approval is
    bound to that code (to no cell, when there is none). The cell is found as the run
    finds it (an id the notebook has since replaced included)."""
    cell_id = str(args["cell_id"])
    bridge = bridge_of(ctx)
    key, what = cell_key(cell_id), f"cell {cell_id}"
    try:
        cell = await bridge.read_cell(cell_id)
    except ToolError:
        return Shown(None, (Bound(key, what, digest(None)),))
    cells = await bridge.read()
    index = next((n for n, c in enumerate(cells, 1) if c.id == cell.id), None)
    card = CellPreview(
        cell_id=cell_id,
        source=cell.source,
        language=_language(cell.source),
        index=index,
        count=len(cells),
    )
    return Shown(card, (Bound(key, what, digest(cell.source)),))


def _language(source: str) -> str:
    """The language a highlighter should read a code cell as."""
    first = source.lstrip().split("\n", 1)[0]
    return "bash" if first.startswith(("%%bash", "%%sh", "%%script bash")) else "python"


def _seconds(name: str, value: float | None, *, allow_zero: bool) -> float | None:
    """A number of seconds the model gave, checked (None stays None)."""
    if value is None:
        return None
    if value < 0 or (value == 0 and not allow_zero):
        raise ToolError(f"{name} must be a positive number of seconds, not {value:g}.")
    return float(value)


@tool(
    category="notebook",
    permissions={P.EXECUTE_CODE},
    summary="Run cell {cell_id}",
    preview=_preview_run,
)
async def run_cell(
    ctx: ToolContext, cell_id: str, wait: float | None = None, timeout: float | None = None
) -> ToolOutput:
    """Run a code cell in the notebook's kernel, as if the user ran it (its outputs and
    execution count appear in the notebook), and wait for it to end. A cell still running
    after `wait` seconds keeps running (it is not interrupted): the result says "still
    running" with its output so far; then call wait_for_cell, or do other work meanwhile.

    Args:
        cell_id: The cell's id.
        wait: Seconds to wait before returning "still running" (default from the user's
            settings, usually 30; at most 600).
        timeout: Seconds after which to interrupt the cell (default: never; a long cell
            is not an error).
    """
    runs = cell_runs(ctx)
    seconds = _seconds("wait", wait, allow_zero=True)
    limit = _seconds("timeout", timeout, allow_zero=False)
    bridge = bridge_of(ctx)
    run_id = ctx.run.id if ctx.run is not None else ""
    approved = await _approved_source(ctx, bridge, cell_id)
    cell = runs.start(bridge, cell_id, run_id, limit or runs.policy.timeout, source=approved)
    window = runs.policy.wait if seconds is None else seconds
    try:
        return await _await(ctx, bridge, runs, cell, min(window, MAX_WAIT))
    except SourceChanged:
        # The bridge saw other code at the moment of starting: nothing ran; ask again.
        raise ChangedSinceShown(f"cell {cell_id}", key=cell_key(cell_id)) from None


async def _approved_source(ctx: ToolContext, bridge: NotebookBridge, cell_id: str) -> str | None:
    """The source the user approved running, checked against the cell as it is now (the
    bridge checks it once more as the run starts); None when no card bound the cell."""
    key = cell_key(cell_id)
    bound = ctx.approval.get(key) if ctx.approval is not None else None
    if bound is None:
        return None
    try:
        source = (await bridge.read_cell(cell_id)).source
    except ToolError:
        if bound.digest == ABSENT:
            raise  # no cell, as the card showed: nothing to run
        raise ChangedSinceShown(bound.what, key=key) from None
    ctx.check_shown(key, digest(source))
    return source


@tool(category="notebook", permissions={P.EXECUTE_CODE}, summary="Wait for cell {cell_id}")
async def wait_for_cell(
    ctx: ToolContext, cell_id: str, timeout: float = WAIT_FOR_CELL
) -> ToolOutput:
    """Wait for a cell you ran that is still running; return its outputs once it ends, or
    "still running" with its output so far when `timeout` passes (it keeps running).

    Args:
        cell_id: The cell's id.
        timeout: Seconds to wait (default 300, at most 600).
    """
    runs = cell_runs(ctx)
    seconds = _seconds("timeout", timeout, allow_zero=True) or 0.0
    cell = runs.get(cell_id)
    if cell is None:
        raise ToolError(
            f"Cell {cell_id} is not running: you have not run it in this session "
            "(read_cell shows its outputs; run_cell runs it)."
        )
    bridge = bridge_of(ctx)
    if not cell.running:
        output = await _ended(bridge, cell)
        output.text = (
            f"Cell {cell_id} is not running any more; its run ended "
            f"{duration(_since_end(cell))} ago.\n{output.text}"
        )
        return output
    return await _await(ctx, bridge, runs, cell, min(seconds, MAX_WAIT))


@tool(category="notebook", permissions={P.EXECUTE_CODE}, summary="Interrupt cell {cell_id}")
async def interrupt_cell(ctx: ToolContext, cell_id: str) -> ToolOutput:
    """Interrupt a cell you ran that is still running (as the Interrupt button would),
    and return its outputs.

    Args:
        cell_id: The cell's id.
    """
    runs = cell_runs(ctx)
    cell = runs.get(cell_id)
    if cell is None or not cell.running:
        raise ToolError(
            f"Cell {cell_id} is not running"
            + (": you have not run it in this session." if cell is None else "; nothing to stop.")
        )
    bridge = bridge_of(ctx)
    runs.interrupt(cell)
    if not await wait_free(cell.task, INTERRUPT_WAIT):
        return await _running(
            bridge,
            cell,
            f"Cell {cell_id} was interrupted but has not stopped after "
            f"{INTERRUPT_WAIT:g} s (code that ignores interrupts stops only with a kernel "
            "restart).",
        )
    output = await _ended(bridge, cell)
    if cell.interrupted == "interrupted":
        # Stopping the cell was this call's aim: its KeyboardInterrupt is the call done,
        # not failed (the text still says how the cell ended).
        output.error_line = None
    return output


# --- waiting ---------------------------------------------------------------------------------


async def _await(
    ctx: ToolContext, bridge: NotebookBridge, runs: CellRuns, cell: CellRun, seconds: float
) -> ToolOutput:
    """Wait up to ``seconds`` of free loop time for ``cell``; its result, or where it is."""
    watcher = asyncio.ensure_future(_watch(ctx, bridge, cell))
    try:
        done = await wait_free(cell.task, seconds)
    except asyncio.CancelledError:
        ended = f"Cell {cell.cell_id} had ended: wait_for_cell('{cell.cell_id}') gives its result."
        raise ToolInterrupted(runs.on_stop(cell) or ended) from None
    finally:
        watcher.cancel()
    if done:
        return await _ended(bridge, cell)
    return await _running(
        bridge,
        cell,
        f"Cell {cell.cell_id} is still running ({duration(cell.elapsed)} so far); it was not "
        "interrupted and keeps running.",
        f"wait_for_cell('{cell.cell_id}') waits for it (or do other work and check later); "
        f"interrupt_cell('{cell.cell_id}') stops it.",
    )


async def _watch(ctx: ToolContext, bridge: NotebookBridge, cell: CellRun) -> None:
    """Show the cell's last output line on the waiting call's card as it changes."""
    shown = ""
    while cell.running:
        await asyncio.sleep(PROGRESS_EVERY)
        line = _last_line(await _outputs_now(bridge, cell.cell_id) or [])
        if line and line != shown:
            shown = line
            await ctx.progress(line)


async def _outputs_now(bridge: NotebookBridge, cell_id: str) -> list[dict[str, Any]] | None:
    """The cell's outputs as they are now, or None when the notebook does not say in time."""
    look = asyncio.ensure_future(bridge.outputs(cell_id))
    try:
        if not await wait_free(look, LOOK_TIMEOUT):
            look.cancel()
            return None
    except asyncio.CancelledError:
        look.cancel()
        raise
    if look.cancelled() or look.exception() is not None:
        return None
    return look.result()


def _last_line(outputs: list[dict[str, Any]]) -> str:
    for output in reversed(outputs):
        if output.get("output_type") == "stream":
            text = as_text(output.get("text", ""))
        elif output.get("output_type") == "error":
            text = f"{output.get('ename')}: {as_text(output.get('evalue', ''))}"
        else:
            text = as_text((output.get("data") or {}).get("text/plain", ""))
        # Only the tail (a stream can be megabytes; this runs on the loop). A progress bar
        # redraws its line with \r: the last drawing is what shows.
        lines = [ln.rsplit("\r", 1)[-1].strip() for ln in text[-4 * LAST_LINE :].splitlines()]
        line = next((ln for ln in reversed(lines) if ln), "")
        if line:
            return mask_secrets(line[:LAST_LINE])
    return ""


# --- what a call returns ---------------------------------------------------------------------


def _since_end(cell: CellRun) -> float:
    return time.monotonic() - (cell.ended or time.monotonic())


async def _render(outputs: list[dict[str, Any]], cell_id: str) -> tuple[str, list[ImageBlock]]:
    images: list[ImageBlock] = []
    limits = ViewLimits()
    where = f"{cell_id!r}, output="

    def render() -> str:
        parts = [
            f"⤷ {n} " + render_output(o, limits, images, f"{where}{n}")
            for n, o in enumerate(outputs, 1)
        ]
        return "\n".join(parts) if parts else "(no output)"

    return await asyncio.to_thread(render), images


async def _running(
    bridge: NotebookBridge, cell: CellRun, head: str, advice: str = ""
) -> ToolOutput:
    outputs = await _outputs_now(bridge, cell.cell_id)
    images: list[ImageBlock] = []
    if outputs is None:
        body = "(its output so far could not be read)"
    else:
        body, images = await _render(outputs, cell.cell_id)
    text = f"{head}\nOutput so far:\n{body}" + (f"\n{advice}" if advice else "")
    return ToolOutput(
        text,
        images=images,
        data={
            "cell_id": cell.cell_id,
            "status": "running",
            "elapsed": round(cell.elapsed, 1),
            "positions": await positions(bridge, cell.cell_id),
        },
    )


async def _ended(bridge: NotebookBridge, cell: CellRun) -> ToolOutput:
    result = cell.result()
    assert result is not None
    cell_id = cell.cell_id
    body, images = await _render(result.outputs, cell_id)
    took = f" in {duration(cell.elapsed)}" if cell.elapsed >= 5 else ""
    head, failed = _headline(cell, result, took)
    return ToolOutput(
        f"{head}\n{body}",
        images=images,
        data={
            "cell_id": cell_id,
            "status": result.status,
            "execution_count": result.execution_count,
            "elapsed": round(cell.elapsed, 1),
            "positions": await positions(bridge, cell_id),
        },
        error_line=failed,
    )


def _headline(cell: CellRun, result: RunResult, took: str) -> tuple[str, str | None]:
    """The result's first line, and the line for the card's row when the cell failed."""
    cell_id, count = cell.cell_id, result.execution_count
    if result.status == "timeout":
        head = f"Cell {cell_id} did not finish within {cell.timeout or 0:g} s and was interrupted."
        return head, head
    if result.status == "aborted":
        head = f"Cell {cell_id} was not run (the kernel aborted it, e.g. after an interrupt)."
        return head, head
    if result.status == "error" and result.error:
        evalue = mask_secrets(str(result.error.get("evalue", "")))
        failed = f"{result.error.get('ename')}: {evalue}"
        if cell.interrupted:
            return f"Cell {cell_id} [{count}] was {cell.interrupted}{took}: {failed}", failed
        return f"Cell {cell_id} [{count}] raised {failed}", failed
    return f"Cell {cell_id} ran [{count}]{took}.", None
