"""The agent's own kernel: run cells in it, read its history, see its variables.

In file mode (VS Code, nbclient, papermill: no notebook frontend answers) the agent
runs cells itself, in the kernel it lives in. :class:`KernelExecutor` does that with
IPython's ``run_cell_async``, the way ipykernel runs a cell, but from the agent's
background task, after the cell that started the agent has ended. So it must not let
anything reach that finished cell: it captures everything the code prints or displays,
its result and its error, as nbformat output dicts, and returns them.

How the capture works, and why so:

- ipykernel sends output to the *parent* of a context variable, and a task started from
  a cell inherits that cell's parent: left alone, the agent's cells would print into the
  cell that started the agent. So ``sys.stdout``/``sys.stderr``, the display publisher,
  the display hook (``Out``) and the traceback display are routed while the executor
  runs. The routing is chosen per asyncio *context*: output of the code the executor
  runs (and of tasks that code starts) is captured; output of anything else — a cell the
  user runs meanwhile, the kernel's own machinery — goes where it always went. The hooks
  are installed for the duration of a run only, and restored in ``finally``.
- ``input()`` and ``getpass()`` raise in captured code: no one can answer them, and the
  kernel's stdin outside a cell is a pipe that never delivers (the kernel would hang).

Timeouts, interrupts and cancellation (the code runs on the kernel's own thread, so
nothing on the event loop can stop synchronous code while it runs):

- While the executor runs, it installs its own SIGINT handler (ipykernel ignores SIGINT
  between requests, so otherwise the frontend's Interrupt button would do nothing to
  code the agent runs in the background). A SIGINT raises ``KeyboardInterrupt`` in the
  code when the main thread is executing the cell's code; it cancels the code at its
  ``await`` when the loop is idle or another task runs (a ``KeyboardInterrupt`` outside
  the cell's frames would land in asyncio and stop the kernel's loop) — the choice
  ipykernel makes for a cell — and IPython reports either as the cell's error. A SIGINT
  arriving while IPython compiles the cell or formats a traceback is dropped.
- A timeout is a watchdog thread that sends that same SIGINT to the kernel's main thread
  when the time is up, and twice more, ``interrupt_grace`` seconds apart, while the code
  still runs (it may have caught the first). The result has status ``"timeout"``.
- While a cell of the user's executes (``await agent.run(...)`` in a cell, or a cell run
  meanwhile), ipykernel owns SIGINT: the watchdog then only cancels the code at its next
  ``await``, and the user's Interrupt goes to the user's cell, as it should.
- What cannot be stopped from inside the process: synchronous code in a task the cell's
  code started, and C code that never checks for signals. The call returns when it ends;
  only restarting the kernel stops it sooner.
- Where signals cannot be used (the loop is not on the main thread), a timeout cancels
  the code at its next ``await`` only.
- Cancelling the task awaiting the executor (the user's Stop) cancels the running code
  too, waits up to ``cancel_grace`` seconds for IPython to finish its bookkeeping (so the
  kernel's hooks are restored and it stays usable), then raises ``CancelledError``.

Outputs that bypass the routing — a logging handler holding the kernel's stream, writes
to the process's file descriptors by C code — are sent to no cell (the run's context has
an empty parent header) or, for file descriptors, where ipykernel sends them.
Variables, ``In``, ``Out`` and the execution count behave as for a cell the user ran.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import contextvars
import getpass
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..namespace import KernelNamespace
from ..notebook import RunResult

__all__ = ["IPythonHistory", "KernelExecutor", "attach_kernel", "kernel_namespace"]


# --- what one run captured -------------------------------------------------------------


class _Capture:
    """The outputs of one run, in order, as nbformat output dicts."""

    def __init__(self, execution_count: int) -> None:
        self.execution_count = execution_count
        self.outputs: list[dict[str, Any]] = []
        self._clear_pending = False
        self._result: dict[str, Any] | None = None

    def _before_output(self) -> None:
        if self._clear_pending:
            self._clear_pending = False
            self.outputs.clear()

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        self._before_output()
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def display(
        self,
        data: dict[str, Any],
        metadata: dict[str, Any] | None,
        transient: dict[str, Any] | None,
        update: bool,
    ) -> None:
        display_id = (transient or {}).get("display_id")
        bundle = _json_bundle(data)
        if update:
            for output in self.outputs:
                if display_id is not None and output.get("_display_id") == display_id:
                    output["data"] = bundle
                    output["metadata"] = dict(metadata or {})
            return
        self._before_output()
        output = {"output_type": "display_data", "data": bundle, "metadata": dict(metadata or {})}
        if display_id is not None:
            output["_display_id"] = display_id
        self.outputs.append(output)

    def clear(self, wait: bool) -> None:
        if wait:
            self._clear_pending = True
        else:
            self.outputs.clear()

    def start_result(self) -> None:
        self._result = {
            "output_type": "execute_result",
            "execution_count": self.execution_count,
            "data": {},
            "metadata": {},
        }

    def result_data(self, data: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        if self._result is not None:
            self._result["data"] = _json_bundle(data)
            self._result["metadata"] = dict(metadata or {})

    def finish_result(self) -> None:
        result, self._result = self._result, None
        if result is not None and result["data"]:
            self._before_output()
            self.outputs.append(result)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self._before_output()
        self.outputs.append(
            {
                "output_type": "error",
                "ename": ename,
                "evalue": evalue,
                "traceback": [str(line) for line in traceback],
            }
        )

    def finished(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in o.items() if not k.startswith("_")} for o in self.outputs]


def _json_bundle(data: dict[str, Any]) -> dict[str, Any]:
    """A mime bundle as nbformat stores it: images base64 text, everything JSON."""
    bundle: dict[str, Any] = {}
    for mime, value in (data or {}).items():
        if isinstance(value, (bytes, bytearray)):
            if mime.startswith("image/") and mime != "image/svg+xml":
                value = base64.b64encode(bytes(value)).decode("ascii")
            else:
                value = bytes(value).decode("utf-8", "replace")
        elif not isinstance(value, str):
            try:
                value = json.loads(json.dumps(value, default=str))
            except (TypeError, ValueError):
                value = str(value)
        bundle[str(mime)] = value
    return bundle


_CAPTURE: contextvars.ContextVar[_Capture | None] = contextvars.ContextVar(
    "jupyter_agent_capture", default=None
)


# --- routing the kernel's output hooks ----------------------------------------------------


class _RoutedStream:
    """Stands in for ``sys.stdout``/``sys.stderr``: captured contexts write to their capture."""

    def __init__(self, original: Any, name: str) -> None:
        self._original = original
        self._name = name

    def write(self, text: str) -> int:
        capture = _CAPTURE.get()
        if capture is None:
            return self._original.write(text)
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        capture.stream(self._name, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _CAPTURE.get() is None:
            self._original.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _Router:
    """Installs the routing hooks while at least one run is capturing (refcounted)."""

    def __init__(self) -> None:
        self._users = 0
        self._undo: list[Any] = []

    @contextlib.contextmanager
    def installed(self, shell: Any) -> Iterator[None]:
        if self._users == 0:
            self._install(shell)
        self._users += 1
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0:
                undo, self._undo = self._undo, []
                for restore in reversed(undo):
                    with contextlib.suppress(Exception):
                        restore()

    def _install(self, shell: Any) -> None:
        for name in ("stdout", "stderr"):
            original = getattr(sys, name)
            routed = _RoutedStream(original, name)
            setattr(sys, name, routed)
            self._undo.append(_restore_module_attr(sys, name, routed, original))

        pub = shell.display_pub
        hook = shell.displayhook

        def publish(original: Any) -> Any:
            def routed(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
                capture = _CAPTURE.get()
                if capture is None:
                    return original(data, metadata, *args, **kwargs)
                transient = kwargs.get("transient")
                capture.display(data, metadata, transient, bool(kwargs.get("update")))
                return None

            return routed

        def clear_output(original: Any) -> Any:
            def routed(wait: bool = False) -> Any:
                capture = _CAPTURE.get()
                return original(wait=wait) if capture is None else capture.clear(wait)

            return routed

        def start_displayhook(original: Any) -> Any:
            def routed() -> Any:
                capture = _CAPTURE.get()
                return original() if capture is None else capture.start_result()

            return routed

        def update_user_ns(original: Any) -> Any:
            def routed(result: Any) -> Any:
                capture = _CAPTURE.get()
                wrong = hook.prompt_count
                if capture is None or wrong == capture.execution_count:
                    return original(result)
                # A cell of the user's started while this one ran, so the shell's count
                # moved on: file the value under this run's count, as IPython would have.
                ns = shell.user_ns
                out = ns.get("_oh")
                out = out if isinstance(out, dict) else {}
                marker = object()
                before = (ns.get(f"_{wrong}", marker), out.get(wrong, marker))
                original(result)
                if ns.get(f"_{wrong}", marker) is result:
                    _put_back(ns, f"_{wrong}", before[0], marker)
                    ns[f"_{capture.execution_count}"] = result
                if out.get(wrong, marker) is result:
                    _put_back(out, wrong, before[1], marker)
                    out[capture.execution_count] = result
                return None

            return routed

        def write_output_prompt(original: Any) -> Any:
            def routed() -> Any:
                return original() if _CAPTURE.get() is None else None

            return routed

        def write_format_data(original: Any) -> Any:
            def routed(format_dict: Any, md_dict: Any = None) -> Any:
                capture = _CAPTURE.get()
                if capture is None:
                    return original(format_dict, md_dict)
                return capture.result_data(format_dict, md_dict)

            return routed

        def finish_displayhook(original: Any) -> Any:
            def routed() -> Any:
                capture = _CAPTURE.get()
                return original() if capture is None else capture.finish_result()

            return routed

        def showtraceback(original: Any) -> Any:
            def routed(etype: Any, evalue: Any, stb: Any) -> Any:
                capture = _CAPTURE.get()
                if capture is None:
                    return original(etype, evalue, stb)
                name = getattr(etype, "__name__", str(etype))
                return capture.error(name, str(evalue), list(stb or []))

            return routed

        self._patch(pub, "publish", publish)
        self._patch(pub, "clear_output", clear_output)
        self._patch(hook, "start_displayhook", start_displayhook)
        self._patch(hook, "update_user_ns", update_user_ns)
        self._patch(hook, "write_output_prompt", write_output_prompt)
        self._patch(hook, "write_format_data", write_format_data)
        self._patch(hook, "finish_displayhook", finish_displayhook)
        self._patch(shell, "_showtraceback", showtraceback)

        def no_input(original: Any) -> Any:
            def routed(*args: Any, **kwargs: Any) -> Any:
                if _CAPTURE.get() is not None:
                    raise RuntimeError(
                        "input() and getpass() are not available in cells the agent runs: "
                        "no one can type an answer there."
                    )
                return original(*args, **kwargs)

            return routed

        for module, name in ((builtins, "input"), (getpass, "getpass")):
            original = getattr(module, name)
            routed = no_input(original)
            setattr(module, name, routed)
            self._undo.append(_restore_module_attr(module, name, routed, original))

    def _patch(self, obj: Any, name: str, make: Any) -> None:
        """Shadow a method on an instance; undo exactly (only if still ours)."""
        had = name in vars(obj)
        previous = vars(obj).get(name)
        routed = make(getattr(obj, name))
        setattr(obj, name, routed)

        def restore() -> None:
            if vars(obj).get(name) is not routed:
                return  # someone replaced it since: leave theirs
            if had:
                setattr(obj, name, previous)
            else:
                delattr(obj, name)

        self._undo.append(restore)


def _put_back(mapping: dict[Any, Any], key: Any, value: Any, missing: object) -> None:
    if value is missing:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _restore_module_attr(module: Any, name: str, routed: Any, original: Any) -> Any:
    def restore() -> None:
        if getattr(module, name) is routed:
            setattr(module, name, original)

    return restore


_ROUTER = _Router()


# --- interrupts and timeouts ---------------------------------------------------------------


class _Interrupter:
    """SIGINT handling and the timeout watchdog of one run (see the module docstring)."""

    def __init__(
        self, task: asyncio.Task[Any], timeout: float | None, grace: float, shell: Any
    ) -> None:
        self.task = task
        self.run_code = _run_code_of(shell)
        self.loop = task.get_loop()
        self.timeout = timeout
        self.grace = grace
        self.timed_out = False
        self._armed = False
        self._pending = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._previous: Any = None
        self._uses_signal = False
        self._watchdog: threading.Thread | None = None

    def __enter__(self) -> _Interrupter:
        if threading.current_thread() is threading.main_thread():
            try:
                self._previous = signal.signal(signal.SIGINT, self._on_sigint)
                self._uses_signal = True
            except (ValueError, OSError):
                self._uses_signal = False
        if self.timeout is not None and self.timeout > 0:
            self._watchdog = threading.Thread(
                target=self._watch, name="jupyter-agent-cell-timeout", daemon=True
            )
            self._watchdog.start()
        with self._lock:
            self._armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Disarm and put the previous SIGINT handler back (idempotent)."""
        try:
            self._done.set()
            with self._lock:
                self._armed = False
        finally:
            if self._uses_signal:
                # A signal the watchdog sent just before we disarmed may not have reached
                # its Python handler yet: let it arrive (the handler drops it) first.
                deadline = time.monotonic() + 1.0
                while self._pending and time.monotonic() < deadline:
                    time.sleep(0.001)
                if signal.getsignal(signal.SIGINT) == self._on_sigint:
                    signal.signal(signal.SIGINT, self._previous)
                self._uses_signal = False

    def _watch(self) -> None:
        for i, wait in enumerate((self.timeout, self.grace, self.grace)):
            if self._done.wait(wait):
                return
            with self._lock:
                if not self._armed:
                    return
                if i == 0:
                    self.timed_out = True
                if self._uses_signal and signal.getsignal(signal.SIGINT) == self._on_sigint:
                    self._pending += 1
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                else:
                    # A cell of the user's is executing and owns SIGINT (or signals are
                    # unavailable): cancel the code at its next await instead.
                    self.loop.call_soon_threadsafe(self._cancel)

    def _cancel(self) -> None:
        if not self.task.done():
            self.task.cancel()

    def _on_sigint(self, signum: int, frame: Any) -> None:
        from_watchdog = self._pending > 0
        if from_watchdog:
            self._pending -= 1
        if not self._armed:
            if not from_watchdog and callable(self._previous):
                self._previous(signum, frame)  # someone else's interrupt, after our run
            return
        running = asyncio.current_task(self.loop)
        if running is self.task:
            if _in_cell_code(frame, self.run_code):
                raise KeyboardInterrupt
            # IPython's own bookkeeping (compiling, or formatting the traceback of the
            # first interrupt): raising there would garble the report; the code has
            # stopped or not started, and the watchdog checks again.
            return
        # The loop is idle (the code is suspended at an await), or another task runs (one
        # the code started, or a cell of the user's): a KeyboardInterrupt here would land
        # in asyncio and stop the kernel's loop. Cancel the code at its await instead.
        self.loop.call_soon_threadsafe(self._cancel)


def _in_cell_code(frame: Any, run_code: frozenset[Any]) -> bool:
    """Whether ``frame`` is inside the code of a cell (below IPython's ``run_code``)."""
    child = None
    while frame is not None:
        if frame.f_code in run_code:
            return child is not None and child.f_code.co_name == "<module>"
        child, frame = frame, frame.f_back
    return False


def _run_code_of(shell: Any) -> frozenset[Any]:
    codes = set()
    for klass in type(shell).__mro__:
        function = vars(klass).get("run_code")
        code = getattr(function, "__code__", None)
        if code is not None:
            codes.add(code)
    return frozenset(codes)


# --- the executor ----------------------------------------------------------------------------


def _detach_from_cell() -> None:
    """In this task's context, send stray kernel output nowhere rather than to a cell.

    A task inherits the parent header of the cell that started it, so output that
    bypasses the routing (a logging handler holding the kernel's stream) would land in
    that finished cell. An empty parent header sends it to no cell instead.
    """
    for stream in _original_streams():
        setter = getattr(stream, "set_thread_parent", None)
        if callable(setter):
            with contextlib.suppress(Exception):
                setter({})


def _original_streams() -> list[Any]:
    found = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        found.append(stream._original if isinstance(stream, _RoutedStream) else stream)
    return found


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
        self, shell: Any | None = None, *, interrupt_grace: float = 2.0, cancel_grace: float = 5.0
    ) -> None:
        self.shell = _shell(shell)
        self.interrupt_grace = interrupt_grace
        self.cancel_grace = cancel_grace
        self._lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"<KernelExecutor of {type(self.shell).__name__}>"

    async def __call__(self, code: str, timeout: float | None = 120.0) -> RunResult:
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
        capture = _Capture(execution_count)
        token = _CAPTURE.set(capture)
        _detach_from_cell()
        task = asyncio.current_task()
        assert task is not None
        hook = shell.displayhook
        outer_exec_result = getattr(hook, "exec_result", None)
        result: Any = None
        interrupter = _Interrupter(task, timeout, self.interrupt_grace, shell)
        escaped: BaseException | None = None
        try:
            with _ROUTER.installed(shell):
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
            _CAPTURE.reset(token)
            if getattr(hook, "exec_result", None) is None:
                hook.exec_result = outer_exec_result  # a cell the user runs meanwhile
        return self._result(capture, result, execution_count, interrupter.timed_out, escaped)

    @staticmethod
    def _result(
        capture: _Capture,
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
        status = "timeout" if timed_out else ("error" if failed else "ok")
        return RunResult(
            status=status, execution_count=execution_count, outputs=outputs, error=error
        )


# --- history and namespace -------------------------------------------------------------------


class IPythonHistory:
    """What this kernel ran, by execution count (an ``ExecutionHistory`` for the view)."""

    def __init__(self, shell: Any | None = None) -> None:
        self.shell = _shell(shell)

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
    return KernelNamespace(lambda: shell.user_ns, hidden=shell.user_ns_hidden)


def attach_kernel(agent: Any, shell: Any | None = None) -> None:
    """Give ``agent`` this kernel: its variables (with the namespace tools) and its history."""
    from ..notebook_view import ExecutionHistory
    from ..tools.variables import NAMESPACE_TOOLS

    shell = _shell(shell)
    agent.resources.insert(kernel_namespace(shell), KernelNamespace)
    agent.resources.insert(IPythonHistory(shell), ExecutionHistory)
    for t in NAMESPACE_TOOLS:
        agent.tools.register(t, replace=True)
