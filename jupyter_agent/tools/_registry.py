"""The set of tools an agent can offer, looked up by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..admin_policy import current_policy
from ._tool import Tool


class ToolRegistry:
    """Tools by name, in registration order (which is the order the model sees)."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    def register(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Add a tool (a :class:`Tool`, or a typed function made into one)."""
        t = item if isinstance(item, Tool) else Tool(item)
        if t.name in self._tools and not replace:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t
        return t

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def copy(self) -> ToolRegistry:
        return ToolRegistry(self._tools.values())

    def allowed(self, permissions: frozenset[str]) -> list[Tool]:
        """Tools whose required permissions all lie in ``permissions``, less those the
        administrator's policy disables (never offered, so never called: every run and
        every subagent takes its tools from here, MCP servers' included)."""
        policy = current_policy()
        return [
            t
            for t in self._tools.values()
            if t.permissions <= permissions and not policy.tool_disabled(t.name)
        ]
