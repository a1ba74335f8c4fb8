"""What control tools do to a run besides asking and finishing: plans and subagents.

A plan lives in the session's metadata (saved with it); a subagent is a child agent
whose events are forwarded into its parent's stream, and which its parent stops and
waits for when it ends. A subagent never widens what its parent may do: its role's
permissions are a subset of the parent's, it shares the parent's rules (and their
"Always allow"s), spends from the parent's limits, and its usage is the parent's too.
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
from ..permissions import Role
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


SUBAGENT_NOTE = (
    "# You are a subagent\n\n"
    "Another agent delegated this task to you. It sees none of your conversation: only "
    "your final summary (`task_complete`) comes back to it, so put your findings there, "
    "complete and self-contained."
)


def delegable_roles(run: Run) -> list[Role]:
    """The roles ``run`` may start as subagents: those that may do no more than it may
    (a Planner only Planners), so delegating never widens what an agent can do."""
    return [r for r in run.agent.roles.values() if r.permissions <= run.role.permissions]


def spawn(run: Run, task: str, role: str, tool_use_id: str | None, **options: Any) -> RunHandle:
    """Start a child agent on ``task``; its events are forwarded into ``run``'s stream.
    Raises :class:`ToolError` for a role ``run`` may not start, at the depth limit, or
    for an empty task. The child spends from ``run``'s limits (steps and time left; the
    budget, checked at each of its steps) and its usage counts in ``run``'s."""
    if not task.strip():
        raise ToolError("The task is empty: say what the subagent should do.")
    depth = run.limits.delegation_depth
    if run.depth >= depth:
        raise ToolError(
            f"Subagents may not start subagents of their own here (delegation depth "
            f"{depth}): do this task yourself."
        )
    allowed = delegable_roles(run)
    names = ", ".join(r.name for r in allowed)
    chosen = run.agent.roles.get(role)
    if chosen is None:
        raise ToolError(f"There is no role {role!r}. The roles you may delegate to: {names}.")
    if chosen not in allowed:
        more = ", ".join(sorted(chosen.permissions - run.role.permissions))
        raise ToolError(
            f"Refused: the {run.role.name} role may not delegate to the {role} role, which "
            f"may do more than it may ({more}). The roles you may delegate to: {names}."
        )
    limits = run.limits
    options.setdefault("max_steps", max(1, limits.max_steps - run.step))
    if limits.max_duration is not None:
        options.setdefault("max_duration", max(1.0, limits.max_duration - run.elapsed))
    options.setdefault("question_timeout", limits.question_timeout)
    options.setdefault("delegates_at_once", limits.delegates_at_once)
    options.setdefault("delegation_depth", depth)
    child = run.agent.child(
        role=chosen.name, parent_tool_use_id=tool_use_id, parent_run=run, **options
    )
    child.instructions = "\n\n".join(p for p in (child.instructions, SUBAGENT_NOTE) if p)
    if run.depth + 1 >= depth:
        child.tools.unregister("delegate")  # not offered where it would be refused

    def forward(event: Event) -> None:
        run.emit(SubagentOutputEvent(child_session_id=child.session.id, event=event))

    child.subscribe(forward)
    handle = child.start(task)  # its first event comes once this returns, after ours
    run.children.append(handle)
    run.emit(
        SubagentSpawnedEvent(
            child_session_id=child.session.id,
            agent_type=chosen.name,
            parent_tool_use_id=tool_use_id,
            task=task,
        )
    )

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
