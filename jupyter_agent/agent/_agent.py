"""The Agent: a role, a model, tools and a session, started as runs."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from .._prompts import load_prompt
from ..commands import OsSandbox, SandboxSettings
from ..credentials import stored_secrets
from ..errors import AgentBusy
from ..events import Event, PanelAction, RunAction, WarningEvent
from ..instructions import (
    REMEMBER_HEADER,
    REMEMBER_LIMIT,
    ProjectInstructions,
    read_instructions,
)
from ..mcp import McpServerConfig, McpServers
from ..messages import STOPPED_NOTE, Message, MessageType, ToolUseBlock, encodable, new_id
from ..models import (
    Model,
    ProviderConfig,
    default_model_string,
    recorded_string,
    resolve_model,
    resumed_model,
    vouched_addresses,
)
from ..notebook import ChangeLog, NotebookBridge
from ..notebook_file import FileBridge
from ..paths import Root
from ..permissions import ACTOR, BUILTIN_ROLES, Permission, PermissionPolicy, Role
from ..provenance import WrittenFiles
from ..redaction import Secrets, environment_secrets
from ..rules import Rules
from ..running_cells import CellPolicy, CellRuns
from ..sandbox import Sandbox
from ..session_index import SESSIONS_DIR, SessionHit, SessionIndex
from ..settings import (
    Settings,
    SettingsError,
    find_settings,
    load_settings,
    trust,
    trusted_as,
    user_settings,
)
from ..states import AgentState
from ..tools import ResourceMap, Tool, ToolRegistry
from ..tools.control import CONTROL_TOOLS
from ..tools.delegate import delegate
from ..tools.files import FILE_TOOLS
from ..tools.notebook import NOTEBOOK_TOOLS
from ..tools.sessions import SESSION_TOOLS
from ..tools.shell import SHELL_TOOLS, workspace_os_sandbox
from ..trust import TrustPrompt, untrusted_part
from ._bus import EventBus
from ._context import Context, ContextPolicy
from ._handle import RunHandle
from ._limits import Limits
from ._loops import LOOPS, Loop
from ._run import Run
from ._session import Session, SessionMetadata

EXECUTE_PLAN = (
    "Execute the approved plan. Work through its steps in order and mark each one with "
    "update_plan_step as you start and finish it."
)


class Agent:
    """An agent bound to a workspace and a session.

    >>> agent = Agent(role="planner", model=ScriptedModel([...]), workspace=".")
    >>> handle = agent.start("Clean up the sales data")    # returns at once
    >>> await handle.wait()
    >>> handle.plan
    """

    def __init__(
        self,
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
        sandbox: Sandbox | None = None,
        command_sandbox: SandboxSettings | OsSandbox | None = None,
        builtin_tools: bool = True,
        notebook: str | Path | NotebookBridge | None = None,
        context: ContextPolicy | None = None,
        cells: CellPolicy | None = None,
    ) -> None:
        """
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
            session: A session to continue (see :meth:`resume`).
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
        self.workspace = Path(workspace or Path.cwd()).resolve()
        self.parent_run: Run | None = None
        """The run this agent is a subagent of (see :meth:`child`)."""
        self._own_roles = list(roles)
        self._notices: list[tuple[str, PanelAction | None]] = []
        """(message, panel action) said once, at the start of the next run."""
        user, home_is_workspace = self._read_settings(settings)
        self._role = self._lookup_role(role)
        self.providers, default_model, self.model_choices = self._model_settings(user)
        """The ``[providers]`` model strings may name, and the ``[models] choices``."""
        moved = ""
        if model is None and session is not None:  # a saved session goes on with its model
            meta = session.metadata
            vouched = vouched_addresses(self.providers, [default_model, *self.model_choices])
            model, moved = resumed_model(
                meta.model_string, meta.provider, meta.model, self.providers, vouched
            )
        named = model if model is not None else default_model_string(default_model)
        self.model = resolve_model(named, providers=self.providers)
        self._model_written = recorded_string(named, self.model, self.providers)
        """The model string the session records (resume goes on with it)."""
        if moved:
            self._notices.append(
                (
                    f"{moved} It goes on with {self.model.name}: choose another in the "
                    "Model picker or with %agent model.",
                    None,
                )
            )
        self.tools = ToolRegistry((*CONTROL_TOOLS, delegate))
        if builtin_tools:
            for t in (*FILE_TOOLS, *SESSION_TOOLS, *SHELL_TOOLS):
                self.tools.register(t)
        for given in tools:
            self.tools.register(given, replace=True)
        self.limits = Limits(
            max_steps,
            max_duration,
            budget_usd,
            question_timeout,
            delegates_at_once=max(1, delegates_at_once),
            delegation_depth=max(0, delegation_depth),
        )
        self._context_from_settings = context is None
        self.context = Context(context or self._context_policy(user))
        """The context budget: ``agent.context.policy`` says when room is made."""
        self.loop = loop
        self._policy_from_settings = policy is None
        if policy is None:
            policy = self._settings_rules(user)
        self.policy: PermissionPolicy = policy
        self.instructions = instructions
        self.resources = ResourceMap()
        self.resources.insert(sandbox or Sandbox(self.workspace), Sandbox)
        if (
            self.settings is not None
            and self.settings.sandbox is not None
            and not home_is_workspace
        ):
            self._notices.append(
                (
                    f"The [sandbox] table in {self.settings.source} was ignored: sandbox "
                    "settings are read from your own settings only "
                    "(~/.jupyter_agent/settings.toml).",
                    None,
                )
            )
        if not isinstance(command_sandbox, OsSandbox):
            trusted = self.settings if home_is_workspace else user
            chosen = command_sandbox or (
                trusted.sandbox.make()
                if trusted is not None and trusted.sandbox is not None
                else SandboxSettings()
            )
            command_sandbox = workspace_os_sandbox(self.workspace, settings=chosen)
        self.command_sandbox = command_sandbox
        """The OS sandbox shell commands run in; ``.status()`` says what it confines."""
        self.resources.insert(command_sandbox, OsSandbox)
        self.resources.insert(WrittenFiles())
        self.secrets = Secrets(environment_secrets, self._model_secrets, stored_secrets)
        """The secret values hidden from every tool result: ``agent.secrets.add(value)``."""
        for source in (user, self.settings):  # [secrets] only hides more: any file may say
            if source is not None and source.secrets.environment:
                self.secrets.add_source(source.secrets.values)
        self.resources.insert(self.secrets)
        self.mcp = McpServers(self._mcp_configs(user), self.secrets.redact)
        """The MCP servers of the settings (started when a run first needs their tools)."""
        self.secrets.add_source(self.mcp.secrets)
        self.resources.insert(self.mcp)
        self._sandbox_noted = False
        self._cells_from_settings = cells is None
        self.cells = CellRuns(cells or self._cell_policy(user))
        """The cells this agent runs, which may outlive the call that started them."""
        self.resources.insert(self.cells)
        self.changes = ChangeLog()
        """The notebook edits of every run, so each run's edits can be undone."""
        self.resources.insert(self.changes)
        if notebook is not None:
            self.attach_notebook(notebook)
        self.metadata: dict[str, Any] = {}
        self.bus = EventBus()
        self.session = session or Session.create(
            self.workspace if persist else None,
            agent_type=self._role.name,
            model=self.model.name,
            provider=self.model.provider,
            model_string=self._model_written,
        )
        if self.session.unsaved:
            self._notices.append(
                (
                    "This conversation is kept in memory only, not saved in the workspace: "
                    f"{self.session.unsaved}",
                    None,
                )
            )
        self._run: Run | None = None
        runtime.add(self)

    def __repr__(self) -> str:
        state = self.state.value
        return f"<Agent {self.session.id} role={self.role} model={self.model.name} state={state}>"

    # --- roles ---------------------------------------------------------------------

    @property
    def role(self) -> str:
        return self._role.name

    def _lookup_role(self, role: str | Role) -> Role:
        if isinstance(role, Role):
            self.roles.setdefault(role.name, role)
            return role
        try:
            return self.roles[role]
        except KeyError:
            known = ", ".join(sorted(self.roles))
            raise ValueError(f"unknown role {role!r}; known roles: {known}") from None

    def set_role(self, role: str | Role) -> None:
        """Switch role for the next run. A running run is stopped first (with a warning)."""
        new = self._lookup_role(role)
        run = self._run
        if run is not None and not run.state.terminal and new.name != run.role.name:
            run.cancel("manual_stop", f"Stopped to switch the role to {new.name}.")
            self.bus.publish(
                WarningEvent(
                    session_id=self.session.id,
                    run_id=run.id,
                    message=f"The running {run.role.name} run was stopped to switch to {new.name}.",
                )
            )
        self._role = new
        self.session.metadata.agent_type = new.name
        self.session.save()

    def system_prompt(
        self, role: Role | None = None, instructions: ProjectInstructions | None = None
    ) -> str:
        """The system prompt of a run as ``role`` (stable across its calls, so it caches).
        ``instructions``: the project's instruction files, read now when not given."""
        role = role or self._role
        parts = [load_prompt("system")]
        role_text = role.prompt or (load_prompt(role.prompt_file) if role.prompt_file else "")
        if role_text:
            parts.append(role_text)
        project = (instructions if instructions is not None else self.read_instructions()).prompt()
        if project:
            parts.append(project)
        if self.instructions:
            parts.append("# Instructions for this agent\n\n" + self.instructions)
        environment = f"# Environment\n\nWorkspace folder: {self.workspace}"
        bridge = self.notebook
        if bridge is not None:
            environment += f"\nYour notebook: {bridge.describe()}"
        parts.append(environment)
        return "\n\n".join(parts)

    def read_instructions(self) -> ProjectInstructions:
        """The project's ``AGENTS.md`` / ``CLAUDE.md`` files and the user's own, as a run
        starting now reads them (secrets hidden). See :mod:`jupyter_agent.instructions`."""
        return read_instructions(self.workspace, redact=self.secrets.redact)

    def _model_secrets(self) -> dict[str, str]:
        """The model client's own credentials (a key passed in code, not in the environment)."""
        secret_values = getattr(self.model, "secret_values", None)
        return dict(secret_values()) if callable(secret_values) else {}

    # --- settings --------------------------------------------------------------------

    def _read_settings(self, given: str | Path | Settings | None) -> tuple[Settings | None, bool]:
        """Read the user's and the workspace's settings into ``self.settings`` and the roles.
        A workspace the user has not trusted may only narrow: :attr:`trust_prompt` lists
        what trusting it would enable (see :mod:`jupyter_agent.trust`). Returns the user's
        settings (``None`` when they are the workspace's own) and whether the workspace is
        the home folder."""
        if isinstance(given, (str, Path)):
            given = load_settings(given)
        found = given if given is not None else find_settings(self.workspace)
        user = user_settings()
        home = user is not None and found is not None and user.source == found.source
        if home:
            # One file, read once: the user's own (its rules explained as the user's).
            found, user = (given if given is not None else user), None
        # Settings a program passes in are its own choice; a folder's file is trusted only
        # once the user said so, and only while it grants what the trust prompt showed then.
        trusted = given is not None or home
        if not trusted and found is not None:
            granted = trusted_as(self.workspace)
            wants = untrusted_part(found, user, self.workspace)[1].digest()
            trusted = granted == wants
            if granted is not None and not trusted:
                self._notice(
                    "You trusted this folder's settings when they granted less (or before "
                    "trust was bound to what it grants): what they would enable now waits "
                    "for your trust again, and the trust prompt lists all of it."
                )
        self._use_settings(found, user, trusted=trusted)
        return user, home

    def _use_settings(
        self, found: Settings | None, user: Settings | None, *, trusted: bool
    ) -> None:
        """Apply the workspace's settings ``found`` beside the ``user``'s: all of them when
        ``trusted``, else the part that only narrows (the rest makes the trust prompt)."""
        self.trusted = trusted
        self.trust_prompt: TrustPrompt | None = None
        """What trusting this folder would enable (``None``: nothing waits for trust)."""
        if found is not None and not self.trusted:
            found, prompt = untrusted_part(found, user, self.workspace)
            self.trust_prompt = prompt if prompt.effects else None
        self.settings = found
        confined = None if self.trusted else self.workspace
        problems: list[str] = []
        roles = [
            *(user.make_roles() if user else []),
            *(found.make_roles(confined_to=confined, left_out=problems) if found else []),
        ]
        self.roles: dict[str, Role] = {
            **BUILTIN_ROLES,
            **{r.name: r for r in roles},
            **{r.name: r for r in self._own_roles},
        }
        if self.trust_prompt is not None:
            self._notice(self.trust_prompt.text(), "trust_workspace")
        if problems and found is not None:
            self._notice(f"Some roles of {found.source} were left out: " + "; ".join(problems))

    def _notice(self, message: str, action: PanelAction | None = None) -> None:
        """Say ``message`` once, as the next run starts (not again if it waits already)."""
        if (message, action) not in self._notices:
            self._notices.append((message, action))

    def _model_settings(
        self, user: Settings | None
    ) -> tuple[dict[str, ProviderConfig], str | None, list[str]]:
        """The ``[providers]`` and ``[models]`` tables: the user's, then the workspace's
        over them (only a trusted workspace keeps its own; see :meth:`Settings.untrusted`)."""
        providers: dict[str, ProviderConfig] = {}
        default: str | None = None
        choices: list[str] = []
        for source in (user, self.settings):
            if source is None:
                continue
            providers.update(source.make_providers())
            if source.models is not None:
                default = source.models.default or default
                choices.extend(c for c in source.models.choices if c not in choices)
        return providers, default, choices

    def set_model(self, model: str | Model) -> None:
        """Use ``model`` (a model string or a Model) from the next run on; the session
        records it, and its history goes to the new model as it is (every provider reads
        it). Raises :class:`~jupyter_agent.models.ModelStringError` for a string that names
        no model, :class:`AgentBusy` while a run goes on."""
        if self.running:
            raise AgentBusy("the agent is running: stop it before changing the model")
        self.model = resolve_model(model, providers=self.providers)
        self._model_written = recorded_string(model, self.model, self.providers)
        self.context.model_changed()
        meta = self.session.metadata
        meta.model, meta.provider = self.model.name, self.model.provider
        meta.model_string = self._model_written
        self.session.save()

    def _context_policy(self, user: Settings | None) -> ContextPolicy:
        """The ``[context]`` table: the user's, then the workspace's over it."""
        given: dict[str, Any] = {}
        for source in (user, self.settings):
            if source is not None and source.context is not None:
                given = source.context.over(given)
        return ContextPolicy(**given)

    def _cell_policy(self, user: Settings | None) -> CellPolicy:
        """The ``[cells]`` policy: the user's table, then the workspace's over it (an
        untrusted workspace's was narrowed already; see :meth:`Settings.untrusted`)."""
        policy = CellPolicy()
        for source in (user, self.settings):
            if source is not None and source.cells is not None:
                policy = source.cells.over(policy)
        return policy

    def _mcp_configs(self, user: Settings | None) -> dict[str, McpServerConfig]:
        """The ``mcpServers`` of the user's settings, then the workspace's over them (an
        untrusted workspace's were left out: see :meth:`Settings.untrusted`)."""
        configs: dict[str, McpServerConfig] = {}
        for source in (user, self.settings):
            if source is not None:
                configs.update(source.mcp_servers)
        return configs

    async def connect_tool_servers(self, role: Role | None = None) -> list[str]:
        """Start the MCP servers ``role`` (default: the agent's) could use and bring their
        tools into :attr:`tools`; what the user should hear (a server that cannot start).
        Runs do this before their first model call."""
        role = role or self._role
        if not self.mcp:
            return []
        return await self.mcp.sync(self.tools, role.permissions)

    def _settings_rules(self, user: Settings | None) -> Rules:
        return (self.settings or Settings()).make_rules(user)

    def trust_workspace(self) -> TrustPrompt:
        """Trust this folder's settings from now on (remembered in the user's settings):
        everything the trust prompt listed applies. Returns what now applies that did not:
        the prompt as it was shown (a key written in the file named, not shown).

        Raises :class:`~jupyter_agent.settings.SettingsError` when the settings changed
        since the prompt was made: trust then waits for the new prompt to be seen."""
        shown = self.trust_prompt
        newly = (
            shown
            or TrustPrompt(
                folder=str(self.workspace),
                source=str(self.settings.source if self.settings else ""),
            )
        ).hiding(self.secrets.redact)
        self._notices = [n for n in self._notices if n[1] != "trust_workspace"]
        if shown is None:  # nothing waits: trusted as granting nothing more than now
            found, user = find_settings(self.workspace), user_settings()
            granted = untrusted_part(found, user, self.workspace)[1] if found else None
            trust(self.workspace, (granted or TrustPrompt(folder="", source="")).digest())
            user, _ = self._read_settings(None)
        else:
            # What is applied is what was just compared with the prompt: read once.
            found, user = find_settings(self.workspace), user_settings()
            now = untrusted_part(found, user, self.workspace)[1] if found else None
            if now != shown:
                self._use_settings(found, user, trusted=False)
                raise SettingsError(
                    f"This folder's settings ({shown.source}) changed since the trust prompt "
                    "was made: nothing was trusted. Read the prompt again, then trust."
                )
            trust(self.workspace, shown.digest())
            self._use_settings(found, user, trusted=True)
        if self._cells_from_settings:
            self.cells.policy = self._cell_policy(user)
        if self._context_from_settings:
            self.context.policy = self._context_policy(user)
        self.mcp.configure(self._mcp_configs(user))
        if self._policy_from_settings and isinstance(self.policy, Rules):
            session = [r for r in self.policy if r.scope == "session"]  # "Always allow"s
            self.policy = self._settings_rules(user)
            self.policy.add(*session)
        self._role = self.roles.get(self._role.name, self._role)
        return newly

    def notices_for(self, role: Role) -> list[tuple[str, PanelAction | None]]:
        """What a run as ``role`` should say once, as it starts, with the panel action for
        it: settings that were ignored, and, the first time commands may run, that no OS
        sandbox confines them."""
        # Said in the transcript and kept in records of it: a key a settings file writes
        # (a trust prompt shows its values) is named, not shown.
        notices = [(self.secrets.redact(m), a) for m, a in self._notices]
        self._notices = []
        tool = self.tools.get("execute_command")
        if (
            not self._sandbox_noted
            and tool is not None
            and Permission.EXECUTE_COMMANDS in role.permissions
        ):
            self._sandbox_noted = True
            status = self.command_sandbox.status()
            if not status.active:
                notices.append((status.detail, None))
        return notices

    # --- the notebook ----------------------------------------------------------------

    @property
    def notebook(self) -> NotebookBridge | None:
        return self.resources.get(NotebookBridge)  # type: ignore[type-abstract]  # keyed by the protocol

    def attach_notebook(self, notebook: str | Path | NotebookBridge) -> NotebookBridge:
        """Work on ``notebook`` (a bridge, or a path edited as a file) with the notebook tools."""
        if isinstance(notebook, NotebookBridge):
            bridge = notebook
        else:  # beneath the workspace when it lies there, else beneath its own folder
            folder = Path(os.path.realpath(os.path.dirname(os.path.abspath(notebook))))
            inside = folder == self.workspace or self.workspace in folder.parents
            bridge = FileBridge(notebook, root=self.workspace if inside else None)
        self.resources.insert(bridge, NotebookBridge)
        for t in NOTEBOOK_TOOLS:
            self.tools.register(t, replace=True)
        return bridge

    async def undo_notebook_changes(self, run_id: str | None = None) -> list[str]:
        """Undo every notebook edit of a run (default: the last run that edited it)."""
        bridge = self.notebook
        if bridge is None:
            return []
        if run_id is None:
            edited = [c.run_id for c in self.changes.changes]
            if not edited:
                return []
            run_id = edited[-1]
        return await self.changes.undo(bridge, run_id)

    # --- runs ----------------------------------------------------------------------

    @property
    def state(self) -> AgentState:
        return self._run.state if self._run is not None else AgentState.idle

    @property
    def running(self) -> bool:
        return self._run is not None and not self._run.state.terminal

    @property
    def handle(self) -> RunHandle | None:
        """The current or last run."""
        return RunHandle(self._run) if self._run is not None else None

    def start(self, task: str, *, role: str | Role | None = None) -> RunHandle:
        """Start a run on ``task`` and return its handle at once.

        Needs a running event loop (a notebook cell, or code under ``asyncio.run``).
        Starting again after a run ended continues the same conversation.
        """
        return self._start(task, role=role)

    def remember(self, text: str) -> RunHandle:
        """``%agent remember TEXT``: add ``text`` as a line of the workspace's ``AGENTS.md``
        (made with a short header if missing), read by every later run.

        The user's edit, made like any other: a run whose one call is ``create_file``,
        through the Actor's permission rules, so it asks when the rules ask, is refused
        when a rule denies it, and shows its diff. The agent's role stays what it was
        (the Planner too: the user, not the model, asks for it). Raises ValueError for
        an empty text or an ``AGENTS.md`` that is not UTF-8 text.
        """
        line = " ".join(text.split())
        if not line:
            raise ValueError("say what to remember: %agent remember TEXT")
        path = self.workspace / "AGENTS.md"
        try:  # through the path gate: a link out of the workspace or a FIFO is refused
            old = Root(self.workspace).read("AGENTS.md", limit=REMEMBER_LIMIT).decode()
            exists = True
        except FileNotFoundError:
            old, exists = "", False
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not UTF-8 text: edit it yourself") from None
        except OSError as exc:  # a link out, not a regular file, too large
            raise ValueError(f"{path} cannot be added to: {exc}. Edit it yourself.") from None
        head = old if not old or old.endswith("\n") else old + "\n"
        content = (head if exists else REMEMBER_HEADER) + f"- {line}\n"
        call = ToolUseBlock(
            id=f"toolu_remember_{new_id()}",
            name="create_file",
            input={"path": "AGENTS.md", "content": content, "overwrite": exists},
        )

        async def write(run: Run) -> None:
            await run.begin_step()
            run.append(Message(role="assistant", content=[call], message_type="tool_call"))
            [result] = await run.execute([call])
            if result.is_error:
                run.complete(f"Not remembered: {result.text}")
            else:
                run.complete(f"Remembered in {path}: {line}")

        return self._start(f"Remember in AGENTS.md: {line}", as_role=ACTOR, loop=write)

    def compact(self) -> RunHandle:
        """Make the conversation smaller now (``%agent compact``, the panel's Compact now):
        old tool results are cleared and earlier turns summarised by the model, as when the
        context window fills up. The history on disk stays whole; only what the model sees
        shrinks. Returns the handle of the short run that does it."""
        if not any(m.context is None for m in self.session.history):
            raise ValueError("there is nothing to compact yet: the conversation is empty")
        self.model.check()

        async def compact(run: Run) -> None:
            await run.begin_step()
            changed = await self.context.make_room(run, "manual")
            run.complete(
                "Compacted the conversation." if changed else "There was nothing to compact."
            )

        return self._start(
            "Compact the conversation", action="compact", loop=compact, record_task=False
        )

    def _start(
        self,
        task: str,
        *,
        role: str | Role | None = None,
        action: RunAction | None = None,
        as_role: Role | None = None,
        loop: Loop | None = None,
        record_task: bool = True,
    ) -> RunHandle:
        """:meth:`start`; ``action``: the button that started the run (see
        :attr:`~jupyter_agent.events.AgentStartEvent.action`); ``as_role``: the role of
        this run only (the agent's own stays); ``loop``: this run's loop;
        ``record_task``: False for a run that is no turn of the conversation (compact)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "Agent.start() needs a running asyncio event loop: call it from a notebook "
                "cell or async code, or use asyncio.run(agent.run(task))."
            ) from None
        if not task or not task.strip():
            raise ValueError("the task is empty: say what the agent should do")
        if self.running:
            raise AgentBusy(
                f"agent {self.session.id} is still running ({self.state.value}); "
                "stop it or wait for it before starting another run"
            )
        if role is not None:
            self.set_role(role)
        if loop is None:  # a loop of our own (remember) calls no model
            self.model.check()
        task = encodable(task)  # e.g. a file name pasted in, that is not UTF-8
        text = task.strip()
        meta = self.session.metadata
        if meta.stop_reason not in (None, "completed"):
            text = f"{STOPPED_NOTE}\n\n{text}"
        if not meta.title and record_task:
            meta.title = task.strip().splitlines()[0][:80]
        meta.model, meta.provider = self.model.name, self.model.provider
        meta.model_string = self._model_written
        meta.state = "running"
        self.session.save()
        if record_task:
            kind: MessageType = "execute_plan" if action == "execute_plan" else "text"
            self.session.append(Message.user(text, message_type=kind))
        self._run = Run(
            self, task.strip(), as_role or self._role, Limits(**vars(self.limits)), action
        )
        chosen = loop or self.loop
        loop_name = chosen if isinstance(chosen, str) else getattr(chosen, "__name__", "custom")
        self._run.launch(loop or self._loop_fn(), loop_name)
        return RunHandle(self._run)

    async def run(self, task: str, *, role: str | Role | None = None) -> RunHandle:
        """Start a run and wait for it to end."""
        return await self.start(task, role=role).wait()

    def execute_plan(self, *, role: str | Role = "actor") -> RunHandle:
        """The panel's **Execute plan**: start ``role`` (the Actor) on the session's last
        plan, marking its steps as it goes. Raises ValueError when there is no plan yet.

        A plan is executed once: while the last run is that plan's execution as ``role``,
        running or completed, this returns its handle rather than starting another (the
        button and a cell asking for the same thing mean the same run). After a Stop or
        an error, it starts again and carries on from where that run ended.
        """
        plan = self.session.metadata.plan
        if plan is None:
            raise ValueError("There is no plan to execute yet.")
        task = f"{EXECUTE_PLAN}\n\n{plan.to_markdown()}"
        run = self._run
        if (
            run is not None
            and run.task == task
            and run.role.name == self._lookup_role(role).name
            and (not run.state.terminal or run.stop_reason == "completed")
        ):
            return RunHandle(run)
        return self._start(task, role=role, action="execute_plan")

    def stop(self) -> None:
        if self._run is not None:
            RunHandle(self._run).stop()

    def retry(self) -> RunHandle:
        """The panel's **Retry**: send the last message again, in the role it was sent in
        (after an error, say); an Execute plan goes again as Execute plan. Raises
        ValueError when there is nothing to send again."""
        run = self._run
        if run is not None:
            if run.action == "execute_plan":
                return self.execute_plan(role=run.role)
            task, role = run.task, run.role.name
        else:  # a resumed session: its last message the user sent
            sent = [
                m
                for m in self.session.history
                if m.role == "user" and not m.tool_results and m.text.strip()
            ]
            if sent and sent[-1].message_type == "execute_plan":
                return self.execute_plan()
            task = sent[-1].text.removeprefix(STOPPED_NOTE).strip() if sent else ""
            role = None
        if not task:
            raise ValueError("There is no message to retry yet: type one and send it.")
        return self.start(task, role=role)

    def _loop_fn(self) -> Loop:
        if callable(self.loop):
            return self.loop
        try:
            return LOOPS[self.loop]
        except KeyError:
            raise ValueError(f"unknown loop {self.loop!r}; use one of {', '.join(LOOPS)}") from None

    # --- events --------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback`` with every event of every run; returns an unsubscribe function."""
        return self.bus.subscribe(callback)

    def events(self) -> AsyncIterator[Event]:
        """Live events of all runs, from now on."""
        return self.bus.stream()

    # --- sessions ------------------------------------------------------------------

    @property
    def history(self) -> list[Message]:
        return list(self.session.history)

    @classmethod
    def resume(
        cls,
        session_id: str,
        *,
        workspace: str | Path | None = None,
        model: str | Model | None = None,
        **options: Any,
    ) -> Agent:
        """An agent continuing a saved session (e.g. after a kernel restart), on the model
        it ran on unless ``model`` says otherwise. A model the session file cannot vouch
        for (a provider gone from the settings, a server elsewhere) gives way to the
        default model, and the next run says so."""
        root = Path(workspace or Path.cwd()).resolve()
        session = Session.load(root, session_id)
        options.setdefault("role", session.metadata.agent_type)
        return cls(model=model, workspace=root, session=session, **options)

    @staticmethod
    def sessions(workspace: str | Path | None = None) -> list[SessionMetadata]:
        """Saved sessions under ``workspace``, newest first."""
        return Session.list(Path(workspace or Path.cwd()).resolve())

    def search_sessions(
        self, query: str, *, limit: int = 10, include_current: bool = False
    ) -> list[SessionHit]:
        """Past sessions of this workspace whose words match ``query``, best first, each with
        its best passage (what the ``search_sessions`` tool gives the model, as objects).
        Blocks while SQLite searches (a couple of seconds at most); raises
        :class:`~jupyter_agent.session_index.SearchError` saying why a query cannot be
        searched."""
        exclude = () if include_current else (self.session.id,)
        index = SessionIndex.of(self.workspace / SESSIONS_DIR)
        return index.search(query, limit=limit, exclude=exclude)

    def child(
        self,
        *,
        role: str = "planner",
        parent_tool_use_id: str | None = None,
        parent_run: Run | None = None,
        **options: Any,
    ) -> Agent:
        """A subagent sharing this agent's model, tools, workspace, rules, secrets and
        notebook; its session is linked both ways (``parent_session_id``,
        ``child_session_ids``). ``parent_run``: the run it works for, whose budget it
        spends from and whose usage counts its own."""
        child_session = Session.create(
            self.workspace if self.session.root is not None else None,
            agent_type=role,
            model=self.model.name,
            provider=self.model.provider,
            model_string=self._model_written,
            parent_session_id=self.session.id,
            parent_tool_use_id=parent_tool_use_id,
        )
        options.setdefault("model", self.model)
        options.setdefault("policy", self.policy)
        options.setdefault("roles", self.roles.values())
        options.setdefault("instructions", self.instructions)
        child = Agent(role=role, workspace=self.workspace, session=child_session, **options)
        child.parent_run = parent_run
        child._model_written = self._model_written
        child.tools = self.tools.copy()
        child.resources = self.resources
        child.secrets = self.secrets
        child.mcp = self.mcp  # one set of servers for the family
        child.changes = self.changes
        child.command_sandbox = self.command_sandbox
        child._sandbox_noted = True
        child._notices = []  # said to the user once, by the agent they started
        child.metadata = self.metadata
        self.session.metadata.child_session_ids.append(child_session.id)
        self.session.save(now=True)
        return child


class AgentRuntime:
    """The agents alive in this process (a kernel): list them, find them, shut them down."""

    def __init__(self) -> None:
        self._agents: weakref.WeakValueDictionary[str, Agent] = weakref.WeakValueDictionary()

    def add(self, agent: Agent) -> None:
        self._agents[agent.session.id] = agent

    def get(self, session_id: str) -> Agent | None:
        return self._agents.get(session_id)

    def agents(self) -> list[Agent]:
        return list(self._agents.values())

    def running(self) -> list[Agent]:
        return [a for a in self._agents.values() if a.running]

    async def shutdown(self, session_id: str | None = None) -> None:
        """Stop one agent's run (or all runs) and wait until they ended."""
        targets = [self._agents[session_id]] if session_id else self.running()
        handles = [a.handle for a in targets if a.running]
        for h in handles:
            if h is not None:
                h.stop()
        await asyncio.gather(*(h.wait() for h in handles if h is not None))


runtime = AgentRuntime()
"""The process's runtime; every Agent registers here."""
