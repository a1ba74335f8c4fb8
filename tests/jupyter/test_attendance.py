"""Who can answer a kernel's agent (jupyter/kernel/attendance.py): nobody once no view of
its panel opened for GRACE seconds and the notebook is not open live; someone while a
view has opened, or while JupyterLab holds the notebook live (its cell may just be out of
a long notebook's rendered part); never "nobody" for an agent without a panel."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from jupyter_agent.jupyter.kernel.attendance import GRACE, HEADLESS, PanelViews


@dataclass
class Panel:
    views_seen: int = 0
    made_at: float = field(default_factory=lambda: time.monotonic() - GRACE)


@dataclass
class Bridge:
    mode: str


@dataclass
class Kernel:
    panel: Any = None
    bridge: Any = None


async def answered_within(views: PanelViews, seconds: float) -> str | None:
    try:
        return await asyncio.wait_for(views.absent(), seconds)
    except asyncio.TimeoutError:
        return None


async def test_no_view_and_no_live_notebook_after_the_grace_is_nobody():
    for bridge in (None, Bridge("file"), Bridge("connecting")):
        said = await answered_within(PanelViews(Kernel(Panel(), bridge)), 1)  # type: ignore[arg-type]
        assert said == HEADLESS


async def test_a_view_a_live_notebook_or_no_panel_is_someone():
    for kernel in (
        Kernel(Panel(views_seen=1)),
        Kernel(Panel(), Bridge("live")),  # the panel's cell not rendered, the notebook open
        Kernel(None),
    ):
        assert await answered_within(PanelViews(kernel), 0.2) is None  # type: ignore[arg-type]


async def test_a_view_that_opens_within_the_grace_is_someone(monkeypatch: pytest.MonkeyPatch):
    from jupyter_agent.jupyter.kernel import attendance

    monkeypatch.setattr(attendance, "GRACE", 0.3)
    late = Kernel(Panel(made_at=time.monotonic()))
    task = asyncio.ensure_future(PanelViews(late).absent())  # type: ignore[arg-type]
    await asyncio.sleep(0.1)
    late.panel.views_seen = 1  # the page rendered the panel after a moment
    await asyncio.sleep(0.5)
    assert not task.done()
    task.cancel()
    never = Kernel(Panel(made_at=time.monotonic()))
    assert await answered_within(PanelViews(never), 2) == HEADLESS  # type: ignore[arg-type]
