"""One MCP server: started on first use, watched, restarted after a crash, closed.

The SDK's transports and session are anyio context managers, which must be entered and
exited by the same task. So each server has one long-lived task (:meth:`_serve`) that
enters them, initializes, lists the tools, and then waits until the connection is lost
or closed; tool calls from the agent's runs go through the session it holds. Everything
runs on the event loop it is started from (the kernel's) and nothing waits unbounded:
starting is bounded by ``startup_timeout``, a call by ``call_timeout``, and a Stop
cancels a call at once (the SDK tells the server with ``notifications/cancelled``).

A server given by URL is reached over streamable HTTP or the older HTTP+SSE; when the
first refuses (a 404 or 405 at ``initialize``) the other is tried, and the one that
answered is tried first from then on.

A server that exits or drops its connection is marked lost; the next use starts it
again. Consecutive failures back off (the first retry at once, the next after 2 s) and,
after :data:`MAX_ATTEMPTS`, the server is left failed until someone asks for it again
(``%agent mcp``). What is said of a failure is its cause: the transport's error, and what
a program wrote to stderr since the call it failed in began (or since its last call
ended), never what it wrote long before.

What the SDK logs while it serves our servers (a connection's errors, the lines it writes
as a session shuts down) stays out of the notebook: those records go to this module's
debug log instead (:func:`keep_sdk_logs_out`); the SDK's records outside our servers'
work (the user's own MCP code in the kernel) are left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ._env_file import EnvFile, EnvFileError
from .config import McpServerConfig, MissingVariable, Transport

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Consecutive failures to start (or crashes) after which a server is not restarted."""
MAX_TOOLS = 500
"""Tools taken from one server (a listing that pages on and on is cut here)."""
MAX_PAGES = 20
STDERR_TAIL = 1500
"""Characters of a server's stderr quoted when it fails."""
STDERR_KEPT = 1_000_000
"""Bytes of a server's stderr kept on disk (a chatty server runs for days): beyond, only
its end is kept."""
CLOSE_TIMEOUT = 10.0
"""Seconds closing a server may take (the SDK stops a stdio program within about 4 s)."""
LOST_GRACE = 3.0
"""Seconds a call that lost its connection waits for the serving task to learn why."""
SDK_LOGGERS = ("mcp", "httpx", "httpx2", "httpcore", "httpcore2", "sse_starlette")
"""Loggers of the SDK and its HTTP stack, whose records during our servers' work stay
out of the notebook."""
TRANSPORT_NAMES: dict[Transport, str] = {
    "stdio": "stdio",
    "http": "streamable HTTP",
    "sse": "SSE",
}

State = Literal["not started", "starting", "running", "failed", "disabled", "invalid", "closed"]
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""(progress, total, message) of a long call, as the server reports it."""

_SERVING: contextvars.ContextVar[McpConnection | None] = contextvars.ContextVar(
    "jupyter_agent_mcp_serving", default=None
)
"""The server whose work runs in this context (its serving task, its tool calls, and the
tasks the SDK starts from them, which copy the context)."""


class _SdkLogsOut(logging.Filter):
    """Keeps the SDK's records made during our servers' work from the notebook."""

    def filter(self, record: logging.LogRecord) -> bool:
        connection = _SERVING.get()
        if connection is None:
            return True  # not ours: the user's own MCP code, say
        try:
            said = record.getMessage()
        except Exception:  # a record whose arguments do not fit its message
            said = str(record.msg)
        log.debug(
            "MCP server %s, %s %s: %s",
            connection.name,
            record.name,
            record.levelname,
            said,
            exc_info=record.exc_info,
        )
        return False


_FILTER = _SdkLogsOut()


def keep_sdk_logs_out() -> None:
    """Put the filter on every SDK logger made so far (a logger's filter sees only the
    records made by that logger, so each gets it; called as each server starts, after
    the SDK's modules for its transport are imported)."""
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if not isinstance(logger, logging.Logger) or _FILTER in logger.filters:
            continue
        if any(name == top or name.startswith(top + ".") for top in SDK_LOGGERS):
            logger.addFilter(_FILTER)


class McpUnavailable(Exception):
    """The server cannot be used now; the message says why (and what happens next)."""


class McpLost(Exception):
    """The connection broke during a call (the program exited, the HTTP connection failed)."""


@dataclass(frozen=True)
class ServerTool:
    """A tool as a server lists it (the wire fields we use)."""

    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any]


class McpConnection:
    """One configured server and its session (loop thread only)."""

    def __init__(
        self, name: str, config: McpServerConfig, redact: Callable[[str], str] = str
    ) -> None:
        self.name = name
        self.config = config
        self._redact = redact
        self.state: State = (
            "invalid" if config.problem else "not started" if config.enabled else "disabled"
        )
        self.error = ""
        """Why it failed or was lost, in words (secrets hidden)."""
        self.tools: list[ServerTool] = []
        """Its tools at the last successful listing."""
        self.server_info = ""
        self.transport_used: Transport | None = None
        """How it was reached the last time it started."""
        self.refused = ""
        """What the other transport said, when the first one tried was refused."""
        self.failures = 0
        """Consecutive failures (reset by a successful start)."""
        self.starts = 0
        self._failed_at = 0.0
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._stderr: Any = None
        self._stderr_dropped = 0
        """Bytes trimmed from the start of this launch's stderr file."""
        self._calls: dict[int, int] = {}
        """The calls in flight, each with where stderr stood as it began."""
        self._quiet_since = 0
        """Where stderr stood when the last call ended (or the server was ready)."""
        self._env_file: EnvFile | None = None

    def __repr__(self) -> str:
        return f"<McpConnection {self.name} {self.state}>"

    # --- state ---------------------------------------------------------------------

    def retry_in(self) -> float | None:
        """Seconds until the next start may be tried (0: now); None: it will not be."""
        if self.state in ("disabled", "invalid", "closed"):
            return None
        if self.failures >= MAX_ATTEMPTS:
            return None
        wait = 0.0 if self.failures <= 1 else 2.0 ** (self.failures - 1)
        return max(0.0, self._failed_at + wait - time.monotonic())

    def describe(self) -> str:
        """Its state in a few words, as ``%agent mcp`` shows it."""
        if self.state == "invalid":
            return f"not started: its settings entry is wrong: {self.config.problem}"
        if self.state == "failed":
            retry = self.retry_in()
            if retry is None:
                then = f"gave up after {self.failures} attempts; %agent mcp tries again"
            elif retry > 0:
                then = f"restarting at next use (in {retry:.0f} s or later)"
            else:
                then = "restarting at next use"
            return f"failed: {self.error} ({then})"
        return self.state

    def reset(self) -> None:
        """Forget past failures: the next use tries again at once."""
        self.failures = 0
        self._failed_at = 0.0

    def _fail(self, why: str) -> None:
        self.failures += 1
        self._failed_at = time.monotonic()
        self.error = self._redact(why)
        self.state = "failed"

    # --- its envFile -----------------------------------------------------------------

    def _env(self) -> EnvFile | None:
        """Its ``envFile`` (None when it names none); MissingVariable for a path that
        names an unset variable."""
        path = self.config.env_file_path()
        if path is None:
            return None
        current = self._env_file
        if current is None or current.given != path:
            current = self._env_file = EnvFile(
                path, self.config.workspace, home_too=self.config.origin != "folder"
            )
        return current

    def file_values(self) -> dict[str, str]:
        """What its ``envFile`` holds (read now); McpUnavailable says why it cannot be."""
        try:
            env = self._env()
            return env.read() if env is not None else {}
        except (EnvFileError, MissingVariable) as exc:
            raise McpUnavailable(str(exc)) from None

    def secrets(self) -> dict[str, str]:
        """Its secret values (see :meth:`McpServerConfig.secrets`), its envFile's too."""
        try:
            env = self._env()
        except MissingVariable:
            env = None
        return self.config.secrets(self.name, env.quietly() if env is not None else None)

    # --- starting and stopping ---------------------------------------------------------

    async def ensure(self) -> None:
        """Start the server if it is not running (bounded); raise :class:`McpUnavailable`
        saying why when it cannot be used."""
        if self.state == "running" and self._session is not None:
            return
        if self.state == "invalid":
            raise McpUnavailable(f"MCP server {self.name} is {self.describe()}")
        if self.state == "disabled":
            raise McpUnavailable(f"MCP server {self.name} is disabled in the settings")
        if self.state == "closed":
            raise McpUnavailable(f"MCP server {self.name} was shut down")
        if self.state != "starting":
            retry = self.retry_in()
            if retry is None or retry > 0:
                raise McpUnavailable(f"MCP server {self.name} is not running: {self.describe()}")
            self._launch()
        assert self._ready is not None
        # Shielded: a Stop of the run that waits must not cut a start another run awaits
        # (the start is bounded by its own timer, see _launch).
        with contextlib.suppress(Exception):  # _serve or the timer recorded why
            await asyncio.shield(self._ready)
        if self.state != "running":
            raise McpUnavailable(f"MCP server {self.name} could not start: {self.error}")

    def _launch(self) -> None:
        self.state = "starting"
        self.starts += 1
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        # Whoever waits sees the outcome; nobody may be left waiting, so mark it read.
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._closing = asyncio.Event()
        self._task = loop.create_task(self._serve(), name=f"jupyter_agent-mcp-{self.name}")
        # The start's bound belongs to the start, not to whoever waits for it: a run
        # stopped while waiting leaves no server starting for ever.
        timer = loop.call_later(self.config.startup_timeout, self._start_timed_out, self._task)
        self._ready.add_done_callback(lambda _: timer.cancel())

    def _start_timed_out(self, task: asyncio.Task[None]) -> None:
        if self._task is task and self.state == "starting":
            self._fail(f"no answer within {self.config.startup_timeout:g} s{self._stderr_since(0)}")
            task.cancel()

    def _kinds(self) -> tuple[Transport, ...]:
        """The transports to try: the one that answered last time first."""
        kinds = self.config.transports()
        if self.transport_used in kinds:
            return (self.transport_used, *(k for k in kinds if k != self.transport_used))
        return kinds

    async def _serve(self) -> None:
        """Own the transport and the session for as long as the connection lives (a start
        that takes too long is cancelled by the timer :meth:`_launch` sets)."""
        assert self._ready is not None
        ready, me = self._ready, asyncio.current_task()
        _SERVING.set(self)  # in this task's own copy of the context, and its children's
        try:
            import anyio  # noqa: F401
            from mcp import ClientSession  # noqa: F401
        except ImportError:
            self._fail(NO_SDK)
            ready.set_exception(McpUnavailable(self.error))
            return
        keep_sdk_logs_out()
        errlog = None
        if self.config.transport == "stdio":
            errlog = self._stderr = _stderr_file()
            self._stderr_dropped = 0
        self._quiet_since = 0
        refused: list[str] = []
        try:
            config = self.config.expanded(file_values=self.file_values())
        except (McpUnavailable, MissingVariable) as exc:
            self._fail(str(exc))
            ready.set_exception(McpUnavailable(self.error))
            return
        try:
            await self._connect_any(config, errlog, refused)
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpUnavailable("cancelled"))
            raise
        except BaseException as exc:  # anyio's task groups wrap what failed
            # A restart may have begun while this one wound down: its state is not ours.
            if self._task is me and self.state in ("starting", "running"):
                said = "; ".join(refused) if refused and not ready.done() else _explain(exc)
                self._fail(f"{said}{self._stderr_since(self._crash_mark())}")
            if not ready.done():
                ready.set_exception(McpUnavailable(self.error))
            log.debug("MCP server %s ended", self.name, exc_info=True)
        finally:
            if self._task is me:  # not a restart's session, begun as this one wound down
                self._session = None
            if errlog is not None:
                if self._stderr is errlog:
                    self._stderr = None
                with contextlib.suppress(OSError):
                    errlog.close()

    async def _connect_any(self, config: McpServerConfig, errlog: Any, refused: list[str]) -> None:
        """Connect over each transport in turn until one answers (see :meth:`_kinds`), and
        serve; ``refused`` gathers what each transport tried said, when more than one was
        tried."""
        assert self._ready is not None
        kinds = self._kinds()
        for i, kind in enumerate(kinds):
            self.refused = "; ".join(refused)  # what the listing says once it runs
            try:
                await self._connect(config, kind, errlog)
                return
            except Exception as exc:
                if self._ready.done():
                    raise  # it ran, then failed: that is its own story
                if i + 1 < len(kinds) and _refused_transport(exc):
                    refused.append(f"{TRANSPORT_NAMES[kind]}: {_explain(exc)}")
                    log.debug("MCP server %s refused %s", self.name, kind, exc_info=True)
                    continue
                if refused:
                    refused.append(f"{TRANSPORT_NAMES[kind]}: {_explain(exc)}")
                raise

    async def _connect(self, config: McpServerConfig, kind: Transport, errlog: Any) -> None:
        """Connect over ``kind``, initialize, list the tools, and serve until the
        connection is lost or closed."""
        import anyio
        from mcp import ClientSession

        assert self._ready is not None
        assert self._closing is not None
        ready, closing, me = self._ready, self._closing, asyncio.current_task()
        lost = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(config, kind, errlog))
            keep_sdk_logs_out()  # the transport's modules are imported now
            # Our own hop between the transport and the session: its end is how we
            # learn that the program exited while idle.
            forward, received = anyio.create_memory_object_stream[Any](0)
            relays = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(relays.cancel_scope.cancel)
            relays.start_soon(_relay, read, forward, lost)
            session = await stack.enter_async_context(ClientSession(received, write))
            initialized = await session.initialize()
            self.server_info = _server_info(initialized)
            self.tools = await _list_tools(session)
            self._session = session
            self.transport_used = kind
            self.state = "running"
            self.failures = 0
            self._quiet_since = self._stderr_offset()
            ready.set_result(None)
            waits = [asyncio.ensure_future(e.wait()) for e in (closing, lost)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if lost.is_set() and not closing.is_set() and self._task is me:
                self._session = None
                during = " during a call" if self._calls else ""
                self._fail(
                    f"the server exited or closed the connection{during}"
                    f"{self._stderr_since(self._crash_mark())}"
                )

    @contextlib.asynccontextmanager
    async def _transport(
        self, config: McpServerConfig, kind: Transport, errlog: Any
    ) -> AsyncIterator[tuple[Any, Any]]:
        if kind == "stdio":
            from mcp import StdioServerParameters, stdio_client

            assert config.command is not None
            params = StdioServerParameters(
                command=config.command,
                args=config.args,
                env=config.env or None,
                cwd=config.cwd,
            )
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams[0], streams[1]
            return
        assert config.url is not None
        if kind == "sse":
            try:
                from mcp.client.sse import sse_client
            except ImportError:
                raise McpUnavailable(NO_SDK) from None
            async with sse_client(config.url, headers=config.headers or None) as streams:
                yield streams[0], streams[1]
            return
        try:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client
        except ImportError:
            raise McpUnavailable(NO_SDK) from None
        async with (
            create_mcp_http_client(headers=config.headers or None) as client,
            streamable_http_client(config.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]

    async def close(self) -> None:
        """Shut the server down (a stdio program is stopped, an HTTP session ended)."""
        starting = self.state == "starting"
        self.state = "closed"
        self._session = None
        task = self._task
        if task is None or task.done():
            return
        if self._closing is not None:
            self._closing.set()
        if starting:
            task.cancel()  # it waits on the server: nothing to wind down gently
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(task), CLOSE_TIMEOUT)
        if not task.done():
            task.cancel()

    # --- calls ---------------------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressFn | None = None
    ) -> dict[str, Any]:
        """Call ``tool``; its result as the wire's JSON (``content``, ``isError``…).

        Raises :class:`McpUnavailable` (it cannot start), :class:`McpLost` (the
        connection broke: it restarts at next use), ``TimeoutError``; a cancellation
        (Stop) cancels the request on the server too. ``progress`` hears the server's
        progress notifications."""
        await self.ensure()
        self._trim_stderr()
        session = self._session
        import anyio
        from mcp import MCPError

        me = id(asyncio.current_task())
        self._calls[me] = self._stderr_offset()
        serving = _SERVING.set(self)  # what the SDK logs for this call stays ours
        try:
            with anyio.fail_after(self.config.call_timeout):
                result = await session.call_tool(tool, arguments, progress_callback=progress)
        except TimeoutError:
            raise  # an OSError, but no lost connection: the server is only slow
        except MCPError as exc:
            if _connection_closed(exc):
                raise await self._lost() from None
            raise
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise await self._lost(f": {_explain(exc)}") from None
        finally:
            _SERVING.reset(serving)
            self._calls.pop(me, None)
            if not self._calls:
                self._quiet_since = self._stderr_offset()
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    async def _lost(self, detail: str = "") -> McpLost:
        """The connection broke during a call: let the serving task learn why (the
        program's end, the transport's error), bounded; the error to raise."""
        task = self._task
        if self.state == "running" and task is not None and not task.done():
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), LOST_GRACE)
        if self.state == "closed":
            return McpLost(f"MCP server {self.name} was shut down during the call.")
        if self.state == "running" and self._task is task:  # it did not end by itself
            self._stop_task_gently()
            self._fail(
                f"the connection was lost during a call{detail}"
                f"{self._stderr_since(self._crash_mark())}"
            )
        return McpLost(
            f"MCP server {self.name} stopped answering: {self.error}. It is started again "
            "at its next use."
        )

    def _stop_task_gently(self) -> None:
        """Let the serving task wind the connection down (it exits its contexts)."""
        self._session = None
        if self._closing is not None:
            self._closing.set()

    # --- stderr --------------------------------------------------------------------

    def _stderr_offset(self) -> int:
        """How much the program has written to stderr since it started (0: no program)."""
        f = self._stderr
        if f is None:
            return 0
        try:
            return os.fstat(f.fileno()).st_size + self._stderr_dropped
        except (OSError, ValueError):
            return 0

    def _crash_mark(self) -> int:
        """Where the stderr around a failure begins: as the oldest call in flight began,
        else as the last call ended (or the server was ready; 0 while it starts)."""
        return min(self._calls.values(), default=self._quiet_since)

    def _trim_stderr(self) -> None:
        """Keep only the end of a long stderr on disk (see :data:`STDERR_KEPT`)."""
        f = self._stderr
        if f is None:
            return
        try:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            if size <= STDERR_KEPT:
                return
            end = os.pread(fd, 4 * STDERR_TAIL, size - 4 * STDERR_TAIL)
            os.ftruncate(fd, 0)
            os.write(fd, end)
            self._stderr_dropped += size - len(end)
        except (OSError, ValueError):
            pass

    def _stderr_since(self, mark: int) -> str:
        """What a stdio program wrote to stderr since ``mark`` (its end, at most
        :data:`STDERR_TAIL` characters), as `` (stderr: …)``; "" when nothing."""
        f = self._stderr
        if f is None:
            return ""
        try:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            start = max(0, mark - self._stderr_dropped, size - STDERR_TAIL)
            # pread: the program shares the file offset, which must not move under it.
            raw = os.pread(fd, size - start, start) if size > start else b""
        except (OSError, ValueError):
            return ""
        text = " ".join(raw.decode("utf-8", "replace").split())
        return f" (stderr: {text})" if text else ""

    def _stderr_tail(self) -> str:
        """The end of what a stdio program wrote to stderr, as `` (stderr: …)``."""
        return self._stderr_since(0)


NO_SDK = (
    "the mcp package (2.3 or later) is not installed: pip install 'jupyter-in-kernel-agent[mcp]'"
)


def _stderr_file() -> Any:
    """A temporary file for a program's stderr (closed by _serve, once the program is
    gone), where every write lands at the end, even after :meth:`_trim_stderr`."""
    f = tempfile.TemporaryFile(mode="a+", encoding="utf-8", errors="replace")  # noqa: SIM115
    if sys.platform != "win32":
        import fcntl

        # Python's "a" on an open descriptor only seeks; the program shares the file.
        flags = fcntl.fcntl(f.fileno(), fcntl.F_GETFL)
        fcntl.fcntl(f.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
    return f


async def _relay(source: Any, forward: Any, lost: asyncio.Event) -> None:
    """Pass the transport's messages on to the session; at their end, the connection is lost."""
    try:
        async with forward:
            async for item in source:
                await forward.send(item)
    except Exception:
        log.debug("MCP relay ended", exc_info=True)
    finally:
        lost.set()


async def _list_tools(session: Any) -> list[ServerTool]:
    from mcp.types import PaginatedRequestParams

    tools: list[ServerTool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        for t in listed.tools:
            wire = t.model_dump(mode="json", by_alias=True, exclude_none=True)
            tools.append(
                ServerTool(
                    name=str(wire.get("name", "")),
                    description=str(wire.get("description") or wire.get("title") or ""),
                    input_schema=wire.get("inputSchema"),
                    annotations=dict(wire.get("annotations") or {}),
                )
            )
        cursor = listed.next_cursor
        if not cursor or len(tools) >= MAX_TOOLS:
            break
    return tools[:MAX_TOOLS]


def _server_info(initialized: Any) -> str:
    info = getattr(initialized, "server_info", None) or getattr(initialized, "serverInfo", None)
    if info is None:
        return ""
    return f"{getattr(info, 'name', '')} {getattr(info, 'version', '')}".strip()


def _connection_closed(exc: Exception) -> bool:
    from mcp.types import CONNECTION_CLOSED

    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    return bool(code == CONNECTION_CLOSED)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions an anyio group holds (or the exception itself)."""
    inner = getattr(exc, "exceptions", None)
    if not inner:
        return [exc]
    return [leaf for e in inner for leaf in _leaves(e)]


def _refused_transport(exc: BaseException) -> bool:
    """Whether the server answered, but not in this transport: an HTTP 4xx for the
    streamable endpoint's POST (which the SDK reports as an MCP error) or for the SSE
    stream's GET, or a GET that is no event stream."""
    from mcp import MCPError

    for leaf in _leaves(exc):
        if isinstance(leaf, MCPError) and not _connection_closed(leaf):
            return True
        if type(leaf).__name__ == "SSEError":
            return True
        status = getattr(getattr(leaf, "response", None), "status_code", None)
        if type(leaf).__name__ == "HTTPStatusError" and isinstance(status, int):
            return 400 <= status < 500
    return False


def _explain(exc: BaseException) -> str:
    """What went wrong, in one line, from whatever an anyio group raised."""
    leaves = _leaves(exc)
    exc = next((e for e in leaves if not isinstance(e, asyncio.CancelledError)), leaves[0])
    if isinstance(exc, FileNotFoundError):
        return f"the program was not found ({exc.filename or exc})"
    if isinstance(exc, McpUnavailable):
        return str(exc)
    text = str(exc) or type(exc).__name__
    if "Connection closed" in text:
        return "the program exited before it answered"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if type(exc).__name__ == "MCPError":
        return text  # the server's (or the SDK's) words: "Not Found"
    if type(exc).__name__ == "HTTPStatusError" and status is not None:
        return f"HTTP {status} {getattr(exc.response, 'reason_phrase', '')}".strip()  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {text}"
