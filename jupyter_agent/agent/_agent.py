"""The Agent: a role, a model, tools and a session, started as runs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from ..commands import OsSandbox
from ..config.instructions import ProjectInstructions, read_instructions
from ..config.rules import Rules
from ..config.settings import SettingsError
from ..config.trust import TrustPrompt
from ..errors import AgentBusy
from ..events import Event, PanelAction, RunAction, WarningEvent
from ..mcp import McpServers
from ..messages import STOPPED_NOTE, Message, MessageType, encodable
from ..models import Model, recorded_string, resolve_model
from ..notebook.bridge import ChangeLog, NotebookBridge
from ..notebook.file import FileBridge
from ..notebook.id_memory import IdMemory
from ..notebook.running_cells import CellRuns
from ..permissions import ACTOR, Permission, PermissionPolicy, Role
from ..secrets.credentials import stored_secrets
from ..secrets.redaction import Secrets, environment_secrets
from ..sessions.index import SESSIONS_DIR, SessionHit, SessionIndex
from ..sessions.notebooks import notebook_name
from ..sessions.store import Session, SessionMetadata
from ..states import AgentState
from ..tools import ResourceMap
from ..tools.notebook import NOTEBOOK_TOOLS
from ..workspace.access import WorkspaceAccess
from ..workspace.provenance import WrittenFiles
from ._applied_settings import AppliedSettings, trust_settings
from ._attendance import Attendance, Unattended
from ._bus import EventBus
from ._config import AgentConfig, AgentOptions, lookup_role, resolve_config
from ._context import Context
from ._handle import RunHandle
from ._home import at_home
from ._limits import Limits
from ._loops import LOOPS, Loop
from ._notices import Notices
from ._own_runs import compact_loop, remember_loop
from ._prompt import system_prompt
from ._run import Run
from ._runtime import runtime

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
        role: str | Role | None = None,
        model: str | Model | None = None,
        *,
        config: AgentConfig | None = None,
        **options: Unpack[AgentOptions],
    ) -> None:
        """An agent of ``config``, or of these arguments (see :func:`resolve_config` for
        each: ``role``, ``model``, ``workspace``, ``tools``, the limits, ``settings`` …)."""
        if config is None:
            config = resolve_config("planner" if role is None else role, model, **options)
        elif role is not None or model is not None or options:
            raise TypeError("Agent takes a config or its arguments, not both")
        self.config = config
        """What this agent was made of (the settings as they applied then)."""
        self.workspace = config.workspace
        self.parent_run: Run | None = None
        """The run this agent is a subagent of (see :meth:`child`)."""
        self.notices = Notices(config.notices)
        """What the next run says once, as it starts."""
        self._apply(config.settings)
        self.roles: dict[str, Role] = dict(config.roles)
        self._role = config.role
        self.providers = config.providers
        """The ``[providers]`` model strings may name."""
        self.model_choices = config.model_choices
        """The ``[models] choices`` of the settings."""
        self.model = config.model
        self._model_written = config.model_string
        """The model string the session records (resume goes on with it)."""
        self.tools = config.tool_registry()
        self.limits = Limits(**vars(config.limits))
        self.context = Context(config.context)
        """The context budget: ``agent.context.policy`` says when room is made."""
        self.loop = config.loop
        self.policy: PermissionPolicy = config.policy
        self.instructions = config.instructions
        self.resources = ResourceMap()
        self.resources.insert(config.sandbox, WorkspaceAccess)
        self.command_sandbox = config.command_sandbox
        """The OS sandbox shell commands run in; ``.status()`` says what it confines."""
        self.resources.insert(self.command_sandbox, OsSandbox)
        self.resources.insert(WrittenFiles())
        self.secrets = Secrets(environment_secrets, self._model_secrets, stored_secrets)
        """The secret values hidden from every tool result: ``agent.secrets.add(value)``."""
        for source in config.settings.secret_sources():
            self.secrets.add_source(source.secrets.values)
        self.resources.insert(self.secrets)
        self.mcp = McpServers(config.settings.mcp_configs(), self.secrets.redact)
        """The MCP servers of the settings (started when a run first needs their tools)."""
        self.secrets.add_source(self.mcp.secrets)
        self.resources.insert(self.mcp)
        self.cells = CellRuns(config.cells)
        """The cells this agent runs, which may outlive the call that started them."""
        self.resources.insert(self.cells)
        self.changes = ChangeLog()
        """The notebook edits of every run, so each run's edits can be undone."""
        self.resources.insert(self.changes)
        self._keeps_ids = config.persist
        """Whether a notebook edited as a file keeps its cells' ids for the next session
        (beside the sessions, which are kept too)."""
        if config.notebook is not None:
            self._attach(config.notebook)  # first: a notebook it cannot use leaves no session
        self.metadata: dict[str, Any] = {}
        self.bus = EventBus()
        self.session = config.session or Session.create(
            self.workspace if config.persist else None,
            agent_type=self._role.name,
            model=self.model.name,
            provider=self.model.provider,
            model_string=self._model_written,
        )
        if config.notebook is not None:
            self._record_notebook()
        if self.session.unsaved:
            self.notices.add(
                "This conversation is kept in memory only, not saved in the workspace: "
                f"{self.session.unsaved}"
            )
        self._run: Run | None = None
        self.home: asyncio.AbstractEventLoop | None = None
        """The loop its runs live on, whichever thread starts them (a kernel's agent
        thread: :mod:`jupyter_agent.jupyter.kernel.agent_thread`); None: the loop of the
        code that starts each run."""
        self.attendance: Attendance | None = None
        """Who tells when nobody can answer the runs' questions and approvals (the kernel's
        agent sets it); None: someone always may (code holding the handle)."""
        self.unattended: Unattended = config.settings.unattended()
        """What a call needing approval does when nobody can give it (see :data:`Unattended`)."""
        self.notebook_arriving: Callable[[], Awaitable[None]] | None = None
        """Waits (bounded) while a notebook may yet be attached (a remote kernel asking its
        frontend which one it is): a run without a notebook awaits it before its first
        model call, so that it is offered the notebook tools it can use."""
        runtime.add(self)

    def __repr__(self) -> str:
        state = self.state.value
        return f"<Agent {self.session.id} role={self.role} model={self.model.name} state={state}>"

    # --- roles ---------------------------------------------------------------------

    @property
    def role(self) -> str:
        return self._role.name

    def _lookup_role(self, role: str | Role) -> Role:
        return lookup_role(self.roles, role)

    @at_home
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
        project = instructions if instructions is not None else self.read_instructions()
        return system_prompt(
            role or self._role, self.workspace, project, self.instructions, self.notebook
        )

    def read_instructions(self) -> ProjectInstructions:
        """The project's ``AGENTS.md`` / ``CLAUDE.md`` files and the user's own, as a run
        starting now reads them (secrets hidden). See :mod:`jupyter_agent.config.instructions`."""
        return read_instructions(self.workspace, redact=self.secrets.redact)

    def _model_secrets(self) -> dict[str, str]:
        """The model client's own credentials (a key passed in code, not in the environment)."""
        secret_values = getattr(self.model, "secret_values", None)
        return dict(secret_values()) if callable(secret_values) else {}

    # --- settings --------------------------------------------------------------------

    def _apply(self, applied: AppliedSettings) -> None:
        """Use ``applied``: the settings, trust, roles, and what to say about them."""
        self.applied_settings = applied
        self.settings = applied.found
        self.trusted = applied.trusted
        self.trust_prompt: TrustPrompt | None = applied.trust_prompt
        """What trusting this folder would enable (``None``: nothing waits for trust)."""
        self.roles = dict(applied.roles)
        for message, action in applied.notices:
            self.notices.add(message, action)

    @at_home
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

    async def connect_tool_servers(self, role: Role | None = None) -> list[str]:
        """Start the MCP servers ``role`` (default: the agent's) could use and bring their
        tools into :attr:`tools`; what the user should hear (a server that cannot start).
        Runs do this before their first model call."""
        role = role or self._role
        if not self.mcp:
            return []
        return await self.mcp.sync(self.tools, role.permissions)

    @at_home
    def trust_workspace(self) -> TrustPrompt:
        """Trust this folder's settings from now on (remembered in the user's settings):
        everything the trust prompt listed applies. Returns what now applies that did not:
        the prompt as it was shown (a key written in the file named, not shown).

        Raises :class:`~jupyter_agent.config.settings.SettingsError` when the settings changed
        since the prompt was made: trust then waits for the new prompt to be seen."""
        shown = self.trust_prompt
        newly = (
            shown
            or TrustPrompt(
                folder=str(self.workspace),
                source=str(self.settings.source if self.settings else ""),
            )
        ).hiding(self.secrets.redact)
        self.notices.withdraw("trust_workspace")
        applied, trusted = trust_settings(self.applied_settings)
        self._apply(applied)
        if not trusted:
            source = shown.source if shown is not None else ""
            raise SettingsError(
                f"This folder's settings ({source}) changed since the trust prompt "
                "was made: nothing was trusted. Read the prompt again, then trust."
            )
        if self.config.cells_from_settings:
            self.cells.policy = applied.cell_policy()
        if self.config.context_from_settings:
            self.context.policy = applied.context_policy()
        self.mcp.configure(applied.mcp_configs())
        if self.config.policy_from_settings and isinstance(self.policy, Rules):
            session = [r for r in self.policy if r.scope == "session"]  # "Always allow"s
            self.policy = applied.rules()
            self.policy.add(*session)
        self._role = self.roles.get(self._role.name, self._role)
        return newly

    def notices_for(self, role: Role) -> list[tuple[str, PanelAction | None]]:
        """What a run as ``role`` should say once, as it starts, with the panel action for
        it: settings that were ignored, and, the first time commands may run, that no OS
        sandbox confines them."""
        # Said in the transcript and kept in records of it: a key a settings file writes
        # (a trust prompt shows its values) is named, not shown.
        notices = self.notices.take(self.secrets.redact)
        tool = self.tools.get("execute_command")
        if (
            not self.notices.sandbox_noted
            and tool is not None
            and Permission.EXECUTE_COMMANDS in role.permissions
        ):
            self.notices.sandbox_noted = True
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
        bridge = self._attach(notebook)
        self._record_notebook()
        return bridge

    def _attach(self, notebook: str | Path | NotebookBridge) -> NotebookBridge:
        if isinstance(notebook, NotebookBridge):
            bridge = notebook
        else:  # beneath the workspace when it lies there, else beneath its own folder
            folder = Path(os.path.realpath(os.path.dirname(os.path.abspath(notebook))))
            inside = folder == self.workspace or self.workspace in folder.parents
            memory = IdMemory(self.workspace, notebook) if self._keeps_ids else None
            bridge = FileBridge(notebook, root=self.workspace if inside else None, memory=memory)
        self.resources.insert(bridge, NotebookBridge)
        for t in NOTEBOOK_TOOLS:
            self.tools.register(t, replace=True)
        return bridge

    def _record_notebook(self) -> None:
        """A new session records the notebook it works on (its file known: a path, a
        file bridge, a live one), as a kernel's agent does: listed and searched with it.
        A session with history keeps what it recorded (a kernel says when one moves)."""
        file = getattr(self.notebook, "file", None)
        meta = self.session.metadata
        if isinstance(file, Path) and meta.notebook is None and not self.session.history:
            self.session.work_on(notebook_name(self.workspace, file))

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

        Needs a running event loop (a notebook cell, or code under ``asyncio.run``), or
        an agent with a :attr:`home` (any thread then). Starting again after a run
        ended continues the same conversation.
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
        line, write = remember_loop(self.workspace, text)
        return self._start(f"Remember in AGENTS.md: {line}", as_role=ACTOR, loop=write)

    def compact(self) -> RunHandle:
        """Make the conversation smaller now (``%agent compact``, the panel's Compact now):
        old tool results are cleared and earlier turns summarised by the model, as when the
        context window fills up. The history on disk stays whole; only what the model sees
        shrinks. Returns the handle of the short run that does it."""
        if not any(m.context is None for m in self.session.history):
            raise ValueError("there is nothing to compact yet: the conversation is empty")
        self.model.check()
        return self._start(
            "Compact the conversation",
            action="compact",
            loop=compact_loop(self.context),
            record_task=False,
        )

    @at_home  # started on its home's thread: the run and its state live there
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
        kind: MessageType = "execute_plan" if action == "execute_plan" else "text"
        self.session.begin_turn(
            task,
            model=(self.model.name, self.model.provider, self._model_written),
            kind=kind if record_task else None,
        )
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
            sent = self.session.last_sent()
            if sent is not None and sent.message_type == "execute_plan":
                return self.execute_plan()
            task = sent.text.removeprefix(STOPPED_NOTE).strip() if sent is not None else ""
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
        :class:`~jupyter_agent.sessions.index.SearchError` saying why a query cannot be
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
            notebook=self.session.metadata.notebook,  # it works on its parent's notebook
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
        child.notices = Notices()  # said to the user once, by the agent they started
        child.notices.sandbox_noted = True
        child.metadata = self.metadata
        child.home = self.home
        child.attendance = self.attendance  # its questions go to the same user
        child.unattended = self.unattended
        self.session.metadata.child_session_ids.append(child_session.id)
        self.session.save(now=True)
        return child
