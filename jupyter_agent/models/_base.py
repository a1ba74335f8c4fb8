"""The model seam: what the agent asks of any language model."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..messages import ContentBlock
from ._usage import Usage

ToolChoice = Literal["auto", "any", "none"]
"""Whether the model may (auto), must (any) or may not (none) call a tool."""


@dataclass
class ModelRequest:
    """One call: the system prompt, the API view of the history, the offered tools."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    max_tokens: int | None = None
    """Overrides the model's default output limit for this call."""
    purpose: Literal["turn", "compaction"] = "turn"
    """What the call is for: a turn of the conversation, or a summary of it written to
    make room (a replay answers that one apart from its scripted turns)."""
    on_sent: Callable[[], None] | None = None
    """For a model that can tell: call it once the request is out, so the caller's
    bookkeeping overlaps with the wait for the answer (the caller also goes on at the
    first streamed part). Quick, never raises, and may be called more than once."""


# --- what a model streams back -------------------------------------------------------


@dataclass
class StreamText:
    text: str


@dataclass
class StreamThinking:
    text: str


@dataclass
class StreamToolStart:
    id: str
    name: str


@dataclass
class StreamToolInput:
    id: str
    partial_json: str


@dataclass
class StreamRestart:
    """The call failed mid-stream and is retried from scratch: drop what arrived so far."""

    attempt: int
    reason: str
    delay: float


@dataclass
class ModelResponse:
    content: list[ContentBlock]
    stop_reason: str
    usage: Usage
    model: str = ""
    truncated_tool_ids: list[str] = field(default_factory=list)
    """Tool uses whose input was cut off by max_tokens (their input is unusable)."""
    notice: str = ""
    """What the user should know of how the server handled the call (a local server that
    cuts what does not fit its context), said as a warning."""


@dataclass
class StreamDone:
    response: ModelResponse


StreamPart = (
    StreamText | StreamThinking | StreamToolStart | StreamToolInput | StreamRestart | StreamDone
)


@runtime_checkable
class Model(Protocol):
    """Anything that turns a :class:`ModelRequest` into a stream ending in :class:`StreamDone`."""

    name: str
    """Model id, shown to the user."""
    provider: str
    label: str | None
    """A caption frontends must show with the output (e.g. that it is a scripted replay)."""
    is_replay: bool
    """The model replays recorded or scripted turns rather than calling a real one: what a
    run costs means nothing, so no cost is shown."""

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        """The reply, part by part: an async generator (``async def`` with ``yield``),
        which the run closes when it stops early."""
        ...

    def check(self) -> None:
        """Raise a clear error now if the model cannot work (e.g. no API key)."""
        ...
