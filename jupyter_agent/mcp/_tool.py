"""A server's tool as one of ours: ``mcp__SERVER__TOOL``, with the server's own schema.

Its name keeps to the model APIs' ``^[a-zA-Z0-9_-]{1,64}$`` and is unique (see
:func:`tool_name`). It needs :data:`Permission.USE_MCP`, which only the Actor has, and
asks by default; a tool the user granted read-only in the server's settings needs only
:data:`Permission.READ_MCP` (the Planner has it) and is a reading tool.

An approved call sends the server the arguments its card showed: they are copied when
checked, the card binds their digest, and the call checks it right before sending.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..approvals import ARGUMENTS_KEY, Bound, Shown, digest
from ..errors import ToolError
from ..permissions import Hazard, Permission
from ..tools import Tool, ToolContext, ToolOutput, workspace_access
from ..workspace.reach import reach_of
from ._connection import McpConnection, McpLost, McpUnavailable, ServerTool
from ._results import to_output

PREFIX = "mcp__"
MAX_NAME = 64
MAX_DESCRIPTION = 2000
"""Characters of a server's tool description offered to the model."""


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__SERVER__TOOL`` in the APIs' charset, at most 64 characters, not in ``taken``
    (a clash after sanitising, or a long name, gets a short hash of the original)."""
    name = f"{PREFIX}{_safe(server)}__{_safe(tool)}"
    if len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()
    for size in (6, 10, 40):
        suffix = f"_{digest[:size]}"
        candidate = name[: MAX_NAME - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free tool name for {tool!r} of MCP server {server!r}")


def _safe(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", text) or "_"


def input_schema(schema: Any) -> dict[str, Any] | None:
    """The server's schema as ours, or None when it is not an object schema (MCP asks
    for ``{"type": "object", …}``; a model API takes nothing else)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    try:
        json.dumps(schema)
    except (TypeError, ValueError):
        return None
    return {**schema, "type": "object", "properties": schema.get("properties") or {}}


MAX_ARGUMENT_STRINGS = 1000
"""Strings of one call's arguments looked at for the sensitive locations they name."""


def _sensitive_arguments(ctx: ToolContext, arguments: Any, shown: str) -> list[Hazard]:
    """A server's tool is handed text and may read what it names: an argument that names a
    sensitive location (an agent credentials file, another user's dot-files, ``~/.ssh``…,
    taken from the workspace when relative) asks, with a warning no rule may cover."""
    access = workspace_access(ctx)
    strings: list[str] = []
    pending: list[Any] = [arguments]
    while pending and len(strings) < MAX_ARGUMENT_STRINGS:
        item = pending.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    places = {
        place: None
        for text in strings
        for place in reach_of(text, raw=text, folders=[str(access.root)], access=access, glob=True)
    }
    return [
        Hazard(
            "ask",
            f"`{shown}` is given {p.place}, a sensitive location ({p.why}).",
            rememberable=False,
        )
        for p in places
    ]


class McpTool(Tool):
    """One tool of one MCP server; calling it calls the server."""

    def __init__(
        self,
        connection: McpConnection,
        listed: ServerTool,
        *,
        name: str,
        schema: dict[str, Any],
        read_only: bool,
        redact: Callable[[str], str] = str,
    ) -> None:
        """``redact`` hides secrets in what the server says of the tool (its description
        and schema reach the model as they are)."""
        self.connection = connection
        schema = _redacted(schema, redact)

        async def call(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
            return await self._call(ctx, arguments)

        async def show(ctx: ToolContext, args: Mapping[str, Any]) -> Shown:
            # The card shows the arguments (the call's input); the Allow is bound to them.
            bound = Bound(ARGUMENTS_KEY, "its arguments", _arguments_digest(args["arguments"]))
            return Shown(None, (bound,))

        def assess(ctx: ToolContext, args: Mapping[str, Any]) -> list[Hazard]:
            return _sensitive_arguments(ctx, args["arguments"], f"{server} · {listed.name}")

        server = connection.name
        description = redact(listed.description.strip())
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 1] + "…"
        super().__init__(
            call,
            name=name,
            description=f"[MCP server {server}, tool {listed.name}] {description}".strip(),
            category="read" if read_only else "mcp",
            permissions={Permission.READ_MCP if read_only else Permission.USE_MCP},
            summary=lambda args: f"{server} · {listed.name}({_short_args(args)})",
            paths=(),
            assess=assess,
            preview=show,
        )
        self.server = server
        self.server_tool = listed.name
        self.read_only = read_only
        self.input_schema = schema
        self._required = [r for r in schema.get("required", []) if isinstance(r, str)]

    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as given (the server checks them against its schema), once they
        are an object with the required keys."""
        if not isinstance(raw, Mapping):
            raise ToolError(
                f"{self.name} takes a JSON object of arguments, got {type(raw).__name__}"
            )
        missing = [r for r in self._required if r not in raw]
        if missing:
            raise ToolError(f"Invalid arguments for {self.name}: missing {', '.join(missing)}")
        # A copy of their own: nothing else holding the model's input can change them.
        return {"arguments": copy.deepcopy(dict(raw))}

    async def _call(self, ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
        connection = self.connection

        async def progress(done: float, total: float | None, message: str | None) -> None:
            of = f"/{total:g}" if total else ""
            await ctx.progress(f"{done:g}{of} {message or ''}".strip())

        ctx.check_shown(ARGUMENTS_KEY, _arguments_digest(arguments))
        try:
            result = await connection.call(self.server_tool or "", arguments, progress)
        except McpUnavailable as exc:
            raise ToolError(str(exc)) from None
        except McpLost as exc:
            if ctx.run is not None:
                ctx.run.warn(str(exc))
            raise ToolError(str(exc)) from None
        except TimeoutError:
            raise ToolError(
                f"MCP server {connection.name} did not answer {self.server_tool} within "
                f"{connection.config.call_timeout:g} s; the call was cancelled."
            ) from None
        except Exception as exc:  # a protocol error the server sent (bad arguments…)
            raise ToolError(
                f"MCP server {connection.name} refused {self.server_tool}: {exc}"
            ) from None
        # Images are decoded and downscaled: off the loop.
        return await asyncio.to_thread(to_output, connection.name, self.server_tool or "", result)


def _arguments_digest(arguments: Mapping[str, Any]) -> str:
    """The digest of a call's arguments, the same for the same JSON whatever its key order."""
    return digest(json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=repr))


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    return value


def _short_args(args: Mapping[str, Any], limit: int = 80) -> str:
    text = json.dumps(dict(args), ensure_ascii=False, default=str) if args else ""
    text = text.removeprefix("{").removesuffix("}")
    return text if len(text) <= limit else text[: limit - 1] + "…"
