"""Context management: keep each request inside the model's window, cheapest first.

Before each model call the run asks :meth:`Context.fit` whether the request about to go
out is near the budget (the window, less the answer's reserve). If it is, room is made
in one batch, so the prompt cache breaks once rather than at every step:

1. old tool results are *cleared*: the model sees a one-line stub saying what was there
   and how to get it again ("[cleared: 2,345 lines of notes.md; read it again if
   needed]"); the newest steps' results, small ones, and those about a file or cell the
   user or the plan mentions are kept;
2. if that is not enough, earlier turns are *compacted*: the model writes a summary in a
   request of its own (the same prefix as the conversation, so it reads from the cache),
   which stands for them from then on.

Both are ``context`` records appended to the history (see :mod:`..context_view`):
nothing is deleted, ``history.jsonl`` keeps the whole record, and a resumed session
sees the same view. A record is appended only once it is complete, so a Stop at any
point leaves the history valid (the cancellation invariant of ``_run``).

The size of a request is what the API reported for the last one, plus an estimate of
what was added since (characters × the tokens-per-character ratio the last request
showed): only what has not been sent yet is estimated.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ModelError, PromptTooLong
from ..events import CompactionEvent, CompactionReason, ContextEvent, WarningEvent
from ..messages import ApiTools, ApiView, ContextChange, Message, TextBlock
from ..models import ModelRequest, StreamDone, Usage, context_window, output_reserve
from ..sessions.context_view import (
    IMAGE_TOKENS,
    clearable,
    compaction_boundary,
    message_chars,
    tool_uses,
)
from ..states import AgentState
from ._prompts import load_prompt
from ._usage import count_usage

if TYPE_CHECKING:
    from ..sessions.store import Session
    from ._agent import Agent
    from ._run import Run

DEFAULT_RATIO = 0.3
"""Tokens per character before the API has counted a request (English prose is ~0.25,
code and JSON ~0.3-0.4): on the safe side."""
SUMMARY_HEAD = (
    "[Summary of the earlier conversation, written when it no longer fitted the context "
    "window. {count} earlier messages are summarised here; the full record is kept in "
    "the session's history.]\n\n"
)
SUMMARY_MAX_TOKENS = 4_096


@dataclass
class ContextPolicy:
    """When and how far to make room (shares of the budget: the window less the answer's
    reserve)."""

    window: int | None = None
    """The context window in tokens; None: the model's (see :func:`context_window`)."""
    auto: bool = True
    """Make room on our own before the budget is reached; False: only when asked, or when
    the API says the prompt is too long."""
    free_at: float = 0.85
    """Make room when the next request would fill this share of the budget."""
    target: float = 0.3
    """Clear results until the request is back under this share."""
    summarise_above: float = 0.65
    """Compact earlier turns if clearing alone leaves the request above this share."""
    keep_recent: float = 0.2
    """The newest turns a compaction keeps as they are: this share of the budget."""
    keep_results: int = 2
    """The results of this many newest steps are never cleared."""


class Context:
    """One agent's context budget and the measure of its requests (kept across runs)."""

    def __init__(self, policy: ContextPolicy | None = None) -> None:
        self.policy = policy or ContextPolicy()
        self._reported = 0
        """Tokens the API counted for the last request (0: none counted yet)."""
        self._sent = (0, 0)
        """(characters, images) of that request."""
        self._ratio = DEFAULT_RATIO
        self._tools = ("", 0)
        self._window_from_api: int | None = None
        """The window the API named when it refused a request as too long."""

    def model_changed(self) -> None:
        """Another model answers from now on: what the last one's API counted and the
        window it named are not the new one's (its characters-per-token ratio stays the
        best guess until the new API counts a request)."""
        self._reported = 0
        self._sent = (0, 0)
        self._window_from_api = None

    # --- measuring ------------------------------------------------------------------------

    def window(self, run: Run) -> int:
        return context_window(run.model, self.policy.window or self._window_from_api)

    def budget(self, run: Run) -> int:
        window = self.window(run)
        return max(window // 4, window - output_reserve(run.model) - 1_000)

    def request_size(self, run: Run) -> tuple[int, int]:
        """(characters, images) of the request the run would send now."""
        return _size(run.session, len(run.system_prompt) + self._tools_chars(run))

    def estimate(self, run: Run) -> int:
        """Tokens of the request the run would send now."""
        return self.tokens(self.request_size(run))

    def estimate_idle(self, agent: Agent) -> int:
        """Tokens of the request a run would start with now, while none runs (the gauge of
        a resumed session, before any request was counted). Reads the project's
        instruction files, as a run does when it starts."""
        tools = agent.tools.allowed(agent._role.permissions)
        specs = ApiTools(t.spec() for t in tools)
        return self.tokens(
            _size(agent.session, len(agent.system_prompt()) + len(json.dumps(specs)))
        )

    def tokens(self, size: tuple[int, int]) -> int:
        """Tokens of a request of ``size`` (characters, images): the last count plus an
        estimate of what changed since, or all estimated before any count."""
        chars, images = size
        if self._reported:
            sent_chars, sent_images = self._sent
            extra = self._ratio * (chars - sent_chars) + IMAGE_TOKENS * (images - sent_images)
            return max(0, round(self._reported + extra))
        return round(self._ratio * chars + IMAGE_TOKENS * images)

    def measured(self, run: Run, size: tuple[int, int], usage: Usage) -> None:
        """The API counted the request of ``size``: calibrate, and show the gauge."""
        reported = usage.total_input_tokens
        if reported <= 0:
            return  # a model that counts nothing: keep estimating
        chars, images = size
        if chars > 0:
            ratio = (reported - IMAGE_TOKENS * images) / chars
            self._ratio = min(1.0, max(0.1, ratio))
        self._reported, self._sent = reported, size
        run.emit(
            ContextEvent(
                used_tokens=reported + usage.output_tokens,
                window=self.window(run),
                cached_tokens=usage.cache_read_input_tokens,
            )
        )

    def _tools_chars(self, run: Run) -> int:
        """The size of the run's tool definitions (measured once per run)."""
        if self._tools[0] != run.id:
            self._tools = (run.id, len(json.dumps(run.tool_specs)))
        return self._tools[1]

    def forget(self) -> None:
        """The view changed under the last count (a compaction): estimate from scratch."""
        self._reported = 0

    # --- making room ------------------------------------------------------------------

    async def fit(self, run: Run) -> None:
        """Before a request: make room if it would come near the budget."""
        if not self.policy.auto:
            return
        if self.estimate(run) >= self.policy.free_at * self.budget(run):
            await self.make_room(run, "auto")

    async def make_room(
        self,
        run: Run,
        reason: CompactionReason,
        *,
        tokens: int | None = None,
        limit: int | None = None,
    ) -> bool:
        """Clear old results, then compact earlier turns if still needed (always, when the
        user asked). ``tokens``, ``limit``: the request's size and the window, as the API
        said them when it refused the request. True if anything changed."""
        if limit and limit < self.window(run):
            self._window_from_api = limit  # the API knows its window better than our table
        budget = self.budget(run)
        before = max(tokens or 0, self.estimate(run))
        if tokens and tokens > self.estimate(run):  # the API knows better: recalibrate
            chars, images = self.request_size(run)
            self._ratio = min(1.0, max(0.1, (tokens - IMAGE_TOKENS * images) / max(chars, 1)))
            self._reported = 0
        cleared = self._clear(run, reason, before, self.policy.target * budget)
        after = self.estimate(run)
        summarised = 0
        # The user asked, the API refused what clearing could not shrink, or it was not enough.
        if (
            reason == "manual"
            or (reason == "too_long" and not cleared)
            or after > self.policy.summarise_above * budget
        ):
            try:
                summarised = await self._summarise(run, reason, after, budget)
            except ModelError as exc:
                if reason != "auto":
                    raise
                # The request still fits (room is made early): say so and go on without.
                run.set_state(AgentState.running)
                run.emit(
                    WarningEvent(
                        message=f"Could not compact the conversation ({exc}); going on "
                        "without: it will be tried again at the next step."
                    )
                )
        if cleared or summarised:
            run.emit(
                ContextEvent(
                    used_tokens=self.estimate(run), window=self.window(run), estimated=True
                )
            )
        return bool(cleared or summarised)

    def _clear(self, run: Run, reason: CompactionReason, before: int, target: float) -> int:
        """Clear the oldest clearable results until the request is under ``target``."""
        session = run.session
        view = session.view()
        candidates = clearable(
            view,
            tool_uses(view.messages),
            keep_newest=self.policy.keep_results,
            referenced=_referenced(run),
        )
        chosen: list[str] = []
        freed = 0.0
        for tool_use_id, chars in candidates:
            if before - freed <= target and reason != "manual":
                break
            chosen.append(tool_use_id)
            freed += chars * self._ratio
        if not chosen:
            return 0
        record = Message(
            role="user",
            content=[],
            message_type="context",
            context=ContextChange(cleared=chosen, reason=reason, tokens_before=before),
        )
        run.append(record)  # the next estimate counts the removed characters off the last report
        after = self.estimate(run)
        assert record.context is not None
        record.context.tokens_after = after
        session.save()
        run.emit(
            CompactionEvent(
                reason=reason, cleared=len(chosen), tokens_before=before, tokens_after=after
            )
        )
        return len(chosen)

    async def _summarise(self, run: Run, reason: CompactionReason, before: int, budget: int) -> int:
        """Replace earlier turns by a summary the model writes; the number summarised."""
        view = run.session.view()
        # Compact now (the user's) keeps only the newest step; an automatic one keeps more.
        share = 0.0 if reason == "manual" else self.policy.keep_recent
        keep_chars = int(share * budget / self._ratio)
        boundary = compaction_boundary(view.messages, keep_chars)
        if boundary is None:
            return 0
        summarised = view.messages[:boundary]
        count = sum(1 for m in summarised if m.context is None)
        run.set_state(AgentState.thinking, detail="compacting the conversation")
        summary = await self._ask_summary(run, summarised, budget)
        text = SUMMARY_HEAD.format(count=count) + summary
        record = Message(
            role="user",
            content=[TextBlock(text=text)],
            message_type="context",
            context=ContextChange(
                compacted_through=summarised[-1].id, reason=reason, tokens_before=before
            ),
        )
        run.append(record)
        self.forget()
        after = self.estimate(run)
        assert record.context is not None
        record.context.tokens_after = after
        run.session.save()
        run.emit(
            CompactionEvent(
                reason=reason,
                summarised=count,
                tokens_before=before,
                tokens_after=after,
                summary=summary,
            )
        )
        run.set_state(AgentState.running)
        return count

    async def _ask_summary(self, run: Run, summarised: list[Message], budget: int) -> str:
        """The model's summary of ``summarised``: asked over the same prefix as the
        conversation (cached), or, when that prefix itself is too long, over a clipped
        transcript of it."""
        instruction = Message.user(load_prompt("compact"))
        try:
            return await self._request_summary(
                run, ApiView()([*summarised, instruction]), max_tokens=SUMMARY_MAX_TOKENS
            )
        except PromptTooLong:
            pass
        limit = int(0.5 * budget / self._ratio)
        transcript = _transcript(summarised, limit)
        return await self._request_summary(
            run,
            [{"role": "user", "content": [{"type": "text", "text": transcript}]}],
            max_tokens=SUMMARY_MAX_TOKENS,
            instruction=instruction.text,
        )

    async def _request_summary(
        self,
        run: Run,
        messages: list[dict[str, object]],
        *,
        max_tokens: int,
        instruction: str | None = None,
    ) -> str:
        if instruction is not None:
            content = messages[-1]["content"]
            assert isinstance(content, list)
            content.append({"type": "text", "text": instruction})
        request = ModelRequest(
            system=run.system_prompt,
            messages=messages,
            tools=run.tool_specs,
            tool_choice="auto",  # as in the conversation, so the cached prefix is read
            max_tokens=max_tokens,
            purpose="compaction",
        )
        response = None
        async with aclosing(run.model.stream(request)) as parts:
            async for part in parts:
                if isinstance(part, StreamDone):
                    response = part.response
        if response is None:
            raise ModelError("the model's stream ended without a summary")
        count_usage(run, response.usage)
        summary = "".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
        if not summary:
            raise ModelError("The model wrote no summary when asked to compact the conversation.")
        return summary


def _size(session: Session, fixed: int) -> tuple[int, int]:
    """(characters, images) of a request: ``fixed`` (system prompt and tools) and what the
    model sees of the session's history."""
    chars, images = fixed, 0
    for message in session.view().messages:
        c, i = message_chars(message)
        chars += c
        images += i
    return chars, images


def _referenced(run: Run) -> str:
    """What the user and the plan talk about now: results about it are kept."""
    parts = [run.task]
    plan = run.session.metadata.plan
    if plan is not None:
        parts.append(plan.goal)
        parts.extend(f"{s.action} {s.reason}" for s in plan.steps)
    return "\n".join(parts)


def _transcript(messages: list[Message], limit: int) -> str:
    """The messages as plain text, each part clipped, the oldest dropped beyond ``limit``."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                lines.append(f"{message.role}: {_clip(block.text, 4_000)}")
        for use in message.tool_uses:
            lines.append(f"tool call {use.name} {_clip(json.dumps(use.input), 400)}")
        for result in message.tool_results:
            lines.append(f"tool result: {_clip(result.text, 1_000)}")
    text = "\n".join(lines)
    return text[-limit:] if len(text) > limit else text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit:,} more]"
