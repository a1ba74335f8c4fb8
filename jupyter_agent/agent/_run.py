"""One run of an agent: its state, its steps and limits, and what a loop calls.

A loop (built in, or your own ``async def my_loop(run)``) calls
:meth:`Run.begin_step`, :meth:`Run.call_model` and :meth:`Run.execute`; the run
streams events, enforces roles, rules and limits, and keeps the history valid. The
work itself lives beside it: the task from start to end in ``_lifecycle``, the model
call in ``_model_call``, a tool call's steps in ``_dispatch``, questions and approvals
in ``_interaction``, plans and subagents in ``_control``.

Cancellation invariant: whenever the driving task is cancelled (Stop) or a limit
ends the run, the history stays a valid Messages API conversation. Partial text
is kept and marked interrupted, every ``tool_use`` gets a ``tool_result``, and no
child task is left running. The next run on the same session simply continues.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..events import (
    Event,
    RunAction,
    StateEvent,
    ToolProgressEvent,
    TurnStartEvent,
    UpdateEvent,
    WarningEvent,
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
from ..models import ToolChoice, Usage
from ..permissions import Role
from ..plans import Plan, Question, QuestionOption, StepStatus
from ..states import AgentState, StopReason, check_transition
from . import _control, _dispatch
from ._home import await_on, on_loop
from ._interaction import UserInteraction
from ._lifecycle import Lifecycle
from ._limits import Limits
from ._model_call import Turn, call_model

if TYPE_CHECKING:
    from ._agent import Agent
    from ._handle import RunHandle

CANCEL_GRACE = 2.0
"""Seconds a stopping run has to clean up (a tool's ``finally``) before another Stop
cancels it again: a second click must not cut short the cleanup the first one started."""


class Run:
    """The state of one run and the operations a loop performs.

    Tools see it as a :class:`~jupyter_agent.tools.RunControl`, never as this class.
    """

    def __init__(
        self,
        agent: Agent,
        task: str,
        role: Role,
        limits: Limits,
        action: RunAction | None = None,
    ) -> None:
        self.id = new_id()
        self.agent = agent
        self.session = agent.session
        self.model = agent.model
        self.role = role
        self.task = task
        self.action = action
        """The button that started the run (None: a task typed or given in code)."""
        self.submitted_plan: Plan | None = None
        """The plan this run submitted for review, if it did."""
        self.limits = limits
        self.state = AgentState.idle
        self.stop_reason: StopReason | None = None
        self.stop_message = ""
        self.summary: str | None = None
        self.error: BaseException | None = None
        self.step = 0
        self.usage = Usage()
        self.events: list[Event] = []
        self.project_instructions = agent.read_instructions()
        """The project instruction files this run read as it started (an edit: next run)."""
        self.system_prompt = agent.system_prompt(role, self.project_instructions)
        self.tools = agent.tools.allowed(role.permissions)
        self.tool_specs = ApiTools(t.spec() for t in self.tools)
        self._servers_connected = False
        self.user = UserInteraction(self)
        """The question and the approval waiting for the user, if any."""
        self.parent: Run | None = agent.parent_run
        """The run that delegated this one (None: the user started it)."""
        self.depth: int = self.parent.depth + 1 if self.parent is not None else 0
        """How many runs delegated down to this one (0: the user started it)."""
        self.children: list[RunHandle] = []
        self.done_callbacks: list[Callable[[], None]] = []
        self._lifecycle = Lifecycle(self)
        self._pause_requested = False
        self._resume = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = time.monotonic()
        self._release_writes: Callable[[], None] = lambda: None

    # --- lifecycle (driven by the Agent; the work is in _lifecycle) -------------------

    def launch(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        # The task and the metadata of the start go to disk with the first request (see
        # call_model), or as soon as the run waits on a tool or the user, or ends.
        self.hold_writes()
        self._lifecycle.launch(loop_fn, loop_name)

    def cancel(self, reason: StopReason = "manual_stop", message: str = "") -> None:
        """Cancel the driving task (loop thread only; handles route here thread-safely)."""
        self._lifecycle.cancel(reason, message, CANCEL_GRACE)

    async def wait(self) -> None:
        """Until the run has ended; from any thread's loop (the run lives on its own)."""
        if self.loop is not None and not on_loop(self.loop):
            await await_on(self.loop, self._lifecycle.wait())
            return
        await self._lifecycle.wait()

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
        self.emit(StateEvent(state=state, previous=previous, detail=detail))

    def append(self, message: Message) -> None:
        self.session.append(message)

    @property
    def ended(self) -> bool:
        """A control tool ended the run (task_complete, submit_plan)."""
        return self._lifecycle.end_requested is not None

    def end(self, reason: StopReason = "completed", message: str = "") -> None:
        """Ask the loop to finish after the current step."""
        if self._lifecycle.end_requested is None:
            self._lifecycle.end_requested = (reason, message)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    @property
    def ancestors(self) -> list[Run]:
        """The runs that delegated this one, its parent first."""
        found: list[Run] = []
        run = self.parent
        while run is not None:
            found.append(run)
            run = run.parent
        return found

    @property
    def rules_session_id(self) -> str:
        """The session whose rules apply (its "Always allow"s): a subagent's are those of
        the session the user started, so it neither asks again nor remembers apart."""
        top = self.ancestors[-1] if self.parent is not None else self
        return top.session.id

    # --- steps -------------------------------------------------------------------

    async def begin_step(self) -> int:
        """Honour pause and limits, then count a new step."""
        await self.checkpoint(f"before step {self.step + 1}")
        self.limits.check(self.step, self.usage)
        for ancestor in self.ancestors:  # a subagent spends from its parents' budget
            ancestor.limits.check_budget(ancestor.usage, f"its {ancestor.role.name} parent's")
        self.step += 1
        self.emit(TurnStartEvent(step=self.step))
        return self.step

    async def checkpoint(self, where: str) -> None:
        """Wait here while the user has paused the run; ``where`` says where it waits
        ("before step 3"), for the status line."""
        if not self._pause_requested:
            return
        self.release_writes()  # a pause may be long: what the run recorded goes to disk
        self.set_state(AgentState.paused, detail=where)
        while self._pause_requested:
            await self._resume.wait()
        self.set_state(AgentState.running)

    @property
    def pause_requested(self) -> bool:
        """The user paused the run: it waits (or will, at its next step or tool call)."""
        return self._pause_requested

    def request_pause(self) -> None:
        """Pause before the next step or tool call, and the subagents running too."""
        self._pause_requested = True
        self._resume.clear()
        for child in self.children:
            if not child.done:
                child.pause()

    def request_resume(self) -> None:
        self._pause_requested = False
        self._resume.set()
        for child in self.children:
            if not child.done:
                child.resume()

    def hold_writes(self) -> Callable[[], None]:
        """Hold the session's writes until the returned function (or a wait) lets them go."""
        self._release_writes = self.session.hold_writes()
        return self._release_writes

    def release_writes(self) -> None:
        self._release_writes()

    # --- the model and the tools ----------------------------------------------------

    async def connect_tool_servers(self) -> None:
        """Once per run, before its first model call: start the MCP servers this role
        could use and offer their tools (a server that cannot start is said, and left out)."""
        if self._servers_connected:
            return
        self._servers_connected = True
        await self._notebook_arrived()
        for note in await self.agent.connect_tool_servers(self.role):
            self.warn(note)
        offered = self.agent.tools.allowed(self.role.permissions)
        if len(offered) != len(self.tools) or any(
            a is not b for a, b in zip(offered, self.tools, strict=True)
        ):
            self.tools = offered
            self.tool_specs = ApiTools(t.spec() for t in offered)

    async def _notebook_arrived(self) -> None:
        """A notebook that may yet be attached (a remote kernel's, named by its frontend)
        is awaited; once there, this run, before its first model call, is told of it as
        every later run is (prompt, tools, notices)."""
        agent, arriving = self.agent, self.agent.notebook_arriving
        if arriving is None or agent.notebook is not None:
            return
        await arriving()
        if agent.notebook is not None:
            self.system_prompt = agent.system_prompt(self.role, self.project_instructions)
            for notice, action in agent.notices.take(agent.secrets.redact):
                self.emit(WarningEvent(message=notice, action=action))

    async def call_model(
        self,
        *,
        phase: str | None = None,
        tool_choice: ToolChoice = "auto",
        max_tokens: int | None = None,
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
        self.emit(UpdateEvent(message=message))

    def warn(self, message: str) -> None:
        self.emit(WarningEvent(message=self.agent.secrets.redact(message)))

    def tool_progress(self, tool_use_id: str, output: str) -> None:
        self.emit(
            ToolProgressEvent(tool_use_id=tool_use_id, output=self.agent.secrets.redact(output))
        )

    async def spawn(
        self, task: str, *, role: str = "planner", tool_use_id: str | None = None, **options: Any
    ) -> RunHandle:
        """Start a child agent on ``task``; its events are forwarded into this run's stream."""
        return _control.spawn(self, task, role, tool_use_id, **options)
