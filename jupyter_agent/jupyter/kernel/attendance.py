"""Whether a person can answer this kernel's agent: the :class:`~jupyter_agent.agent.
Attendance` of a kernel's agent.

Someone can while a view of the agent's panel has opened in this kernel, ever (JupyterLab,
Notebook 7, VS Code: a page closed may come back), a widget manager is connected, or the
notebook is open live in JupyterLab or Notebook 7 (the lab extension answered the bridge:
the panel's cell may only be scrolled out of a long notebook, whose hidden cells JupyterLab
does not render, and the sidebar can show the panel). When none of these has happened
within :data:`GRACE` seconds of the panel being made, nobody can: the notebook runs without
a frontend (papermill, nbclient, nbconvert). A run whose agent has no panel (started from
code in a cell) has its handle's holder to answer: never absent.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from ..panel.displays import widget_frontend_connected

if TYPE_CHECKING:
    from .agent import KernelAgent

GRACE = 10.0
"""Seconds a new panel has for a view to open (one opens within a second or two in
JupyterLab, even on a slow machine) before the kernel is taken to run headless."""

HEADLESS = (
    "no view of the agent's panel opened in this kernel: it runs headless, "
    "as under papermill or nbclient"
)


class PanelViews:
    """:class:`~jupyter_agent.agent.Attendance` from the panel's views (see the module)."""

    def __init__(self, kernel: KernelAgent) -> None:
        self._kernel = kernel

    async def absent(self) -> str:
        while True:
            panel = self._kernel.panel
            bridge = self._kernel.bridge
            live = bridge is not None and bridge.mode == "live"
            if panel is None or panel.views_seen or live or widget_frontend_connected():
                await asyncio.get_running_loop().create_future()  # someone may answer
            left = panel.made_at + GRACE - time.monotonic()
            if left <= 0:
                return HEADLESS
            await asyncio.sleep(left)
