"""This kernel's agent: made once, found again by every ``%agent`` and by the panel.

The agent works in the notebook's folder (the workspace) on the notebook itself, whose
path the kernel knows as ``__session__``. It gets this kernel as resources: its live
variables (with the namespace tools), its execution history, and the notebook through
the lab extension when a frontend answers, or the ``.ipynb`` file (cells run in this
kernel) when none does. Finding that out needs a round trip through the frontend, which
can only be answered after the cell that created the agent has ended; so the bridge is
connected in a background task, and notebook tools wait for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from ...agent import Agent
from ...agent._home import schedule
from ...models import Model
from ...notebook.bridge import BridgeMode, Cell, CellType, NotebookBridge, RunResult
from ...notebook.file import FileBridge
from ...notebook.id_memory import IdMemory
from ...sessions.notebooks import ThisNotebook, notebook_name
from ...workspace.access import WorkspaceAccess
from .agent_thread import agent_loop, main_loop
from .attendance import PanelViews
from .remote import Apart, kernel_apart
from .runner import CellTimes, KernelExecutor, attach_kernel

log = logging.getLogger(__name__)

BRIDGE_TIMEOUT = 2.0
"""Seconds to wait for the lab extension to answer before editing the file instead."""
FIND_WAIT = 10.0
"""Seconds at most a run waits for the frontend to name a remote kernel's notebook (its
own wait is BRIDGE_TIMEOUT of time the agent's thread was free)."""


# --- where the kernel is --------------------------------------------------------------


def notebook_path(shell: Any) -> tuple[str, Path] | None:
    """The notebook this kernel belongs to: (its path as the frontend knows it, the file)."""
    session = shell.user_ns.get("__session__") or os.environ.get("JPY_SESSION_NAME") or ""
    if not isinstance(session, str) or not session.endswith(".ipynb"):
        return None
    given = Path(session).expanduser()
    candidates = [given] if given.is_absolute() else [Path.cwd() / given, Path.cwd() / given.name]
    for candidate in candidates:
        if candidate.is_file():
            return session, candidate.resolve()
    return None


def kernel_id(shell: Any) -> str:
    """The Jupyter server's id of this kernel (from its connection file), or ''."""
    if getattr(shell, "kernel", None) is None:
        return ""
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).name
    except Exception:
        return ""
    match = re.fullmatch(r"kernel-(.+)\.json", name)
    return match.group(1) if match else ""


def running_cell_id(shell: Any) -> str | None:
    """The id of the cell being run, as the frontend named it in its request (JupyterLab
    and Notebook 7 put ``cellId`` in an execute request's metadata); None elsewhere."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent("shell") or {}
    except Exception:  # an ipykernel older than 6 or a kernel of another kind
        return None
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None


def in_kernel(shell: Any) -> bool:
    """A ZMQ kernel (a notebook frontend may be there), not terminal IPython."""
    return getattr(shell, "kernel", None) is not None


# --- the notebook, once a frontend has answered or not ----------------------------------


class PendingBridge:
    """Stands for the notebook bridge while ``connect_notebook`` finds out which it is.

    Every operation waits for the connection, then goes to the live or the file bridge.
    """

    def __init__(
        self,
        path: str,
        connecting: Coroutine[Any, Any, NotebookBridge],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.path = path
        # Connected on ``loop`` (the agent's), awaited from there and from cells alike.
        self._task: concurrent.futures.Future[NotebookBridge] = asyncio.run_coroutine_threadsafe(
            connecting, loop
        )

    @property
    def bridge(self) -> NotebookBridge | None:
        """The connected bridge, once known."""
        task = self._task
        if task.done() and not task.cancelled() and task.exception() is None:
            return task.result()
        return None

    @property
    def mode(self) -> BridgeMode:
        bridge = self.bridge
        return bridge.mode if bridge is not None else "connecting"

    def describe(self) -> str:
        bridge = self.bridge
        if bridge is not None:
            return bridge.describe()
        return (
            f"{self.path} — connecting: edits go through the open notebook when its frontend "
            "answers (JupyterLab, Jupyter Notebook), otherwise to the .ipynb file"
        )

    async def ready(self) -> NotebookBridge:
        return await asyncio.shield(asyncio.wrap_future(self._task))

    async def read(self) -> list[Cell]:
        return await (await self.ready()).read()

    async def read_cell(self, cell_id: str) -> Cell:
        return await (await self.ready()).read_cell(cell_id)

    async def insert(
        self,
        source: str,
        cell_type: CellType = "code",
        *,
        before: str | None = None,
        after: str | None = None,
        cell_id: str | None = None,
    ) -> Cell:
        bridge = await self.ready()
        return await bridge.insert(source, cell_type, before=before, after=after, cell_id=cell_id)

    async def update(self, cell_id: str, source: str) -> Cell:
        return await (await self.ready()).update(cell_id, source)

    async def delete(self, cell_id: str) -> tuple[Cell, int]:
        return await (await self.ready()).delete(cell_id)

    async def move(
        self, cell_id: str, *, before: str | None = None, after: str | None = None
    ) -> int:
        return await (await self.ready()).move(cell_id, before=before, after=after)

    async def set_type(self, cell_id: str, cell_type: CellType) -> Cell:
        return await (await self.ready()).set_type(cell_id, cell_type)

    async def run(
        self, cell_id: str, timeout: float | None = None, *, source: str | None = None
    ) -> RunResult:
        bridge = await self.ready()
        if source is None:
            return await bridge.run(cell_id, timeout)
        return await bridge.run(cell_id, timeout, source=source)

    async def outputs(self, cell_id: str) -> list[dict[str, Any]]:
        return await (await self.ready()).outputs(cell_id)

    async def interrupt(self, cell_id: str | None = None) -> None:
        await (await self.ready()).interrupt(cell_id)

    async def save(self) -> None:
        await (await self.ready()).save()


# --- the kernel's agent ----------------------------------------------------------------


class KernelAgent:
    """The agent of one kernel (one shell), its notebook bridge and its panel."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.agent: Agent | None = None
        self.panel: Any = None
        self.bridge: NotebookBridge | None = None
        notebook = notebook_path(shell)
        self.notebook_path = notebook[0] if notebook else None
        self.notebook_file = notebook[1] if notebook else None
        self.workspace = self.notebook_file.parent if self.notebook_file else Path.cwd()
        self.here = (
            ThisNotebook.of(self.workspace, self.notebook_file, self.notebook_path)
            if self.notebook_file is not None and self.notebook_path is not None
            else None
        )
        """The notebook as sessions name it (None: the kernel does not know its notebook)."""
        self.moved_from: str | None = None
        """The notebook the last resumed session worked on, when it was another one (it
        went on here without its cell references); None otherwise."""
        self.main = main_loop()
        """The kernel's loop, where cells run (None outside an event loop)."""
        self.home = agent_loop() if in_kernel(shell) else None
        """The agents' loop: their own thread's in a kernel, so that they never wait
        for a cell (None in terminal IPython, which runs them on its own loop as it
        waits for them)."""
        self._finding: concurrent.futures.Future[None] | None = None
        """Asking the frontend which notebook this is, for a kernel that does not know
        (a remote kernel); done once it answered or did not."""
        self.apart: Apart | None = None
        """How this kernel runs apart from its notebook's folder (a remote kernel), once
        the frontend named the notebook; None when it runs there or it is not known."""
        self._apart_said = False

    # The agent ----------------------------------------------------------------------

    def ensure(self, model: str | Model | None = None) -> Agent:
        """The agent, made now if there is none (with ``model``, or the default)."""
        if self.agent is None:
            agent = Agent(model=model, workspace=self.workspace)
            self._work_here(agent)
            self.agent = self._equip(agent)
        elif model is not None:
            self.agent.set_model(model)
        return self.agent

    def resume(self, session_id: str | None = None, model: str | Model | None = None) -> Agent:
        """Continue a saved session (the newest when ``session_id`` is None, this notebook's
        if it has one) as this kernel's agent; the panel, if any, shows it. A session of
        another notebook goes on in this one, without its cell references: that notebook
        is then :attr:`moved_from`."""
        current = self.agent
        if current is not None and current.running:
            raise ValueError("the agent is running: stop it before resuming another session")
        if session_id is None:
            saved = [m for m in Agent.sessions(self.workspace) if m.parent_session_id is None]
            here = self.here
            if here is not None:  # this notebook's first (stable: the newest first in each)
                saved.sort(key=lambda m: here.where(m.notebook) != "here")
            if current is not None:
                saved = [m for m in saved if m.session_id != current.session.id] or saved
            if not saved:
                raise ValueError(f"there is no saved session in {self.workspace} to resume")
            session_id = saved[0].session_id
        if model is None and current is not None:
            model = current.model
        agent = Agent.resume(session_id, workspace=self.workspace, model=model)
        if current is not None:
            agent.limits = current.limits
            agent.loop = current.loop
            # Cells the previous agent started still run: wait_for_cell finds them.
            agent.cells = current.cells
            agent.resources.insert(current.cells)
            # So do the MCP servers it started: one set per kernel, not one per session.
            agent.mcp = current.mcp
            agent.resources.insert(current.mcp)
        self.moved_from = self._work_here(agent)
        self.agent = self._equip(agent)
        if self.panel is not None and self.panel.agent is not agent:
            self.panel.bind(agent)
        return agent

    def _work_here(self, agent: Agent) -> str | None:
        """The agent's session works on this notebook from now on; returns the notebook it
        worked on when that was another one (see
        :meth:`~jupyter_agent.sessions.store.Session.work_on`)."""
        return agent.session.work_on(self.here.name) if self.here is not None else None

    def _equip(self, agent: Agent) -> Agent:
        agent.home = self.home
        if self.home is not None:  # a kernel: its panel tells whether anyone can answer
            agent.attendance = PanelViews(self)
        attach_kernel(agent, self.shell)
        connection = _connection_file()
        if connection is not None:
            # The kernel's key is in it: a command that read it could ask this kernel to
            # run code outside the sandbox.
            agent.command_sandbox.hide(connection.parent)
        if self.notebook_path is not None:
            agent.attach_notebook(self._notebook_bridge())
            if self.apart is not None:
                self._say_apart(agent, self.apart)
        elif in_kernel(self.shell):
            self._find_notebook(agent)
        return agent

    # A remote kernel: the frontend names the notebook --------------------------------

    def _find_notebook(self, agent: Agent) -> None:
        """Ask the frontend which notebook is open on this kernel (once per kernel); a
        run waits for the answer before its first model call (``notebook_arriving``)."""
        home = self.home
        if home is None:
            return
        if self._finding is None:
            ended = CellTimes.of(self.shell).ended_at
            self._finding = asyncio.run_coroutine_threadsafe(self._ask_frontend(ended.get), home)
        finding = self._finding

        async def arriving() -> None:
            if not finding.done():
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(finding)), FIND_WAIT)

        agent.notebook_arriving = arriving

    async def _ask_frontend(self, cell_ended: Callable[[str], float | None]) -> None:
        try:
            from ..bridge.live import find_notebook
        except ImportError:
            return
        try:
            bridge = await find_notebook(timeout=BRIDGE_TIMEOUT, cell_ended=cell_ended)
        except Exception:
            log.warning("could not ask the notebook frontend which notebook this is")
            return
        if bridge is None:
            return
        if self.notebook_path is not None:  # %agent --notebook came first
            bridge.close()
            return
        self._found(bridge)

    def _found(self, bridge: Any) -> None:
        """The frontend named this kernel's notebook: the agent works on it live (on the
        agent's thread)."""
        self.notebook_path, self.bridge = bridge.path, bridge
        file: Path = bridge.file
        self.notebook_file = file if file.is_file() else None
        self.apart = kernel_apart(bridge.path, str(bridge.frontend.get("server_root") or ""))
        if self.apart is not None:
            bridge.note = self.apart.describe()
        bridge.on_renamed = self._renamed
        # Named as the server names it; its folder there is not this kernel's to name.
        self._located(ThisNotebook(notebook_name(self.workspace, file), self.workspace, None))
        agent = self.agent
        if agent is not None:
            self._work_here(agent)
            agent.attach_notebook(bridge)
            if self.apart is not None:
                self._say_apart(agent, self.apart)
        self._show_notebook()

    def _say_apart(self, agent: Agent, apart: Apart) -> None:
        """Tell the user once (in this kernel), and every "does not exist", that the
        workspace is the kernel's folder, not the notebook's on the server."""
        bridge = self.bridge
        app = bridge.app if bridge is not None and hasattr(bridge, "app") else "JupyterLab"
        if not self._apart_said:
            self._apart_said = True
            agent.notices.add(apart.notice(app))
        access = agent.resources.get(WorkspaceAccess)
        if access is not None:
            access.missing_note = apart.missing_note()

    def bind_notebook(self, given: str) -> Path:
        """Work on the notebook file ``given`` (``%agent --notebook PATH``, relative to the
        kernel's folder): for a kernel that does not know its notebook (papermill,
        nbclient, a remote kernel). Returns the file; raises ValueError saying why not."""
        file = Path(os.path.realpath(os.path.expanduser(given)))
        if file.suffix != ".ipynb" or not file.is_file():
            raise ValueError(f"--notebook {given}: there is no notebook file at {file}")
        if file == self.notebook_file:
            return file
        if self.agent is not None and self.agent.running:
            raise ValueError("the agent is running: stop it before giving it another notebook")
        self.notebook_file, self.notebook_path, self.bridge = file, given, None
        self.here = ThisNotebook.of(self.workspace, file, given)
        if self.panel is not None:
            self._located(self.here)
        if self.agent is not None:
            self._work_here(self.agent)
            self.agent.attach_notebook(self._notebook_bridge())
        self._show_notebook()
        return file

    def _notebook_bridge(self) -> NotebookBridge:
        if self.bridge is not None:
            return self.bridge
        assert self.notebook_path is not None
        assert self.notebook_file is not None
        executor = KernelExecutor(self.shell, loop=self.main)
        workspace = self.workspace

        def file_mode(file: Path) -> FileBridge:
            return FileBridge(file, executor=executor, memory=IdMemory(workspace, file))

        connect = _connect_notebook() if in_kernel(self.shell) else None
        if connect is None:
            self.bridge = file_mode(self.notebook_file)
            return self.bridge
        path, file, home = self.notebook_path, self.notebook_file, self.home
        ended = CellTimes.of(self.shell).ended_at
        assert home is not None  # a frontend may answer: a kernel, with an agent thread

        async def connecting() -> NotebookBridge:
            try:
                return await connect(
                    path,
                    timeout=BRIDGE_TIMEOUT,
                    executor=executor,
                    cell_ended=ended.get,
                    file_mode=file_mode,
                )
            except Exception:
                log.warning("could not connect to the notebook frontend; editing %s", file)
                return file_mode(file)

        pending = PendingBridge(path, connecting(), home)
        pending._task.add_done_callback(lambda _: schedule(home, self._connected, pending))
        self.bridge = pending
        return pending

    def _connected(self, pending: PendingBridge) -> None:
        bridge = pending.bridge
        if bridge is None:
            return  # cancelled: the kernel is shutting down
        self.bridge = bridge
        if self.agent is not None and self.agent.notebook is pending:
            self.agent.resources.insert(bridge, NotebookBridge)
        if hasattr(bridge, "on_renamed"):  # the live bridge (its module is imported lazily)
            bridge.on_renamed = self._renamed
            if self.notebook_file is not None:
                # The frontend's own name for it, relative to the server's root (the kernel
                # may know only the absolute path): other notebooks can be named so too.
                self._located(ThisNotebook.of(self.workspace, self.notebook_file, bridge.path))
        self._show_notebook()

    def _renamed(self, path: str) -> None:
        """The frontend renamed (or moved) the notebook: the session names it anew, and
        the picker tells this notebook's sessions by the new name."""
        if self.here is not None:
            here = self.here.renamed(path)
            if self.agent is not None:
                self.agent.session.work_on(here.name, renamed=True)
            self._located(here)
        self._show_notebook()

    def _located(self, here: ThisNotebook) -> None:
        self.here = here
        if self.panel is not None:
            self.panel.here = here
            self.panel.refresh_sessions()

    def _show_notebook(self) -> None:
        """The panel names the notebook as the bridge now does (connected, renamed)."""
        if self.panel is not None:
            self.panel.refresh_notebook()

    # The panel ----------------------------------------------------------------------

    def ensure_panel(self) -> Any:
        """The panel of this kernel's agent (ZMQ kernels only), made now if needed."""
        from ..panel.widget import AgentPanel

        agent = self.ensure()
        if self.panel is None:
            self.panel = AgentPanel(
                agent,
                kernel_id=kernel_id(self.shell),
                resume=lambda sid: self.resume(sid),
                loop=self.home,
                here=self.here,
            )
            # The bridge may have connected on the agent's thread while the panel was
            # being made here, before there was a panel to tell: show it as it is now.
            self._show_notebook()
        return self.panel


def _connection_file() -> Path | None:
    try:
        from ipykernel.connect import get_connection_file

        return Path(get_connection_file()).resolve()
    except Exception:  # not in a kernel, or no connection file
        return None


def _connect_notebook() -> Callable[..., Awaitable[NotebookBridge]] | None:
    """``bridge.connect_notebook`` when the live bridge is installed, else None."""
    try:
        from ..bridge.live import connect_notebook
    except ImportError:
        return None
    return connect_notebook


_AGENTS: dict[int, KernelAgent] = {}


def kernel_agent(shell: Any | None = None) -> KernelAgent:
    """This kernel's :class:`KernelAgent` (one per shell)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("not running in IPython")
    found = _AGENTS.get(id(shell))
    if found is None or found.shell is not shell:
        found = _AGENTS[id(shell)] = KernelAgent(shell)
    return found
