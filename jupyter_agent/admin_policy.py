"""The administrator's policy: what a hub's users and their workspaces cannot widen.

A system-level file, ``/etc/jupyter_agent/policy.toml`` and ``<sys.prefix>/etc/
jupyter_agent/policy.toml`` (the environment the hub installs), fixes for every agent:

- ``models``: the model strings allowed (shell-style patterns: ``claude-*``,
  ``openai:gpt-5*``), and ``providers``: the provider types allowed (``anthropic``,
  ``openai``, ``openai-compatible``, ``ollama``, ``bedrock``, ``vertex``). Scripted replays
  reach no network and are always allowed.
- ``[base_urls]``: the one address each provider type is called at (a company gateway);
  whatever the settings or the environment say.
- ``disabled_tools``: tools never offered (names or patterns: ``execute_command``,
  ``mcp__*``).
- ``mcp_servers``: the MCP server names that may start (absent: any; empty: none).
- ``[sandbox]``: ``required = true`` keeps commands confined whatever the user's settings
  say; ``network = false`` takes their network away.
- ``keys = "environment"``: API keys come only from the environment the hub gives the
  kernel (hidden from the agent's commands as always): no key typed in the panel, no
  ``%agent login``, no saved key file read.

Each file only narrows: with two files (or the extra file ``$JUPYTER_AGENT_POLICY`` names,
which a user may add but which can only narrow further), allowlists intersect, disabled
tools add up, ``required`` and ``network = false`` win. A file that cannot be read stops
the agent (fail closed) with a message naming it.

The policy governs what the agent's settings, model strings and tools may do; a user who
can run code in their kernel can still call what the kernel can reach: the policy is not a
sandbox for the user's own code (the hub's network policy is).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import AgentError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXTRA = "JUPYTER_AGENT_POLICY"
"""An extra policy file (only narrows further)."""
MAX_BYTES = 256_000
PROVIDER_TYPES = ("anthropic", "openai", "openai-compatible", "ollama", "bedrock", "vertex")


SYSTEM_POLICY = Path("/etc/jupyter_agent/policy.toml")


def policy_files() -> list[Path]:
    """Where policies are read from, in order (missing ones are skipped)."""
    files = [
        SYSTEM_POLICY,
        Path(sys.prefix) / "etc" / "jupyter_agent" / "policy.toml",
    ]
    extra = os.environ.get(EXTRA)
    if extra:
        files.append(Path(extra))
    return files


class PolicyError(AgentError):
    """A policy file that cannot be read, or a choice the policy does not allow."""


class _SandboxTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    required: bool = False
    network: bool | None = None


class _PolicyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: list[str] | None = Field(default=None, max_length=500)
    providers: list[Literal[PROVIDER_TYPES]] | None = None  # type: ignore[valid-type]
    base_urls: dict[Literal[PROVIDER_TYPES], str] = Field(  # type: ignore[valid-type]
        default_factory=dict
    )
    disabled_tools: list[str] = Field(default_factory=list, max_length=500)
    mcp_servers: list[str] | None = Field(default=None, max_length=500)
    sandbox: _SandboxTable = Field(default_factory=_SandboxTable)
    keys: Literal["any", "environment"] = "any"


@dataclass(frozen=True)
class Policy:
    """The policies of every file, merged (each only narrows). Empty: nothing is fixed."""

    sources: tuple[Path, ...] = ()
    models: tuple[tuple[str, ...], ...] = ()
    """Each file's allowed model patterns: a model must match one of every list."""
    providers: frozenset[str] | None = None
    base_urls: dict[str, str] = field(default_factory=dict)
    disabled_tools: tuple[str, ...] = ()
    mcp_servers: frozenset[str] | None = None
    sandbox_required: bool = False
    network: bool | None = None
    keys_from_environment: bool = False

    @property
    def where(self) -> str:
        return ", ".join(map(str, self.sources)) or "(none)"

    # --- the gates ask ----------------------------------------------------------------

    def model_refusal(
        self, provider: str, names: tuple[str, ...], base_url: str | None
    ) -> str | None:
        """Why the policy refuses this model (None: allowed). ``provider``: its type;
        ``names``: how it is written (``claude-sonnet-4-6``, ``anthropic:claude-…``), the
        first said in a refusal; ``base_url``: where it would be reached (None: the
        provider's own address)."""
        model_string = names[0]
        if provider == "scripted":
            return None
        if self.providers is not None and provider not in self.providers:
            allowed = ", ".join(sorted(self.providers)) or "none"
            return f"the provider {provider} is not allowed (allowed: {allowed})"
        for patterns in self.models:
            if not any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns):
                allowed = ", ".join(patterns) or "none"
                return f"the model {model_string} is not allowed (allowed: {allowed})"
        locked = self.base_urls.get(provider)
        if locked is not None and (base_url or "").rstrip("/") != locked:
            return f"{provider} is reached only at {locked}, not {base_url or 'its own address'}"
        return None

    def check_model(self, provider: str, names: tuple[str, ...], base_url: str | None) -> None:
        refusal = self.model_refusal(provider, names, base_url)
        if refusal is not None:
            raise PolicyError(f"Your administrator's policy ({self.where}): {refusal}.")

    def tool_disabled(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.disabled_tools)

    def server_refusal(self, name: str) -> str | None:
        if self.mcp_servers is None or name in self.mcp_servers:
            return None
        return f"not among the MCP servers your administrator's policy allows ({self.where})"

    def fixed(self) -> list[str]:
        """What the policy fixes, one line each, for the user to read."""
        lines: list[str] = []
        if self.providers is not None:
            lines.append(f"Providers: {', '.join(sorted(self.providers)) or 'none'}")
        lines += [f"Models: {', '.join(patterns) or 'none'}" for patterns in self.models]
        lines += [f"{p} is reached at {url}" for p, url in sorted(self.base_urls.items())]
        if self.disabled_tools:
            lines.append(f"Tools never offered: {', '.join(self.disabled_tools)}")
        if self.mcp_servers is not None:
            lines.append(f"MCP servers allowed: {', '.join(sorted(self.mcp_servers)) or 'none'}")
        if self.sandbox_required:
            lines.append("Commands always run in the sandbox")
        if self.network is False:
            lines.append("Commands get no network")
        if self.keys_from_environment:
            lines.append("API keys come only from the environment (no key typed or saved)")
        return lines


def _narrowed(policy: Policy, path: Path, given: _PolicyFile) -> Policy:
    def both(a: frozenset[str] | None, b: list[str] | None) -> frozenset[str] | None:
        if b is None:
            return a
        return frozenset(b) if a is None else a & frozenset(b)

    models = policy.models if given.models is None else (*policy.models, tuple(given.models))
    base_urls = dict(policy.base_urls)
    for provider, url in given.base_urls.items():
        url = url.rstrip("/")
        if base_urls.get(provider, url) != url:
            raise PolicyError(
                f"{path}: {provider} is locked to {base_urls[provider]} by another policy file"
            )
        base_urls[provider] = url
    network = policy.network
    if given.sandbox.network is not None:
        network = given.sandbox.network if network is None else (network and given.sandbox.network)
    return Policy(
        sources=(*policy.sources, path),
        models=models,
        providers=both(policy.providers, given.providers),
        base_urls=base_urls,
        disabled_tools=(*policy.disabled_tools, *given.disabled_tools),
        mcp_servers=both(policy.mcp_servers, given.mcp_servers),
        sandbox_required=policy.sandbox_required or given.sandbox.required,
        network=network,
        keys_from_environment=policy.keys_from_environment or given.keys == "environment",
    )


def _read(path: Path) -> _PolicyFile:
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise PolicyError(f"The administrator's policy {path} cannot be read: {exc}") from exc
    if len(raw) > MAX_BYTES:
        raise PolicyError(f"The administrator's policy {path} is over {MAX_BYTES:,} bytes")
    try:
        data: Any = tomllib.loads(raw.decode())
        return _PolicyFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise PolicyError(f"The administrator's policy {path} is not valid: {problems}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PolicyError(f"The administrator's policy {path} is not valid TOML: {exc}") from None


def read_policy(path: Path) -> Policy:
    """The policy of the one file ``path`` (:class:`PolicyError` says why it cannot be)."""
    return _narrowed(Policy(), path, _read(path))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def current_policy() -> Policy:
    """The policy now (read again when a file appears, changes or goes)."""
    files = policy_files()
    return _load(tuple((f, _stamp(f)) for f in files))


@functools.lru_cache(maxsize=8)
def _load(files: tuple[tuple[Path, tuple[int, int] | None], ...]) -> Policy:
    policy = Policy()
    for path, stamp in files:
        if stamp is not None:
            policy = _narrowed(policy, path, _read(path))
    return policy
