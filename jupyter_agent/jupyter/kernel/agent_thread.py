"""The thread this kernel's agents live on.

The kernel's main thread runs the user's cells; while one runs synchronous code
(``time.sleep(20)``, a training loop) nothing else runs there. So the agents do not: each
kernel's agents, their panel and their notebook bridge run on one thread of their own,
with its own asyncio loop (their *home*, :mod:`jupyter_agent.agent._home`). The model's
stream, tool calls, approvals and the panel's events go on while a cell runs.

What must run on the main thread is handed to it explicitly and awaited there: a cell the
agent runs in this kernel (``KernelExecutor``, IPython's ``run_cell_async`` and its
hooks), and the display of a panel under the cell that asked for it (the magic does that
on its own thread). Output written on the agent's thread goes to no cell: its parent
header is emptied as the thread starts (a thread would otherwise write into the newest
cell, the user's running one).

The thread is a daemon, started with the first agent and never stopped: a kernel that
shuts down takes it along; the loop runs nothing the kernel would wait for.
"""

from __future__ import annotations

import asyncio
import threading

from ...agent._home import adopt
from .capture import detach_from_cell

THREAD_NAME = "jupyter-agent"

_lock = threading.Lock()
_home: asyncio.AbstractEventLoop | None = None


def agent_loop() -> asyncio.AbstractEventLoop:
    """The loop of this process's agent thread, started the first time."""
    global _home
    with _lock:
        if _home is None or _home.is_closed():
            _home = _start()
        return _home


def _start() -> asyncio.AbstractEventLoop:
    started = threading.Event()
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        detach_from_cell()
        adopt(loop)
        started.set()
        loop.run_forever()

    threading.Thread(target=run, name=THREAD_NAME, daemon=True).start()
    started.wait()
    return loop


_main: asyncio.AbstractEventLoop | None = None


def main_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's own loop, where cells run: found on the main thread (``%load_ext``
    runs there), remembered for the agent's thread and subshells' (the sidebar's query)."""
    global _main
    if threading.current_thread() is threading.main_thread():
        try:
            _main = asyncio.get_running_loop()
        except RuntimeError:
            try:
                _main = asyncio.get_event_loop_policy().get_event_loop()
            except RuntimeError:
                pass
    return _main
