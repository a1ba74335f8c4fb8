"""One run of an agent: the pieces a loop is built from.

A loop (built in, or your own ``async def my_loop(run)``) calls
:meth:`Run.begin_step`, :meth:`Run.call_model` and :meth:`Run.execute`; the run
streams events, enforces roles, rules and limits, and keeps the history valid.

Cancellation invariant: whenever the driving task is cancelled (Stop) or a limit
ends the run, the history stays a valid Messages API conversation. Partial text
is kept and marked interrupted, every ``tool_use`` gets a ``tool_result``, and no
child task is left running. The next run on the same session simply continues.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._wording import plural, visible
from ..errors import AgentError, ModelError, ToolDenied, ToolError
from ..events import (
    AgentStarted,
    AgentWarning,
    Completed,
    ErrorOccurred,
    Event,
    InputTimedOut,
    ModelRetry,
    PermissionRequested,
    PermissionResolved,
    PlanStepUpdated,
    PlanSubmitted,
    QuestionAnswered,
    QuestionAsked,
    StateChanged,
    Stopped,
    SubagentCompleted,
    SubagentOutput,
    SubagentSpawned,
    TextDelta,
    TextDone,
    ThinkingDelta,
    ToolEnded,
    ToolProgress,
    ToolStarted,
    TurnStarted,
    Update,
    UsageUpdated,
)
from ..messages import (
    INTERRUPTED_RESULT,
    ApiTools,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    classify,
    encodable,
    new_id,
    open_tool_uses,
    tool_result,
)
from ..models import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamRestart,
    StreamText,
    StreamThinking,
    Usage,
)
from ..permissions import Allow, Ask, Deny, Hazard, Role, ToolCall
from ..plans import Plan, Question, QuestionOption, StepProgress, StepStatus
from ..provenance import WrittenFiles
from ..states import TERMINAL_FOR, AgentState, StopReason, check_transition
from ..tools import ToolContext, ToolOutput

if TYPE_CHECKING:
    from ._agent import Agent
    from ._handle import RunHandle

log = logging.getLogger(__name__)

CANCEL_GRACE = 2.0
"""Seconds a stopping run has to clean up (a tool's ``finally``) before another Stop
cancels it again: a second click must not cut short the cleanup the first one started."""

TRUNCATED_CALL = (
    "Not run: your reply hit the output token limit while writing this call's input, "
    "so the input was cut off. Make a smaller step (for example, write the content "
    "in several smaller edits)."
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


class StopRun(AgentError):
    """Raised inside a run to end it with a stop reason (a limit, an unanswered question)."""

    def __init__(self, reason: StopReason, message: str) -> None:
        super().__init__(message)
        self.reason: StopReason = reason
        self.message = message


@dataclass
class Limits:
    max_steps: int = 30
    max_duration: float | None = None
    """Seconds before the run stops with ``time_limit``."""
    budget_usd: float | None = None
    """Stop with ``budget`` once the run has cost this much."""
    question_timeout: float | None = None
    """Seconds to wait for an answer or approval; None waits for ever."""


@dataclass
class Turn:
    """What one model call produced."""

    message: Message
    stop_reason: str
    usage: Usage
    truncated_tool_ids: list[str]

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return self.message.tool_uses


class Run:
    """The state of one run and the operations a loop performs.

    Tools see it as a :class:`~jupyter_agent.tools.RunControl`, never as this class.
    """

    def __init__(self, agent: Agent, task: str, role: Role, limits: Limits) -> None:
        self.id = new_id()
        self.agent = agent
        self.session = agent.session
        self.model = agent.model
        self.role = role
        self.task = task
        self.limits = limits
        self.state = AgentState.idle
        self.stop_reason: StopReason | None = None
        self.stop_message = ""
        self.summary: str | None = None
        self.error: BaseException | None = None
        self.step = 0
        self.usage = Usage()
        self.events: list[Event] = []
        self.system_prompt = agent.system_prompt(role)
        self.tools = agent.tools.allowed(role.permissions)
        self.tool_specs = ApiTools(t.spec() for t in self.tools)
        self.pending_question: tuple[str, Question, asyncio.Future[str]] | None = None
        self.pending_permission: tuple[str, ToolCall, asyncio.Future[tuple[bool, bool]]] | None = (
            None
        )
        self.children: list[RunHandle] = []
        self.needs_user = asyncio.Event()
        """Set while a question or an approval waits for the user."""
        self.done_callbacks: list[Callable[[], None]] = []
        self._end: tuple[StopReason, str] | None = None
        self._cancel_reason: StopReason | None = None
        self._cancelled_at = 0.0
        self._cancel_message = ""
        self._pause_requested = False
        self._resume = asyncio.Event()
        self._done = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = time.monotonic()
        self._release_writes: Callable[[], None] = lambda: None

    # --- lifecycle (driven by the Agent) ------------------------------------------

    def launch(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        # The task and the metadata of the start go to disk with the first request (see
        # call_model), or as soon as the run waits on a tool or the user, or ends.
        self._release_writes = self.session.hold_writes()
        loop = asyncio.get_running_loop()
        self.loop = loop
        self._task = loop.create_task(
            self._drive(loop_fn, loop_name), name=f"jupyter_agent-{self.id}"
        )
        self._task.add_done_callback(self._on_task_done)
        if self.limits.max_duration is not None:
            self._timer = loop.call_later(
                self.limits.max_duration,
                self.cancel,
                "time_limit",
                f"Reached the time limit of {self.limits.max_duration:g} s.",
            )

    async def _drive(self, loop_fn: Callable[[Run], Awaitable[None]], loop_name: str) -> None:
        external_cancel = False
        try:
            self.set_state(AgentState.running)
            self.emit(
                AgentStarted(
                    task=self.task,
                    role=self.role.name,
                    model=self.model.name,
                    loop=loop_name,
                    max_steps=self.limits.max_steps,
                    model_label=self.model.label,
                )
            )
            for notice, action in self.agent.notices_for(self.role):
                self.emit(AgentWarning(message=notice, action=action))
            await loop_fn(self)
            reason, message = self._end or ("completed", "")
        except asyncio.CancelledError:
            external_cancel = self._cancel_reason is None
            reason = self._cancel_reason or "manual_stop"
            message = self._cancel_message or "Stopped by the user."
        except StopRun as stop:
            reason, message = stop.reason, stop.message
        except Exception as exc:
            if not isinstance(exc, AgentError):
                log.exception("agent run %s failed", self.id)
            self.error = exc
            reason, message = "error", str(exc) or type(exc).__name__
        await self._stop_children()
        self._finish(reason, message)
        if external_cancel:
            raise asyncio.CancelledError

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("agent run %s broke off", self.id, exc_info=error)  # a fault of ours
        # A task cancelled before it ever ran never enters _drive: finish it here.
        try:
            if not self.state.terminal:
                self._finish(
                    self._cancel_reason or "manual_stop", self._cancel_message or "Stopped."
                )
        finally:
            self._done.set()  # should a fault of ours break off _finish, none waits forever

    def _finish(self, reason: StopReason, message: str) -> None:
        """End the run: close the history, settle the state, tell everyone. Synchronous."""
        if self.state.terminal:
            return
        if self._timer is not None:
            self._timer.cancel()
        for pending in (self.pending_question, self.pending_permission):
            if pending is not None and not pending[2].done():
                pending[2].cancel()
        self.close_history(INTERRUPTED_RESULT if reason == "manual_stop" else f"Not run: {message}")
        self.stop_reason = reason
        self.stop_message = message
        if reason == "completed" and self.summary is None:
            self.summary = message
        self.set_state(TERMINAL_FOR[reason], detail=message)
        if reason == "completed":
            self.emit(Completed(summary=self.summary or ""))
        elif reason == "error":
            self.emit(ErrorOccurred(message=message, error_type=type(self.error).__name__))
        else:
            self.emit(Stopped(reason=reason, message=message))
        meta = self.session.metadata
        meta.state = self.state.value
        meta.stop_reason = reason
        meta.runs += 1
        try:
            self.session.save(now=True)  # on disk before anyone waiting for the run reads it
        except OSError as exc:
            log.warning(
                "could not write session %s at the end of run %s: %s", self.session.id, self.id, exc
            )
        except Exception:  # whatever went wrong, the run still ends and its waiters wake
            log.exception(
                "could not write session %s at the end of run %s", self.session.id, self.id
            )
        self._done.set()
        for callback in self.done_callbacks:
            try:
                callback()
            except Exception:
                log.exception("a run-done callback failed")

    def cancel(self, reason: StopReason = "manual_stop", message: str = "") -> None:
        """Cancel the driving task (loop thread only; handles route here thread-safely)."""
        if self.state.terminal or self._task is None:
            return
        if self._cancel_reason is None:
            self._cancel_reason = reason
            self._cancel_message = message
        elif time.monotonic() - self._cancelled_at < CANCEL_GRACE:
            return  # already stopping: let the cleanup finish
        self._cancelled_at = time.monotonic()
        self._task.cancel()

    async def wait(self) -> None:
        await self._done.wait()

    def close_history(self, note: str = INTERRUPTED_RESULT) -> None:
        """Answer any tool use still open, so the history is a valid conversation."""
        missing = open_tool_uses(self.session.history)
        if missing:
            self.append(
                Message(
                    role="user",
                    content=[tool_result(b.id, note, is_error=True) for b in missing],
                    message_type="tool_result",
                )
            )

    # --- events and state --------------------------------------------------------

    def emit(self, event: Event) -> Event:
        event.session_id = self.session.id
        event.run_id = self.id
        self.agent.bus.publish(event)
        self.events.append(event)
        return event

    def set_state(self, state: AgentState, detail: str = "") -> None:
        if state == self.state:
            return
        check_transition(self.state, state)
        previous, self.state = self.state, state
        self.emit(StateChanged(state=state, previous=previous, detail=detail))

    def append(self, message: Message) -> None:
        self.session.append(message)

    @property
    def ended(self) -> bool:
        """A control tool ended the run (task_complete, submit_plan)."""
        return self._end is not None

    def end(self, reason: StopReason = "completed", message: str = "") -> None:
        """Ask the loop to finish after the current step."""
        if self._end is None:
            self._end = (reason, message)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    # --- steps -------------------------------------------------------------------

    async def begin_step(self) -> int:
        """Honour pause and limits, then count a new step."""
        await self.checkpoint()
        if self.step >= self.limits.max_steps:
            limit = plural(self.limits.max_steps, "step")
            raise StopRun("iteration_limit", f"Reached the limit of {limit}.")
        budget = self.limits.budget_usd
        if budget is not None and self.usage.cost_usd >= budget:
            raise StopRun(
                "budget", f"Spent ${self.usage.cost_usd:.4f} of the ${budget:.4f} budget."
            )
        self.step += 1
        self.emit(TurnStarted(step=self.step))
        return self.step

    async def checkpoint(self) -> None:
        """Wait here while the user has paused the run."""
        if not self._pause_requested:
            return
        self._release_writes()  # a pause may be long: what the run recorded goes to disk
        self.set_state(AgentState.paused, detail="paused by the user")
        while self._pause_requested:
            await self._resume.wait()
        self.set_state(AgentState.running)

    def request_pause(self) -> None:
        self._pause_requested = True
        self._resume.clear()

    def request_resume(self) -> None:
        self._pause_requested = False
        self._resume.set()

    # --- the model ----------------------------------------------------------------

    async def call_model(
        self,
        *,
        phase: str | None = None,
        tool_choice: str = "auto",
        max_tokens: int | None = None,
    ) -> Turn:
        """Stream one model call over the current history and record its reply."""
        # What the last step recorded is written once the request is out, while the
        # model works on its answer, rather than ahead of the request.
        release_writes = self._release_writes = self.session.hold_writes()
        request = ModelRequest(
            system=self.system_prompt,
            messages=self.session.api_messages(),
            tools=self.tool_specs,
            tool_choice=tool_choice,  # type: ignore[arg-type]
            max_tokens=max_tokens,
            on_sent=release_writes,
        )
        self.set_state(AgentState.thinking)
        streamed: list[str] = []
        response: ModelResponse | None = None
        try:
            async with aclosing(self.model.stream(request)) as parts:
                async for part in parts:
                    release_writes()  # in case the model could not tell when it was sent
                    if isinstance(part, StreamText):
                        streamed.append(part.text)
                        self.emit(TextDelta(text=part.text, phase=phase))
                    elif isinstance(part, StreamThinking):
                        self.emit(ThinkingDelta(text=part.text))
                    elif isinstance(part, StreamRestart):
                        streamed.clear()
                        self.emit(
                            ModelRetry(attempt=part.attempt, reason=part.reason, delay=part.delay)
                        )
                    elif isinstance(part, StreamDone):
                        response = part.response
        except BaseException:
            release_writes()
            partial = "".join(streamed)
            if partial.strip():
                self.append(
                    Message(
                        role="assistant",
                        content=[TextBlock(text=partial)],
                        interrupted=True,
                        phase=phase,
                    )
                )
                self.emit(TextDone(text=partial, phase=phase, interrupted=True))
            raise
        if response is None:
            raise ModelError("the model's stream ended without a final message")
        message = Message(role="assistant", content=response.content, phase=phase)
        message.message_type = classify(message)
        self.append(message)
        for block in response.content:
            if isinstance(block, TextBlock) and block.text:
                self.emit(TextDone(text=block.text, phase=phase))
        self._count(response.usage)
        self.set_state(AgentState.running)
        return Turn(message, response.stop_reason, response.usage, response.truncated_tool_ids)

    def _count(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        meta = self.session.metadata
        meta.usage = meta.usage + usage
        self.emit(
            UsageUpdated(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens,
                cost_usd=usage.cost_usd,
                run_cost_usd=self.usage.cost_usd,
                session_cost_usd=meta.usage.cost_usd,
                run_input_tokens=self.usage.total_input_tokens,
                run_output_tokens=self.usage.output_tokens,
                run_cache_read_input_tokens=self.usage.cache_read_input_tokens,
            )
        )

    # --- tools ---------------------------------------------------------------------

    async def execute(
        self, tool_uses: Sequence[ToolUseBlock], truncated: Sequence[str] = ()
    ) -> list[ToolResultBlock]:
        """Run the calls of one assistant turn in order and record their results."""
        self._release_writes()
        results: dict[str, ToolResultBlock] = {}
        current: ToolUseBlock | None = None
        try:
            for block in tool_uses:
                if self.ended:
                    results[block.id] = tool_result(
                        block.id, "Not run: the run had already ended.", is_error=True
                    )
                    continue
                await self.checkpoint()
                current = block
                results[block.id] = await self._dispatch(block, block.id in truncated)
                current = None
        except BaseException as exc:
            note = (
                INTERRUPTED_RESULT if isinstance(exc, asyncio.CancelledError) else f"Not run: {exc}"
            )
            if current is not None:
                self.emit(
                    ToolEnded(tool_use_id=current.id, name=current.name, result=note, is_error=True)
                )
            for block in tool_uses:
                results.setdefault(block.id, tool_result(block.id, note, is_error=True))
            self._record_results(tool_uses, results)
            raise
        return self._record_results(tool_uses, results)

    def _record_results(
        self, tool_uses: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
    ) -> list[ToolResultBlock]:
        ordered = [results[b.id] for b in tool_uses]
        self.append(Message(role="user", content=list(ordered), message_type="tool_result"))
        return ordered

    async def _dispatch(self, block: ToolUseBlock, truncated: bool) -> ToolResultBlock:
        tool = self.agent.tools.get(block.name)
        summary = tool.summary(block.input) if tool else visible(f"{block.name}(…)")
        self.emit(
            ToolStarted(
                tool_use_id=block.id,
                name=block.name,
                input=self.agent.secrets.redact_data(block.input),
                summary=self.agent.secrets.redact(summary),
            )
        )
        self.set_state(AgentState.tool_executing, detail=block.name)
        started = time.monotonic()
        try:
            if truncated:
                raise ToolError(TRUNCATED_CALL)
            if tool is None:
                offered = ", ".join(t.name for t in self.tools)
                raise ToolError(
                    f"Unknown tool {block.name!r}. The tools you can call are: {offered}."
                )
            missing = self.role.missing(tool.permissions)
            if missing:
                raise ToolDenied(
                    f"Refused: the {self.role.name} role may not call {tool.name}; it lacks the "
                    f"permission{'s' if len(missing) > 1 else ''} {', '.join(sorted(missing))}. "
                    "Only use the tools you were offered.",
                    missing=missing,
                )
            kwargs = tool.validate(block.input)
            ctx = ToolContext(
                session_id=self.session.id,
                role=self.role.name,
                step=self.step,
                tool_use_id=block.id,
                workspace=self.agent.workspace,
                resources=self.agent.resources,
                metadata=self.agent.metadata,
                run=self,
            )
            call = ToolCall(
                name=tool.name,
                category=tool.category,
                input=block.input,
                summary=summary,
                role=self.role.name,
                session_id=self.session.id,
                permissions=tool.permissions,
                paths=tuple(_relative(p, self.agent.workspace) for p in tool.paths(block.input)),
            )
            hazards: list[Hazard] = []
            if tool.assesses:
                # Off the loop: a long line's parse and its path checks must not delay a Stop.
                hazards = await asyncio.to_thread(tool.assess, ctx, kwargs)
            await self._permit(hazards, call, block.id)
            output = await tool.invoke(ctx, kwargs)
        except StopRun:
            raise
        except ToolError as exc:
            output = ToolOutput(str(exc), is_error=True)
        except Exception as exc:
            log.debug("tool %s raised", block.name, exc_info=True)
            output = ToolOutput(f"{block.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        # Secrets are hidden here, once, before the model, the events, the panel or the
        # session files see the result (text not valid Unicode is cleaned first).
        secrets = self.agent.secrets
        text = secrets.redact(encodable(output.text))
        self.emit(
            ToolEnded(
                tool_use_id=block.id,
                name=block.name,
                result=text,
                is_error=output.is_error,
                duration=time.monotonic() - started,
                diff=output.diff and secrets.redact(encodable(output.diff)),
                data=secrets.redact_data(output.data),
            )
        )
        if not self.state.terminal:
            self.set_state(AgentState.running)
        return tool_result(block.id, text, is_error=output.is_error, images=output.images)

    async def _permit(self, hazards: list[Hazard], call: ToolCall, tool_use_id: str) -> None:
        """Refuse the call, ask the user, or let it run. A hazard (a write outside the
        workspace, a changed script about to run) is beyond any policy: refused, or asked
        about with a warning even when a rule allows the call."""
        refused = [h.reason for h in hazards if h.action == "refuse"]
        if refused:
            raise ToolDenied("\n".join(dict.fromkeys(refused)))
        decision = self.agent.policy.decide(call)
        if isinstance(decision, Deny):
            raise ToolDenied(f"Refused by a permission rule: {decision.reason or 'denied'}.")
        warnings = list(dict.fromkeys(h.reason for h in hazards if h.action == "ask"))
        if isinstance(decision, Allow) and not warnings:
            return
        # Asked only for its warnings (a rule allows it): nothing to remember, it asks again.
        asked = isinstance(decision, Ask)
        reason = decision.reason if asked else ""
        if not await self._approval(call, tool_use_id, reason, warnings, rememberable=asked):
            raise ToolDenied(
                "The user declined this call. Do not repeat it; take another approach "
                "or ask the user what they want."
            )
        written = self.agent.resources.get(WrittenFiles)
        if written is not None:  # the user has now seen this code run: it asks again if changed
            written.acknowledge(p for h in hazards for p in h.paths)

    def tool_progress(self, tool_use_id: str, output: str) -> None:
        self.emit(ToolProgress(tool_use_id=tool_use_id, output=self.agent.secrets.redact(output)))

    # --- the user ------------------------------------------------------------------

    async def _wait_user(self, future: asyncio.Future[Any], what: str) -> Any:
        self._release_writes()
        previous = self.state
        self.set_state(AgentState.waiting_user, detail=what)
        timeout = self.limits.question_timeout
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(future, timeout)
        finally:
            if not self.state.terminal and self.state == AgentState.waiting_user:
                self.set_state(previous)

    async def ask(self, question: Question) -> tuple[str, QuestionOption | None]:
        """Show ``question`` and wait for the user's answer (value, chosen option)."""
        qid = new_id()
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.pending_question = (qid, question, future)
        self.needs_user.set()
        self.emit(
            QuestionAsked(question_id=qid, question=question, timeout=self.limits.question_timeout)
        )
        try:
            answer = await self._wait_user(future, "waiting for your answer")
        except asyncio.TimeoutError:
            timeout = self.limits.question_timeout or 0
            self.emit(InputTimedOut(question_id=qid, timeout=timeout))
            raise StopRun(
                "input_timeout",
                f"No answer within {timeout:g} s: the run stopped without deciding for the user.",
            ) from None
        finally:
            self.pending_question = None
        value, option = question.resolve(answer)
        self.emit(
            QuestionAnswered(question_id=qid, value=value, label=option.label if option else None)
        )
        return value, option

    async def _approval(
        self,
        call: ToolCall,
        tool_use_id: str,
        reason: str,
        warnings: list[str],
        *,
        rememberable: bool = True,
    ) -> bool:
        rid = new_id()
        preview = getattr(self.agent.policy, "preview_remember", None)
        offered = None  # what "Always allow" would remember; None: not offered
        if rememberable:
            offered = preview(call) if callable(preview) else "calls like this one"
        future: asyncio.Future[tuple[bool, bool]] = asyncio.get_running_loop().create_future()
        self.pending_permission = (rid, call, future)
        self.needs_user.set()
        self.emit(
            PermissionRequested(
                request_id=rid,
                tool_use_id=tool_use_id,
                tool_name=call.name,
                summary=self.agent.secrets.redact(call.summary),
                reason=reason,
                input=self.agent.secrets.redact_data(dict(call.input)),
                warnings=[self.agent.secrets.redact(w) for w in warnings],
                remember=offered,
            )
        )
        try:
            allowed, remember = await self._wait_user(
                future, f"waiting for approval of {call.name}"
            )
        except asyncio.TimeoutError:
            timeout = self.limits.question_timeout or 0
            self.emit(InputTimedOut(question_id=rid, timeout=timeout))
            raise StopRun(
                "input_timeout", f"No approval within {timeout:g} s, so the run stopped."
            ) from None
        finally:
            self.pending_permission = None
        remembered = allowed and remember and offered is not None
        rule = self.agent.policy.remember(call) if remembered else None
        self.emit(
            PermissionResolved(
                request_id=rid, tool_name=call.name, allowed=allowed, remember=remember, rule=rule
            )
        )
        if not self.state.terminal:
            self.set_state(AgentState.tool_executing, detail=call.name)
        return allowed

    def resolve_question(self, question_id: str, answer: str) -> None:
        """Answer a pending question (loop thread). Clears it at once, so a caller that
        waits for the next question does not see this one again."""
        pending = self.pending_question
        if pending is not None and pending[0] == question_id and not pending[2].done():
            pending[2].set_result(answer)
            self.pending_question = None
            self.needs_user.clear()

    def resolve_permission(self, request_id: str, allowed: bool, remember: bool) -> None:
        """Settle a pending approval (loop thread); like :meth:`resolve_question`."""
        pending = self.pending_permission
        if pending is not None and pending[0] == request_id and not pending[2].done():
            pending[2].set_result((allowed, remember))
            self.pending_permission = None
            self.needs_user.clear()

    # --- what control tools do ----------------------------------------------------

    def complete(self, summary: str, message: str | None = None) -> None:
        self.summary = summary
        self.end("completed", summary if message is None else message)

    def submit_plan(self, plan: Plan) -> None:
        meta = self.session.metadata
        meta.plan = plan
        meta.plan_progress = [StepProgress(step_number=s.step_number) for s in plan.steps]
        self.emit(PlanSubmitted(plan=plan))
        self.session.save()

    def update_plan_step(self, step_number: int, status: StepStatus, note: str = "") -> None:
        meta = self.session.metadata
        if meta.plan is None:
            raise ToolError("There is no plan to update: no plan was submitted in this session.")
        try:
            meta.plan.step(step_number)
        except KeyError:
            numbers = ", ".join(str(s.step_number) for s in meta.plan.steps)
            raise ToolError(
                f"The plan has no step {step_number}; its steps are {numbers}."
            ) from None
        for progress in meta.plan_progress:
            if progress.step_number == step_number:
                progress.status, progress.note = status, note
        self.emit(PlanStepUpdated(step_number=step_number, status=status, note=note))
        self.session.save()

    def send_update(self, message: str) -> None:
        self.emit(Update(message=message))

    # --- subagents -----------------------------------------------------------------

    async def spawn(
        self, task: str, *, role: str = "planner", tool_use_id: str | None = None, **options: Any
    ) -> RunHandle:
        """Start a child agent on ``task``; its events are forwarded into this run's stream."""
        child = self.agent.child(role=role, parent_tool_use_id=tool_use_id, **options)
        self.emit(
            SubagentSpawned(
                child_session_id=child.session.id,
                agent_type=role,
                parent_tool_use_id=tool_use_id,
                task=task,
            )
        )
        child.subscribe(
            lambda event: self.emit(SubagentOutput(child_session_id=child.session.id, event=event))
        )
        handle = child.start(task)
        self.children.append(handle)

        def report(_: object) -> None:
            self.emit(
                SubagentCompleted(
                    child_session_id=child.session.id, result=handle.summary, state=handle.state
                )
            )

        handle.add_done_callback(report)
        return handle

    async def _stop_children(self) -> None:
        running = [h for h in self.children if not h.state.terminal]
        for handle in running:
            handle.stop()
        if running:
            # Shielded so a second Stop cannot leave a child behind half-stopped.
            await asyncio.shield(
                asyncio.gather(*(h.wait() for h in running), return_exceptions=True)
            )
