"""The run and its user: questions and approvals that wait for an answer.

At most one question and one approval wait at a time, each a typed pending object
(:class:`PendingQuestion`, :class:`PendingApproval`) the handle reads. A wait ends with
the user's answer, with the run's question timeout (the run stops with
``input_timeout``: it never decides for the user), when the host says nobody can answer
(:mod:`._attendance`: the run stops with ``unattended``, or an approval is denied when the
agent was told to), or with the run's end, which cancels whatever still waits. An Allow
is a :class:`~jupyter_agent.approvals.Grant` holding the digests of what the card
showed, for the tool to check when it acts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ..approvals import Bound, Grant, RememberOption, Shown, map_text
from ..events import (
    AnswerEvent,
    PermissionRequestEvent,
    PermissionResponseEvent,
    QuestionEvent,
    RequestInputTimeoutEvent,
    WarningEvent,
)
from ..messages import new_id
from ..permissions import ToolCall
from ..plans import Question, QuestionOption
from ..states import AgentState
from ._attendance import Attendance
from ._limits import StopRun

if TYPE_CHECKING:
    from ._run import Run

T = TypeVar("T")

log = logging.getLogger(__name__)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


PREVIEW_TIMEOUT = 5.0
"""Seconds a tool's preview may take; after that the card says it cannot show the call,
and its Allow runs nothing (the call is asked about again)."""


@dataclass(frozen=True)
class Verdict:
    """The user's answer to an approval."""

    allowed: bool
    remember: bool
    """Allow calls like this one for the rest of the session."""
    scope: str | None = None
    """Which of the offered :class:`RememberOption` ids to remember (``None``: the first)."""


@dataclass
class PendingQuestion:
    """A question shown to the user, waiting for the answer."""

    id: str
    question: Question
    answer: asyncio.Future[str]


@dataclass
class PendingApproval:
    """A tool call shown to the user, waiting to be allowed or denied."""

    id: str
    call: ToolCall
    verdict: asyncio.Future[Verdict]


class UserInteraction:
    """Asks the user on behalf of one run and takes the answers (loop thread)."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self.question: PendingQuestion | None = None
        self.approval: PendingApproval | None = None
        self.waiting = asyncio.Event()
        """Set while a question or an approval waits for the user."""
        self.waited = 0.0
        """Seconds the approvals of the current call waited for the user (their previews
        included), so a tool's time is its own work only (the dispatcher resets it)."""

    async def ask(self, question: Question) -> tuple[str, QuestionOption | None]:
        """Show ``question`` and wait for the user's answer (value, chosen option)."""
        run = self._run
        pending = self.question = PendingQuestion(
            new_id(), question, asyncio.get_running_loop().create_future()
        )
        self.waiting.set()
        timeout = run.limits.question_timeout
        run.emit(QuestionEvent(question_id=pending.id, question=question, timeout=timeout))
        try:
            answer = await self._wait(pending.answer, "waiting for your answer")
        except _NobodyToAsk as nobody:
            raise StopRun(
                "unattended",
                f"The agent asked “{_clip(question.question)}” and nobody can answer here "
                f"({nobody}): the run stopped without deciding for the user.",
            ) from None
        except asyncio.TimeoutError:
            run.emit(RequestInputTimeoutEvent(question_id=pending.id, timeout=timeout or 0))
            raise StopRun(
                "input_timeout",
                f"No answer within {timeout or 0:g} s: "
                "the run stopped without deciding for the user.",
            ) from None
        finally:
            self.question = None
        return question.resolve(answer)

    async def approve(
        self,
        call: ToolCall,
        tool_use_id: str,
        reason: str,
        warnings: list[str],
        *,
        rememberable: bool = True,
        preview: Callable[[], Awaitable[Shown]] | None = None,
        bound: tuple[Bound, ...] = (),
    ) -> Grant | None:
        """Show ``call`` for approval and wait: the user's Allow, bound to what the card
        showed (the preview's bound content and ``bound``), or None when they declined.
        ``preview`` computes what the card shows of the call; one that fails or is slow
        shows none (and binds nothing)."""
        run = self._run
        secrets = run.agent.secrets
        asked = time.monotonic()
        options = self._remember_options(call) if rememberable else []
        offered = "; ".join(options[0].rules) if options else None
        computed = await _preview(preview, call.name)
        shown = computed.card
        if computed.unavailable:
            warnings = [
                f"What this call would act on could not be shown ({computed.unavailable}), "
                "so it will not run from this card: Allow asks again once it can be shown.",
                *warnings,
            ]
        pending = self.approval = PendingApproval(
            new_id(), call, asyncio.get_running_loop().create_future()
        )
        self.waiting.set()
        run.emit(
            PermissionRequestEvent(
                request_id=pending.id,
                tool_use_id=tool_use_id,
                tool_name=call.name,
                summary=secrets.redact(call.summary),
                reason=reason,
                input=secrets.redact_data(dict(call.input)),
                warnings=[secrets.redact(w) for w in warnings],
                remember=secrets.redact(offered) if offered is not None else None,
                remember_options=[
                    RememberOption(
                        id=o.id,
                        label=secrets.redact(o.label),
                        rules=[secrets.redact(r) for r in o.rules],
                    )
                    for o in options
                ],
                preview=map_text(shown, secrets.redact) if shown is not None else None,
            )
        )
        try:
            verdict = await self._wait(pending.verdict, f"waiting for approval of {call.name}")
        except _NobodyToAsk as nobody:
            verdict = self._unattended(call, str(nobody))
        except asyncio.TimeoutError:
            timeout = run.limits.question_timeout or 0
            run.emit(RequestInputTimeoutEvent(question_id=pending.id, timeout=timeout))
            raise StopRun(
                "input_timeout", f"No approval within {timeout:g} s, so the run stopped."
            ) from None
        finally:
            self.approval = None
            self.waited += time.monotonic() - asked
        allowed, remember = verdict.allowed, verdict.remember
        scope = verdict.scope if verdict.scope is not None or not options else options[0].id
        rule = None
        if allowed and remember and any(o.id == scope for o in options):
            rule = self._remember(call, scope)
        run.emit(
            PermissionResponseEvent(
                request_id=pending.id,
                tool_name=call.name,
                allowed=allowed,
                remember=remember,
                rule=rule,
                scope=scope if rule is not None else None,
            )
        )
        if not run.state.terminal:
            run.set_state(AgentState.tool_executing, detail=call.name)
        if not allowed:
            return None
        return Grant(computed.bound + bound, tuple(warnings), blind=computed.unavailable)

    def _unattended(self, call: ToolCall, why: str) -> Verdict:
        """Nobody can approve ``call``: end the run naming it, or (when the agent was told
        to) deny it and say so in the transcript."""
        run = self._run
        what = f"{call.name} ({_clip(run.agent.secrets.redact(call.summary))})"
        if run.agent.unattended == "deny":
            said = f"Denied {what}: it needs approval and nobody can give it ({why})."
            run.emit(WarningEvent(message=said))
            return Verdict(False, False)
        raise StopRun(
            "unattended",
            f"{what} needs approval and nobody can give it here ({why}), so the run stopped. "
            "To let such runs go on, allow the call with a rule in your settings, or have "
            'calls that need approval denied instead (agent.unattended = "deny").',
        )

    def _remember_options(self, call: ToolCall) -> list[RememberOption]:
        """The scopes "Always allow" may take (a policy without scopes: its one rule)."""
        policy = self._run.agent.policy
        scopes = getattr(policy, "remember_options", None)
        if callable(scopes):
            return list(scopes(call))
        said = getattr(policy, "preview_remember", None)
        offered = said(call) if callable(said) else "calls like this one"
        if offered is None:
            return []
        return [RememberOption(id="default", label="calls like this one", rules=[offered])]

    def _remember(self, call: ToolCall, scope: str | None) -> str | None:
        policy = self._run.agent.policy
        if (
            scope is None
            or scope == "default"
            or not callable(getattr(policy, "remember_options", None))
        ):
            return policy.remember(call)
        return policy.remember(call, scope)  # type: ignore[call-arg]  # Rules take a scope

    async def _wait(self, future: asyncio.Future[T], what: str) -> T:
        """The user's answer; raises TimeoutError after the run's question timeout, and
        :class:`_NobodyToAsk` once the agent's attendance says nobody can answer."""
        run = self._run
        run.release_writes()
        previous = run.state
        run.set_state(AgentState.waiting_user, detail=what)
        timeout = run.limits.question_timeout
        attendance = run.agent.attendance
        try:
            if attendance is None:
                if timeout is None:
                    return await future
                return await asyncio.wait_for(future, timeout)
            absent = asyncio.ensure_future(_absent(attendance))
            try:
                await asyncio.wait(
                    (future, absent), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                absent.cancel()
            if future.done():  # an answer wins a tie
                return future.result()
            future.cancel()
            if absent.done() and not absent.cancelled():
                raise _NobodyToAsk(absent.result())
            raise asyncio.TimeoutError
        finally:
            if not run.state.terminal and run.state == AgentState.waiting_user:
                run.set_state(previous)

    def answer(self, question_id: str, answer: str) -> None:
        """Answer the pending question. Clears it at once, so a caller that waits for
        the next question does not see this one again. The answer is recorded here, when
        the user gives it: a Stop that lands before the run reads it must not leave the
        question looking unanswered (raises ValueError for an answer that does not fit)."""
        pending = self.question
        if pending is not None and pending.id == question_id and not pending.answer.done():
            value, option = pending.question.resolve(answer)
            pending.answer.set_result(answer)
            self.question = None
            self.waiting.clear()
            self._run.emit(
                AnswerEvent(
                    question_id=pending.id, value=value, label=option.label if option else None
                )
            )

    def settle(
        self, request_id: str, allowed: bool, remember: bool, scope: str | None = None
    ) -> None:
        """Settle the pending approval; like :meth:`answer`."""
        pending = self.approval
        if pending is not None and pending.id == request_id and not pending.verdict.done():
            pending.verdict.set_result(Verdict(allowed, remember, scope))
            self.approval = None
            self.waiting.clear()

    def cancel(self) -> None:
        """End whatever still waits (the run is ending)."""
        if self.question is not None:
            self.question.answer.cancel()  # does nothing once answered
        if self.approval is not None:
            self.approval.verdict.cancel()


class _NobodyToAsk(Exception):
    """Nobody can answer what waits (the attendance's reason as its message)."""


async def _absent(attendance: Attendance) -> str:
    """``attendance.absent()``; one that fails is logged and then never returns (the
    wait goes on as if it were not there)."""
    try:
        return await attendance.absent()
    except Exception:
        log.warning("telling whether anyone can answer failed", exc_info=True)
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable") from None


async def _preview(compute: Callable[[], Awaitable[Shown]] | None, tool: str) -> Shown:
    """The call's preview, or none when the tool has none. One that fails or is slow says
    so (:attr:`Shown.unavailable`): the user is still asked, and the call does not run on
    an Allow of a card that showed nothing of it."""
    if compute is None:
        return Shown()
    try:
        return await asyncio.wait_for(compute(), PREVIEW_TIMEOUT)
    except asyncio.CancelledError:
        raise
    except asyncio.TimeoutError:
        log.warning("the approval preview of %s took over %g s", tool, PREVIEW_TIMEOUT)
        return Shown(unavailable=f"reading it took over {PREVIEW_TIMEOUT:g} s")
    except Exception as exc:
        log.warning("the approval preview of %s failed", tool, exc_info=True)
        return Shown(unavailable=f"reading it failed: {type(exc).__name__}")
