"""The ``mcpServers`` map of a settings file, in the format people already have.

Claude Desktop, Claude Code, Cursor and VS Code all describe a server the same way: a
program to start (``command``, ``args``, ``env``, ``cwd``) that speaks MCP over its
stdin and stdout, or a URL (``url``, ``headers``) that speaks streamable HTTP. A few
options of ours sit beside them::

    [mcpServers.github]
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "…" }      # secret: hidden from every tool result
    read_only_tools = ["search_issues", "get_issue"]   # the Planner may call these

    [mcpServers.docs]
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer …" }   # secret too
    read_only = true                  # every tool of this server only reads

A value may name an environment variable instead of holding a secret, as Claude Code's
and VS Code's files do: ``${GITHUB_TOKEN}``, ``${env:GITHUB_TOKEN}``, or
``${PORT:-8080}`` with a default, in ``command``, ``args``, ``env``, ``cwd``, ``url`` and
``headers``. It is read from the kernel's environment when the server starts (so the file
keeps no secret); what it gives to ``env``, ``headers`` or ``url``, or from a variable
named as a secret, is hidden from tool results like any secret.

What a user grants here is all the Planner is ever offered: a server's own
``readOnlyHint`` annotations are the server's word, not the user's. Servers are read
from the user's settings, and from a workspace's only once the user trusts it (a cloned
repository must not start programs by itself).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..secrets.shapes import is_secret_name

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]{0,127})(?::-([^}]{0,1000}))?\}")
"""``${NAME}``, ``${env:NAME}`` or ``${NAME:-default}`` (linear: no backtracking)."""


class MissingVariable(ValueError):
    """A value names an environment variable that is not set and has no default."""


SERVER_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
"""A server's name: any printable text up to 64 characters (tool names are sanitised)."""


class McpServerConfig(BaseModel):
    """One entry of ``mcpServers``: a program to start, or a URL to connect to."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    """How to reach it; by default ``stdio`` with a ``command``, ``http`` with a ``url``."""
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the program's environment (values are secrets)."""
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent with every request (values are secrets)."""
    enabled: bool = True
    """False: configured but never started."""
    read_only: bool = False
    """The user's word that every tool of this server only reads: the Planner is offered
    them, and they run without asking like the built-in reading tools."""
    read_only_tools: list[str] = Field(default_factory=list)
    """The same for these tools only (names as the server gives them)."""
    startup_timeout: float = Field(default=30.0, gt=0, le=600)
    """Seconds to start the server and list its tools before giving up."""
    call_timeout: float = Field(default=300.0, gt=0, le=86_400)
    """Seconds a tool call may take before it is cancelled."""

    @model_validator(mode="after")
    def _one_way_to_reach_it(self) -> McpServerConfig:
        if self.type == "sse":
            raise ValueError(
                'type "sse" (the old HTTP+SSE transport) is not supported: use the '
                'server\'s streamable HTTP endpoint (type "http")'
            )
        if (self.command is None) == (self.url is None):
            raise ValueError('give either "command" (a program to start) or "url", not both')
        if self.command is not None and self.type not in (None, "stdio"):
            raise ValueError(f'type "{self.type}" takes a "url", not a "command"')
        if self.url is not None:
            if self.type == "stdio":
                raise ValueError('type "stdio" takes a "command", not a "url"')
            if not re.match(r"https?://", self.url):
                raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        if self.command is not None and not self.command.strip():
            raise ValueError('"command" is empty')
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    def grants_read_only(self, tool: str) -> bool:
        """Whether the user granted ``tool`` (the server's name for it) as read-only."""
        return self.read_only or tool in self.read_only_tools

    @property
    def grants_any(self) -> bool:
        """Whether the user granted any of its tools read-only (the Planner may use it)."""
        return self.read_only or bool(self.read_only_tools)

    def variables(self) -> list[str]:
        """The environment variables its values name (``${NAME}``), each once, in order:
        what the server would read from the kernel's environment when it starts."""
        names: dict[str, None] = {}

        def note(_where: str, value: str) -> str:
            names.update((match[1], None) for match in _VARIABLE.finditer(value))
            return value

        _fill(self, note)
        return list(names)

    def expanded(self, environ: Mapping[str, str] | None = None) -> McpServerConfig:
        """This config with the environment variables its values name filled in (from
        ``environ``, by default the kernel's); :class:`MissingVariable` names one unset."""
        environ = os.environ if environ is None else environ
        return self.model_copy(update=_fill(self, lambda where, v: _expand(v, environ, where)))

    def secrets(self, server: str) -> dict[str, str]:
        """Its secret values (environment and header values, and what any variable it
        names gives), by a name to show them by."""
        given: dict[str, str] = {}

        def lenient(where: str, value: str) -> str:  # a variable not set yet gives nothing
            for match in _VARIABLE.finditer(value):
                found = os.environ.get(match[1])
                # In a URL, or named as a secret (``--token ${GITHUB_TOKEN}``); not a path
                # such as ``${HOME}``, which tool results must still show.
                if found and (where == "url" or is_secret_name(match[1])):
                    given[f"mcp {server} variable {match[1]}"] = found
            return _expand(value, os.environ, where, strict=False)

        filled = _fill(self, lenient)
        env: dict[str, str] = filled["env"]
        headers: dict[str, str] = filled["headers"]
        found = {f"mcp {server} env {k}": v for k, v in env.items()}
        found.update({f"mcp {server} header {k}": v for k, v in headers.items()})
        # "Bearer abc…": the token alone too, should a server echo it without the scheme.
        for key, value in headers.items():
            scheme, _, token = value.partition(" ")
            if token and scheme.isalpha():
                found[f"mcp {server} header {key} token"] = token.strip()
        found.update(given)
        return {name: value for name, value in found.items() if value}


def _fill(config: McpServerConfig, expand: Callable[[str, str], str]) -> dict[str, Any]:
    """The fields that may name variables, each value passed through ``expand``."""
    return {
        "command": None if config.command is None else expand("command", config.command),
        "args": [expand(f"args[{i}]", a) for i, a in enumerate(config.args)],
        "env": {k: expand(f"env.{k}", v) for k, v in config.env.items()},
        "cwd": None if config.cwd is None else expand("cwd", config.cwd),
        "url": None if config.url is None else expand("url", config.url),
        "headers": {k: expand(f"headers.{k}", v) for k, v in config.headers.items()},
    }


def _expand(value: str, environ: Mapping[str, str], where: str, *, strict: bool = True) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        found = environ.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        if strict:
            raise MissingVariable(
                f"${{{name}}} (in {where}) is not set in the kernel's environment: set it "
                f"(%env {name}=…), or give a default (${{{name}:-…}})"
            )
        return ""

    return _VARIABLE.sub(one, value)


def check_server_names(servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
    """The map as given; a name that is empty, too long or has control characters raises."""
    for name in servers:
        if not SERVER_NAME.fullmatch(name):
            raise ValueError(f"MCP server name {name!r} must be 1 to 64 printable characters")
    return servers
