"""The settings that apply to an agent's workspace: the user's, then the workspace's over them.

Invariant: a workspace the user has not trusted contributes only what narrows (fewer
permissions, more rules that ask or deny); everything it would enable beyond that waits in
:attr:`AppliedSettings.trust_prompt`. Settings a program passes in, and the user's own file
read as the workspace's (the home folder), count as trusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..admin_policy import current_policy
from ..commands import SandboxSettings
from ..config.rules import Rules
from ..config.settings import (
    Settings,
    find_settings,
    load_settings,
    trust,
    trusted_as,
    user_settings,
)
from ..config.trust import TrustPrompt, untrusted_part
from ..events import PanelAction
from ..mcp import McpServerConfig
from ..models import ProviderConfig
from ..notebook.running_cells import CellPolicy
from ..permissions import BUILTIN_ROLES, Role
from ._attendance import Unattended
from ._context import ContextPolicy

Notice = tuple[str, PanelAction | None]
"""Something said once as the next run starts, with the panel action that answers it."""

TRUST_OUTGROWN = (
    "You trusted this folder's settings when they granted less (or before trust was bound "
    "to what it grants): what they would enable now waits for your trust again, and the "
    "trust prompt lists all of it."
)


@dataclass(frozen=True)
class AppliedSettings:
    """The user's settings and a workspace's, as they apply to one agent."""

    workspace: Path
    user: Settings | None
    """The user's own settings; ``None`` when they are the workspace's own (see ``home``)."""
    found: Settings | None
    """The workspace's settings: all of them when trusted, else the part that only narrows."""
    trusted: bool
    trust_prompt: TrustPrompt | None
    """What trusting this folder would enable (``None``: nothing waits for trust)."""
    roles: dict[str, Role]
    """The built-in roles, then the user's, the workspace's and the program's over them."""
    home: bool = False
    """The workspace is the home folder: its settings file is the user's own."""
    own_roles: tuple[Role, ...] = ()
    """The roles the program defines (over every file's)."""
    notices: tuple[Notice, ...] = field(default=())
    """What the user should hear about these settings, once."""

    @property
    def sources(self) -> tuple[Settings | None, Settings | None]:
        """The user's settings, then the workspace's (either may be missing)."""
        return self.user, self.found

    def models(self) -> tuple[dict[str, ProviderConfig], str | None, list[str]]:
        """The ``[providers]`` and ``[models]`` tables: providers, default model, choices."""
        providers: dict[str, ProviderConfig] = {}
        default: str | None = None
        choices: list[str] = []
        for source in self.sources:
            if source is None:
                continue
            providers.update(source.make_providers())
            if source.models is not None:
                default = source.models.default or default
                choices.extend(c for c in source.models.choices if c not in choices)
        return providers, default, choices

    def unattended(self) -> Unattended:
        """``unattended``: the workspace's over the user's, else ``fail``."""
        chosen: Unattended = "fail"
        for source in self.sources:
            if source is not None and source.unattended is not None:
                chosen = source.unattended
        return chosen

    def context_policy(self) -> ContextPolicy:
        """The ``[context]`` table: the user's, then the workspace's over it."""
        given: dict[str, Any] = {}
        for source in self.sources:
            if source is not None and source.context is not None:
                given = source.context.over(given)
        return ContextPolicy(**given)

    def cell_policy(self) -> CellPolicy:
        """The ``[cells]`` policy: the user's table, then the workspace's over it."""
        policy = CellPolicy()
        for source in self.sources:
            if source is not None and source.cells is not None:
                policy = source.cells.over(policy)
        return policy

    def mcp_configs(self) -> dict[str, McpServerConfig]:
        """The ``mcpServers`` of the user's settings, then the workspace's over them, each
        for this workspace (its ``${workspaceFolder}``, where its ``envFile`` is read)."""
        configs: dict[str, McpServerConfig] = {}
        for source in self.sources:
            if source is not None:
                configs.update(
                    {n: c.in_workspace(self.workspace) for n, c in source.mcp_servers.items()}
                )
        return configs

    def rules(self) -> Rules:
        """The permission rules of both files (the user's explained as the user's)."""
        return (self.found or Settings()).make_rules(self.user)

    def secret_sources(self) -> list[Settings]:
        """The files whose ``[secrets]`` name environment variables to hide (any file may:
        it only hides more)."""
        return [s for s in self.sources if s is not None and s.secrets.environment]

    def command_sandbox(self) -> SandboxSettings:
        """The ``[sandbox]`` table of the user's own settings (a workspace's is ignored:
        it could turn confinement off), else the default (on, with network)."""
        own = self.found if self.home else self.user
        chosen = SandboxSettings() if own is None or own.sandbox is None else own.sandbox.make()
        policy = current_policy()  # the administrator's: confinement on, network off
        if policy.sandbox_required and not chosen.enabled:
            chosen = replace(chosen, enabled=True)
        if policy.network is False and chosen.network:
            chosen = replace(chosen, network=False)
        return chosen

    def ignored_sandbox(self) -> str:
        """What to say when the workspace's file has a ``[sandbox]`` table ("" when not)."""
        if self.found is None or self.found.sandbox is None or self.home:
            return ""
        return (
            f"The [sandbox] table in {self.found.source} was ignored: sandbox settings are "
            "read from your own settings only (~/.jupyter_agent/settings.toml)."
        )


def read_settings(
    workspace: Path, given: str | Path | Settings | None, own_roles: list[Role]
) -> AppliedSettings:
    """Read the user's and ``workspace``'s settings (``given``: a file or settings a program
    passes in, used as the workspace's); ``own_roles``: roles the program defines."""
    if isinstance(given, (str, Path)):
        given = load_settings(given)
    found = given if given is not None else find_settings(workspace)
    user = user_settings()
    home = user is not None and found is not None and user.source == found.source
    if home:
        # One file, read once: the user's own (its rules explained as the user's).
        found, user = (given if given is not None else user), None
    # Settings a program passes in are its own choice; a folder's file is trusted only
    # once the user said so, and only while it grants what the trust prompt showed then.
    trusted = given is not None or home
    notices: list[Notice] = []
    if not trusted and found is not None:
        granted = trusted_as(workspace)
        trusted = granted == untrusted_part(found, user, workspace)[1].digest()
        if granted is not None and not trusted:
            notices.append((TRUST_OUTGROWN, None))
    applied = apply_settings(workspace, found, user, trusted=trusted, own_roles=own_roles)
    return AppliedSettings(
        workspace=workspace,
        user=applied.user,
        found=applied.found,
        trusted=applied.trusted,
        trust_prompt=applied.trust_prompt,
        roles=applied.roles,
        home=home,
        own_roles=applied.own_roles,
        notices=(*notices, *applied.notices),
    )


def apply_settings(
    workspace: Path,
    found: Settings | None,
    user: Settings | None,
    *,
    trusted: bool,
    own_roles: list[Role],
) -> AppliedSettings:
    """The workspace's settings ``found`` beside the ``user``'s: all of them when
    ``trusted``, else the part that only narrows (the rest makes the trust prompt)."""
    trust_prompt: TrustPrompt | None = None
    if found is not None and not trusted:
        found, prompt = untrusted_part(found, user, workspace)
        trust_prompt = prompt if prompt.effects else None
    confined = None if trusted else workspace
    problems: list[str] = []
    roles = [
        *(user.make_roles() if user else []),
        *(found.make_roles(confined_to=confined, left_out=problems) if found else []),
    ]
    notices: list[Notice] = []
    if trust_prompt is not None:
        notices.append((trust_prompt.text(), "trust_workspace"))
    if problems and found is not None:
        left_out = "; ".join(problems)
        notices.append((f"Some roles of {found.source} were left out: {left_out}", None))
    return AppliedSettings(
        workspace=workspace,
        user=user,
        found=found,
        trusted=trusted,
        trust_prompt=trust_prompt,
        roles={**BUILTIN_ROLES, **{r.name: r for r in roles}, **{r.name: r for r in own_roles}},
        own_roles=tuple(own_roles),
        notices=tuple(notices),
    )


def trust_settings(current: AppliedSettings) -> tuple[AppliedSettings, bool]:
    """Trust the workspace's settings from now on (remembered in the user's settings), as
    ``current.trust_prompt`` showed them. Returns the settings that apply now, and False
    when nothing was trusted because the files changed since the prompt was made (the
    settings returned then wait for trust again, with the new prompt)."""
    workspace, shown, own = current.workspace, current.trust_prompt, list(current.own_roles)
    found, user = find_settings(workspace), user_settings()
    # What is applied is what is compared with the prompt: the files are read once.
    now = untrusted_part(found, user, workspace)[1] if found else None
    if shown is None:  # nothing waits: trusted as granting nothing more than now
        trust(workspace, (now or TrustPrompt(folder="", source="")).digest())
        return read_settings(workspace, None, own), True
    if now != shown:
        return apply_settings(workspace, found, user, trusted=False, own_roles=own), False
    trust(workspace, shown.digest())
    return apply_settings(workspace, found, user, trusted=True, own_roles=own), True
