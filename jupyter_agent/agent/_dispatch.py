"""The tool calls of one assistant turn, each carried through the same steps.

A call is checked (too large? cut off? a tool we offer?), then its role (may this role call it?),
then its input; then the policy and any hazard decide whether it runs, asks the user
or is refused; then it runs; then its result is redacted, shown and recorded. Each
step is a small function below. A step that refuses raises :class:`ToolError` (or
:class:`ToolDenied`) and the call's result says why; whatever ends the run
(:class:`StopRun`, a cancellation) passes through, and every call of the turn still
gets a result, so the history stays valid.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._wording import visible
from ..approvals import ApprovalPreview
from ..errors import ToolDenied, ToolError, ToolInterrupted
from ..events import ToolEndEvent, ToolStartEvent
from ..input_limit import oversized, refusal
from ..messages import INTERRUPTED_RESULT, Message, ToolResultBlock, ToolUseBlock, encodable
from ..messages import tool_result as result_block
from ..permissions import Allow, Ask, Deny, Hazard, ToolCall
from ..provenance import WrittenFiles
from ..states import AgentState
from ..tools import Tool, ToolContext, ToolOutput
from ._limits import StopRun

if sys.version_info >= (3, 11):
    from typing import assert_never
else:
    from typing_extensions import assert_never

if TYPE_CHECKING:
    from ._run import Run

log = logging.getLogger(__name__)

TRUNCATED_CALL = (
    "Not run: your reply hit the output token limit while writing this call's input, "
    "so the input was cut off. Make a smaller step (for example, write the content "
    "in several smaller edits)."
)


async def execute(
    run: Run, tool_uses: Sequence[ToolUseBlock], truncated: Sequence[str]
) -> list[ToolResultBlock]:
    """Run the calls of one assistant turn in order and record their results (in the
    turn's order). Consecutive calls of a concurrent tool (``delegate``) run side by
    side, at most ``limits.delegates_at_once`` at a time."""
    run.release_writes()
    results: dict[str, ToolResultBlock] = {}
    running: dict[str, ToolUseBlock] = {}  # calls under way, ended for the user on a stop
    try:
        for group in _groups(run, tool_uses, truncated):
            if run.ended:
                for block in group:
                    results[block.id] = result_block(
                        block.id, "Not run: the run had already ended.", is_error=True
                    )
                continue
            await run.checkpoint()
            if len(group) == 1:
                await _one(run, group[0], truncated, results, running)
            else:
                await _together(run, group, truncated, results, running)
    except BaseException as exc:
        note = INTERRUPTED_RESULT if isinstance(exc, asyncio.CancelledError) else f"Not run: {exc}"
        for current in running.values():
            if isinstance(exc, ToolInterrupted) and len(running) == 1:
                # What stopping did to the call's work, on its card and for the model.
                results[current.id] = result_block(current.id, f"{exc.note} {note}", is_error=True)
            shown = results[current.id].text if current.id in results else note
            run.emit(
                ToolEndEvent(
                    tool_use_id=current.id,
                    name=current.name,
                    result=shown,
                    is_error=True,
                    error_line=_first_line(shown),
                )
            )
        for block in tool_uses:
            results.setdefault(block.id, result_block(block.id, note, is_error=True))
        _record(run, tool_uses, results)
        raise
    return _record(run, tool_uses, results)


def _groups(
    run: Run, tool_uses: Sequence[ToolUseBlock], truncated: Sequence[str]
) -> list[list[ToolUseBlock]]:
    """The turn's calls in order, consecutive calls of a concurrent tool grouped."""
    groups: list[list[ToolUseBlock]] = []
    together = False
    for block in tool_uses:
        tool = run.agent.tools.get(block.name)
        concurrent = tool is not None and tool.concurrent and block.id not in truncated
        if concurrent and together:
            groups[-1].append(block)
        else:
            groups.append([block])
        together = concurrent
    return groups


async def _one(
    run: Run,
    block: ToolUseBlock,
    truncated: Sequence[str],
    results: dict[str, ToolResultBlock],
    running: dict[str, ToolUseBlock],
) -> None:
    running[block.id] = block
    results[block.id] = await dispatch(run, block, block.id in truncated)
    del running[block.id]


async def _together(
    run: Run,
    group: Sequence[ToolUseBlock],
    truncated: Sequence[str],
    results: dict[str, ToolResultBlock],
    running: dict[str, ToolUseBlock],
) -> None:
    """Run ``group`` side by side, bounded. A stop or a failure that ends the run
    cancels the others and waits for them, so none outlives the turn."""
    slots = asyncio.Semaphore(run.limits.delegates_at_once)

    async def bounded(block: ToolUseBlock) -> None:
        async with slots:
            await _one(run, block, truncated, results, running)

    tasks = [asyncio.ensure_future(bounded(block)) for block in group]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _record(
    run: Run, tool_uses: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> list[ToolResultBlock]:
    ordered = [results[b.id] for b in tool_uses]
    run.append(Message(role="user", content=list(ordered), message_type="tool_result"))
    return ordered


async def dispatch(run: Run, block: ToolUseBlock, truncated: bool) -> ToolResultBlock:
    """One call through offer → role → input → policy → approval → execution → result."""
    size = oversized(block.input)
    if size is not None:  # before anything echoes, summarises, validates or parses it
        shown = visible(f"{block.name[:64]} (input too large: not run)")
        run.emit(ToolStartEvent(tool_use_id=block.id, name=block.name, input={}, summary=shown))
        return _result(run, block, ToolOutput(refusal(size), is_error=True), 0.0)
    tool = run.agent.tools.get(block.name)
    summary = tool.summary(block.input) if tool else visible(f"{block.name}(…)")
    run.emit(
        ToolStartEvent(
            tool_use_id=block.id,
            name=block.name,
            input=run.agent.secrets.redact_data(block.input),
            summary=run.agent.secrets.redact(summary),
        )
    )
    run.set_state(AgentState.tool_executing, detail=block.name)
    started = time.monotonic()
    waited = run.user.waited = 0.0  # for the user's approval: not the tool's time
    try:
        tool = _offered(run, block, tool, truncated)
        _check_role(run, tool)
        kwargs = tool.validate(block.input)
        ctx = _context(run, block)
        call = _call(run, tool, block, summary)
        hazards: list[Hazard] = []
        if tool.assesses:
            # Off the loop: a long line's parse and its path checks must not delay a Stop.
            hazards = await asyncio.to_thread(tool.assess, ctx, kwargs)
        preview = _preview_of(tool, ctx, kwargs)
        waited = await _permit(run, hazards, call, block.id, preview)
        output = await tool.invoke(ctx, kwargs)
    except StopRun:
        raise
    except ToolError as exc:
        output = ToolOutput(str(exc), is_error=True)
        waited = run.user.waited
    except Exception as exc:
        log.debug("tool %s raised", block.name, exc_info=True)
        output = ToolOutput(f"{block.name} failed: {type(exc).__name__}: {exc}", is_error=True)
    return _result(run, block, output, max(0.0, time.monotonic() - started - waited))


def _preview_of(
    tool: Tool, ctx: ToolContext, kwargs: dict[str, Any]
) -> Callable[[], Awaitable[ApprovalPreview | None]] | None:
    """What the approval card shows of the call, computed only if the call asks."""
    if not tool.previews:
        return None
    return lambda: tool.preview(ctx, kwargs)


def _offered(run: Run, block: ToolUseBlock, tool: Tool | None, truncated: bool) -> Tool:
    """The tool to run: refused when the call's input was cut off or it names no tool."""
    if truncated:
        raise ToolError(TRUNCATED_CALL)
    if tool is None:
        offered = ", ".join(t.name for t in run.tools)
        raise ToolError(f"Unknown tool {block.name!r}. The tools you can call are: {offered}.")
    return tool


def _check_role(run: Run, tool: Tool) -> None:
    missing = run.role.missing(tool.permissions)
    if missing:
        raise ToolDenied(
            f"Refused: the {run.role.name} role may not call {tool.name}; it lacks the "
            f"permission{'s' if len(missing) > 1 else ''} {', '.join(sorted(missing))}. "
            "Only use the tools you were offered.",
            missing=missing,
        )


def _context(run: Run, block: ToolUseBlock) -> ToolContext:
    return ToolContext(
        session_id=run.session.id,
        role=run.role.name,
        step=run.step,
        tool_use_id=block.id,
        workspace=run.agent.workspace,
        resources=run.agent.resources,
        metadata=run.agent.metadata,
        run=run,
    )


def _call(run: Run, tool: Tool, block: ToolUseBlock, summary: str) -> ToolCall:
    """The call as the policy sees it."""
    return ToolCall(
        name=tool.name,
        category=tool.category,
        input=block.input,
        summary=summary,
        role=run.role.name,
        session_id=run.rules_session_id,
        permissions=tool.permissions,
        paths=tuple(_relative(p, run.agent.workspace) for p in tool.paths(block.input)),
        server=tool.server,
        server_tool=tool.server_tool,
    )


def _relative(path: str, workspace: Path) -> str:
    """A path as rules see it: POSIX, relative to the workspace when inside it."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.relative_to(workspace).as_posix()
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")


async def _permit(
    run: Run,
    hazards: list[Hazard],
    call: ToolCall,
    tool_use_id: str,
    preview: Callable[[], Awaitable[ApprovalPreview | None]] | None = None,
) -> float:
    """Refuse the call, ask the user, or let it run; the seconds spent waiting for the
    user. A hazard (a write outside the workspace, a changed script about to run) is beyond
    any policy: refused, or asked about with a warning even when a rule allows the call."""
    refused = [h.reason for h in hazards if h.action == "refuse"]
    if refused:
        raise ToolDenied("\n".join(dict.fromkeys(refused)))
    decision = _decide(run, call)
    warnings = list(dict.fromkeys(h.reason for h in hazards if h.action == "ask"))
    match decision:
        case Deny():
            raise ToolDenied(f"Refused by a permission rule: {decision.reason or 'denied'}.")
        case Allow():
            if not warnings:
                return 0.0
            # Asked only for its warnings: nothing to remember, it asks again next time.
            allowed = await run.user.approve(
                call, tool_use_id, "", warnings, rememberable=False, preview=preview
            )
        case Ask():
            allowed = await run.user.approve(
                call, tool_use_id, decision.reason, warnings, preview=preview
            )
        case _:
            assert_never(decision)
    if not allowed:
        raise ToolDenied(
            "The user declined this call. Do not repeat it; take another approach "
            "or ask the user what they want."
        )
    written = run.agent.resources.get(WrittenFiles)
    if written is not None:  # the user has now seen this code run: it asks again if changed
        written.acknowledge(p for h in hazards for p in h.paths)
    return run.user.waited


def _decide(run: Run, call: ToolCall) -> Allow | Deny | Ask:
    """The policy's decision. A subagent's call is decided as its own role's and as each
    delegating role's, the strictest winning: rules for a role (say, one that allows its
    commands) never let a parent do through a subagent what it would be asked about."""
    policy = run.agent.policy
    decisions = [policy.decide(call)]
    for role in dict.fromkeys(a.role.name for a in run.ancestors if a.role.name != call.role):
        decisions.append(policy.decide(replace(call, role=role)))
    return next((d for kind in (Deny, Ask) for d in decisions if isinstance(d, kind)), decisions[0])


def _result(run: Run, block: ToolUseBlock, output: ToolOutput, duration: float) -> ToolResultBlock:
    """Show and return the call's result. Secrets are hidden here, once, before the model,
    the events, the panel or the session files see it (text not valid Unicode is cleaned
    first)."""
    secrets = run.agent.secrets
    text = secrets.redact(encodable(output.text))
    run.emit(
        ToolEndEvent(
            tool_use_id=block.id,
            name=block.name,
            result=text,
            is_error=output.is_error,
            duration=duration,
            diff=output.diff and secrets.redact(encodable(output.diff)),
            data=secrets.redact_data(output.data),
            error_line=_error_line(output, secrets.redact),
        )
    )
    if not run.state.terminal:
        run.set_state(AgentState.running)
    return result_block(block.id, text, is_error=output.is_error, images=output.images)


ERROR_LINE_CHARS = 200


def _error_line(output: ToolOutput, redact: Callable[[str], str]) -> str | None:
    """The line a failed call's row shows: the tool's own, or its error's first line."""
    line = output.error_line
    if line is None and output.is_error:
        line = output.text
    return _first_line(redact(encodable(line))) if line is not None else None


def _first_line(text: str) -> str | None:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    if not line:
        return None
    line = visible(line)
    return line if len(line) <= ERROR_LINE_CHARS else line[: ERROR_LINE_CHARS - 1] + "…"
