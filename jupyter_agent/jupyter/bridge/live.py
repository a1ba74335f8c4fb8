"""The live notebook bridge: the agent edits and runs the notebook open in JupyterLab.

:class:`LiveBridge` speaks the protocol of ``docs/notebook-bridge.md`` over a comm to the
lab extension (``js/src/bridge.ts``): every request carries an id, the frontend answers
with the same id, and the reply resolves the request's future. Edits appear in the open
notebook at once, each one step in its undo history; ``run`` executes the cell as the user
would, so its outputs and execution count show in the notebook.

:func:`connect_notebook` finds out whether such a frontend is there (it pings it) and
returns the :class:`LiveBridge`, or a :class:`~jupyter_agent.notebook.bridge.FileBridge` on the
``.ipynb`` when nobody answers (VS Code, Colab, nbclient, papermill, JupyterLab without the
extension). The protocol's names, and its errors worded for the model, are in
``_bridge_protocol.py``.

Two kernel facts shape this module (ipykernel 7.4, checked with a real kernel):

- A reply is a ``comm_msg`` the kernel must read like any message. While a cell runs
  synchronous code nothing is read, so no reply can arrive before that cell ends: the
  bridge is awaited from a background task (the agent's run), never waited for by a
  cell that blocks. A cell *awaiting* at top level is different: ipykernel 7.4
  dispatches comm messages while a cell's coroutine is suspended, so ``bridge = await
  connect_notebook()`` in a cell works there (older ipykernels queue the reply behind
  the cell, and it then times out into file mode).
- Comm messages are handled on the shell's main thread or, with comms over subshells,
  on a subshell thread. Replies are therefore handed to the event loop that made the
  request with ``loop.call_soon_threadsafe``, whichever thread they arrive on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from ..._tasks import to_the_end
from ...notebook.bridge import (
    BridgeMode,
    Cell,
    CellType,
    EditLanded,
    Executor,
    NotebookBridge,
    RunResult,
    SourceChanged,
)
from ...notebook.file import FileBridge
from . import messages as ops
from .comms import answer_on_the_senders_subshell
from .protocol import (
    ERROR_CODES,
    KERNEL_ERROR_CODES,
    NO_EXTENSION,
    OPERATIONS,
    PROTOCOL,
    SOURCE_CHECK,
    SPEC,
    TARGET,
    BridgeClosed,
    BridgeError,
    BridgeTimeout,
    closed_why,
    failure,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "ERROR_CODES",
    "KERNEL_ERROR_CODES",
    "NO_EXTENSION",
    "OPERATIONS",
    "PROTOCOL",
    "REQUEST_TIMEOUT",
    "RUN_MARGIN",
    "SPEC",
    "TARGET",
    "BridgeClosed",
    "BridgeError",
    "BridgeTimeout",
    "LiveBridge",
    "connect_notebook",
    "find_notebook",
    "kernel_notebook_path",
    "notebook_file",
]

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")


CONNECT_TIMEOUT = 2.0
"""Seconds to wait for the ping's answer before deciding there is no frontend."""
REQUEST_TIMEOUT = 30.0
"""Seconds to wait for the answer to an edit or a read."""
RUN_MARGIN = 30.0
"""Extra seconds a ``run`` may take beyond the cell's own timeout: the frontend interrupts
the cell at its timeout and gives it 10 s more to stop before it answers anyway."""

_TICK = 0.25
"""Seconds per step of a wait; see :meth:`LiveBridge._wait`."""
LANDING_WAIT = 5.0
"""Seconds a Stop waits for the answer to an edit already sent: the frontend makes it
anyway, so the Stop learns what landed (a frontend answers an edit in milliseconds)."""


def kernel_notebook_path() -> str | None:
    """The path of this kernel's notebook, as the kernel knows it.

    ``__session__`` (set by ipykernel from ``JPY_SESSION_NAME``, which the Jupyter server
    gives a notebook's kernel), VS Code's ``__vsc_ipynb_file__``, else the environment.
    None outside a notebook's kernel (a console's ``__session__`` is not an ``.ipynb``).
    """
    candidates: list[object] = []
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython is a dependency
        shell = None
    if shell is not None:
        candidates += [shell.user_ns.get("__session__"), shell.user_ns.get("__vsc_ipynb_file__")]
    candidates.append(os.environ.get("JPY_SESSION_NAME"))
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            return candidate
    return None


APPS = {"jupyterlab": "JupyterLab", "notebook": "Jupyter Notebook"}
"""The apps whose frontend answers the ping (its ``frontend``), by the names users know."""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def notebook_file(path: str) -> Path:
    """The file of a notebook path as the kernel knows it: absolute, relative to the
    kernel's folder, or (the server root being elsewhere) its name in that folder."""
    given = Path(path).expanduser()
    if given.is_absolute():
        return given
    for candidate in (Path.cwd() / given, Path.cwd() / given.name):
        if candidate.is_file():
            return candidate
    return Path.cwd() / given


class LiveBridge:
    """The notebook open in JupyterLab, through the lab extension (see the module doc).

    Made by :func:`connect_notebook`; or by hand::

        bridge = LiveBridge("analysis.ipynb")
        await bridge.connect()          # from a background task, or a top-level await

    Args:
        path: The notebook's path as the kernel knows it (``__session__``).
        connect_timeout: Seconds to wait for the ping when connecting.
        request_timeout: Seconds to wait for the answer to any other request (a run
            waits for its cell's timeout plus :data:`RUN_MARGIN`).
        comm_factory: Makes the comm (default ``comm.create_comm``); for tests.
        cell_ended: When the kernel last finished running a cell, by its id (monotonic
            seconds; None: not since it started): an interrupt for a cell that ended
            after its run was sent is not sent (it could only reach what runs next).
    """

    mode: BridgeMode = "live"

    def __init__(
        self,
        path: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        request_timeout: float = REQUEST_TIMEOUT,
        comm_factory: Callable[..., Any] | None = None,
        cell_ended: Callable[[str], float | None] | None = None,
    ) -> None:
        self.kernel_path = path
        self._cell_ended = cell_ended
        self._runs_sent: dict[str, float] = {}
        """When each cell's latest run was sent, by cell id (monotonic seconds)."""
        """The path the comm is opened with (may be absolute)."""
        self.path = path
        """The path as shown: the frontend's (relative to its root) once it answered."""
        self.file = notebook_file(path)
        """The notebook's file, as the kernel finds it (a session records it)."""
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.frontend: dict[str, Any] = {}
        """The ping's answer: path, frontend, version, instance."""
        self.on_renamed: Callable[[str], None] | None = None
        """Called on the loop with the new path when the notebook is renamed or moved."""
        self.note = ""
        """A clause :meth:`describe` adds (a remote kernel: that it runs apart from the
        notebook's folder)."""
        self._comm_factory = comm_factory
        self._comm: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._prefix = uuid.uuid4().hex[:8]
        self._ids = itertools.count(1)
        self._closed: str | None = "not_connected"
        """Why the comm is not open, as an error code (None while it is)."""
        self._closed_message = ""
        """The frontend's message when it closed the comm."""

    def __repr__(self) -> str:
        state = "open" if self._closed is None else f"closed: {self._closed}"
        return f"<LiveBridge {self.path!r} ({state})>"

    @property
    def app(self) -> str:
        """The app the notebook is open in, as the user knows it: the ping's answer says
        which (JupyterLab, or Notebook 7); before it, or from an extension that does not
        say, the notebook frontend."""
        return APPS.get(str(self.frontend.get("frontend", "")), "the notebook frontend")

    def describe(self) -> str:
        described = (
            f"{self.path} — live in {self.app}: edits appear in the open notebook and can be "
            "undone there (Edit → Undo Cell Operation), and cells run in this kernel as if "
            "the user ran them"
        )
        return f"{described}; {self.note}" if self.note else described

    @property
    def connected(self) -> bool:
        return self._closed is None and bool(self.frontend)

    # --- the comm -------------------------------------------------------------------------

    async def connect(self, timeout: float | None = None) -> dict[str, Any]:
        """Open the comm and ping the frontend; return its answer.

        Raises :class:`BridgeClosed` when the frontend refuses the comm, and
        :class:`BridgeTimeout` when nobody answers within ``timeout`` (default
        ``connect_timeout``) seconds of the kernel being free to read the answer.
        """
        self._open()
        answer: object = await self._request(
            ops.PING({}), timeout=timeout or self.connect_timeout, reopen=False
        )
        if not isinstance(answer, dict):
            raise BridgeError(f"The notebook frontend answered the ping with {answer!r}.")
        self.frontend = dict(answer)
        if isinstance(answer.get("path"), str) and answer["path"]:
            self.path = answer["path"]
        return answer

    def _open(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self._comm is not None and self._closed is None:
            return
        factory = self._comm_factory
        if factory is None:
            import comm

            factory = comm.create_comm
        self.frontend = {}
        made = factory(target_name=TARGET, data={"path": self.kernel_path, "protocol": PROTOCOL})
        if type(made).__name__ == "DummyComm":
            # comm's stand-in outside a kernel: nothing would ever answer.
            self._closed = "not_in_a_kernel"
            raise BridgeClosed(
                "This Python is not a Jupyter kernel, so no notebook frontend can answer.",
                code="not_in_a_kernel",
            )
        self._comm = made
        self._closed = None
        answer_on_the_senders_subshell(made)
        made.on_msg(self._on_msg)
        made.on_close(self._on_close)

    def close(self) -> None:
        """Close the comm; pending requests fail."""
        comm, self._comm = self._comm, None
        if self._closed is None:
            self._closed = "closed_by_kernel"
        self._fail_pending()
        if comm is not None:
            try:
                comm.close()
            except Exception:  # the kernel is going away
                log.debug("closing the bridge comm failed", exc_info=True)

    # Called on the thread that handles comm messages: the shell's, or a subshell's.
    def _on_msg(self, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data")
        self._to_loop(self._deliver, data)

    def _on_close(self, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data") or {}
        code = data.get("code") if isinstance(data, dict) else None
        if not isinstance(code, str) or not code:
            self._to_loop(self._closed_by_frontend, NO_EXTENSION, "")
        else:
            self._to_loop(self._closed_by_frontend, code, str(data.get("message") or ""))

    def _to_loop(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop closed meanwhile: the kernel is shutting down
            pass

    # On the loop.
    def _deliver(self, data: Any) -> None:
        if not isinstance(data, dict):
            return
        if "event" in data:
            self._on_event(data)
            return
        entry = self._pending.pop(str(data.get("id")), None)
        if entry is None:
            return  # a late or second reply (the notebook open in two tabs): already answered
        future = entry[1]
        if not future.done():
            future.set_result(data)

    def _on_event(self, data: dict[str, Any]) -> None:
        """Something the frontend says unasked (``EVENTS``)."""
        path = data.get("path")
        if data["event"] == "renamed" and isinstance(path, str) and path:
            # Shown by its new name, and a comm opened again asks for it by that name.
            self.path = self.kernel_path = path
            self.file = notebook_file(path)
            if self.on_renamed is not None:
                self.on_renamed(path)
        else:
            log.debug("ignoring the notebook frontend's event %r", data.get("event"))

    def _closed_by_frontend(self, code: str, message: str) -> None:
        self._comm = None
        self._closed = code
        self._closed_message = message
        self._fail_pending()

    def _fail_pending(self) -> None:
        pending, self._pending = self._pending, {}
        for op, future in pending.values():
            if not future.done():
                future.set_exception(self._closed_error(op))

    def _closed_why(self) -> str:
        """Why the comm is closed, in words (a clause)."""
        return closed_why(self._closed, self._closed_message, self.kernel_path)

    def _closed_error(self, op: str) -> BridgeClosed:
        return BridgeClosed(
            f"The notebook frontend closed the bridge before it could {OPERATIONS.get(op, op)} "
            f"({self._closed_why()}). {self.path} is not open in {self.app} for this kernel "
            "any more.",
            code=self._closed or "not_connected",
        )

    # --- requests -----------------------------------------------------------------------

    def _send(self, op: str, args: Mapping[str, object]) -> str:
        request_id = f"{self._prefix}-{next(self._ids)}"
        message: dict[str, Any] = {"id": request_id, "op": op, "args": dict(args)}
        instance = self.frontend.get("instance")
        if isinstance(instance, str) and instance:
            message["to"] = instance
        self._comm.send(message)
        return request_id

    def _fire(self, request: ops.Request[Any]) -> None:
        """Send a request and forget it (its answer is dropped as unknown)."""
        if self._comm is None or self._closed is not None:
            return
        try:
            self._send(request.op, request.args)
        except Exception:
            log.debug("could not send %s", request.op, exc_info=True)

    async def _request(
        self,
        request: ops.Request[R],
        *,
        timeout: float | None = None,
        reopen: bool = True,
        abandoned: Callable[[], None] | None = None,
        lands: bool = False,
    ) -> R:
        """Send ``request`` (made by an operation of ``bridge_messages`` from arguments of
        its type) and return the reply's result (of its type); raise :class:`BridgeError`
        if the frontend failed it, closed the comm, or did not answer within ``timeout`` s.
        ``abandoned`` runs when the caller gives up waiting (cancelled or timed out).
        ``lands``: an edit, which the frontend makes once sent; cancelled, the reply is
        still awaited (:data:`LANDING_WAIT`) and a success raises :class:`EditLanded`."""
        op, args = request.op, request.args
        if self._closed is not None or self._comm is None:
            if not reopen:
                raise self._closed_error(op)
            await self._reconnect(op)
        loop = asyncio.get_running_loop()
        self._loop = loop
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        request_id = self._send(op, args)
        self._pending[request_id] = (op, future)
        limit = self.request_timeout if timeout is None else timeout
        try:
            reply = await self._wait(future, limit)
        except TimeoutError:
            if abandoned is not None:
                abandoned()
            raise BridgeTimeout(
                f"{_capital(self.app)} did not answer the notebook bridge's {op!r} request within "
                f"{limit:g} s, so it could not {OPERATIONS.get(op, op)}. The notebook may have "
                "been closed or the browser tab may be gone."
            ) from None
        except asyncio.CancelledError:
            if abandoned is not None:
                abandoned()
            if lands:
                await self._landed(future, op)
            raise
        finally:
            self._pending.pop(request_id, None)
        if reply.get("ok"):
            # Trusted to be an R; turned into validated models where it is used.
            return cast(R, reply.get("result"))
        raise failure(op, args, reply, self.path, app=self.app)

    async def _landed(self, future: asyncio.Future[dict[str, Any]], op: str) -> None:
        """After a Stop, the answer to an edit sent before it: :class:`EditLanded` when the
        frontend made it; nothing when it failed it or did not answer in time."""
        try:
            reply, _ = await to_the_end(self._wait(future, LANDING_WAIT))
        except TimeoutError:
            log.warning("no answer to %r after a stop; the edit may have been made", op)
            return
        if reply.get("ok"):
            raise EditLanded(reply.get("result"))

    async def _edit(self, request: ops.Request[R], parse: Callable[[R], T]) -> T:
        """An edit's request, its reply parsed (that of an edit that landed at a Stop too)."""
        try:
            return parse(await self._request(request, lands=True))
        except EditLanded as landed:
            raise EditLanded(parse(cast(R, landed.result))) from None

    async def _reconnect(self, op: str) -> None:
        code, why = self._closed or "not_connected", self._closed_why()
        try:
            await self.connect()
        except BridgeError as error:
            self.close()  # a comm nobody answers on is no use
            self._closed = code
            raise BridgeClosed(
                f"Could not {OPERATIONS.get(op, op)}: the notebook bridge was closed ({why}) "
                f"and reconnecting failed: {error}",
                code=code,
            ) from None

    async def _wait(self, future: asyncio.Future[dict[str, Any]], timeout: float) -> dict[str, Any]:
        """The future's result, or TimeoutError after ``timeout`` seconds of *free* loop time.

        A cell running synchronous code blocks the loop, so the kernel cannot read a reply
        that is waiting for it; that time is not the frontend's fault. The wait advances in
        short steps and counts at most one step's time per step, however long the loop was
        blocked, so a reply queued behind a long cell is still taken."""
        loop = asyncio.get_running_loop()
        left = timeout
        while True:
            step = max(0.0, min(left, _TICK))
            started = loop.time()
            done, _ = await asyncio.wait({future}, timeout=step)
            if done:
                return future.result()
            left -= min(loop.time() - started, step)
            if left <= 0:
                raise TimeoutError

    # --- NotebookBridge -----------------------------------------------------------------

    async def read(self) -> list[Cell]:
        result = await self._request(ops.READ({}))
        return [Cell.model_validate(cell) for cell in result["cells"]]

    async def read_cell(self, cell_id: str) -> Cell:
        return Cell.model_validate(await self._request(ops.READ_CELL({"cell_id": cell_id})))

    async def insert(
        self,
        source: str,
        cell_type: CellType = "code",
        *,
        before: str | None = None,
        after: str | None = None,
        cell_id: str | None = None,
    ) -> Cell:
        if _protocol_of(self.frontend) < ops.INSERT_CELL_ID:
            # An older extension takes the id to reuse as `id`.
            legacy: ops.LegacyInsertArgs = {"source": source, "cell_type": cell_type}
            if before is not None:
                legacy["before"] = before
            if after is not None:
                legacy["after"] = after
            if cell_id is not None:
                legacy["id"] = cell_id
            return await self._edit(ops.LEGACY_INSERT(legacy), Cell.model_validate)
        args: ops.InsertArgs = {"source": source, "cell_type": cell_type}
        if before is not None:
            args["before"] = before
        if after is not None:
            args["after"] = after
        if cell_id is not None:
            args["cell_id"] = cell_id
        return await self._edit(ops.INSERT(args), Cell.model_validate)

    async def update(self, cell_id: str, source: str) -> Cell:
        return await self._edit(
            ops.UPDATE({"cell_id": cell_id, "source": source}), Cell.model_validate
        )

    async def delete(self, cell_id: str) -> tuple[Cell, int]:
        def parse(reply: Mapping[str, Any]) -> tuple[Cell, int]:
            result = dict(reply)
            index = int(result.pop("index"))
            return Cell.model_validate(result), index

        return await self._edit(ops.DELETE({"cell_id": cell_id}), parse)

    async def move(
        self, cell_id: str, *, before: str | None = None, after: str | None = None
    ) -> int:
        args: ops.MoveArgs = {"cell_id": cell_id}
        if before is not None:
            args["before"] = before
        if after is not None:
            args["after"] = after
        return await self._edit(ops.MOVE(args), lambda result: int(result["index"]))

    async def set_type(self, cell_id: str, cell_type: CellType) -> Cell:
        return await self._edit(
            ops.SET_TYPE({"cell_id": cell_id, "cell_type": cell_type}), Cell.model_validate
        )

    async def run(
        self, cell_id: str, timeout: float | None = None, *, source: str | None = None
    ) -> RunResult:
        """Run the cell in the notebook and wait until it ended, however long it runs
        (with ``timeout``, the frontend interrupts it after that many seconds). With
        ``source``, the frontend runs it only if that is exactly its source, compared in
        the same step that starts the execution; else :class:`SourceChanged`.

        The frontend's answer can only arrive once the cell finished; while the cell runs
        synchronous code the kernel reads nothing, and the wait counts only time the loop
        was free. If the task is cancelled, the frontend is asked to interrupt the cell,
        without waiting for its answer, and the cancellation goes on.
        """
        args: ops.RunArgs = {"cell_id": cell_id, "timeout": timeout}
        if source is not None:
            if _protocol_of(self.frontend) < SOURCE_CHECK:
                # An older extension would ignore the source and run whatever is there.
                raise BridgeError(
                    f"{_capital(self.app)} could not run cell {cell_id}: its jupyter-agent "
                    "extension is older than this kernel's jupyter_agent and cannot make sure "
                    "the cell runs the code that was approved. Nothing ran. Ask the user to "
                    f"update the extension where {self.app} runs (pip install -U, then reload "
                    "the page).",
                    code="old_extension",
                )
            args["source"] = source

        def interrupt() -> None:
            if not self._ended_since_sent(cell_id):
                self._fire(ops.INTERRUPT({"cell_id": cell_id}))

        self._runs_sent[cell_id] = time.monotonic()
        try:
            result = await self._request(
                ops.RUN(args),
                timeout=math.inf if timeout is None else timeout + RUN_MARGIN,
                abandoned=interrupt,
            )
        except BridgeError as error:
            if error.code == "source_changed":
                raise SourceChanged(cell_id) from None
            raise
        return RunResult.model_validate(result)

    async def outputs(self, cell_id: str) -> list[dict[str, Any]]:
        # The frontend's cell holds what a running cell printed so far (it streams in).
        return (await self.read_cell(cell_id)).outputs

    async def interrupt(self, cell_id: str | None = None) -> None:
        if cell_id is not None and self._ended_since_sent(cell_id):
            return  # the agent's thread learnt of its end before the frontend's reply
        await self._request(ops.INTERRUPT({"cell_id": cell_id} if cell_id else {}))

    def _ended_since_sent(self, cell_id: str) -> bool:
        """Whether the kernel finished running ``cell_id`` after its run was sent: the
        frontend may not know yet (its idle status is on the way), and would interrupt
        whatever cell runs next, the user's."""
        sent = self._runs_sent.get(cell_id)
        ended = self._cell_ended(cell_id) if self._cell_ended is not None else None
        return sent is not None and ended is not None and ended >= sent

    async def save(self) -> None:
        await self._request(ops.SAVE({}))


def _protocol_of(frontend: dict[str, Any]) -> int:
    """The protocol version a frontend's ping answer says it speaks (absent: 1 or older)."""
    value = frontend.get("protocol")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


async def find_notebook(
    *,
    timeout: float = CONNECT_TIMEOUT,
    cell_ended: Callable[[str], float | None] | None = None,
) -> LiveBridge | None:
    """The notebook open on this kernel, as its frontend names it, for a kernel that does
    not know its notebook (a remote kernel a gateway started: no ``__session__``); None
    when no frontend answers, or it has no notebook, or several, on this kernel.

    Opens the comm with no path; the lab extension binds it to the one notebook open on
    this kernel, and its ping's answer names it (``path``, relative to the server's root;
    ``server_root``). The bridge then asks for it by that path when it reconnects. Await
    it as :func:`connect_notebook` (where the kernel can read the answer).
    """
    bridge = LiveBridge("", connect_timeout=timeout, cell_ended=cell_ended)
    try:
        await bridge.connect()
    except BridgeError as error:
        bridge.close()
        log.info("no notebook frontend named this kernel's notebook (%s)", error)
        return None
    if not bridge.path:  # an answer naming no notebook is no notebook
        bridge.close()
        return None
    bridge.kernel_path = bridge.path
    bridge.file = notebook_file(bridge.path)
    return bridge


async def connect_notebook(
    path: str | None = None,
    *,
    timeout: float = CONNECT_TIMEOUT,
    executor: Executor | None = None,
    cell_ended: Callable[[str], float | None] | None = None,
    file_mode: Callable[[Path], NotebookBridge] | None = None,
) -> NotebookBridge:
    """The bridge to this kernel's notebook: live when JupyterLab answers, else the file.

    Opens a :class:`LiveBridge` and pings the frontend. If it answers within ``timeout``
    seconds, that is the bridge; if it closes the comm (JupyterLab without the extension,
    or no notebook of that path on this kernel) or nobody answers (VS Code, Colab,
    nbclient, papermill, plain Python), the notebook is edited as a file:
    ``FileBridge(path, executor)``.

    **Await it where the kernel can read the answer.** The ping's answer is a comm message,
    and the kernel reads no message while a cell runs synchronous code. So await it in a
    background task, e.g. inside the agent's run or with ``asyncio.ensure_future`` from a
    cell, and let that cell end. A top-level ``bridge = await connect_notebook()`` in a cell
    works on ipykernel 7.4, which reads comm messages while a cell awaits (older kernels do
    not, and then fall back to the file after ``timeout``). Never block a cell on it (no
    ``asyncio.run``, no busy wait): the answer would only come after that cell.

    Args:
        path: The notebook's path as the kernel knows it; default ``__session__`` (from
            the IPython namespace, or ``JPY_SESSION_NAME``).
        timeout: Seconds to wait for the frontend's answer (of time the kernel was free
            to read it).
        executor: Runs cells in file mode (e.g. this kernel's executor).
        cell_ended: When this kernel last finished each cell (see :class:`LiveBridge`).
        file_mode: The bridge for the notebook's file when no frontend answers (default:
            ``FileBridge(file, executor)``).
    """
    if path is None:
        path = kernel_notebook_path()
        if path is None:
            raise ValueError(
                "This kernel does not know its notebook (no __session__ ending in .ipynb): "
                "pass the notebook's path."
            )
    bridge = LiveBridge(path, connect_timeout=timeout, cell_ended=cell_ended)
    try:
        await bridge.connect()
    except BridgeError as error:
        bridge.close()
        log.info("no notebook frontend answered for %s (%s); editing the file", path, error)
        file = notebook_file(path)
        return file_mode(file) if file_mode is not None else FileBridge(file, executor)
    return bridge
