"""The tool calls of one assistant turn, each carried through the same steps.

A call is checked (too large? cut off? a tool we offer?), then its role (may this role call it?),
then its input; then the policy and any hazard decide whether it runs, asks the user
or is refused; then it runs; then its result is redacted, shown and recorded. Each
step is a small function below. A step that refuses raises :class:`ToolError` (or
:class:`ToolDenied`) and the call's result says why; whatever ends the run
(:class:`StopRun`, a cancellation) passes through, and every call of the turn still
gets a result, so the history stays valid.

An Allow is bound to what its card showed (:mod:`jupyter_agent.approvals`): the tool
checks it at the moment it acts, and a call whose content changed meanwhile raises
:class:`ChangedSinceShown` and is decided again — a fresh card showing it as it is now,
with a line saying what changed — at most :data:`ASKS_WHEN_CHANGED` times.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._wording import visible
from ..admin_policy import current_policy
from ..approvals import Bound, ChangedSinceShown, Grant, NotShown, Shown, file_key
from ..errors import ToolDenied, ToolError, ToolInterrupted
from ..events import ToolEndEvent, ToolOutcome, ToolStartEvent
from ..input_limit import oversized, refusal
from ..messages import (
    DECLINED_LINE,
    DECLINED_RESULT,
    INTERRUPTED_RESULT,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    encodable,
)
from ..messages import tool_result as result_block
from ..permissions import Allow, Ask, Deny, Hazard, ToolCall
from ..states import AgentState
from ..tools import Tool, ToolContext, ToolOutput
from ..workspace.provenance import WrittenFiles, code_digest
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

ASKS_WHEN_CHANGED = 3
"""How many times a call is decided (and its card shown) while what it acts on keeps
changing under it; then it fails, having run nothing."""


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
            await run.checkpoint(f"before {group[0].name}")
            if len(group) == 1:
                await _one(run, group[0], truncated, results, running)
            else:
                await _together(run, group, truncated, results, running)
    except BaseException as exc:
        stopped = isinstance(exc, asyncio.CancelledError)
        note = INTERRUPTED_RESULT if stopped else f"Not run: {exc}"
        outcome = ToolOutcome.interrupted if stopped else ToolOutcome.stopped
        for current in running.values():
            said = None  # what the row says beyond "stopped": what stopping did, if anything
            if isinstance(exc, ToolInterrupted) and len(running) == 1:
                # What stopping did to the call's work, on its card and for the model.
                results[current.id] = result_block(current.id, f"{exc.note} {note}", is_error=True)
                said = exc.note
            shown = results[current.id].text if current.id in results else note
            # A Stop's row says "stopped" itself; its line only says what stopping did.
            row = said if stopped else shown
            run.emit(
                ToolEndEvent(
                    tool_use_id=current.id,
                    name=current.name,
                    result=shown,
                    is_error=True,
                    error_line=_first_line(row) if row else None,
                    outcome=outcome,
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
    run.user.waited = 0.0  # for the user's approvals: not the tool's time
    outcome: ToolOutcome | None = None  # by is_error, unless refused
    try:
        tool = _offered(run, block, tool, truncated)
        _check_role(run, tool)
        kwargs = tool.validate(block.input)
        ctx = _context(run, block)
        call = _call(run, tool, block, summary)
        output = await _permitted(run, tool, ctx, kwargs, call)
    except StopRun:
        raise
    except ToolError as exc:
        output = ToolOutput(str(exc), is_error=True)
        if isinstance(exc, ToolDenied):
            outcome = ToolOutcome.denied
            output.error_line = exc.line
    except Exception as exc:
        log.debug("tool %s raised", block.name, exc_info=True)
        output = ToolOutput(f"{block.name} failed: {type(exc).__name__}: {exc}", is_error=True)
    waited = run.user.waited
    return _result(run, block, output, max(0.0, time.monotonic() - started - waited), outcome)


async def _permitted(
    run: Run, tool: Tool, ctx: ToolContext, kwargs: dict[str, Any], call: ToolCall
) -> ToolOutput:
    """Decide the call (hazards, policy, the user), then run it with the user's Allow; a
    call whose content changed since it was decided is decided again, with a line on its
    card saying what changed, at most :data:`ASKS_WHEN_CHANGED` times."""
    changed: list[str] = []
    while True:
        hazards: list[Hazard] = []
        if tool.assesses:
            # Off the loop: a long line's parse and its path checks must not delay a Stop.
            hazards = await asyncio.to_thread(tool.assess, ctx, kwargs)
        ctx.approval = await _permit(
            run, hazards, call, ctx.tool_use_id, _preview_of(tool, ctx, kwargs), changed
        )
        try:
            if ctx.approval is not None and ctx.approval.blind:
                # The card showed nothing of what the call acts on: nothing to hold it to.
                raise NotShown(ctx.approval.blind)
            return await tool.invoke(ctx, kwargs)
        except ChangedSinceShown as exc:
            changed.append(exc.what)
            if len(changed) >= ASKS_WHEN_CHANGED and isinstance(exc, NotShown):
                raise ToolError(
                    f"Not run: its approval card could not show what it would act on "
                    f"({exc.why}), each of the {len(changed)} times it asked, and nothing runs "
                    "that a card did not show. Make the call smaller or simpler, then retry."
                ) from None
            if len(changed) >= ASKS_WHEN_CHANGED:
                raise ToolError(
                    f"Not run: {exc.what} changed after each of the {len(changed)} times this "
                    "call was approved, so nothing ran. Something else keeps changing it "
                    "(another subagent, a running cell, the user or another program): wait "
                    "until it is settled, read it again, then retry."
                ) from None


def _preview_of(
    tool: Tool, ctx: ToolContext, kwargs: dict[str, Any]
) -> Callable[[], Awaitable[Shown]] | None:
    """What the approval card shows of the call, computed only if the call asks."""
    if not tool.previews:
        return None
    return lambda: tool.show(ctx, kwargs)


def _offered(run: Run, block: ToolUseBlock, tool: Tool | None, truncated: bool) -> Tool:
    """The tool to run: refused when the call's input was cut off or it names no tool."""
    if truncated:
        raise ToolError(TRUNCATED_CALL)
    if tool is None:
        offered = ", ".join(t.name for t in run.tools)
        raise ToolError(f"Unknown tool {block.name!r}. The tools you can call are: {offered}.")
    policy = current_policy()
    if policy.tool_disabled(tool.name):  # never offered either (ToolRegistry.allowed)
        raise ToolError(
            f"{tool.name} is disabled by the administrator's policy ({policy.where}): "
            "it is not available here."
        )
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
    preview: Callable[[], Awaitable[Shown]] | None = None,
    changed: Sequence[str] = (),
) -> Grant | None:
    """Refuse the call, ask the user, or let it run: the user's Allow, bound to what the
    card showed (None when no card was needed). A hazard (a write outside the workspace, a
    changed script about to run) is beyond any policy: refused, or asked about with a
    warning even when a rule allows the call. ``changed``: what changed under the call
    since it was last decided (said on the card)."""
    refused = [h.reason for h in hazards if h.action == "refuse"]
    if refused:
        raise ToolDenied("\n".join(dict.fromkeys(refused)))
    # Off the loop: settings patterns are time-bounded, and a long command line's parse is
    # not, and neither may delay a Stop.
    decision = await asyncio.to_thread(_decide, run, call)
    warnings = list(dict.fromkeys(h.reason for h in hazards if h.action == "ask"))
    match decision:
        case Deny():
            raise ToolDenied(f"Refused by a permission rule: {decision.reason or 'denied'}.")
        case Allow():
            if not warnings:
                return None
            # Asked only for its warnings: nothing to remember, it asks again next time.
            reason, rememberable = "", False
        case Ask():
            # A warning of a kind no rule may cover (a path that runs code later): nothing
            # "Always allow" could keep, so it is not offered.
            keep = all(h.rememberable for h in hazards if h.action == "ask")
            reason, rememberable = decision.reason, keep
        case _:
            assert_never(decision)
    if changed:
        warnings.insert(0, _changed_line(changed[-1]))
    # The code the command runs, as it is now: what this card approves running.
    scripts = await asyncio.to_thread(
        _bound_files, [p for h in hazards for p in h.paths], run.agent.workspace
    )
    grant = await run.user.approve(
        call,
        tool_use_id,
        reason,
        warnings,
        rememberable=rememberable,
        preview=preview,
        bound=scripts,
    )
    if grant is None:
        # The model is told not to repeat it; the user who denied it reads what happened.
        raise ToolDenied(DECLINED_RESULT, line=DECLINED_LINE)
    written = run.agent.resources.get(WrittenFiles)
    if written is not None and scripts:
        # The user has now approved running this code as the card was shown for: running it
        # asks again once it is not that content any more.
        written.acknowledge({b.path: b.digest for b in scripts if b.path is not None})
    return grant


def _changed_line(what: str) -> str:
    return f"Changed since the last approval: {what}. This card shows it as it is now."


def _bound_files(paths: Sequence[str], workspace: Path) -> tuple[Bound, ...]:
    """The files a command runs, bound as they are now (their path, where it leads and the
    bytes there)."""
    bound: list[Bound] = []
    for path in dict.fromkeys(os.path.abspath(p) for p in paths):
        bound.append(Bound(file_key(path), _relative(path, workspace), code_digest(path)))
    return tuple(bound)


def _decide(run: Run, call: ToolCall) -> Allow | Deny | Ask:
    """The policy's decision. A subagent's call is decided as its own role's and as each
    delegating role's, the strictest winning: rules for a role (say, one that allows its
    commands) never let a parent do through a subagent what it would be asked about."""
    policy = run.agent.policy
    decisions = [policy.decide(call)]
    for role in dict.fromkeys(a.role.name for a in run.ancestors if a.role.name != call.role):
        decisions.append(policy.decide(replace(call, role=role)))
    return next((d for kind in (Deny, Ask) for d in decisions if isinstance(d, kind)), decisions[0])


def _result(
    run: Run,
    block: ToolUseBlock,
    output: ToolOutput,
    duration: float,
    outcome: ToolOutcome | None = None,
) -> ToolResultBlock:
    """Show and return the call's result. Secrets are hidden here, once, before the model,
    the events, the panel or the session files see it (text not valid Unicode is cleaned
    first). ``outcome``: how the call ended, when not plain ok or error by ``is_error``."""
    if outcome is None:
        outcome = ToolOutcome.error if output.is_error else ToolOutcome.ok
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
            outcome=outcome,
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
