"""Tools: typed functions the model can call, and the built-in ones."""

from ._registry import ToolRegistry
from ._run_control import ChildRun, RunControl
from ._tool import ResourceMap, Tool, ToolContext, ToolOutput, tool
from ._workspace_access import workspace_access

__all__ = [
    "ChildRun",
    "ResourceMap",
    "RunControl",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolRegistry",
    "tool",
    "workspace_access",
]
