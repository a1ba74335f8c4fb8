"""``delegate``: hand a self-contained task to a subagent and get its summary back.

The child is a full agent with a role and a session of its own (linked to this one),
which sees none of the caller's conversation. Which roles a caller may start, how deep
subagents nest, and what they share with their parent (rules, budget, usage) are the
run's to decide (``RunControl.spawn``); this tool starts the child, waits for it, and
turns however it ended into the call's result. Calls of one turn run side by side.
"""

from __future__ import annotations

import asyncio

from ..errors import ToolError
from ._run_control import ChildRun
from ._tool import ToolContext, ToolOutput, tool

_ENDINGS = {
    "manual_stop": "was stopped",
    "error": "failed",
    "iteration_limit": "reached its step limit",
    "time_limit": "reached its time limit",
    "budget": "ran out of budget",
    "input_timeout": "waited too long for the user",
    "unattended": "needed the user, and nobody could answer",
}


@tool(
    category="control",
    concurrent=True,
    summary=lambda a: f"Delegate ({a.get('role', 'planner')}): {a.get('task', '')}",
)
async def delegate(ctx: ToolContext, task: str, role: str = "planner") -> ToolOutput:
    """Hand a task to a subagent and wait for its summary. Worth it for independent
    investigations (several delegate calls in one reply run at the same time). The
    subagent sees nothing of this conversation: write the task self-contained, with the
    files, names and facts it needs and what to report back.

    Args:
        task: The whole task, self-contained: the subagent knows nothing else.
        role: The subagent's role: planner (reads, changes nothing), or a role that may
            do no more than yours.
    """
    run = ctx.require_run()
    child = await run.spawn(task, role=role, tool_use_id=ctx.tool_use_id)
    try:
        await child.wait()
    except asyncio.CancelledError:
        child.stop()  # the run's end waits for it to stop (its history closed)
        raise
    return _result(child)


def _result(child: ChildRun) -> ToolOutput:
    """The call's result: the child's summary (and plan), or how it ended before done."""
    who = f"The {child.role} subagent (session {child.session_id})"
    data = {"child_session_id": child.session_id, "state": child.state.value}
    summary = (child.summary or "").strip()
    if child.stop_reason is None:
        raise ToolError(f"{who} is still running.")  # wait() returned early: a fault of ours
    if child.stop_reason == "completed":
        text = f"{who} finished.\n\n{summary or '(It reported nothing.)'}"
        if child.plan is not None:
            text += f"\n\nIts plan:\n\n{child.plan.to_markdown()}"
        return ToolOutput(text, data=data)
    ending = _ENDINGS.get(child.stop_reason, "ended")
    text = f"{who} {ending} before finishing"
    if child.stop_message:
        text += f": {child.stop_message}"
    if summary:
        text += f"\n\nWhat it reported: {summary}"
    return ToolOutput(text, data=data, is_error=True)
