"""Interrupts and timeouts for cells the agent runs in its own kernel (see ``kernel.py``).

One job: stop the code of one run when asked (the user's Interrupt, a timeout), the way
ipykernel stops a cell, without ever stopping the kernel's event loop. The code runs on
the kernel's own thread, so nothing on the event loop can stop synchronous code while it
runs; a signal can.

- While a run executes, :class:`Interrupter` installs its own SIGINT handler (ipykernel
  ignores SIGINT between requests, so otherwise the frontend's Interrupt button would do
  nothing to code the agent runs in the background). A SIGINT raises
  ``KeyboardInterrupt`` in the code when the main thread is executing the cell's code; it
  cancels the code at its ``await`` when the loop is idle or another task runs (a
  ``KeyboardInterrupt`` outside the cell's frames would land in asyncio and stop the
  kernel's loop) — the choice ipykernel makes for a cell. A SIGINT arriving while IPython
  compiles the cell or formats a traceback is dropped.
- A timeout is a watchdog thread that sends that same SIGINT to the kernel's main thread
  when the time is up, and twice more, ``grace`` seconds apart, while the code still runs
  (it may have caught the first).
- While a cell of the user's executes, ipykernel owns SIGINT: the watchdog then only
  cancels the code at its next ``await``. Where signals cannot be used (the loop is not on
  the main thread), a timeout does the same.
- The previous SIGINT handler is back once :meth:`Interrupter.close` returns; a signal
  the watchdog sent just before is let arrive (and dropped) first.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

from ...agent._home import on_loop

__all__ = ["Interrupter"]


class Interrupter:
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

    def __enter__(self) -> Interrupter:
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

    def interrupt(self) -> None:
        """Interrupt the code now (an explicit interrupt_cell, or Stop). From the loop,
        the code is suspended at an await, so it is cancelled there; from another thread
        (the agent's), it may be running synchronous code: interrupted as by the
        timeout."""
        with self._lock:
            if not self._armed:
                return
            if on_loop(self.loop):
                self._cancel()
            else:
                self._send_interrupt()

    def _watch(self) -> None:
        for i, wait in enumerate((self.timeout, self.grace, self.grace)):
            if self._done.wait(wait):
                return
            with self._lock:
                if not self._armed:
                    return
                if i == 0:
                    self.timed_out = True
                self._send_interrupt()

    def _send_interrupt(self) -> None:
        """From another thread than the loop's, holding the lock."""
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
