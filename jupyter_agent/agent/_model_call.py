"""One model call: stream a turn over the history, show it as it comes, record the reply.

A call cut short (Stop, a limit, an error) keeps the text streamed so far in the history,
marked interrupted; a call that completes appends the assistant's message whole and
counts its tokens and cost.
"""

from __future__ import annotations

import sys
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ModelError, PromptTooLong
from ..events import RetryEvent, TextDeltaEvent, TextEvent, ThinkingDeltaEvent
from ..messages import Message, TextBlock, ToolUseBlock, classify
from ..models import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamRestart,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
    ToolChoice,
    Usage,
)
from ..states import AgentState
from ._usage import count_usage

if sys.version_info >= (3, 11):
    from typing import assert_never
else:
    from typing_extensions import assert_never

if TYPE_CHECKING:
    from ._run import Run


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


async def call_model(
    run: Run, *, phase: str | None, tool_choice: ToolChoice, max_tokens: int | None
) -> Turn:
    """Stream one model call over the run's history and record its reply.

    Room is made first if the request would come near the context budget; if the API
    still says the prompt is too long, the conversation is compacted and the call tried
    once more."""
    await run.connect_tool_servers()
    context = run.agent.context
    await context.fit(run)
    try:
        return await _call(run, phase=phase, tool_choice=tool_choice, max_tokens=max_tokens)
    except PromptTooLong as exc:
        if not await context.make_room(run, "too_long", tokens=exc.tokens, limit=exc.limit):
            raise
    return await _call(run, phase=phase, tool_choice=tool_choice, max_tokens=max_tokens)


async def _call(
    run: Run, *, phase: str | None, tool_choice: ToolChoice, max_tokens: int | None
) -> Turn:
    # What the last step recorded is written once the request is out, while the
    # model works on its answer, rather than ahead of the request.
    release_writes = run.hold_writes()
    size = run.agent.context.request_size(run)
    request = ModelRequest(
        system=run.system_prompt,
        messages=run.session.api_messages(),
        tools=run.tool_specs,
        tool_choice=tool_choice,
        max_tokens=max_tokens,
        on_sent=release_writes,
    )
    run.set_state(AgentState.thinking)
    streamed: list[str] = []
    response: ModelResponse | None = None
    try:
        async with aclosing(run.model.stream(request)) as parts:
            async for part in parts:
                release_writes()  # in case the model could not tell when it was sent
                match part:
                    case StreamText():
                        streamed.append(part.text)
                        run.emit(TextDeltaEvent(text=part.text, phase=phase))
                    case StreamThinking():
                        run.emit(ThinkingDeltaEvent(text=part.text))
                    case StreamRestart():
                        streamed.clear()
                        run.emit(
                            RetryEvent(attempt=part.attempt, reason=part.reason, delay=part.delay)
                        )
                    case StreamDone():
                        response = part.response
                    case StreamToolStart() | StreamToolInput():
                        pass  # the calls are recorded whole from the final response
                    case _:
                        assert_never(part)
    except BaseException:
        release_writes()
        _keep_partial(run, "".join(streamed), phase)
        raise
    if response is None:
        raise ModelError("the model's stream ended without a final message")
    message = Message(role="assistant", content=response.content, phase=phase)
    message.message_type = classify(message)
    run.append(message)
    for block in response.content:
        if isinstance(block, TextBlock) and block.text:
            run.emit(TextEvent(text=block.text, phase=phase))
    count_usage(run, response.usage)
    if response.notice:
        run.warn(response.notice)
    run.agent.context.measured(run, size, response.usage)
    run.set_state(AgentState.running)
    return Turn(message, response.stop_reason, response.usage, response.truncated_tool_ids)


def _keep_partial(run: Run, partial: str, phase: str | None) -> None:
    """Keep the text of a call cut short, marked interrupted."""
    if not partial.strip():
        return
    run.append(
        Message(role="assistant", content=[TextBlock(text=partial)], interrupted=True, phase=phase)
    )
    run.emit(TextEvent(text=partial, phase=phase, interrupted=True))
