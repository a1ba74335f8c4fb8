"""Control tools: how the model plans, asks, reports and finishes.

Their names and arguments are part of the contract with the prompts and the panel.
They need no permission: every role can plan, ask and report.
"""

from __future__ import annotations

from pydantic import ValidationError

from .._wording import plural
from ..errors import ToolError
from ..plans import Plan, PlanStep, Question, QuestionOption, Severity, StepStatus
from ._tool import ToolContext, ToolOutput, tool


@tool(category="control", summary=lambda a: f"Plan: {a.get('goal', '')}")
def submit_plan(
    ctx: ToolContext,
    goal: str,
    steps: list[PlanStep],
    estimated_total_time: str = "",
    risks: list[str] | None = None,
    prerequisites: list[str] | None = None,
) -> ToolOutput:
    """Present your plan to the user for review. This ends your turn: the user reads the
    plan and decides whether to execute it. Submit a plan only after you studied what the
    task needs.

    Args:
        goal: The user's objective in one or two sentences.
        steps: Ordered steps, numbered from 1.
        estimated_total_time: Rough total time, e.g. "~5 minutes".
        risks: What could go wrong or needs care.
        prerequisites: What the user must prepare before execution.
    """
    try:
        plan = Plan(
            goal=goal,
            steps=steps,
            estimated_total_time=estimated_total_time,
            risks=risks or [],
            prerequisites=prerequisites or [],
        )
    except ValidationError as exc:
        raise ToolError(f"The plan is not valid: {exc.errors()[0]['msg']}") from None
    run = ctx.require_run()
    run.submit_plan(plan)
    counted = plural(len(plan.steps), "step")
    run.complete(f"Plan: {plan.goal}", f"Submitted a plan with {counted} for review.")
    return ToolOutput(
        f"The plan ({counted}) is shown to the user for review. Stop here.",
        data={"plan": plan.model_dump(mode="json")},
    )


@tool(category="control", summary=lambda a: f"Ask: {a.get('question', '')}")
async def ask_user(
    ctx: ToolContext,
    question: str,
    context: str = "",
    severity: Severity = "minor",
    options: list[QuestionOption] | None = None,
    default: str | None = None,
    allow_custom: bool = False,
) -> str:
    """Ask the user and wait for the answer. Give options (shown as buttons) for a decision;
    give no options to ask for free text. Always ask before deleting anything, before major
    refactors and before security-sensitive changes.

    Args:
        question: The question, clear and self-contained.
        context: Why you ask and what you found.
        severity: How much the answer matters: critical, major or minor.
        options: The choices, each with a short label, a value and a description.
        default: The value of the option you recommend.
        allow_custom: Also accept a typed answer besides the options.
    """
    try:
        q = Question(
            question=question,
            context=context,
            severity=severity,
            options=options or [],
            default=default,
            allow_custom=allow_custom,
        )
    except ValidationError as exc:
        raise ToolError(f"The question is not valid: {exc.errors()[0]['msg']}") from None
    value, option = await ctx.require_run().ask(q)
    if option is not None:
        return f"The user chose “{option.label}” (value: {value})."
    return f"The user answered: {value}"


@tool(category="control", summary=lambda a: f"Update: {a.get('message', '')}")
def send_update(ctx: ToolContext, message: str) -> str:
    """Show the user a short progress message and keep working.

    Args:
        message: One or two sentences on what you did or are about to do.
    """
    ctx.require_run().send_update(message)
    return "Shown to the user."


@tool(category="control", summary=lambda a: f"Done: {a.get('summary', '')}")
def task_complete(ctx: ToolContext, summary: str) -> str:
    """Finish the task. Call it only when the work is actually done (or cannot be done),
    with a summary of what was accomplished and anything left for the user.

    Args:
        summary: What was done, the results, and what remains.
    """
    ctx.require_run().complete(summary)
    return "Task marked complete."


@tool(
    category="control",
    summary=lambda a: (
        f"Step {a.get('step_number', '?')}: {str(a.get('status', '')).replace('_', ' ')}"
    ),
)
def update_plan_step(ctx: ToolContext, step_number: int, status: StepStatus, note: str = "") -> str:
    """Mark a step of the approved plan as in_progress, done or skipped, so the user sees
    where you are. Mark a step in_progress when you start it and done when it is finished.

    Args:
        step_number: The plan step's number.
        status: pending, in_progress, done or skipped.
        note: A short note, e.g. why a step was skipped.
    """
    ctx.require_run().update_plan_step(step_number, status, note)
    return f"Step {step_number} is now {status}."


CONTROL_TOOLS = (submit_plan, ask_user, send_update, task_complete, update_plan_step)
