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
    delegates_at_once: int = 3
    """Subagents (``delegate`` calls of one turn) that run at the same time; more wait."""
    delegation_depth: int = 2
    """How deep subagents nest: 2 lets a subagent start subagents of its own, whose
    subagents may not (1: only the agent the user started delegates)."""

    def check(self, steps_taken: int, usage: Usage) -> None:
        """Raise :class:`StopRun` when another step would go past a limit."""
        if steps_taken >= self.max_steps:
            raise StopRun(
                "iteration_limit", f"Reached the limit of {plural(self.max_steps, 'step')}."
            )
        self.check_budget(usage)

    def check_budget(self, usage: Usage, whose: str = "the") -> None:
        """Raise :class:`StopRun` once ``usage`` has spent the budget (``whose``: the
        owner's words, e.g. "the parent agent's", for a subagent held to its parent's)."""
        budget = self.budget_usd
        if budget is not None and usage.cost_usd >= budget:
            raise StopRun("budget", f"Spent ${usage.cost_usd:.4f} of {whose} ${budget:.4f} budget.")
