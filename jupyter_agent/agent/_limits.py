"""What ends a run before the agent says it is done: its limits, and :class:`StopRun`."""

from __future__ import annotations

from dataclasses import dataclass

from .._wording import plural
from ..errors import AgentError
from ..models import Usage
from ..states import StopReason


class StopRun(AgentError):
    """Raised inside a run to end it with a stop reason (a limit, an unanswered question)."""

    def __init__(self, reason: StopReason, message: str) -> None:
        super().__init__(message)
        self.reason: StopReason = reason
        self.message = message


@dataclass
class Limits:
    max_steps: int = 30
    max_duration: float | None = None
    """Seconds before the run stops with ``time_limit``."""
    budget_usd: float | None = None
    """Stop with ``budget`` once the run has cost this much."""
    question_timeout: float | None = None
    """Seconds to wait for an answer or approval; None waits for ever."""

    def check(self, steps_taken: int, usage: Usage) -> None:
        """Raise :class:`StopRun` when another step would go past a limit."""
        if steps_taken >= self.max_steps:
            raise StopRun(
                "iteration_limit", f"Reached the limit of {plural(self.max_steps, 'step')}."
            )
        budget = self.budget_usd
        if budget is not None and usage.cost_usd >= budget:
            raise StopRun("budget", f"Spent ${usage.cost_usd:.4f} of the ${budget:.4f} budget.")
