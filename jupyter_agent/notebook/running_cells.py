"""Cells the agent started that may outlive the call that started them.

A cell that trains a model runs for an hour; it is the user's kernel and possibly an hour
of work, so the agent never kills it for taking long. ``run_cell`` starts the cell as a
task of its own (a :class:`CellRun`), waits a short window, and returns either the result
or "still running"; the cell goes on until it ends, and ``wait_for_cell`` waits for it
again. Only three things interrupt it: an explicit ``interrupt_cell``, the user's Stop
(when :attr:`CellPolicy.on_stop` says so), and the cell's own timeout.

A cell running synchronous code blocks the kernel's event loop, and with it the agent:
no timer fires and no reply is read until the cell ends. So waits are counted in time the
loop was *free* (:func:`wait_free`): a cell that blocked the loop for ten minutes and then
finished is reported as finished, never as "still running" because the window passed
while the agent could not look.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .._wording import duration
from ..errors import ToolError
from .bridge import NotebookBridge, RunResult

StopPolicy = Literal["interrupt", "leave_running"]
"""What the user's Stop does to a cell the run started that still runs: interrupt it, or
leave it running and stop only the agent."""

DEFAULT_WAIT = 30.0
"""Seconds run_cell waits for a cell before it says "still running"."""
MAX_WAIT = 600.0
"""The longest one run_cell or wait_for_cell call waits (the cell itself runs on)."""
TICK = 0.25
"""Seconds per step of a free-time wait (see :func:`wait_free`)."""


@dataclass(frozen=True)
class CellPolicy:
    """How the agent waits for the cells it runs and what Stop does to them (the
    ``[cells]`` settings table)."""

    wait: float = DEFAULT_WAIT
    """Seconds run_cell waits before it returns "still running" (the model may ask for
    another wait, up to :data:`MAX_WAIT`)."""
    on_stop: StopPolicy = "interrupt"
    timeout: float | None = None
    """Seconds after which a cell is interrupted; None: never (the default)."""


async def wait_free(future: asyncio.Future[Any], seconds: float, tick: float = TICK) -> bool:
    """Whether ``future`` is done within ``seconds`` of *free* loop time.

    The wait advances in steps of ``tick`` and counts at most one step's time per step,
    however long the loop was blocked (by a cell running synchronous code), so what
    finished while the loop was blocked is still seen as finished."""
    loop = asyncio.get_running_loop()
    left = seconds
    while not future.done():
        if left <= 0:
            return False
        step = min(left, tick)
        started = loop.time()
        await asyncio.wait({future}, timeout=step)
        left -= min(loop.time() - started, step)
    return True


@dataclass
class CellRun:
    """One run of one cell, started by the agent."""

    cell_id: str
    run_id: str
    """The agent run that started it (its Stop applies the policy)."""
    task: asyncio.Task[RunResult]
    timeout: float | None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    interrupted: str = ""
    """Why it was interrupted, when it was: "interrupted", "interrupted by Stop"."""
    left_running: bool = False
    """A Stop left it running (policy ``leave_running``)."""

    @property
    def running(self) -> bool:
        return not self.task.done()

    @property
    def elapsed(self) -> float:
        """Seconds it has run (wall time, whether or not the loop was free)."""
        return (self.ended or time.monotonic()) - self.started

    def result(self) -> RunResult | None:
        """How it ended (None while it runs); a run the bridge could not finish raises."""
        if not self.task.done():
            return None
        if self.task.cancelled():
            return RunResult(
                status="aborted",
                error={"ename": "Cancelled", "evalue": self.interrupted or "cancelled"},
            )
        return self.task.result()


class CellRuns:
    """The cells the agent started, by cell id (an agent resource), and its policy."""

    def __init__(self, policy: CellPolicy | None = None) -> None:
        self.policy = policy or CellPolicy()
        self._runs: dict[str, CellRun] = {}
        self._bridges: dict[str, NotebookBridge] = {}
        self._sending: set[asyncio.Future[None]] = set()
        self.listeners: list[Callable[[], None]] = []
        """Called on the loop when a cell starts or ends (the panel: may Stop interrupt
        the kernel?)."""

    def __repr__(self) -> str:
        return f"<CellRuns running={[r.cell_id for r in self.running()]}>"

    def start(
        self,
        bridge: NotebookBridge,
        cell_id: str,
        run_id: str,
        timeout: float | None,
        *,
        source: str | None = None,
    ) -> CellRun:
        """Start running ``cell_id`` through ``bridge`` in a task of its own: it outlives
        the call that started it (and a Stop, if the policy says so). With ``source``, the
        cell runs only if that is its source when it starts (see ``NotebookBridge.run``)."""
        current = self._runs.get(cell_id)
        if current is not None and current.running:
            raise ToolError(
                f"Cell {cell_id} is still running (for {duration(current.elapsed)}): "
                f"wait_for_cell('{cell_id}') waits for it, interrupt_cell('{cell_id}') stops it."
            )
        running = (
            bridge.run(cell_id, timeout=timeout)
            if source is None
            else bridge.run(cell_id, timeout=timeout, source=source)
        )
        task = asyncio.ensure_future(running)
        cell = CellRun(cell_id, run_id, task, timeout)
        self._runs[cell_id] = cell
        self._bridges[cell_id] = bridge
        task.add_done_callback(lambda _: self._ended(cell))
        self._changed()
        return cell

    def get(self, cell_id: str) -> CellRun | None:
        """The latest run of ``cell_id`` the agent started, running or ended."""
        return self._runs.get(cell_id)

    def running(self) -> list[CellRun]:
        return [r for r in self._runs.values() if r.running]

    def interrupt(self, cell: CellRun, why: str = "interrupted") -> None:
        """Ask the bridge to interrupt ``cell`` (its run then ends with the interrupt's
        error and the outputs so far). Synchronous, so a stopping run can call it."""
        if not cell.running:
            return
        cell.interrupted = cell.interrupted or why
        bridge = self._bridges.get(cell.cell_id)
        if bridge is None:
            cell.task.cancel()
            return
        sending = asyncio.ensure_future(_interrupt(bridge, cell))
        self._sending.add(sending)  # held until sent: the loop keeps only weak references
        sending.add_done_callback(self._sending.discard)

    def on_stop(self, cell: CellRun) -> str:
        """Apply the Stop policy to ``cell``; return what happened, for its tool card."""
        if not cell.running:
            return ""
        if self.policy.on_stop == "interrupt":
            self.interrupt(cell, "interrupted by Stop")
            return f"Cell {cell.cell_id} was interrupted by Stop."
        cell.left_running = True
        return (
            f"Cell {cell.cell_id} was left running (Stop stops only the agent): "
            f"wait_for_cell('{cell.cell_id}') gets its result later."
        )

    def stop_run(self, run_id: str) -> list[str]:
        """The user stopped run ``run_id``: apply the policy to each cell it started that
        still runs and has not been dealt with; return what happened to each."""
        return [
            note
            for cell in self.running()
            if cell.run_id == run_id and not (cell.interrupted or cell.left_running)
            for note in [self.on_stop(cell)]
            if note
        ]

    def _ended(self, cell: CellRun) -> None:
        cell.ended = time.monotonic()
        if not cell.task.cancelled():
            cell.task.exception()  # retrieved: a failed run is reported when asked for
        self._bridges.pop(cell.cell_id, None)
        self._changed()

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()


async def _interrupt(bridge: NotebookBridge, cell: CellRun) -> None:
    try:
        await bridge.interrupt(cell.cell_id)
    except Exception:  # the frontend went away: nothing can be interrupted there
        if cell.running:
            cell.task.cancel()
