"""The workspace sandbox a tool call resolves its paths through."""

from __future__ import annotations

from ..workspace.sandbox import Sandbox
from ._tool import ToolContext


def sandbox_for(ctx: ToolContext) -> Sandbox:
    """The agent's sandbox (a :class:`Sandbox` resource), or a default one on the workspace."""
    found = ctx.resources.get(Sandbox)
    return found if found is not None else Sandbox(ctx.workspace)
