"""MCP servers: their tools join the agent's registry as ``mcp__SERVER__TOOL``.

Configured as ``mcpServers`` in the settings (see :mod:`jupyter_agent.mcp.config`);
started lazily, one set per agent family (:class:`McpServers`); their tools ask by
default and reach the Planner only when the user grants them read-only.
"""

from .config import McpServerConfig, MissingVariable
from .servers import McpServers, ServerStatus, render_status

__all__ = ["McpServerConfig", "McpServers", "MissingVariable", "ServerStatus", "render_status"]
