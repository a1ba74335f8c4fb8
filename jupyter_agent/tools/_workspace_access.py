"""The workspace access a tool call resolves its paths through."""

from __future__ import annotations

from ..workspace.access import WorkspaceAccess
from ._tool import ToolContext


def workspace_access(ctx: ToolContext) -> WorkspaceAccess:
    """The agent's workspace access (a :class:`WorkspaceAccess` resource), or a default one
    on the workspace."""
    found = ctx.resources.get(WorkspaceAccess)
    return found if found is not None else WorkspaceAccess(ctx.workspace)
