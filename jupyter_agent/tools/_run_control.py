"""What a tool may do to the run it belongs to, and nothing more.

Tools see this protocol, never the engine: the agent's ``Run`` implements it, a test can
pass a small fake, and ``jupyter_agent.tools`` never imports ``jupyter_agent.agent``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..plans import Plan, Question, QuestionOption, StepStatus
from ..states import AgentState, StopReason


class ChildRun(Protocol):
    """A subagent's run as the tool that started it sees it."""

    @property
    def summary(self) -> str | None:
        """What the child reported when it completed (None until then)."""
        ...

    @property
    def state(self) -> AgentState: ...

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the child's run ended (None while it runs)."""
        ...

    @property
    def stop_message(self) -> str:
        """The child's ending in words (a limit, an error)."""
        ...

    @property
    def session_id(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def plan(self) -> Plan | None:
        """The plan the child submitted, if it did."""
        ...

    async def wait(self) -> Any:
        """Return when the child's run has ended (however it ended)."""
        ...

    def stop(self) -> None: ...


class RunControl(Protocol):
    """The run a tool call belongs to: control tools ask, plan, report and finish with it."""

    @property
    def id(self) -> str:
        """The run's id (one session holds many runs)."""
        ...

    async def ask(self, question: Question) -> tuple[str, QuestionOption | None]:
        """Show ``question`` and wait for the user's answer (value, chosen option)."""
        ...

    def submit_plan(self, plan: Plan) -> None:
        """Record ``plan`` in the session and show it for review."""
        ...

    def update_plan_step(self, step_number: int, status: StepStatus, note: str = "") -> None:
        """Mark a step of the submitted plan; raises ToolError for a step it does not have."""
        ...

    def send_update(self, message: str) -> None:
        """Show the user a short progress message."""
        ...

    def warn(self, message: str) -> None:
        """Show the user a warning about something beside the call (a tool server that
        crashed, say)."""
        ...

    def complete(self, summary: str, message: str | None = None) -> None:
        """End the run after this step with ``summary``; ``message`` says why it ended
        when that differs from the summary."""
        ...

    def tool_progress(self, tool_use_id: str, output: str) -> None:
        """Stream partial output of the call ``tool_use_id`` to the frontends."""
        ...

    async def spawn(
        self, task: str, *, role: str = "planner", tool_use_id: str | None = None, **options: Any
    ) -> ChildRun:
        """Start a subagent on ``task``; its events are forwarded into this run's stream."""
        ...
