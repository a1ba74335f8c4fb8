"""The run's state machine.

A run starts ``idle``, moves between the working states, and ends in one terminal
state that carries a :data:`StopReason`. ``completed`` is reserved for a task the
agent finished; a run cut short (by the user, a limit or an unanswered question)
ends ``cancelled``; a failure ends ``error``.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from .errors import IllegalTransition


class AgentState(str, Enum):
    idle = "idle"
    running = "running"
    thinking = "thinking"
    tool_executing = "tool_executing"
    waiting_user = "waiting_user"
    paused = "paused"
    completed = "completed"
    cancelled = "cancelled"
    error = "error"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    def __str__(self) -> str:
        return self.value


StopReason = Literal[
    "completed",
    "manual_stop",
    "error",
    "iteration_limit",
    "time_limit",
    "budget",
    "input_timeout",
    "unattended",
]

TERMINAL = frozenset({AgentState.completed, AgentState.cancelled, AgentState.error})
_WORKING = frozenset(
    {
        AgentState.running,
        AgentState.thinking,
        AgentState.tool_executing,
        AgentState.waiting_user,
        AgentState.paused,
    }
)

# Which terminal state each stop reason ends in.
TERMINAL_FOR: dict[str, AgentState] = {
    "completed": AgentState.completed,
    "manual_stop": AgentState.cancelled,
    "iteration_limit": AgentState.cancelled,
    "time_limit": AgentState.cancelled,
    "budget": AgentState.cancelled,
    "input_timeout": AgentState.cancelled,
    "unattended": AgentState.cancelled,
    "error": AgentState.error,
}

_ALLOWED: dict[AgentState, frozenset[AgentState]] = {
    AgentState.idle: frozenset({AgentState.running}) | TERMINAL,
    AgentState.running: (_WORKING - {AgentState.running}) | TERMINAL,
    AgentState.thinking: frozenset(
        {AgentState.running, AgentState.tool_executing, AgentState.waiting_user}
    )
    | TERMINAL,
    # A tool may ask the user (ask_user, a permission) or call the model itself.
    AgentState.tool_executing: frozenset(
        {AgentState.running, AgentState.thinking, AgentState.waiting_user}
    )
    | TERMINAL,
    AgentState.waiting_user: frozenset(
        {AgentState.running, AgentState.tool_executing, AgentState.thinking}
    )
    | TERMINAL,
    AgentState.paused: frozenset({AgentState.running}) | TERMINAL,
    AgentState.completed: frozenset(),
    AgentState.cancelled: frozenset(),
    AgentState.error: frozenset(),
}


def check_transition(current: AgentState, target: AgentState) -> None:
    """Raise :class:`IllegalTransition` unless ``current → target`` is allowed."""
    if target not in _ALLOWED[current]:
        raise IllegalTransition(current.value, target.value)
