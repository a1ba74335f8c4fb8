"""Settings files for roles, rules and the sandbox (JSON or TOML).

An agent reads the user's settings, ``~/.jupyter_agent/settings.toml`` (or ``.json``),
then the workspace's, ``<workspace>/.jupyter_agent/settings.toml`` (or ``.json``), when
they exist. The ``[sandbox]`` table is read from the user's file only: a folder must not
be able to turn off the sandbox its own commands run in. Until the user trusts the folder,
its file may only narrow what the agent does (:mod:`jupyter_agent.config.trust` says what is kept,
and renders what trusting would enable). Each rule remembers the file it came from
(:class:`~jupyter_agent.config.rules.RuleOrigin`): a folder's rule is explained in our words,
never its own ``description``. Every pattern is compiled as the file loads (a bad one is
a :class:`SettingsError` naming the file) and matched under a time bound
(:mod:`jupyter_agent.workspace.patterns`). Example::

    [roles.reviewer]
    description = "Reads the code and runs the tests; changes nothing."
    permissions = ["read_files", "read_notebook", "inspect_kernel", "execute_commands"]
    prompt = "You review. Run the tests with execute_command; report, do not fix."

    [[rules]]
    decision = "allow"
    scope = "role"
    target = "reviewer"
    matcher = { kind = "command", prefix = "pytest" }

    [sandbox]            # user settings only
    enabled = true       # false: commands run unconfined (the panel says so)
    network = true       # false: commands get no network
    writable = ["~/.cache/pip"]   # folders outside the workspace commands may write
    unix_sockets = false # true: commands may use Unix sockets (D-Bus, docker.sock…)

    [secrets]            # more values to hide from every tool result (any settings file)
    environment = ["SERVICE_CRED", "MYCO_*"]   # variables whose values are secret

    [cells]              # cells the agent runs (a workspace's file: see CellsTable)
    wait = 30            # seconds run_cell waits before "still running" (the cell runs on)
    on_stop = "interrupt"  # or "leave_running": Stop stops only the agent
    timeout = 7200       # interrupt a cell after this many seconds (default: never)

    [context]            # the conversation and the model's context window
    window = 100000      # tokens the window holds (default: the model's, from a table)
    auto = true          # false: make room only when asked or refused as too long

    [models]             # which model (user settings, or a trusted workspace's)
    default = "openai:gpt-5"    # JUPYTER_AGENT_MODEL and --model still win
    choices = ["claude-sonnet-4-6", "ollama:qwen3", "gateway:gpt-4o"]   # the panel's picker

    [providers.gateway]  # a provider named in model strings: "gateway:gpt-4o"
    type = "openai-compatible"  # or openai, ollama, anthropic, bedrock, vertex
    base_url = "https://llm.example.com/v1"
    api_key_env = "GATEWAY_KEY" # the variable holding its key (never the key itself)

    [mcpServers.github]  # MCP servers (a workspace's file: only once trusted)
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "…" }
    read_only_tools = ["search_issues"]   # what the Planner may call (see mcp.config)

In JSON, ``"mcpServers": {"github": {"command": …}}``, as Claude Desktop writes it (VS
Code's ``servers`` and ``mcp.servers`` are read as ``mcpServers``). An entry that cannot be
read costs only its own server, which is listed with what is wrong; Cline's
``autoApprove`` becomes an allow rule of the file that holds it (a folder's, like its other
allow rules, only once the user trusts the folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..commands import SandboxSettings
from ..errors import AgentError, ToolError
from ..mcp.config import McpServerConfig, gather_server_maps, read_servers
from ..models import ModelStringError, ProviderConfig, check_alias, parse_model
from ..models._catalog import PROVIDER_TYPES, ProviderType
from ..notebook.running_cells import MAX_WAIT, CellPolicy, StopPolicy
from ..permissions import Role
from ..workspace.access import WorkspaceAccess
from ..workspace.paths import LinkPolicy, PathRefused, Root, read_regular
from ..workspace.patterns import Budget, compile_name
from .rule_matchers import McpServer
from .rules import Rule, RuleOrigin, Rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SETTINGS_DIR = ".jupyter_agent"
SETTINGS_NAMES = ("settings.toml", "settings.json")
SETTINGS_FILES = tuple(Path(SETTINGS_DIR) / name for name in SETTINGS_NAMES)
TRUSTED_FOLDERS = Path(".jupyter_agent") / "trusted-folders.json"
"""In the home folder: the workspaces whose settings the user trusts."""
MAX_BYTES = 1_000_000
"""The largest settings file read (a folder's could be anything)."""
MAX_ENTRIES = 1_000
"""The most rules, roles or MCP servers one file may hold."""


class SettingsError(AgentError):
    """The settings file could not be read; the message names the file and the problem."""


class RoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    permissions: list[str]
    description: str = ""
    prompt: str = ""
    prompt_file: str | None = None
    """A markdown file, relative to the settings file, holding the role's prompt."""


class SandboxTable(BaseModel):
    """The ``[sandbox]`` table (see :class:`~jupyter_agent.commands.SandboxSettings`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    network: bool = True
    writable: list[str] = Field(default_factory=list)
    unix_sockets: bool = False

    def make(self) -> SandboxSettings:
        return SandboxSettings(self.enabled, self.network, tuple(self.writable), self.unix_sockets)


class SecretsTable(BaseModel):
    """The ``[secrets]`` table: environment variables whose values are hidden like a key's,
    though their names do not say so. It only ever hides more, so a folder may set it."""

    model_config = ConfigDict(extra="forbid")

    environment: list[str] = Field(default_factory=list)
    """Variable names, or shell-style patterns (``MYCO_*``)."""
    _seen: tuple[frozenset[str], frozenset[str]] | None = PrivateAttr(default=None)
    """The last set of variable names looked at, and those of them that are secret."""

    @field_validator("environment")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            compile_name(pattern)
        return patterns

    def values(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The named variables' current values, by name (read at each call)."""
        env = os.environ if environ is None else environ
        return {name: env[name] for name in self._secret_names(frozenset(env)) if env[name]}

    def _secret_names(self, names: frozenset[str]) -> frozenset[str]:
        """The names the patterns match, matched once per set of names under one time
        budget; a name whose match ran out of time counts as secret (it only hides more)."""
        if self._seen is not None and self._seen[0] == names:
            return self._seen[1]
        budget = Budget()
        patterns = [compile_name(p) for p in self.environment]
        found = frozenset(
            name for name in names if any(budget.match(p, name) is not False for p in patterns)
        )
        self._seen = (names, found)
        return found


class CellsTable(BaseModel):
    """The ``[cells]`` table: how long run_cell waits, what Stop does to a running cell,
    and whether cells have a timeout (see
    :class:`~jupyter_agent.notebook.running_cells.CellPolicy`).
    Fields not given keep the default (or the user's value, for a workspace's file)."""

    model_config = ConfigDict(extra="forbid")

    wait: float | None = Field(default=None, ge=0, le=MAX_WAIT)
    """Seconds run_cell waits before it says "still running" (the cell runs on)."""
    on_stop: StopPolicy | None = None
    """``interrupt`` (the default): Stop interrupts a cell the agent runs; ``leave_running``:
    Stop stops only the agent. A workspace's file may not choose ``leave_running`` until the
    user trusts the folder (Stop must stop what the user cannot see)."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds after which a cell the agent runs is interrupted (default: never)."""

    def over(self, policy: CellPolicy) -> CellPolicy:
        """``policy`` with the fields this table sets."""
        given = {k: getattr(self, k) for k in self.model_fields_set if getattr(self, k) is not None}
        return replace(policy, **given)


class ContextTable(BaseModel):
    """The ``[context]`` table: the context window to plan for, and whether room is made
    automatically (see :class:`~jupyter_agent.agent.ContextPolicy`). The workspace's fields
    win over the user's; an untrusted workspace may not set the window (a tiny one would
    have the agent summarise at every step, on the user's bill)."""

    model_config = ConfigDict(extra="forbid")

    window: int | None = Field(default=None, ge=1_000)
    auto: bool | None = None

    def over(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` with the fields this table sets."""
        return {**given, **{k: v for k, v in self.model_dump().items() if v is not None}}


class ModelsTable(BaseModel):
    """The ``[models]`` table: the model new agents use, and what the panel's picker lists."""

    model_config = ConfigDict(extra="forbid")

    default: str | None = None
    choices: list[str] = Field(default_factory=list)


class ProviderTable(BaseModel):
    """A ``[providers.NAME]`` table: a provider to name in model strings (``NAME:MODEL``),
    such as a company gateway speaking OpenAI's API."""

    model_config = ConfigDict(extra="forbid")

    type: ProviderType | None = None
    """Default: the table's name, when it is a provider's (``[providers.openai]``)."""
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    region: str | None = None
    project: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    context_window: int | None = Field(default=None, ge=1_000)

    def make(self, name: str) -> ProviderConfig:
        kind = self.type or next((k for k in PROVIDER_TYPES if k == name), None)
        if kind is None:
            raise SettingsError(
                f"[providers.{name}]: say which kind of provider it is: type = one of "
                + ", ".join(k for k in PROVIDER_TYPES if k != "scripted")
            )
        options = {
            key: value
            for key, value in (
                ("max_tokens", self.max_tokens),
                ("context_window", self.context_window),
            )
            if value is not None
        }
        return ProviderConfig(
            kind, self.base_url, self.api_key_env, self.region, self.project, options
        )


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    roles: dict[str, RoleSettings] = Field(default_factory=dict, max_length=MAX_ENTRIES)
    rules: list[Rule] = Field(default_factory=list, max_length=MAX_ENTRIES)
    """Each decision weighs them all, on the event loop: a file holds at most
    :data:`MAX_ENTRIES` (and the trust prompt lists each)."""
    default_rules: bool = True
    """Start from :meth:`Rules.defaults` and add the file's rules; false to use only the file's."""
    unattended: Literal["fail", "deny"] | None = None
    """What a call needing approval does when nobody can give it (a notebook run by
    papermill or nbclient): ``fail`` (the default) ends the run naming the call; ``deny``
    denies it and the run goes on. Either may come from a folder's file: neither lets a
    call run."""
    sandbox: SandboxTable | None = None
    """Read from the user's settings only."""
    secrets: SecretsTable = Field(default_factory=SecretsTable)
    cells: CellsTable | None = None
    context: ContextTable | None = None
    models: ModelsTable | None = None
    """Read from the user's settings, and a workspace's once it is trusted."""
    providers: dict[str, ProviderTable] = Field(default_factory=dict)
    """Read from the user's settings, and a workspace's once it is trusted."""
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=dict, alias="mcpServers", max_length=MAX_ENTRIES
    )
    """MCP servers by name; a workspace's only apply once the user trusts it. An entry
    that cannot be read is kept as a server that never starts (see :mod:`..mcp.config`)."""
    source: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _vs_code_servers(cls, data: Any) -> Any:
        return gather_server_maps(data)

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _each_server(cls, value: Any) -> dict[str, McpServerConfig]:
        return read_servers(value)

    @model_validator(mode="after")
    def _auto_approved(self) -> Settings:
        """Cline's ``autoApprove`` as this file's allow rules (a folder's allow rule waits
        for trust like any other, and the trust prompt lists it)."""
        have = {r.id for r in self.rules}
        self.rules.extend(r for r in auto_approve_rules(self.mcp_servers) if r.id not in have)
        return self

    def make_providers(self) -> dict[str, ProviderConfig]:
        """The ``[providers]`` tables, checked (a name, its kind, its models' strings)."""
        made: dict[str, ProviderConfig] = {}
        for name, table in self.providers.items():
            try:
                made[check_alias(name)] = table.make(name)
            except (ValueError, SettingsError) as exc:
                raise SettingsError(f"{self.source}: {exc}") from None
        if self.models is not None:
            for given in filter(None, (self.models.default, *self.models.choices)):
                try:
                    parse_model(given, made)
                except ModelStringError as exc:
                    raise SettingsError(f"{self.source}: [models]: {exc}") from None
        return made

    def make_roles(
        self, *, confined_to: Path | None = None, left_out: list[str] | None = None
    ) -> list[Role]:
        """The roles. With ``confined_to``, a prompt file must lie inside that folder (and
        pass its path rules); a role whose prompt file cannot be read raises
        :class:`SettingsError`, or, given ``left_out``, is left out and said there."""
        roles = []
        for name, spec in self.roles.items():
            prompt = spec.prompt
            if spec.prompt_file:
                try:
                    prompt = self._prompt_file(name, spec.prompt_file, confined_to)
                except SettingsError as exc:
                    if left_out is None:
                        raise
                    left_out.append(str(exc).removeprefix(f"{self.source}: "))
                    continue
            roles.append(Role(name, frozenset(spec.permissions), prompt, spec.description))
        return roles

    def prompt_path(self, given: str) -> Path:
        """Where a role's ``prompt_file`` is: relative to this settings file."""
        return (self.source.parent if self.source else Path.cwd()) / given

    def _prompt_file(self, role: str, given: str, confined_to: Path | None) -> str:
        path = self.prompt_path(given)
        try:
            if confined_to is not None:  # the workspace's rules, then its gate
                path = WorkspaceAccess(confined_to).resolve(str(path), must_exist=True)
                raw = Root(confined_to).read(path, limit=MAX_BYTES)
            else:
                raw, cut = read_regular(path, MAX_BYTES)
                if cut:
                    raise OSError(f"larger than {MAX_BYTES:,} bytes")
            return raw.decode("utf-8")
        except ToolError as exc:
            raise SettingsError(f"{self.source}: role {role}: prompt_file: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{self.source}: role {role}: prompt_file: {exc}") from None

    def make_rules(self, user: Settings | None = None) -> Rules:
        """The rules: the built-in ones (unless ``default_rules = false``), these, and the
        ``user``'s. A rule replaces one of the same id: the user's a built-in one, these the
        user's (a folder's rule reaches this far only once the user trusted the folder
        after the trust prompt named the rule it replaces)."""
        mine = {r.id for r in self.rules}
        users = [r for r in (user.rules if user else []) if r.id not in mine]
        taken = mine | {r.id for r in users}
        defaults = [r for r in Rules.defaults() if r.id not in taken] if self.default_rules else []
        return Rules([*defaults, *self.rules, *users])


SettingsOrigin = Literal["user", "folder", "file"]


def auto_approve_rules(servers: Mapping[str, McpServerConfig]) -> list[Rule]:
    """An allow rule (scope ``user``, to win over the default rule that asks) for each
    tool an entry's ``autoApprove`` names: it runs without asking, for the roles that may
    use MCP tools at all (the Planner still is not offered it)."""
    rules = []
    for server, config in servers.items():
        if config.problem or not config.enabled:
            continue
        for tool in dict.fromkeys(config.auto_approve):
            said = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:10]
            rules.append(
                Rule.allow(
                    McpServer(server=_literal(server), tool=_literal(tool)),
                    scope="user",
                    id=f"mcp-auto-approve-{said}",
                    description=f"autoApprove of MCP server {server} in the settings",
                )
            )
    return rules


def _literal(name: str) -> str:
    """``name`` as a shell-style pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def load_settings(path: str | Path, origin: SettingsOrigin = "file") -> Settings:
    """Read a settings file (``.toml`` or ``.json``) that a program names (its own choice:
    read wherever it is, if it is a regular file); its rules remember that they come from
    it, as ``origin``: the user's own file, a workspace's, or another file."""
    path = Path(path)
    try:
        raw, cut = read_regular(path, MAX_BYTES)
    except OSError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    if cut:
        raise SettingsError(f"{path}: a settings file may hold {MAX_BYTES:,} bytes at most")
    return _parse(raw, path, origin)


def _parse(raw: bytes, path: Path, origin: SettingsOrigin) -> Settings:
    try:
        data: Any = tomllib.loads(raw.decode()) if path.suffix == ".toml" else json.loads(raw)
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise SettingsError(f"{path}: {problems}") from None
    except ValueError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    settings.source = path
    for config in settings.mcp_servers.values():
        config.placed(origin=origin)
    given = RuleOrigin(origin, str(path))
    settings.rules = [_named(rule, origin).with_origin(given) for rule in settings.rules]
    return settings


def _named(rule: Rule, origin: SettingsOrigin) -> Rule:
    """``rule`` with an id that says the same each time the file is read: its own, or one
    made from what it says (a trust prompt names the same rules each time it is made)."""
    if "id" in rule.model_fields_set:
        return rule
    said = rule.model_dump_json(exclude={"id", "description"})
    return rule.model_copy(
        update={"id": f"{origin}-{hashlib.sha256(said.encode()).hexdigest()[:8]}"}
    )


def find_settings(
    workspace: Path, origin: SettingsOrigin = "folder", *, links: LinkPolicy = "none"
) -> Settings | None:
    """The workspace's settings file, if it has one, read through the path gate: in the
    agent's own folder, where no link is followed (``links``: the user's own folder may
    link elsewhere in their home, also when it is the workspace)."""
    if os.path.realpath(workspace) == os.path.realpath(Path.home()):
        links = "beneath"
    try:
        folder = Root(workspace).subroot(SETTINGS_DIR, links=links)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PathRefused as exc:
        raise SettingsError(f"{workspace / SETTINGS_DIR}: {exc}") from None
    for name in SETTINGS_NAMES:
        candidate = workspace / SETTINGS_DIR / name
        try:
            raw, cut = folder.read_head(name, MAX_BYTES)
        except (FileNotFoundError, IsADirectoryError):
            continue
        except OSError as exc:
            raise SettingsError(f"{candidate}: {exc}") from None
        if cut:
            raise SettingsError(
                f"{candidate}: a settings file may hold {MAX_BYTES:,} bytes at most"
            )
        return _parse(raw, candidate, origin)
    return None


def user_settings() -> Settings | None:
    """The user's own settings (``~/.jupyter_agent/settings.toml`` or ``.json``), if any."""
    return find_settings(Path.home(), "user", links="beneath")


def is_trusted(folder: Path) -> bool:
    """Whether the user ever trusted ``folder``'s settings. They apply only while they grant
    what the trust prompt showed then (:func:`trusted_as`; an agent checks it as it starts)."""
    return trusted_as(folder) is not None


def trusted_as(folder: Path) -> str | None:
    """The digest of what the user trusted ``folder``'s settings to grant
    (:meth:`~jupyter_agent.config.trust.TrustPrompt.digest`), ``""`` for a trust given before trust
    was bound to it, or None when the folder was never trusted."""
    real = os.path.realpath(folder)
    granted, legacy = _trusted()
    return granted.get(real, "" if real in legacy else None)


def trust(folder: Path, granted: str) -> None:
    """Remember, in the user's own settings folder, that ``folder``'s settings are trusted
    to grant what the prompt with digest ``granted`` showed (no more: a change to them that
    grants more waits for trust again)."""
    real = os.path.realpath(folder)
    known, legacy = _trusted()
    known[real] = granted
    data = {"trusted": dict(sorted(known.items()))}
    if legacy - {real}:
        data["trusted_folders"] = sorted(legacy - {real})  # type: ignore[assignment]
    text = json.dumps(data, indent=1) + "\n"
    Root(Path.home()).write(TRUSTED_FOLDERS, text.encode(), make_folders=True)


def _trusted() -> tuple[dict[str, str], set[str]]:
    """The folders trusted, with the digest each was trusted as; and folders trusted before
    trust was bound to what it grants (they must be trusted again)."""
    try:
        raw = Root(Path.home()).read(TRUSTED_FOLDERS, limit=MAX_BYTES)
        data = json.loads(raw)
        granted = data.get("trusted", {})
        legacy = data.get("trusted_folders", [])
    except (OSError, ValueError, AttributeError):
        return {}, set()
    if not isinstance(granted, dict):
        granted = {}
    kept = {f: d for f, d in granted.items() if isinstance(f, str) and isinstance(d, str)}
    return kept, {f for f in legacy if isinstance(f, str)} if isinstance(legacy, list) else set()
