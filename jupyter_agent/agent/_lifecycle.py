"""The task that drives one run, from its start to its one end.

:class:`Lifecycle` starts the run's task, cancels it (Stop, the time limit) and turns
however the loop ended (it returned, a control tool ended the run, a limit, Stop, an
error) into one stop reason. The end is synchronous and happens once: the history is
closed (every ``tool_use`` answered), children are stopped, the state settles, the session
is saved, the end is announced, and then whoever waits wakes. This is where the
run's cancellation invariant (see ``_run``) is kept.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..errors import AgentError
from ..events import AgentStartEvent, CompletedEvent, ErrorEvent, StoppedEvent, WarningEvent
from ..messages import INTERRUPTED_RESULT
from ..notebook.running_cells import CellRuns
from ..states import TERMINAL_FOR, AgentState, StopReason
from . import _control
from ._limits import StopRun

if TYPE_CHECKING:
    from ._run import Run

log = logging.getLogger(__name__)


class Lifecycle:
    """Starts, cancels and ends one run (loop thread only)."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self.end_requested: tuple[StopReason, str] | None = None
        """Set when a control tool ends the run (task_complete, submit_plan)."""
        self._cancel_reason: StopReason | None = None
        self._cancel_message = ""
        self._cancelled_at = 0.0
        self._done = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    def launch(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        run = self._run
        loop = asyncio.get_running_loop()
        run.loop = loop
        self._task = loop.create_task(
            self._drive(loop_fn, loop_name), name=f"jupyter_agent-{run.id}"
        )
        self._task.add_done_callback(self._on_task_done)
        if run.limits.max_duration is not None:
            self._timer = loop.call_later(
                run.limits.max_duration,
                run.cancel,
                "time_limit",
                f"Reached the time limit of {run.limits.max_duration:g} s.",
            )

    def cancel(self, reason: StopReason, message: str, grace: float) -> None:
        """Cancel the driving task; again only once ``grace`` seconds have passed since
        the last time, so a second Stop does not cut short the cleanup of the first."""
        if self._run.state.terminal or self._task is None:
            return
        if self._cancel_reason is None:
            self._cancel_reason = reason
            self._cancel_message = message
        elif time.monotonic() - self._cancelled_at < grace:
            return  # already stopping: let the cleanup finish
        self._cancelled_at = time.monotonic()
        self._task.cancel()

    async def wait(self) -> None:
        await self._done.wait()

    async def _drive(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        run = self._run
        external_cancel = False
        try:
            run.set_state(AgentState.running)
            run.emit(
                AgentStartEvent(
                    task=run.task,
                    role=run.role.name,
                    model=run.model.name,
                    loop=loop_name,
                    max_steps=run.limits.max_steps,
                    model_label=run.model.label,
                    replay=run.model.is_replay,
                    action=run.action,
                )
            )
            for notice, action in run.agent.notices_for(run.role):
                run.emit(WarningEvent(message=notice, action=action))
            for warning in run.project_instructions.warnings:
                run.emit(WarningEvent(message=warning))
            await loop_fn(run)
            reason, message = self.end_requested or ("completed", "")
        except asyncio.CancelledError:
            external_cancel = self._cancel_reason is None
            reason = self._cancel_reason or "manual_stop"
            message = self._cancel_message or "Stopped by the user."
        except StopRun as stop:
            reason, message = stop.reason, stop.message
        except Exception as exc:
            if not isinstance(exc, AgentError):
                log.exception("agent run %s failed", run.id)
            run.error = exc
            reason, message = "error", str(exc) or type(exc).__name__
        await _control.stop_children(run)
        self.finish(reason, message)
        if external_cancel:
            raise asyncio.CancelledError

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("agent run %s broke off", self._run.id, exc_info=error)  # a fault of ours
        # A task cancelled before it ever ran never enters _drive: finish it here.
        try:
            if not self._run.state.terminal:
                self.finish(
                    self._cancel_reason or "manual_stop", self._cancel_message or "Stopped."
                )
        finally:
            self._done.set()  # should a fault of ours break off finish, none waits forever

    def finish(self, reason: StopReason, message: str) -> None:
        """End the run: close the history, settle the state, tell everyone. Synchronous."""
        run = self._run
        if run.state.terminal:
            return
        if self._timer is not None:
            self._timer.cancel()
        run.user.cancel()
        run.close_history(INTERRUPTED_RESULT if reason == "manual_stop" else f"Not run: {message}")
        if reason == "manual_stop":
            # Cells the run started that still run follow the Stop policy ([cells] on_stop).
            cells = run.agent.resources.get(CellRuns)
            for note in cells.stop_run(run.id) if cells is not None else []:
                run.emit(WarningEvent(message=note))
        run.stop_reason = reason
        run.stop_message = message
        if reason == "completed" and run.summary is None:
            run.summary = message
        run.set_state(TERMINAL_FOR[reason], detail=message)
        session = run.session
        meta = session.metadata
        meta.state = run.state.value
        meta.stop_reason = reason
        meta.runs += 1
        try:
            # On disk before the end is announced: a reader of the run's events may be on
            # another thread (a cell, while the run lives on the agent's), and reads the
            # saved session as soon as the terminal event reaches it.
            session.save(now=True)
        except OSError as exc:
            log.warning(
                "could not write session %s at the end of run %s: %s", session.id, run.id, exc
            )
        except Exception:  # whatever went wrong, the run still ends and its waiters wake
            log.exception("could not write session %s at the end of run %s", session.id, run.id)
        if reason == "completed":
            run.emit(
                CompletedEvent(summary=run.summary or "", plan_ready=run.submitted_plan is not None)
            )
        elif reason == "error":
            run.emit(ErrorEvent(message=message, error_type=type(run.error).__name__))
        else:
            run.emit(StoppedEvent(reason=reason, message=message))
        self._done.set()
        for callback in run.done_callbacks:
            try:
                callback()
            except Exception:
                log.exception("a run-done callback failed")
