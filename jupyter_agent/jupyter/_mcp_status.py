"""``%agent mcp``: the MCP servers, their state and their tools.

The magic returns at once: servers not running are started in the background on the
agent's loop (the servers' sessions live there, where the agent calls their tools), and
the listing it showed is updated in place (by its display id) when they have started or
failed. Nothing is printed from the background task.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from ..agent import Agent
from ..mcp import render_status

log = logging.getLogger(__name__)

STARTING = "\n\n(starting the servers that are not running: this listing updates when they have)"


def show_mcp(agent: Agent, *, live: bool) -> concurrent.futures.Future[None] | None:
    """Show the servers; with ``live`` (a kernel, whose loop runs on), start those not
    running and update the listing in place. Returns the future of their start, if any."""
    servers = agent.mcp
    text = render_status(servers.status())
    waiting = [c for c in servers.connections.values() if c.config.enabled and c.state != "running"]
    if not live or not waiting:
        print(text)
        return None
    from IPython.display import display

    handle: Any = display({"text/plain": text + STARTING}, raw=True, display_id=True)

    async def start() -> None:
        try:
            await servers.start_all()
            servers.update(agent.tools)
        except Exception:  # shown as the servers' state; never printed from here
            log.debug("starting MCP servers for %%agent mcp failed", exc_info=True)
        handle.update({"text/plain": render_status(servers.status())}, raw=True)

    return asyncio.run_coroutine_threadsafe(start(), agent.home or asyncio.get_running_loop())
