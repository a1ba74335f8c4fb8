"""The MCP servers of one agent family, and their tools in its registry.

One :class:`McpServers` serves an agent and its subagents (they share the agent's
resources), so a server is started once however many runs use it. Servers start lazily:
when a run first needs its tool list (:meth:`McpServers.sync`), only those the run's
role could use, or when ``%agent mcp`` asks (:meth:`start_all`).

Every tool offered goes with every request to the model: a server of hundreds of tools
can add 100 KB to each. Past :data:`MANY_TOOLS` tools or :data:`LARGE_SCHEMAS` bytes the
user hears how much, and ``tools`` / ``disabled_tools`` in the server's entry choose what
is offered (the rest are listed, not offered). A settings entry that could not be read,
and keys of it we do not use, are said once, as the first run starts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .._wording import plural
from ..admin_policy import current_policy
from ..permissions import Permission
from ..tools import ToolRegistry
from ..workspace.patterns import Budget
from ._connection import TRANSPORT_NAMES, McpConnection, McpUnavailable, ServerTool
from ._tool import McpTool, input_schema, tool_name
from .config import McpServerConfig

MANY_TOOLS = 50
"""More tools than this from one server, and the user hears it (and how to offer fewer)."""
LARGE_SCHEMAS = 20_000
"""More bytes of names, descriptions and schemas than this from one server, likewise."""


@dataclass(frozen=True)
class ServerStatus:
    """One server as ``%agent mcp`` shows it."""

    name: str
    where: str
    """The program and its arguments, or the URL (secrets hidden)."""
    state: str
    """not started, starting, running, failed: why (and what happens next), disabled, closed."""
    tools: list[tuple[str, str, bool, bool]] = field(default_factory=list)
    """(our name, the server's name, granted read-only by the user, said read-only by the
    server) of each tool it lists; our name is "" for a tool not offered."""
    server_info: str = ""
    not_offered: dict[str, str] = field(default_factory=dict)
    """The server's names of the tools the user chose not to offer, and the key that
    says so (``tools`` or ``disabled_tools``)."""
    offered_bytes: int = 0
    """Bytes of the offered tools' names, descriptions and schemas (sent with every request)."""
    notes: list[str] = field(default_factory=list)
    """What else to say of it: keys not used, how it was reached, that it offers much."""
    auto_approved: list[str] = field(default_factory=list)
    """Its tools that run without asking (``autoApprove``)."""


def _allowed(name: str, config: McpServerConfig) -> McpServerConfig:
    """``config``, or, for a server the administrator's policy does not allow, a server
    that never starts and says why (every server becomes a connection through here)."""
    refusal = current_policy().server_refusal(name)
    return config if refusal is None else config.refused(refusal)


class McpServers:
    """Configured servers by name, their connections, and the tools made of them."""

    def __init__(
        self, configs: Mapping[str, McpServerConfig], redact: Callable[[str], str] = str
    ) -> None:
        self._redact = redact
        self.connections = {
            name: McpConnection(name, _allowed(name, c), redact) for name, c in configs.items()
        }
        self._names: dict[tuple[str, str], str] = {}
        """(server, server's tool name) → our tool name, fixed once given."""
        self._tools: dict[str, McpTool] = {}
        self._noted: dict[str, str] = {}
        """What was last said about each server, so a run repeats no old news."""
        self._sizes: dict[str, tuple[int, int]] = {}
        """Each server's offered tools: how many, and their bytes."""

    def configure(self, configs: Mapping[str, McpServerConfig]) -> None:
        """Add the servers of ``configs`` not known yet (the workspace was just trusted);
        those known keep running as they are."""
        for name, config in configs.items():
            if name not in self.connections:
                self.connections[name] = McpConnection(name, _allowed(name, config), self._redact)

    def __bool__(self) -> bool:
        return bool(self.connections)

    def secrets(self) -> dict[str, str]:
        """The servers' secret values (environment, envFile and header values), for
        redaction."""
        found: dict[str, str] = {}
        for connection in self.connections.values():
            found.update(connection.secrets())
        return found

    def usable_by(self, permissions: frozenset[str]) -> list[McpConnection]:
        """The enabled servers a role with ``permissions`` could call a tool of."""
        every = Permission.USE_MCP in permissions
        granted = Permission.READ_MCP in permissions
        return [
            c
            for c in self.connections.values()
            if c.config.enabled and (every or (granted and c.config.grants_any))
        ]

    # --- starting ------------------------------------------------------------------

    async def start(self, connections: Iterable[McpConnection]) -> list[str]:
        """Start these servers side by side (each bounded by its startup timeout);
        what the user should hear about those that cannot be used."""
        connections = list(connections)
        was_lost = {c.name: c.error for c in connections if c.state == "failed" and c.starts}
        outcomes = await asyncio.gather(*(c.ensure() for c in connections), return_exceptions=True)
        notes: list[str] = []
        for connection, outcome in zip(connections, outcomes, strict=True):
            if isinstance(outcome, asyncio.CancelledError):
                raise outcome
            said = self._noted.get(connection.name)
            if isinstance(outcome, BaseException):
                # Said by its cause, so that backing off or giving up is no new news.
                why = connection.error if isinstance(outcome, McpUnavailable) else ""
                note = (
                    f"MCP server {connection.name} could not start: {why or outcome}. "
                    "Its tools are not available in this run."
                )
                if note != said:
                    notes.append(self._redact(note))
                self._noted[connection.name] = note
            else:
                if connection.name in was_lost and said is None:
                    # It stopped between runs: say so, as a crash during a call is said.
                    notes.append(
                        self._redact(
                            f"MCP server {connection.name} had stopped "
                            f"({was_lost[connection.name]}); it was started again."
                        )
                    )
                self._noted.pop(connection.name, None)
        return notes

    async def start_all(self) -> list[str]:
        """``%agent mcp``: start every enabled server, giving those that gave up another go."""
        for connection in self.connections.values():
            if connection.state == "failed":
                connection.reset()
        self._noted.clear()
        return await self.start(c for c in self.connections.values() if c.config.enabled)

    async def close(self) -> None:
        """Shut every server down (the kernel is going away, or the agent is closed)."""
        await asyncio.gather(*(c.close() for c in self.connections.values()))

    # --- what the settings say -----------------------------------------------------------

    def settings_notes(self) -> list[str]:
        """Once: the servers whose entries could not be read (they never start; the
        others are not affected), and keys of entries that are not used."""
        notes: list[str] = []
        for name, connection in self.connections.items():
            config = connection.config
            for key, note in (
                (
                    "\0entry",
                    config.problem
                    and (
                        f"MCP server {name} is not started: its settings entry is wrong: "
                        f"{config.problem}. Your other MCP servers are not affected."
                    ),
                ),
                (
                    "\0keys",
                    config.ignored_keys
                    and (
                        f"MCP server {name}: the keys {', '.join(config.ignored_keys)} of its "
                        "settings entry are not used here and were ignored."
                    ),
                ),
            ):
                if note and self._noted.get(name + key) != note:
                    self._noted[name + key] = note
                    notes.append(self._redact(note))
        return notes

    # --- tools ---------------------------------------------------------------------

    async def sync(self, registry: ToolRegistry, permissions: frozenset[str]) -> list[str]:
        """Start the servers a role with ``permissions`` could use, and bring their tools
        into ``registry`` (added, updated, and those gone removed). Returns what the user
        should hear (a wrong entry, a server that cannot start, a tool left out, a server
        whose tools weigh on every request)."""
        notes = self.settings_notes()
        notes.extend(await self.start(self.usable_by(permissions)))
        notes.extend(self.update(registry))
        return notes

    def update(self, registry: ToolRegistry) -> list[str]:
        """Bring the tools of the servers that listed some into ``registry``: those the
        user chose to offer (all, by default)."""
        notes: list[str] = []
        current: dict[str, McpTool] = {}
        for connection in self.connections.values():
            budget = Budget()
            count = size = 0
            for listed in connection.tools:
                if not connection.config.offers(listed.name, budget):
                    continue
                made, note = self._tool(connection, listed, registry)
                if made is not None:
                    current[made.name] = made
                    count += 1
                    size += len(json.dumps(made.spec(), ensure_ascii=False))
                if note and self._noted.get(f"{connection.name}\0{listed.name}") != note:
                    self._noted[f"{connection.name}\0{listed.name}"] = note
                    notes.append(self._redact(note))
            self._sizes[connection.name] = (count, size)
            note = self._weight(connection, count, size)
            key = f"{connection.name}\0size"
            if note and self._noted.get(key) != note:
                notes.append(self._redact(note))
            if note:
                self._noted[key] = note
        for name, old in self._tools.items():
            if name not in current and registry.get(name) is old:
                registry.unregister(name)
        for name, made in current.items():
            existing = registry.get(name)
            if existing is None or isinstance(existing, McpTool):
                registry.register(made, replace=True)
        self._tools = current
        return notes

    @staticmethod
    def _weight(connection: McpConnection, count: int, size: int) -> str:
        """What to say of a server whose offered tools weigh on every request ("": nothing)."""
        if count <= MANY_TOOLS and size <= LARGE_SCHEMAS:
            return ""
        kb = round(size / 1000)
        listed = len(connection.tools)
        chosen = f" of its {listed}" if connection.config.chooses_tools and listed > count else ""
        return (
            f"MCP server {connection.name} offers {plural(count, 'tool')}{chosen}: their "
            f"names, descriptions and schemas add about {kb} KB to every request to the "
            f'model. Offer only those you need with tools = ["name", "prefix_*"] (or '
            f"disabled_tools = [...]) in its entry of mcpServers; %agent mcp lists them."
        )

    def _tool(
        self, connection: McpConnection, listed: ServerTool, registry: ToolRegistry
    ) -> tuple[McpTool | None, str | None]:
        server = connection.name
        schema = input_schema(listed.input_schema)
        if schema is None:
            return None, (
                f"MCP server {server}: tool {listed.name!r} left out: its input schema is "
                "not a JSON object schema"
            )
        if not listed.name:
            return None, f"MCP server {server}: a tool without a name was left out"
        key = (server, listed.name)
        name = self._names.get(key)
        if name is None:
            # Not a name another tool holds: a built-in, one of yours, another server's.
            ours = set(self._names.values())
            taken = {t.name for t in registry if not isinstance(t, McpTool)} | ours
            name = self._names[key] = tool_name(server, listed.name, taken)
        existing = registry.get(name)
        if existing is not None and not isinstance(existing, McpTool):
            return None, f"MCP server {server}: tool {listed.name!r} left out: {name} is taken"
        made = McpTool(
            connection,
            listed,
            name=name,
            schema=schema,
            read_only=connection.config.grants_read_only(listed.name),
            redact=self._redact,
        )
        return made, None

    # --- what %agent mcp shows ------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        shown = []
        for name, connection in self.connections.items():
            config = connection.config
            where = (
                " ".join([config.command or "", *config.args])
                if config.transport == "stdio"
                else config.url or ""
            )
            budget = Budget()
            not_offered = {
                t.name: config.why_not_offered(t.name)
                for t in connection.tools
                if not config.offers(t.name, budget)
            }
            tools = [
                (
                    "" if t.name in not_offered else self._names.get((name, t.name), "(left out)"),
                    t.name,
                    config.grants_read_only(t.name),
                    t.annotations.get("readOnlyHint") is True,
                )
                for t in connection.tools
            ]
            count, size = self._sizes.get(name, (0, 0))
            notes: list[str] = []
            if config.env_file:
                notes.append(f"envFile: {config.env_file} (its values are hidden)")
            if connection.transport_used in ("http", "sse") and connection.refused:
                used = TRANSPORT_NAMES[connection.transport_used]
                notes.append(f"reached over {used} ({connection.refused})")
            elif connection.transport_used == "sse":
                notes.append("reached over SSE")
            if config.ignored_keys:
                notes.append(f"keys not used here: {', '.join(config.ignored_keys)}")
            if connection.tools and connection.state == "running":
                weight = f"{count} offered, about {max(1, round(size / 1000))} KB in every request"
                if count > MANY_TOOLS or size > LARGE_SCHEMAS:
                    weight += ": offer fewer with tools = [...] or disabled_tools = [...]"
                notes.append(f"{plural(len(connection.tools), 'tool')}, {weight}")
            shown.append(
                ServerStatus(
                    name=name,
                    where=self._redact(where),
                    state=self._redact(connection.describe()),
                    tools=tools,
                    server_info=connection.server_info,
                    not_offered=not_offered,
                    offered_bytes=size,
                    notes=[self._redact(n) for n in notes],
                    auto_approved=list(config.auto_approve),
                )
            )
        return shown


def render_status(statuses: list[ServerStatus]) -> str:
    """``%agent mcp``'s text: each server, its state, and its tools."""
    if not statuses:
        return (
            "No MCP servers are configured. Add them to ~/.jupyter_agent/settings.toml, e.g.\n\n"
            '[mcpServers.github]\ncommand = "github-mcp-server"\nargs = ["stdio"]\n'
        )
    lines = []
    for s in statuses:
        info = f", {s.server_info}" if s.server_info else ""
        lines.append(f"{s.name}: {s.state}{info}")
        if s.where:
            lines.append(f"  {s.where}")
        lines.extend(f"  {note}" for note in s.notes)
        for ours, theirs, granted, hinted in s.tools:
            if theirs in s.not_offered:
                lines.append(f"  - {theirs} (not offered: {s.not_offered[theirs]})")
                continue
            grant = " (read-only: the Planner may use it)" if granted else ""
            if hinted and not granted:
                # Its word alone grants nothing: say how the user can.
                grant = " (the server says it only reads; read_only_tools grants it)"
            if theirs in s.auto_approved and not granted:
                grant += " (runs without asking: autoApprove)"
            lines.append(f"  - {theirs} as {ours}{grant}")
        if not s.tools and s.state == "running":
            lines.append("  (no tools)")
    return "\n".join(lines)
