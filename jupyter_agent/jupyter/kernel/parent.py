"""Each request's ``status: idle`` names that request, whatever ran beside it.

ipykernel 7 keeps the shell's parent header (the request that outputs and statuses answer)
in one context shared by every request of the shell, and dispatches a comm message that
arrives while an async cell awaits (the panel's clicks, the notebook bridge's replies)
beside that cell. Under JupyterLab's Run All, which queues every cell at once, a cell
awaiting the agent (``h = h.agent.execute_plan()``) was seen ending with its idle status
sent under the previous cell's header (ipykernel 7.4, the kernel's iopub recorded in
Chromium). JupyterLab then waits for that cell's idle forever: the cell never shows its
execution count and Run All never ends.

Whatever set the header back, the cure is the same: the handler of an execute request sets
the parent to the request it answers as it returns, and the kernel publishes the idle
status right after, with no ``await`` in between.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["answer_each_request_under_its_own_header"]

_WRAPPED = "_jupyter_agent_keeps_parent"


def answer_each_request_under_its_own_header(kernel: Any) -> None:
    """Wrap ``kernel``'s execute-request handler so the request's own header is the
    parent when it returns (once per kernel; a kernel without shell handlers is left)."""
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict):
        return  # not an ipykernel (terminal IPython, another kernel)
    original = handlers.get("execute_request")
    if original is None or getattr(original, _WRAPPED, False):
        return

    async def execute_request(stream: Any, ident: Any, parent: dict[str, Any]) -> None:
        try:
            result = original(stream, ident, parent)
            if inspect.isawaitable(result):
                await result
        finally:
            kernel.set_parent(ident, parent, channel="shell")

    setattr(execute_request, _WRAPPED, True)
    handlers["execute_request"] = execute_request
