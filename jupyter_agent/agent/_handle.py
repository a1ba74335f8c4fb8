"""The handle of a run: watch it, steer it, wait for it.

Every method is safe to call from any thread. In a kernel the run lives on the agent's
own thread, while cells and widget clicks (on the main thread, or on a subshell's) are
elsewhere: control calls are handed to the run's loop with ``call_soon_threadsafe`` (on
the loop's own thread they run at once), and waits cross to it (``_home``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator
from typing import TYPE_CHECKING, Any

from ..events import TERMINAL_EVENT_KINDS, Event
from ..messages import Message
from ..models import Usage
from ..plans import Plan, Question, StepProgress
from ..states import AgentState, StopReason
from ._home import await_on, call_on, on_loop, schedule

if TYPE_CHECKING:
    from ._agent import Agent
    from ._run import Run


class RunHandle:
    """A started run. ``await handle.wait()`` (or ``await handle``) until it ends."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def __repr__(self) -> str:
        extra = f", stop_reason={self.stop_reason!r}" if self.stop_reason else ""
        return f"<RunHandle {self.id} {self.role} state={self.state.value}{extra}>"

    # --- what it is and where it stands -------------------------------------------

    @property
    def id(self) -> str:
        return self._run.id

    @property
    def agent(self) -> Agent:
        return self._run.agent

    @property
    def session_id(self) -> str:
        return self._run.session.id

    @property
    def role(self) -> str:
        return self._run.role.name

    @property
    def task(self) -> str:
        return self._run.task

    @property
    def state(self) -> AgentState:
        return self._run.state

    @property
    def stop_reason(self) -> StopReason | None:
        return self._run.stop_reason

    @property
    def stop_message(self) -> str:
        return self._run.stop_message

    @property
    def done(self) -> bool:
        return self._run.state.terminal

    @property
    def step(self) -> int:
        return self._run.step

    @property
    def summary(self) -> str | None:
        """The agent's summary when it completed the task."""
        return self._run.summary

    @property
    def error(self) -> BaseException | None:
        return self._run.error

    @property
    def plan(self) -> Plan | None:
        """The last plan submitted in this session."""
        return self._run.session.metadata.plan

    @property
    def plan_progress(self) -> list[StepProgress]:
        return list(self._run.session.metadata.plan_progress)

    @property
    def usage(self) -> Usage:
        """Tokens and cost of this run."""
        return self._run.usage

    @property
    def history(self) -> list[Message]:
        """The session's whole conversation (all runs)."""
        return list(self._run.session.history)

    @property
    def events_so_far(self) -> list[Event]:
        return list(self._run.events)

    @property
    def pending_question(self) -> Question | None:
        pending = self._run.user.question
        return pending.question if pending else None

    @property
    def pending_approval(self) -> str | None:
        """Summary of the call waiting for approval, if any."""
        pending = self._run.user.approval
        return pending.call.summary if pending else None

    @property
    def children(self) -> list[RunHandle]:
        """The subagents this run started (delegate), in order."""
        return list(self._run.children)

    def waiting_on(self, wait_id: str) -> RunHandle | None:
        """The run — this one, or a subagent's however deep — whose pending question or
        approval has the id ``wait_id`` (a ``question_id`` or ``request_id``), if any."""
        user = self._run.user
        if any(p is not None and p.id == wait_id for p in (user.question, user.approval)):
            return self
        for child in self._run.children:
            found = child.waiting_on(wait_id)
            if found is not None:
                return found
        return None

    # --- waiting --------------------------------------------------------------------

    async def wait(self) -> RunHandle:
        """Return when the run has ended (however it ended)."""
        await self._run.wait()
        return self

    def __await__(self) -> Generator[Any, None, RunHandle]:
        return self.wait().__await__()

    async def wait_for_user(self) -> Question | str | None:
        """Wait until the run needs the user — a question (returned) or an approval (its
        summary) — or has ended (None). For scripts and tests that answer in code."""
        run = self._run
        if run.loop is not None and not on_loop(run.loop):
            return await await_on(run.loop, self.wait_for_user())
        while not run.state.terminal and not run.user.waiting.is_set():
            waits = [
                asyncio.ensure_future(run.user.waiting.wait()),
                asyncio.ensure_future(run.wait()),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
        return self.pending_question or self.pending_approval

    def add_done_callback(self, callback: Callable[[RunHandle], None]) -> None:
        """Call ``callback(handle)`` on the loop's thread when the run ends (now if it has)."""
        loop = self._run.loop
        if loop is not None and not on_loop(loop):
            # On the run's thread, where it ends: it cannot end between the look and the add.
            call_on(loop, self.add_done_callback, callback)
            return
        if self.done:
            callback(self)
        else:
            self._run.done_callbacks.append(lambda: callback(self))

    async def events(self) -> AsyncIterator[Event]:
        """This run's events from its start (replayed) until its last one."""
        stream = self._run.agent.bus.stream(
            replay=self._run.events,
            until=lambda e: e.run_id == self.id and e.kind in TERMINAL_EVENT_KINDS,
        )
        async for event in stream:
            if event.run_id == self.id:
                yield event

    # --- steering (any thread) -------------------------------------------------------

    def stop(self) -> None:
        """Stop the run now: cancel the model call, kill a running command, end a wait."""
        self._call(self._run.cancel, "manual_stop", "Stopped by the user.")

    def pause(self) -> None:
        """Pause before the next step or tool call; :meth:`resume` continues."""
        self._call(self._run.request_pause)

    def resume(self) -> None:
        """Continue a paused run (or take back a pause it has not reached yet)."""
        self._call(self._run.request_resume)

    @property
    def pause_requested(self) -> bool:
        """Paused by the user: it waits, or will at its next step or tool call."""
        return self._run.pause_requested

    def answer(self, answer: str) -> None:
        """Answer the pending question with an option's value or label, or free text.

        Raises ValueError at once when there is no question or the answer does not fit it.
        """
        pending = self._run.user.question
        if pending is None:
            raise ValueError("the agent is not waiting for an answer")
        pending.question.resolve(answer)  # raises ValueError with the accepted choices
        self._call(self._run.user.answer, pending.id, str(answer))

    def approve(self, allow: bool = True, remember: bool = False, scope: str | None = None) -> None:
        """Allow or deny the call waiting for approval; ``remember`` allows similar calls
        for the rest of the session, in the first scope the approval offered
        (``PermissionRequestEvent.remember_options``), or in ``scope``, one of their ids
        (giving it implies ``remember``). A scope not offered remembers nothing."""
        pending = self._run.user.approval
        if pending is None:
            raise ValueError("no tool call is waiting for approval")
        remember = bool(remember) or scope is not None
        self._call(self._run.user.settle, pending.id, bool(allow), remember, scope)

    def deny(self) -> None:
        self.approve(False)

    def send(self, message: str) -> RunHandle:
        """Continue the session with a new message (after this run ended). Loop thread only."""
        return self._run.agent.start(message)

    # --- plumbing ---------------------------------------------------------------------

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self._run.loop
        assert loop is not None, "the run has not been launched"
        return loop

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self._loop()
        if on_loop(loop):
            fn(*args)
        else:
            schedule(loop, fn, *args)
