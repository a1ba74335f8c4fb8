"""The agent's own kernel: run cells in it, read its history, see its variables.

In file mode (VS Code, nbclient, papermill: no notebook frontend answers) the agent
runs cells itself, in the kernel it lives in. :class:`KernelExecutor` does that with
IPython's ``run_cell_async``, the way ipykernel runs a cell, but from the agent's
background task, after the cell that started the agent has ended. So it must not let
anything reach that finished cell: it captures everything the code prints or displays,
its result and its error, as nbformat output dicts, and returns them
(``_kernel_capture.py`` says how). ``input()`` and ``getpass()`` raise in that code: no
one can answer them.

Timeouts, interrupts and cancellation (``_kernel_interrupt.py`` says how):

- The frontend's Interrupt button stops the code the executor runs as it would a cell's
  (a ``KeyboardInterrupt`` in the code, or a cancel at its ``await``), and IPython
  reports either as the cell's error.
- A timeout interrupts the code when the time is up, and twice more, ``interrupt_grace``
  seconds apart, while the code still runs (it may have caught the first). The result
  has status ``"timeout"``.
- While a cell of the user's executes (``await agent.run(...)`` in a cell, or a cell run
  meanwhile), ipykernel owns SIGINT: a timeout then only cancels the code at its next
  ``await``, and the user's Interrupt goes to the user's cell, as it should.
- What cannot be stopped from inside the process: synchronous code in a task the cell's
  code started, and C code that never checks for signals. The call returns when it ends;
  only restarting the kernel stops it sooner.
- Where signals cannot be used (the loop is not on the main thread), a timeout cancels
  the code at its next ``await`` only.
- Cancelling the task awaiting the executor (the user's Stop) cancels the running code
  too, waits up to ``cancel_grace`` seconds for IPython to finish its bookkeeping (so the
  kernel's hooks are restored and it stays usable), then raises ``CancelledError``.

Outputs that bypass the capture — a logging handler holding the kernel's stream, writes
to the process's file descriptors by C code — are sent to no cell (the run's context has
an empty parent header) or, for file descriptors, where ipykernel sends them.
Variables, ``In``, ``Out`` and the execution count behave as for a cell the user ran.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Literal

from ...agent._home import await_on, on_loop
from ...namespace.kernel_namespace import KernelNamespace
from ...notebook.bridge import RunResult
from .capture import CAPTURE, ROUTER, Capture, detach_from_cell
from .interrupt import Interrupter

__all__ = ["CellTimes", "IPythonHistory", "KernelExecutor", "attach_kernel", "kernel_namespace"]


# --- the executor ----------------------------------------------------------------------------


def _shell(shell: Any | None) -> Any:
    if shell is not None:
        return shell
    from IPython import get_ipython

    found = get_ipython()
    if found is None:
        raise RuntimeError("not running in IPython: pass the shell explicitly")
    return found


class KernelExecutor:
    """Runs code in this kernel's shell and reports its outputs (a notebook ``Executor``).

    >>> bridge = FileBridge("analysis.ipynb", executor=KernelExecutor(get_ipython()))

    Each call runs like a cell the user ran: it gets the next execution count, goes into
    ``In``/``Out`` and the history, and its variables land in the user's namespace. Its
    outputs are captured and returned, never shown in another cell. Calls are serialised.

    Args:
        shell: The IPython shell (default: ``get_ipython()``).
        interrupt_grace: Seconds between the timeout's interrupt and a second one.
        cancel_grace: Seconds a cancelled call waits for the interrupted code to unwind.
    """

    def __init__(
        self,
        shell: Any | None = None,
        *,
        interrupt_grace: float = 2.0,
        cancel_grace: float = 5.0,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.shell = _shell(shell)
        self.loop = loop
        """The kernel's loop, where the code runs (the caller's when None): an agent on
        its own thread hands its code to the main thread, as IPython requires."""
        self.interrupt_grace = interrupt_grace
        self.cancel_grace = cancel_grace
        self._lock: asyncio.Lock | None = None
        self._capture: Capture | None = None
        self._interrupter: Interrupter | None = None

    def __repr__(self) -> str:
        return f"<KernelExecutor of {type(self.shell).__name__}>"

    def outputs_so_far(self) -> list[dict[str, Any]] | None:
        """The outputs of the code running now, as captured so far (None: nothing runs)."""
        capture = self._capture
        return capture.finished() if capture is not None else None

    def interrupt(self) -> bool:
        """Interrupt the code running now, as the frontend's Interrupt button would; it
        ends with the interrupt's error. From any thread: from the agent's, synchronous
        code is interrupted too (with SIGINT, unless a cell of the user's owns it)."""
        interrupter = self._interrupter
        if interrupter is None:
            return False
        interrupter.interrupt()
        return True

    async def __call__(self, code: str, timeout: float | None = None) -> RunResult:
        if self.loop is not None and not on_loop(self.loop):
            # The agent's thread: the code runs on the main thread, awaited from here;
            # a cancel (Stop) waits for it to unwind there, as below.
            return await await_on(
                self.loop, self._serially(code, timeout), grace=self.cancel_grace + 1
            )
        return await self._serially(code, timeout)

    async def _serially(self, code: str, timeout: float | None) -> RunResult:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            # The code runs in a task of its own, so a cancel of the caller (Stop) is
            # handled here: the code is cancelled, IPython unwinds, then we re-raise.
            inner = asyncio.ensure_future(self._run(code, timeout))
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                inner.cancel()
                await asyncio.wait({inner}, timeout=self.cancel_grace)
                raise

    async def _run(self, code: str, timeout: float | None) -> RunResult:
        shell = self.shell
        execution_count = shell.execution_count
        capture = Capture(execution_count)
        token = CAPTURE.set(capture)
        detach_from_cell()
        task = asyncio.current_task()
        assert task is not None
        hook = shell.displayhook
        outer_exec_result = getattr(hook, "exec_result", None)
        result: Any = None
        interrupter = Interrupter(task, timeout, self.interrupt_grace, shell)
        self._capture, self._interrupter = capture, interrupter
        escaped: BaseException | None = None
        try:
            with ROUTER.installed(shell):
                try:
                    try:
                        transformed = shell.transform_cell(code)
                        preprocessing = None
                    except Exception:
                        transformed, preprocessing = code, sys.exc_info()
                    with interrupter:
                        result = await shell.run_cell_async(
                            code,
                            store_history=True,
                            silent=False,
                            transformed_cell=transformed,
                            preprocessing_exc_tuple=preprocessing,
                        )
                except (KeyboardInterrupt, asyncio.CancelledError) as exc:
                    # Landed outside the user's code (IPython reports it when inside).
                    escaped = exc
                    capture.error(type(exc).__name__, "interrupted", [])
                finally:
                    try:
                        shell.events.trigger("post_execute")
                        shell.events.trigger("post_run_cell", result)
                    except (KeyboardInterrupt, asyncio.CancelledError):
                        pass
        finally:
            interrupter.close()
            self._capture = self._interrupter = None
            CAPTURE.reset(token)
            if getattr(hook, "exec_result", None) is None:
                hook.exec_result = outer_exec_result  # a cell the user runs meanwhile
        return self._result(capture, result, execution_count, interrupter.timed_out, escaped)

    @staticmethod
    def _result(
        capture: Capture,
        result: Any,
        execution_count: int,
        timed_out: bool,
        escaped: BaseException | None,
    ) -> RunResult:
        outputs = capture.finished()
        errors = [o for o in outputs if o["output_type"] == "error"]
        failed = escaped is not None or (result is not None and not result.success)
        error = None
        if failed:
            if errors:
                last = errors[-1]
                error = {k: last[k] for k in ("ename", "evalue", "traceback")}
            else:
                exc = escaped or result.error_before_exec or result.error_in_exec
                error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        if result is not None and result.execution_count is not None:
            execution_count = result.execution_count
        status: Literal["ok", "error", "timeout"] = (
            "timeout" if timed_out else ("error" if failed else "ok")
        )
        return RunResult(
            status=status, execution_count=execution_count, outputs=outputs, error=error
        )


# --- history and namespace -------------------------------------------------------------------


class CellTimes:
    """How long each cell of this kernel ran, by execution count, from IPython's
    ``pre_run_cell`` and ``post_run_cell`` events: every cell the user or the agent runs,
    whatever frontend (or none) ran it. One per shell (:meth:`of`); kept for the last
    :data:`KEPT` cells."""

    KEPT = 10_000

    def __init__(self) -> None:
        self.ended_at: dict[str, float] = {}
        """When each cell last ended, by its id as the frontend named it (monotonic
        seconds): the live bridge's guard against a late interrupt."""
        self.durations: dict[int, float] = {}
        self.cells: dict[int, str] = {}
        """Which cell (by the id its frontend gave) ran as each execution count."""
        self._started: dict[int, float] = {}
        """By ``id`` of the cell's ExecutionInfo: cells may overlap (one awaits, the agent
        runs another), so each is timed on its own."""

    @classmethod
    def of(cls, shell: Any) -> CellTimes:
        """The shell's recorder, registered on its events the first time."""
        found = getattr(shell, "_jupyter_agent_cell_times", None)
        if isinstance(found, cls):
            return found
        times = cls()
        shell.events.register("pre_run_cell", times.pre_run_cell)
        shell.events.register("post_run_cell", times.post_run_cell)
        shell._jupyter_agent_cell_times = times
        return times

    def running_for(self) -> float | None:
        """Seconds the longest-running cell now running has run; None when none runs."""
        started = list(self._started.values())  # read from the agent's thread
        return time.monotonic() - min(started) if started else None

    def pre_run_cell(self, info: Any) -> None:
        self._started[id(info)] = time.monotonic()

    def post_run_cell(self, result: Any) -> None:
        info = getattr(result, "info", None)
        cell_id = getattr(info, "cell_id", None)
        if isinstance(cell_id, str) and cell_id:
            self.ended_at.pop(cell_id, None)  # the newest last, for the trimming below
            self.ended_at[cell_id] = time.monotonic()
            _keep_newest(self.ended_at, self.KEPT)
        started = self._started.pop(id(info), None)
        count = getattr(result, "execution_count", None)
        if isinstance(count, int) and isinstance(cell_id, str) and cell_id:
            self.cells[count] = cell_id
            _keep_newest(self.cells, self.KEPT)
        if started is None or not isinstance(count, int):
            return
        self.durations[count] = time.monotonic() - started
        _keep_newest(self.durations, self.KEPT)


def _keep_newest(entries: dict[Any, Any], kept: int) -> None:
    """Drop the oldest entries (first inserted) beyond ``kept``."""
    while len(entries) > kept:
        del entries[next(iter(entries))]


class IPythonHistory:
    """What this kernel ran, by execution count: its source, its cell and how long it
    took (an ``ExecutionHistory``, ``ExecutionCells`` and ``ExecutionTimes`` for the view)."""

    def __init__(self, shell: Any | None = None) -> None:
        self.shell = _shell(shell)
        self.times = CellTimes.of(self.shell)

    def duration_of(self, execution_count: int) -> float | None:
        return self.times.durations.get(execution_count)

    def cell_of(self, execution_count: int) -> str | None:
        return self.times.cells.get(execution_count)

    def source_of(self, execution_count: int) -> str | None:
        manager = getattr(self.shell, "history_manager", None)
        inputs = getattr(manager, "input_hist_raw", None)
        if inputs is None:
            inputs = self.shell.user_ns.get("_ih")
        if not isinstance(inputs, list) or not 0 < execution_count < len(inputs):
            return None
        source = inputs[execution_count]
        return source if isinstance(source, str) else None


def kernel_namespace(shell: Any | None = None) -> KernelNamespace:
    """The kernel's user namespace as a resource for the namespace tools."""
    shell = _shell(shell)
    times = CellTimes.of(shell)
    return KernelNamespace(
        lambda: shell.user_ns, hidden=shell.user_ns_hidden, cell_running=times.running_for
    )


def attach_kernel(agent: Any, shell: Any | None = None) -> None:
    """Give ``agent`` this kernel: its variables (with the namespace tools) and its history."""
    from ...notebook.view import ExecutionHistory
    from ...tools.variables import NAMESPACE_TOOLS

    shell = _shell(shell)
    agent.resources.insert(kernel_namespace(shell), KernelNamespace)
    agent.resources.insert(IPythonHistory(shell), ExecutionHistory)
    for t in NAMESPACE_TOOLS:
        agent.tools.register(t, replace=True)
