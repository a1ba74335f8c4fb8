"""The agents alive in this process (a kernel).

Invariant: every :class:`Agent` registers itself as it is made, and is held weakly: the
runtime never keeps an agent alive that its owner dropped.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._agent import Agent


class AgentRuntime:
    """The agents alive in this process (a kernel): list them, find them, shut them down."""

    def __init__(self) -> None:
        self._agents: weakref.WeakValueDictionary[str, Agent] = weakref.WeakValueDictionary()

    def add(self, agent: Agent) -> None:
        self._agents[agent.session.id] = agent

    def get(self, session_id: str) -> Agent | None:
        return self._agents.get(session_id)

    def agents(self) -> list[Agent]:
        return list(self._agents.values())

    def running(self) -> list[Agent]:
        return [a for a in self._agents.values() if a.running]

    async def shutdown(self, session_id: str | None = None) -> None:
        """Stop one agent's run (or all runs) and wait until they ended."""
        targets = [self._agents[session_id]] if session_id else self.running()
        handles = [a.handle for a in targets if a.running]
        for h in handles:
            if h is not None:
                h.stop()
        await asyncio.gather(*(h.wait() for h in handles if h is not None))


runtime = AgentRuntime()
"""The process's runtime; every Agent registers here."""
