"""Tools: typed functions the model can call, and the built-in ones."""

from ._registry import ToolRegistry
from ._run_control import ChildRun, RunControl
from ._sandbox import sandbox_for
from ._tool import ResourceMap, Tool, ToolContext, ToolOutput, tool

__all__ = [
    "ChildRun",
    "ResourceMap",
    "RunControl",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolRegistry",
    "sandbox_for",
    "tool",
]
