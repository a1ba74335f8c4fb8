"""One run of an agent: its lifecycle, its states and limits, and what a loop calls.

A loop (built in, or your own ``async def my_loop(run)``) calls
:meth:`Run.begin_step`, :meth:`Run.call_model` and :meth:`Run.execute`; the run
streams events, enforces roles, rules and limits, and keeps the history valid. The
work itself lives beside it: the model call in ``_model_call``, a tool call's steps
in ``_dispatch``, questions and approvals in ``_interaction``, plans and subagents in
``_control``.

Cancellation invariant: whenever the driving task is cancelled (Stop) or a limit
ends the run, the history stays a valid Messages API conversation. Partial text
is kept and marked interrupted, every ``tool_use`` gets a ``tool_result``, and no
child task is left running. The next run on the same session simply continues.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ..events import (
    AgentStart,
    AgentWarning,
    Completed,
    Event,
    Failed,
    StateChanged,
    Stopped,
    ToolProgress,
    TurnStart,
    Update,
)
from ..messages import (
    INTERRUPTED_RESULT,
    ApiTools,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    new_id,
    open_tool_uses,
    tool_result,
)
from ..models import Usage
from ..permissions import Role
from ..plans import Plan, Question, QuestionOption, StepStatus
from ..states import TERMINAL_FOR, AgentState, StopReason, check_transition
from . import _control, _dispatch
from ._interaction import UserInteraction
from ._limits import Limits, StopRun
from ._model_call import Turn, call_model

if TYPE_CHECKING:
    from ._agent import Agent
    from ._handle import RunHandle

log = logging.getLogger(__name__)

CANCEL_GRACE = 2.0
"""Seconds a stopping run has to clean up (a tool's ``finally``) before another Stop
cancels it again: a second click must not cut short the cleanup the first one started."""


class Run:
    """The state of one run and the operations a loop performs.

    Tools see it as a :class:`~jupyter_agent.tools.RunControl`, never as this class.
    """

    def __init__(self, agent: Agent, task: str, role: Role, limits: Limits) -> None:
        self.id = new_id()
        self.agent = agent
        self.session = agent.session
        self.model = agent.model
        self.role = role
        self.task = task
        self.limits = limits
        self.state = AgentState.idle
        self.stop_reason: StopReason | None = None
        self.stop_message = ""
        self.summary: str | None = None
        self.error: BaseException | None = None
        self.step = 0
        self.usage = Usage()
        self.events: list[Event] = []
        self.system_prompt = agent.system_prompt(role)
        self.tools = agent.tools.allowed(role.permissions)
        self.tool_specs = ApiTools(t.spec() for t in self.tools)
        self.user = UserInteraction(self)
        """The question and the approval waiting for the user, if any."""
        self.children: list[RunHandle] = []
        self.done_callbacks: list[Callable[[], None]] = []
        self._end: tuple[StopReason, str] | None = None
        self._cancel_reason: StopReason | None = None
        self._cancelled_at = 0.0
        self._cancel_message = ""
        self._pause_requested = False
        self._resume = asyncio.Event()
        self._done = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = time.monotonic()
        self._release_writes: Callable[[], None] = lambda: None

    # --- lifecycle (driven by the Agent) ------------------------------------------

    def launch(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        # The task and the metadata of the start go to disk with the first request (see
        # call_model), or as soon as the run waits on a tool or the user, or ends.
        self.hold_writes()
        loop = asyncio.get_running_loop()
        self.loop = loop
        self._task = loop.create_task(
            self._drive(loop_fn, loop_name), name=f"jupyter_agent-{self.id}"
        )
        self._task.add_done_callback(self._on_task_done)
        if self.limits.max_duration is not None:
            self._timer = loop.call_later(
                self.limits.max_duration,
                self.cancel,
                "time_limit",
                f"Reached the time limit of {self.limits.max_duration:g} s.",
            )

    async def _drive(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        external_cancel = False
        try:
            self.set_state(AgentState.running)
            self.emit(
                AgentStart(
                    task=self.task,
                    role=self.role.name,
                    model=self.model.name,
                    loop=loop_name,
                    max_steps=self.limits.max_steps,
                    model_label=self.model.label,
                )
            )
            for notice, action in self.agent.notices_for(self.role):
                self.emit(AgentWarning(message=notice, action=action))
            await loop_fn(self)
            reason, message = self._end or ("completed", "")
        except asyncio.CancelledError:
            external_cancel = self._cancel_reason is None
            reason = self._cancel_reason or "manual_stop"
            message = self._cancel_message or "Stopped by the user."
        except StopRun as stop:
            reason, message = stop.reason, stop.message
        except Exception as exc:
            if not isinstance(exc, AgentError):
                log.exception("agent run %s failed", self.id)
            self.error = exc
            reason, message = "error", str(exc) or type(exc).__name__
        await _control.stop_children(self)
        self._finish(reason, message)
        if external_cancel:
            raise asyncio.CancelledError

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("agent run %s broke off", self.id, exc_info=error)  # a fault of ours
        # A task cancelled before it ever ran never enters _drive: finish it here.
        try:
            if not self.state.terminal:
                self._finish(
                    self._cancel_reason or "manual_stop", self._cancel_message or "Stopped."
                )
        finally:
            self._done.set()  # should a fault of ours break off _finish, none waits forever

    def _finish(self, reason: StopReason, message: str) -> None:
        """End the run: close the history, settle the state, tell everyone. Synchronous."""
        if self.state.terminal:
            return
        if self._timer is not None:
            self._timer.cancel()
        self.user.cancel()
        self.close_history(INTERRUPTED_RESULT if reason == "manual_stop" else f"Not run: {message}")
        self.stop_reason = reason
        self.stop_message = message
        if reason == "completed" and self.summary is None:
            self.summary = message
        self.set_state(TERMINAL_FOR[reason], detail=message)
        if reason == "completed":
            self.emit(Completed(summary=self.summary or ""))
        elif reason == "error":
            self.emit(Failed(message=message, error_type=type(self.error).__name__))
        else:
            self.emit(Stopped(reason=reason, message=message))
        meta = self.session.metadata
        meta.state = self.state.value
        meta.stop_reason = reason
        meta.runs += 1
        try:
            self.session.save(now=True)  # on disk before anyone waiting for the run reads it
        except OSError as exc:
            log.warning(
                "could not write session %s at the end of run %s: %s", self.session.id, self.id, exc
            )
        except Exception:  # whatever went wrong, the run still ends and its waiters wake
            log.exception(
                "could not write session %s at the end of run %s", self.session.id, self.id
            )
        self._done.set()
        for callback in self.done_callbacks:
            try:
                callback()
            except Exception:
                log.exception("a run-done callback failed")

    def cancel(self, reason: StopReason = "manual_stop", message: str = "") -> None:
        """Cancel the driving task (loop thread only; handles route here thread-safely)."""
        if self.state.terminal or self._task is None:
            return
        if self._cancel_reason is None:
            self._cancel_reason = reason
            self._cancel_message = message
        elif time.monotonic() - self._cancelled_at < CANCEL_GRACE:
            return  # already stopping: let the cleanup finish
        self._cancelled_at = time.monotonic()
        self._task.cancel()

    async def wait(self) -> None:
        await self._done.wait()

    def close_history(self, note: str = INTERRUPTED_RESULT) -> None:
        """Answer any tool use still open, so the history is a valid conversation."""
        missing = open_tool_uses(self.session.history)
        if missing:
            self.append(
                Message(
                    role="user",
                    content=[tool_result(b.id, note, is_error=True) for b in missing],
                    message_type="tool_result",
                )
            )

    # --- events and state --------------------------------------------------------

    def emit(self, event: Event) -> Event:
        event.session_id = self.session.id
        event.run_id = self.id
        self.agent.bus.publish(event)
        self.events.append(event)
        return event

    def set_state(self, state: AgentState, detail: str = "") -> None:
        if state == self.state:
            return
        check_transition(self.state, state)
        previous, self.state = self.state, state
        self.emit(StateChanged(state=state, previous=previous, detail=detail))

    def append(self, message: Message) -> None:
        self.session.append(message)

    @property
    def ended(self) -> bool:
        """A control tool ended the run (task_complete, submit_plan)."""
        return self._end is not None

    def end(self, reason: StopReason = "completed", message: str = "") -> None:
        """Ask the loop to finish after the current step."""
        if self._end is None:
            self._end = (reason, message)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    # --- steps -------------------------------------------------------------------

    async def begin_step(self) -> int:
        """Honour pause and limits, then count a new step."""
        await self.checkpoint()
        self.limits.check(self.step, self.usage)
        self.step += 1
        self.emit(TurnStart(step=self.step))
        return self.step

    async def checkpoint(self) -> None:
        """Wait here while the user has paused the run."""
        if not self._pause_requested:
            return
        self.release_writes()  # a pause may be long: what the run recorded goes to disk
        self.set_state(AgentState.paused, detail="paused by the user")
        while self._pause_requested:
            await self._resume.wait()
        self.set_state(AgentState.running)

    def request_pause(self) -> None:
        self._pause_requested = True
        self._resume.clear()

    def request_resume(self) -> None:
        self._pause_requested = False
        self._resume.set()

    def hold_writes(self) -> Callable[[], None]:
        """Hold the session's writes until the returned function (or a wait) lets them go."""
        self._release_writes = self.session.hold_writes()
        return self._release_writes

    def release_writes(self) -> None:
        self._release_writes()

    # --- the model and the tools ----------------------------------------------------

    async def call_model(
        self, *, phase: str | None = None, tool_choice: str = "auto", max_tokens: int | None = None
    ) -> Turn:
        """Stream one model call over the current history and record its reply."""
        return await call_model(self, phase=phase, tool_choice=tool_choice, max_tokens=max_tokens)

    async def execute(
        self, tool_uses: Sequence[ToolUseBlock], truncated: Sequence[str] = ()
    ) -> list[ToolResultBlock]:
        """Run the calls of one assistant turn in order and record their results."""
        return await _dispatch.execute(self, tool_uses, truncated)

    # --- what tools do (RunControl) ---------------------------------------------------

    async def ask(self, question: Question) -> tuple[str, QuestionOption | None]:
        """Show ``question`` and wait for the user's answer (value, chosen option)."""
        return await self.user.ask(question)

    def complete(self, summary: str, message: str | None = None) -> None:
        self.summary = summary
        self.end("completed", summary if message is None else message)

    def submit_plan(self, plan: Plan) -> None:
        _control.submit_plan(self, plan)

    def update_plan_step(self, step_number: int, status: StepStatus, note: str = "") -> None:
        _control.update_plan_step(self, step_number, status, note)

    def send_update(self, message: str) -> None:
        self.emit(Update(message=message))

    def tool_progress(self, tool_use_id: str, output: str) -> None:
        self.emit(ToolProgress(tool_use_id=tool_use_id, output=self.agent.secrets.redact(output)))

    async def spawn(
        self, task: str, *, role: str = "planner", tool_use_id: str | None = None, **options: Any
    ) -> RunHandle:
        """Start a child agent on ``task``; its events are forwarded into this run's stream."""
        return _control.spawn(self, task, role, tool_use_id, **options)
