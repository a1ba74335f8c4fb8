"""Tools: typed functions the model can call, and the built-in ones."""

from ._registry import ToolRegistry
from ._tool import ResourceMap, Tool, ToolContext, ToolOutput, tool

__all__ = ["ResourceMap", "Tool", "ToolContext", "ToolOutput", "ToolRegistry", "tool"]
