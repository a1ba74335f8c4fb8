"""What control tools do to a run besides asking and finishing: plans and subagents.

A plan lives in the session's metadata (saved with it); a subagent is a child agent
whose events are forwarded into its parent's stream, and which its parent stops and
waits for when it ends.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..events import (
    Event,
    PlanEvent,
    PlanStepEvent,
    SubagentCompleteEvent,
    SubagentOutputEvent,
    SubagentSpawnedEvent,
)
from ..plans import Plan, StepProgress, StepStatus

if TYPE_CHECKING:
    from ._handle import RunHandle
    from ._run import Run


def submit_plan(run: Run, plan: Plan) -> None:
    meta = run.session.metadata
    meta.plan = plan
    meta.plan_progress = [StepProgress(step_number=s.step_number) for s in plan.steps]
    run.submitted_plan = plan
    run.emit(PlanEvent(plan=plan))
    run.session.save()


def update_plan_step(run: Run, step_number: int, status: StepStatus, note: str) -> None:
    meta = run.session.metadata
    if meta.plan is None:
        raise ToolError("There is no plan to update: no plan was submitted in this session.")
    try:
        meta.plan.step(step_number)
    except KeyError:
        numbers = ", ".join(str(s.step_number) for s in meta.plan.steps)
        raise ToolError(f"The plan has no step {step_number}; its steps are {numbers}.") from None
    for progress in meta.plan_progress:
        if progress.step_number == step_number:
            progress.status, progress.note = status, note
    run.emit(PlanStepEvent(step_number=step_number, status=status, note=note))
    run.session.save()


def spawn(run: Run, task: str, role: str, tool_use_id: str | None, **options: Any) -> RunHandle:
    """Start a child agent on ``task``; its events are forwarded into ``run``'s stream."""
    child = run.agent.child(role=role, parent_tool_use_id=tool_use_id, **options)
    run.emit(
        SubagentSpawnedEvent(
            child_session_id=child.session.id,
            agent_type=role,
            parent_tool_use_id=tool_use_id,
            task=task,
        )
    )

    def forward(event: Event) -> None:
        run.emit(SubagentOutputEvent(child_session_id=child.session.id, event=event))

    child.subscribe(forward)
    handle = child.start(task)
    run.children.append(handle)

    def report(_: object) -> None:
        run.emit(
            SubagentCompleteEvent(
                child_session_id=child.session.id, result=handle.summary, state=handle.state
            )
        )

    handle.add_done_callback(report)
    return handle


async def stop_children(run: Run) -> None:
    running = [h for h in run.children if not h.state.terminal]
    for handle in running:
        handle.stop()
    if running:
        # Shielded so a second Stop cannot leave a child behind half-stopped.
        await asyncio.shield(asyncio.gather(*(h.wait() for h in running), return_exceptions=True))
