"""An agent's configuration: the program's arguments resolved against the settings files.

Invariant: an argument the program passes always wins; what it leaves out comes from the
settings that apply to the workspace (:mod:`._applied_settings`), and only then from the
defaults. :func:`resolve_config` is the one place that decides this; :class:`Agent` only
assembles the parts a config names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..commands import OsSandbox, SandboxSettings
from ..config.settings import Settings
from ..models import (
    Model,
    ProviderConfig,
    default_model_string,
    recorded_string,
    resolve_model,
    resumed_model,
    vouched_addresses,
)
from ..notebook.bridge import NotebookBridge
from ..notebook.running_cells import CellPolicy
from ..permissions import PermissionPolicy, Role
from ..sessions.store import Session
from ..tools import Tool, ToolRegistry
from ..tools.control import CONTROL_TOOLS
from ..tools.delegate import delegate
from ..tools.files import FILE_TOOLS
from ..tools.sessions import SESSION_TOOLS
from ..tools.shell import SHELL_TOOLS, workspace_os_sandbox
from ..workspace.access import WorkspaceAccess
from ._applied_settings import AppliedSettings, Notice, read_settings
from ._context import ContextPolicy
from ._limits import Limits
from ._loops import Loop


class AgentOptions(TypedDict, total=False):
    """The keyword arguments of :class:`Agent` (see :func:`resolve_config` for each)."""

    workspace: str | Path | None
    tools: Iterable[Tool | Callable[..., Any]]
    max_steps: int
    max_duration: float | None
    budget_usd: float | None
    question_timeout: float | None
    delegates_at_once: int
    delegation_depth: int
    loop: str | Loop
    policy: PermissionPolicy | None
    roles: Iterable[Role]
    instructions: str
    session: Session | None
    persist: bool
    settings: str | Path | Settings | None
    sandbox: WorkspaceAccess | None
    command_sandbox: SandboxSettings | OsSandbox | None
    builtin_tools: bool
    notebook: str | Path | NotebookBridge | None
    context: ContextPolicy | None
    cells: CellPolicy | None


@dataclass(frozen=True)
class AgentConfig:
    """Everything an :class:`Agent` is made of, decided: no setting is read after this."""

    workspace: Path
    settings: AppliedSettings
    roles: dict[str, Role]
    """Every role selectable by name (the settings' and the program's)."""
    role: Role
    model: Model
    model_string: str
    """The model string the session records (resume goes on with it)."""
    providers: dict[str, ProviderConfig]
    model_choices: list[str]
    tools: tuple[Tool | Callable[..., Any], ...]
    """Tools the program adds (they replace built-in ones of the same name)."""
    builtin_tools: bool
    limits: Limits
    loop: str | Loop
    policy: PermissionPolicy
    policy_from_settings: bool
    """The rules came from the settings (trusting the workspace makes them again)."""
    context: ContextPolicy
    context_from_settings: bool
    cells: CellPolicy
    cells_from_settings: bool
    instructions: str
    sandbox: WorkspaceAccess
    command_sandbox: OsSandbox
    notebook: str | Path | NotebookBridge | None
    session: Session | None
    persist: bool
    notices: tuple[Notice, ...]
    """What the first run says once (settings ignored, a model that moved)."""

    def tool_registry(self) -> ToolRegistry:
        """The control tools, the built-in workspace tools when asked for, then the
        program's own (which replace built-in ones of the same name)."""
        registry = ToolRegistry((*CONTROL_TOOLS, delegate))
        if self.builtin_tools:
            for t in (*FILE_TOOLS, *SESSION_TOOLS, *SHELL_TOOLS):
                registry.register(t)
        for given in self.tools:
            registry.register(given, replace=True)
        return registry


def lookup_role(roles: dict[str, Role], role: str | Role) -> Role:
    """The role named ``role`` (a Role given is added to ``roles`` when new)."""
    if isinstance(role, Role):
        roles.setdefault(role.name, role)
        return role
    try:
        return roles[role]
    except KeyError:
        known = ", ".join(sorted(roles))
        raise ValueError(f"unknown role {role!r}; known roles: {known}") from None


def resolve_config(
    role: str | Role = "planner",
    model: str | Model | None = None,
    *,
    workspace: str | Path | None = None,
    tools: Iterable[Tool | Callable[..., Any]] = (),
    max_steps: int = 30,
    max_duration: float | None = None,
    budget_usd: float | None = None,
    question_timeout: float | None = None,
    delegates_at_once: int = 3,
    delegation_depth: int = 2,
    loop: str | Loop = "tool_use",
    policy: PermissionPolicy | None = None,
    roles: Iterable[Role] = (),
    instructions: str = "",
    session: Session | None = None,
    persist: bool = True,
    settings: str | Path | Settings | None = None,
    sandbox: WorkspaceAccess | None = None,
    command_sandbox: SandboxSettings | OsSandbox | None = None,
    builtin_tools: bool = True,
    notebook: str | Path | NotebookBridge | None = None,
    context: ContextPolicy | None = None,
    cells: CellPolicy | None = None,
) -> AgentConfig:
    """The configuration of an agent, from these arguments and the settings files.

    Args:
        role: "planner", "actor", or the name of a role given in ``roles``.
        model: An Anthropic model id or a Model (e.g. ScriptedModel); default from
            ``$JUPYTER_AGENT_MODEL``, else a current Claude model.
        workspace: Folder the agent works in; sessions are kept under it.
        tools: Extra tools (functions or Tool objects) besides the built-in ones.
        max_steps: Model turns per run (steps, for the reason → act → observe loop).
        max_duration: Seconds per run.
        budget_usd: Dollars per run.
        question_timeout: Seconds to wait for an answer or approval (None: for ever).
        delegates_at_once: Subagents (``delegate`` calls of one turn) run at once.
        delegation_depth: How deep subagents nest (1: only this agent delegates).
        loop: "tool_use" (native tool-use loop), "roa" (reason → act → observe),
            or your own ``async def loop(run)``.
        policy: Decides allow / deny / ask for each permitted call; default
            :meth:`Rules.defaults` (reads and edits run, deletes and commands ask).
        roles: User-defined roles, selectable by name.
        instructions: Extra system-prompt text for this agent.
        session: A session to continue (see :meth:`Agent.resume`).
        persist: Keep the session on disk under the workspace.
        settings: A settings file (or :class:`Settings`) with roles and rules; by
            default ``<workspace>/.jupyter_agent/settings.toml`` or ``.json`` if present.
        sandbox: Where file tools may go (default: the workspace, minus secrets).
        command_sandbox: How the OS confines shell commands: settings, or a ready
            :class:`OsSandbox`; by default the ``[sandbox]`` table of the user's
            settings (on, with network).
        builtin_tools: Offer the workspace tools (files, search, past sessions, shell)
            besides the control tools; roles and rules still decide what may run.
        notebook: The notebook to work on: a bridge, or a path (edited as a file).
            Adds the notebook tools.
        context: How the conversation is kept inside the model's context window
            (the window, and when to clear old results or compact earlier turns);
            by default the ``[context]`` tables of the user's and the workspace's
            settings.
        cells: How run_cell waits for the cells it runs, their timeout, and what Stop
            does to a cell still running; by default the ``[cells]`` tables of the
            user's and the workspace's settings.
    """
    root = Path(workspace or Path.cwd()).resolve()
    applied = read_settings(root, settings, list(roles))
    known = dict(applied.roles)
    chosen_role = lookup_role(known, role)
    notices = list(applied.notices)
    providers, default_model, choices = applied.models()
    moved = ""
    if model is None and session is not None:  # a saved session goes on with its model
        meta = session.metadata
        vouched = vouched_addresses(providers, [default_model, *choices])
        model, moved = resumed_model(
            meta.model_string, meta.provider, meta.model, providers, vouched
        )
    named = model if model is not None else default_model_string(default_model)
    chosen = resolve_model(named, providers=providers)
    if moved:
        notices.append(
            (
                f"{moved} It goes on with {chosen.name}: choose another in the Model "
                "picker or with %agent model.",
                None,
            )
        )
    if ignored := applied.ignored_sandbox():
        notices.append((ignored, None))
    if not isinstance(command_sandbox, OsSandbox):
        command_sandbox = workspace_os_sandbox(
            root, settings=command_sandbox or applied.command_sandbox()
        )
    return AgentConfig(
        workspace=root,
        settings=applied,
        roles=known,
        role=chosen_role,
        model=chosen,
        model_string=recorded_string(named, chosen, providers),
        providers=providers,
        model_choices=choices,
        tools=tuple(tools),
        builtin_tools=builtin_tools,
        limits=Limits(
            max_steps,
            max_duration,
            budget_usd,
            question_timeout,
            delegates_at_once=max(1, delegates_at_once),
            delegation_depth=max(0, delegation_depth),
        ),
        loop=loop,
        policy=policy if policy is not None else applied.rules(),
        policy_from_settings=policy is None,
        context=context or applied.context_policy(),
        context_from_settings=context is None,
        cells=cells or applied.cell_policy(),
        cells_from_settings=cells is None,
        instructions=instructions,
        sandbox=sandbox or WorkspaceAccess(root),
        command_sandbox=command_sandbox,
        notebook=notebook,
        session=session,
        persist=persist,
        notices=tuple(notices),
    )
