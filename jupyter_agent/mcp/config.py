"""The ``mcpServers`` map of a settings file, in the formats people already have.

Claude Desktop, Claude Code, Cursor, Cline and VS Code all describe a server much the same
way: a program to start (``command``, ``args``, ``env``, ``cwd``) that speaks MCP over its
stdin and stdout, or a URL (``url``, ``headers``) that speaks streamable HTTP or the older
HTTP+SSE. Their own keys are read as they mean them (see :data:`RENAMED`): ``type`` or
Cline's ``transportType`` (``stdio``, ``sse``, ``http``/``streamableHttp``), Cline's
``disabled`` and ``timeout``, VS Code's and Cursor's ``envFile``, VS Code's ``servers`` map
(:func:`gather_server_maps`). A few options of ours sit beside them::

    [mcpServers.github]
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }   # secret: hidden from every tool result
    read_only_tools = ["search_issues", "get_issue"]   # the Planner may call these
    tools = ["search_*", "get_issue"]            # the tools offered (default: all)

    [mcpServers.docs]
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer …" }   # secret too
    read_only = true                  # every tool of this server only reads

A value may name an environment variable instead of holding a secret, as Claude Code's
and VS Code's files do: ``${GITHUB_TOKEN}``, ``${env:GITHUB_TOKEN}``, or
``${PORT:-8080}`` with a default, in ``command``, ``args``, ``env``, ``envFile``, ``cwd``,
``url`` and ``headers``; VS Code's ``${workspaceFolder}`` and ``${userHome}`` are the
agent's folder and the home folder. A variable is read from the kernel's environment, then
from the entry's ``envFile``, when the server starts (so the file keeps no secret); what
it gives to ``env``, ``headers`` or ``url``, or from a variable named as a secret, and
every value of an ``envFile``, is hidden from tool results like any secret.

Invariant: one wrong entry costs only its own server. :func:`read_servers` reads each
entry on its own; one that cannot be read (an unknown ``type``, no ``command`` and no
``url``, a value of the wrong type) is kept as a server that never starts, with the
problem to say (:attr:`McpServerConfig.problem`); keys we do not use are left aside and
said (:attr:`McpServerConfig.ignored_keys`), never an error for the whole file.

What a user grants here is all the Planner is ever offered: a server's own
``readOnlyHint`` annotations are the server's word, not the user's. Servers are read
from the user's settings, and from a workspace's only once the user trusts it (a cloned
repository must not start programs by itself).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..secrets.shapes import is_secret_name
from ..workspace.patterns import Budget, compile_name

_VARIABLE = re.compile(r"\$\{(env:)?([A-Za-z_][A-Za-z0-9_]{0,127})(?::-([^}]{0,1000}))?\}")
"""``${NAME}``, ``${env:NAME}`` or ``${NAME:-default}`` (linear: no backtracking)."""
_INPUT = re.compile(r"\$\{input:([^}\s]{1,128})\}")
"""VS Code's ``${input:ID}``: a value VS Code asks for in its own window."""
PLACES = ("workspaceFolder", "workspaceFolderBasename", "userHome", "pathSeparator")
"""VS Code's predefined variables we know (written without ``env:``)."""

Transport = Literal["stdio", "http", "sse"]
"""A program over stdin/stdout; streamable HTTP; the older HTTP+SSE."""
Origin = Literal["user", "folder", "file"]
"""Which settings file an entry came from (as :mod:`jupyter_agent.config.settings` says)."""

_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
"""``type`` as the clients write it (lowercase, without ``-`` and ``_``)."""

RENAMED: dict[str, str] = {
    "transportType": "type",  # Cline
    "envFile": "env_file",  # VS Code, Cursor
    "serverUrl": "url",  # Windsurf
    "httpUrl": "url",  # Gemini CLI (streamable HTTP)
    "autoApprove": "auto_approve",  # Cline
    "alwaysAllow": "auto_approve",  # Roo Code, Kilo Code
    "includeTools": "tools",  # Gemini CLI
    "enabled_tools": "tools",  # Codex
    "disabledTools": "disabled_tools",  # Roo Code
    "excludeTools": "disabled_tools",  # Gemini CLI
    "startup_timeout_sec": "startup_timeout",  # Codex
    "tool_timeout_sec": "call_timeout",  # Codex
}
"""Other clients' names for our keys."""
COSMETIC = frozenset({"description", "title", "name", "icon", "$schema"})
"""Keys that only describe the server: left aside without a word."""
SECONDS_UP_TO = 3600
"""A ``timeout`` up to this is Cline's seconds (its longest is an hour); above, Claude Code's
and Gemini CLI's milliseconds (600000 is ten minutes). Claude Code's values under 3.6 s are
read as seconds: the misreading only ever waits longer."""


class MissingVariable(ValueError):
    """A value names an environment variable that is not set and has no default."""


SERVER_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
"""A server's name: any printable text up to 64 characters (tool names are sanitised)."""


class McpServerConfig(BaseModel):
    """One entry of ``mcpServers``: a program to start, or a URL to connect to."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    type: Transport | None = None
    """How to reach it; by default ``stdio`` with a ``command``; with a ``url``, streamable
    HTTP, then SSE should the server not speak it (SSE first for a URL ending ``/sse``)."""
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the program's environment (values are secrets)."""
    env_file: str | None = None
    """A file of ``NAME=value`` lines (``envFile``): more variables for the program, and
    for the ``${NAME}`` of its other values. Relative to the agent's folder; read through
    the path gate, inside that folder (or, from your own settings, your home folder)."""
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent with every request (values are secrets)."""
    enabled: bool = True
    """False (or Cline's ``disabled = true``): configured but never started."""
    read_only: bool = False
    """The user's word that every tool of this server only reads: the Planner is offered
    them, and they run without asking like the built-in reading tools."""
    read_only_tools: list[str] = Field(default_factory=list)
    """The same for these tools only (names as the server gives them)."""
    auto_approve: list[str] = Field(default_factory=list)
    """Cline's ``autoApprove``: these tools run without asking (an allow rule, made by the
    settings that hold it); unlike ``read_only_tools``, the Planner is not offered them."""
    tools: list[str] | None = None
    """The tools offered to the model (shell-style patterns); default: all of them."""
    disabled_tools: list[str] = Field(default_factory=list)
    """Tools never offered (patterns; ``disabledTools``), whatever ``tools`` says."""
    startup_timeout: float = Field(default=30.0, gt=0, le=600)
    """Seconds to start the server and list its tools before giving up."""
    call_timeout: float = Field(default=300.0, gt=0, le=86_400)
    """Seconds a tool call may take before it is cancelled (Cline's ``timeout``)."""

    _problem: str | None = PrivateAttr(default=None)
    _ignored: tuple[str, ...] = PrivateAttr(default=())
    _origin: Origin | None = PrivateAttr(default=None)
    _workspace: Path | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _common_keys(cls, data: Any, handler: Callable[[Any], McpServerConfig]) -> Any:
        ignored: list[str] = []
        if isinstance(data, Mapping):
            data = _canonical(data, ignored)
        config = handler(data)
        if ignored:
            config._ignored = tuple(ignored)
        return config

    @field_validator("tools", "disabled_tools")
    @classmethod
    def _patterns(cls, patterns: list[str] | None) -> list[str] | None:
        for pattern in patterns or ():
            compile_name(pattern)
        return patterns

    @model_validator(mode="after")
    def _one_way_to_reach_it(self) -> McpServerConfig:
        if self._problem is not None:  # a wrong entry kept as such (see broken)
            return self
        if (self.command is None) == (self.url is None):
            raise ValueError('give either "command" (a program to start) or "url", not both')
        if self.command is not None and self.type not in (None, "stdio"):
            raise ValueError(f'type "{self.type}" takes a "url", not a "command"')
        if self.url is not None:
            if self.type == "stdio":
                raise ValueError('type "stdio" takes a "command", not a "url"')
            if not re.match(r"https?://|\$\{", self.url):
                raise ValueError("url must start with http:// or https://")
        if self.command is not None and not self.command.strip():
            raise ValueError('"command" is empty')
        return self

    def refused(self, problem: str) -> McpServerConfig:
        """This server, kept as one that never starts, saying ``problem``."""
        config = self.model_copy(update={"enabled": False})
        config._problem = problem
        return config

    @classmethod
    def broken(cls, entry: Any, problem: str) -> McpServerConfig:
        """An entry that could not be read: a server that never starts and says why."""
        shown = {
            key: entry[key]
            for key in ("command", "url")
            if isinstance(entry, Mapping) and isinstance(entry.get(key), str)
        }
        config = cls.model_construct(enabled=False, **shown)
        config._problem = problem
        return config

    # --- what it is ----------------------------------------------------------------------

    @property
    def problem(self) -> str | None:
        """Why this entry could not be read (it never starts), or None."""
        return self._problem

    @property
    def ignored_keys(self) -> tuple[str, ...]:
        """Keys of the entry we do not use (left aside, said once)."""
        return self._ignored

    @property
    def origin(self) -> Origin | None:
        """The settings file it came from; None: settings given in code."""
        return self._origin

    @property
    def workspace(self) -> Path:
        """The agent's folder (``${workspaceFolder}``; where a relative ``envFile`` is)."""
        return self._workspace or Path.cwd()

    def placed(self, *, origin: Origin | None = None, workspace: Path | None = None) -> None:
        """Note where the entry came from and the folder of the agent it serves."""
        if origin is not None:
            self._origin = origin
        if workspace is not None:
            self._workspace = workspace

    def in_workspace(self, workspace: Path) -> McpServerConfig:
        """A copy for the agent working in ``workspace``."""
        copy = self.model_copy()
        copy._workspace = workspace
        return copy

    @property
    def transport(self) -> Transport:
        """How it is reached first (see :meth:`transports`)."""
        return self.transports()[0]

    def transports(self) -> tuple[Transport, ...]:
        """The transports to try in turn: a URL that refuses the first (404, 405) gets the
        other, as the MCP specification advises for servers of either generation."""
        if self.command is not None:
            return ("stdio",)
        if self.type == "sse":
            return ("sse",)
        path = urlsplit(self.url or "").path.rstrip("/")
        if self.type is None and path.endswith("/sse"):
            return ("sse", "http")
        return ("http", "sse")

    def grants_read_only(self, tool: str) -> bool:
        """Whether the user granted ``tool`` (the server's name for it) as read-only."""
        return self.read_only or tool in self.read_only_tools

    @property
    def grants_any(self) -> bool:
        """Whether the user granted any of its tools read-only (the Planner may use it)."""
        return self.read_only or bool(self.read_only_tools)

    @property
    def chooses_tools(self) -> bool:
        """Whether the user chose which of its tools are offered."""
        return self.tools is not None or bool(self.disabled_tools)

    def offers(self, tool: str, budget: Budget | None = None) -> bool:
        """Whether ``tool`` is offered to the model (``tools`` and ``disabled_tools``); a
        pattern that runs out of time offers nothing (it fails closed)."""
        budget = budget or Budget()
        for pattern in self.disabled_tools:
            if budget.match(compile_name(pattern), tool) is not False:
                return False
        if self.tools is None:
            return True
        return any(budget.match(compile_name(p), tool) is True for p in self.tools)

    def why_not_offered(self, tool: str) -> str:
        """Which key leaves ``tool`` out (for the listing)."""
        budget = Budget()
        if any(budget.match(compile_name(p), tool) is not False for p in self.disabled_tools):
            return "disabled_tools"
        return "tools"

    # --- variables -----------------------------------------------------------------------

    def variables(self) -> list[str]:
        """The environment variables its values name (``${NAME}``), each once, in order:
        what the server would read from the kernel's environment when it starts."""
        names: dict[str, None] = {}

        def note(_where: str, value: str) -> str:
            names.update(
                (match[2], None)
                for match in _VARIABLE.finditer(value)
                if match[1] or match[2] not in PLACES
            )
            return value

        _fill(self, note)
        return list(names)

    def places(self) -> dict[str, str]:
        """VS Code's predefined variables, as they are for this agent."""
        home = str(Path.home())
        folder = self.workspace
        return {
            "workspaceFolder": str(folder),
            "workspaceFolderBasename": folder.name,
            "userHome": home,
            "pathSeparator": os.sep,
        }

    def env_file_path(self, environ: Mapping[str, str] | None = None) -> str | None:
        """``envFile`` with the variables it names filled in (from the environment only)."""
        if self.env_file is None:
            return None
        environ = os.environ if environ is None else environ
        return _expand(self.env_file, environ, "envFile", self.places())

    def expanded(
        self,
        environ: Mapping[str, str] | None = None,
        file_values: Mapping[str, str] | None = None,
    ) -> McpServerConfig:
        """This config with the variables its values name filled in (from ``environ``, by
        default the kernel's, then from ``file_values``, what its ``envFile`` holds), and
        the file's values beneath its ``env``; :class:`MissingVariable` names one unset."""
        environ = os.environ if environ is None else environ
        lookup = _Chain(environ, file_values or {})
        places = self.places()
        filled = _fill(self, lambda where, v: _expand(v, lookup, where, places))
        filled["env"] = {**(file_values or {}), **filled["env"]}
        return self.model_copy(update=filled)

    def secrets(self, server: str, file_values: Mapping[str, str] | None = None) -> dict[str, str]:
        """Its secret values (environment and header values, what any variable it names
        gives, every value of its ``envFile``), by a name to show them by."""
        given: dict[str, str] = {}
        file_values = file_values or {}
        lookup = _Chain(os.environ, file_values)
        places = self.places()

        def lenient(where: str, value: str) -> str:  # a variable not set yet gives nothing
            for match in _VARIABLE.finditer(value):
                if not match[1] and match[2] in PLACES:
                    continue
                found = lookup.get(match[2])
                # In a URL, or named as a secret (``--token ${GITHUB_TOKEN}``); not a path
                # such as ``${HOME}``, which tool results must still show.
                if found and (where == "url" or is_secret_name(match[2])):
                    given[f"mcp {server} variable {match[2]}"] = found
            return _expand(value, lookup, where, places, strict=False)

        filled = _fill(self, lenient)
        env: dict[str, str] = filled["env"]
        headers: dict[str, str] = filled["headers"]
        found = {f"mcp {server} envFile {k}": v for k, v in file_values.items()}
        found.update({f"mcp {server} env {k}": v for k, v in env.items()})
        found.update({f"mcp {server} header {k}": v for k, v in headers.items()})
        # "Bearer abc…": the token alone too, should a server echo it without the scheme.
        for key, value in headers.items():
            scheme, _, token = value.partition(" ")
            if token and scheme.isalpha():
                found[f"mcp {server} header {key} token"] = token.strip()
        found.update(given)
        return {name: value for name, value in found.items() if value}


class _Chain(Mapping[str, str]):
    """The environment, then the ``envFile``'s values."""

    def __init__(self, *maps: Mapping[str, str]) -> None:
        self._maps = maps

    def __getitem__(self, key: str) -> str:
        for m in self._maps:
            if key in m:
                return m[key]
        raise KeyError(key)

    def __iter__(self) -> Any:
        return iter({k: None for m in self._maps for k in m})

    def __len__(self) -> int:
        return len({k for m in self._maps for k in m})


def _canonical(data: Mapping[Any, Any], ignored: list[str]) -> dict[str, Any]:
    """An entry with other clients' keys as ours (see :data:`RENAMED`); the keys we do not
    use are left out and added to ``ignored``."""
    out: dict[str, Any] = {}
    came_from: dict[str, str] = {}
    for key, value in data.items():
        ours = _ours(key, value, data)
        if ours is None:
            if not (isinstance(key, str) and key in COSMETIC):
                ignored.append(key if isinstance(key, str) else repr(key))
            continue
        for field, given in ours:
            if field in out and out[field] != given:
                raise ValueError(f'give "{came_from[field]}" or "{key}", not both')
            out[field], came_from[field] = given, key
    if isinstance(out.get("type"), str):
        out["type"] = _kind(out["type"])
    for field in ("env", "headers"):  # VS Code allows numbers
        if isinstance(out.get(field), Mapping):
            out[field] = {k: _text(v) for k, v in out[field].items()}
    if isinstance(out.get("args"), list):
        out["args"] = [_text(a) for a in out["args"]]
    return out


def _ours(key: Any, value: Any, data: Mapping[Any, Any]) -> list[tuple[str, Any]] | None:
    """The fields of ours that ``key`` gives (None: a key we do not use)."""
    if not isinstance(key, str):
        return None
    if key in McpServerConfig.model_fields:
        return [(key, value)]
    if key == "httpUrl" and not {"type", "transportType"} & set(data):
        return [("url", value), ("type", "http")]  # Gemini CLI's streamable HTTP
    if key in RENAMED:
        return [(RENAMED[key], value)]
    if key == "disabled":  # Cline
        if not isinstance(value, bool):
            raise ValueError('"disabled" must be true or false')
        return [("enabled", not value)]
    if key == "timeout":  # Cline's seconds, Claude Code's milliseconds
        return [("call_timeout", _timeout(value))]
    return None


def _kind(given: str) -> Transport:
    kind = _TYPES.get(re.sub(r"[-_]", "", given.lower()))
    if kind is None:
        raise ValueError(f"type {given!r} is not one of stdio, http (streamable HTTP) or sse")
    return kind


def _text(value: Any) -> Any:
    """A number as its text (JSON files write ``"PORT": 8080``); anything else as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('"timeout" must be a number (seconds, or milliseconds above 3600)')
    return float(value) / 1000 if value > SECONDS_UP_TO else float(value)


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


def _expand(
    value: str,
    environ: Mapping[str, str],
    where: str,
    places: Mapping[str, str],
    *,
    strict: bool = True,
) -> str:
    def one(match: re.Match[str]) -> str:
        prefixed, name, default = match[1], match[2], match[3]
        if not prefixed and name in places:
            return places[name]
        found = environ.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        if strict:
            raise MissingVariable(unset_advice(name, where))
        return ""

    def asked(match: re.Match[str]) -> str:
        if strict:
            raise MissingVariable(
                f"${{input:{match[1]}}} (in {where}) is one of VS Code's inputs, which VS Code "
                "asks for in its own window and nothing asks for here: put the value in the "
                "environment Jupyter starts with, or in the entry's envFile, and write "
                "${env:NAME} instead"
            )
        return ""

    return _INPUT.sub(asked, _VARIABLE.sub(one, value))


def unset_advice(name: str, where: str) -> str:
    """What to say of a variable that is not set. Never a ``%env`` line: it would save the
    secret into the notebook, which is shared and kept."""
    return (
        f"${{{name}}} (in {where}) is not set in the kernel's environment: set it in the "
        f"environment Jupyter starts from (export {name}=… before jupyter lab, or your "
        f"service's settings), or put {name}=… in a file the entry names as envFile (kept "
        f"out of the notebook), or give a default (${{{name}:-…}})"
    )


def gather_server_maps(data: Any) -> Any:
    """Settings whose servers are written as VS Code writes them (``servers`` in its
    ``mcp.json``, ``mcp.servers`` in its ``settings.json``, beside ``inputs``) with them
    in ``mcpServers``; a name given in two of them is kept once, as a wrong entry."""
    if not isinstance(data, Mapping) or not ({"servers", "mcp", "inputs"} & set(data)):
        return data
    data = dict(data)
    data.pop("inputs", None)  # VS Code's questions: ${input:ID} says what to do instead
    others: list[tuple[str, Any]] = [("servers", data.pop("servers", None))]
    mcp = data.pop("mcp", None)
    if mcp is not None:
        if not isinstance(mcp, Mapping):
            raise ValueError("mcp: must be a table holding servers (as VS Code writes it)")
        others.append(("mcp.servers", mcp.get("servers")))
    key = "mcp_servers" if "mcp_servers" in data else "mcpServers"
    merged = data.get(key)
    where: dict[str, str] = {}
    if isinstance(merged, Mapping):
        merged = dict(merged)
        where = dict.fromkeys(merged, "mcpServers")
    for place, servers in others:
        if servers is None:
            continue
        if not isinstance(servers, Mapping) or not isinstance(merged or {}, Mapping):
            raise ValueError(f"{place}: must be a table of servers by name")
        merged = dict(merged or {})
        for name, entry in servers.items():
            if name in merged:
                merged[name] = McpServerConfig.broken(
                    entry, f"it is given twice, in {where[name]} and in {place}"
                )
            else:
                merged[name], where[name] = entry, place
    if merged is not None:
        data[key] = merged
    return data


def read_servers(value: Any) -> dict[str, McpServerConfig]:
    """The ``mcpServers`` map, each entry read on its own: one that cannot be read is kept
    as a server that never starts, saying why (see the module's invariant)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("must be a table of servers by name")
    servers: dict[str, McpServerConfig] = {}
    for name, entry in value.items():
        if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
            shown = _shown_name(name, servers)
            servers[shown] = McpServerConfig.broken(
                entry, f"the name {str(name)[:80]!r} must be 1 to 64 printable characters"
            )
        elif isinstance(entry, McpServerConfig):
            servers[name] = entry
        elif not isinstance(entry, Mapping):
            servers[name] = McpServerConfig.broken(
                entry, f"it must be a table of settings, not {type(entry).__name__}"
            )
        else:
            try:
                servers[name] = McpServerConfig.model_validate(entry)
            except ValidationError as exc:
                servers[name] = McpServerConfig.broken(entry, _problems(exc))
            except ValueError as exc:  # from the renaming, before the fields are read
                servers[name] = McpServerConfig.broken(entry, str(exc))
    return servers


def _shown_name(name: Any, taken: Mapping[str, Any]) -> str:
    shown = re.sub(r"[\x00-\x1f\x7f]", "?", str(name))[:60] or "?"
    while shown in taken:
        shown += "'"
    return shown


def _problems(exc: ValidationError) -> str:
    """What is wrong, field by field, without the values (they may be secrets)."""
    said = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(map(str, error["loc"]))
        message = str(error["msg"]).removeprefix("Value error, ")
        said.append(f"{where}: {message}" if where else message)
    return "; ".join(said)
