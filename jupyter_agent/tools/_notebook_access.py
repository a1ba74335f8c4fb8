"""How the notebook tools reach the agent's notebook, and name its cells by position."""

from __future__ import annotations

from ..errors import ToolError
from ..notebook.bridge import NotebookBridge
from ._tool import ToolContext


def bridge_of(ctx: ToolContext) -> NotebookBridge:
    bridge = ctx.resources.get(NotebookBridge)  # type: ignore[type-abstract]  # keyed by the protocol
    if bridge is None:
        raise ToolError("No notebook is attached to this agent, so there are no cells to work on.")
    return bridge


async def positions(bridge: NotebookBridge, *cell_ids: str | None) -> dict[str, int]:
    """Where these cells are now, 1-based (``{id: position}``), for a result's ``data``: the
    panel names a cell "cell 7" and links it rather than showing its id. A cell no longer
    in the notebook is left out; a notebook that cannot be read gives no positions (the
    edit itself succeeded)."""
    wanted = {cell_id for cell_id in cell_ids if cell_id}
    try:
        cells = await bridge.read()
    except ToolError:
        return {}
    return {cell.id: n for n, cell in enumerate(cells, 1) if cell.id in wanted}
