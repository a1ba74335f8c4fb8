"""Reading a reply's stream: server-sent events decoded into the API's JSON dicts, and
those dicts accumulated into stream parts and a final :class:`ModelResponse`.

A client of our own reads the events as the JSON they are (:func:`server_sent_events`);
a client of the caller's hands over the SDK's typed events, dumped into the same dicts
(:func:`sdk_events`). Either way :class:`ReplyBuilder` takes them one at a time. What goes
wrong after the stream began is a :class:`StreamFault`, which the model may retry.

A tool call's input is kept only up to :data:`~jupyter_agent.input_limit.TOOL_INPUT_LIMIT`
characters of JSON: past it the rest is counted, not kept nor shown, and the call's input
becomes the small stand-in the dispatcher refuses (:mod:`jupyter_agent.input_limit`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from ..input_limit import TOOL_INPUT_LIMIT, left_out
from ..messages import BlocksAdapter, ContentBlock, TextBlock, ToolUseBlock
from ._base import (
    ModelResponse,
    StreamPart,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
)
from ._usage import Pricing, Usage


class StreamFault(Exception):
    """The reply's stream went wrong after it began: an ``error`` event, or an early end."""

    def __init__(
        self, message: str, error_type: str | None = None, *, ended_early: bool = False
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        """The ``error`` event's type (None: it had none, or there was no such event)."""
        self.ended_early = ended_early
        """The stream ended before the reply did (no error event): worth another try."""


class EventStream:
    """A reply's stream events, as the API's JSON dicts; ``aclose()`` releases the
    connection at once."""

    def __init__(
        self, events: AsyncGenerator[dict[str, Any], None], release: Callable[[], Awaitable[None]]
    ) -> None:
        self._events = events
        self._release = release

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events

    async def aclose(self) -> None:
        try:
            await self._events.aclose()  # now, not whenever the garbage collector gets to it
        finally:
            await self._release()


async def server_sent_events(response: Any) -> AsyncGenerator[dict[str, Any], None]:
    """The data of each named server-sent event of a response, decoded. The API names
    each event's kind in its data too, so the name itself is not read; an event without
    one (such as a proxy's ``data: [DONE]``) is skipped, as the SDK skips it."""
    loads = json.loads
    rest = b""
    data: list[bytes] = []
    named = False
    async for chunk in response.aiter_bytes():
        lines = (rest + chunk if rest else chunk).split(b"\n")
        rest = lines.pop()  # the start of a line still to come
        for line in lines:
            if line[-1:] == b"\r":
                line = line[:-1]
            if line.startswith(b"data:"):
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line.startswith(b"event:"):
                named = True
            elif not line:  # a blank line ends an event
                if data and named:
                    yield loads(data[0] if len(data) == 1 else b"\n".join(data))
                data, named = [], False


async def sdk_events(stream: Any) -> AsyncGenerator[dict[str, Any], None]:
    """The events of ``messages.create(stream=True)``, as the same dicts."""
    async for event in stream:
        yield event.model_dump()


class ReplyBuilder:
    """Accumulates a reply's stream events (as their JSON dicts) into content blocks,
    yielding deltas as it goes."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}
        self.json_size: dict[int, int] = {}
        """Characters of each tool call's input JSON streamed so far (kept or not)."""
        self.stop_reason = "end_turn"
        self.model = ""
        self.usage: dict[str, int] = {}
        self.complete = False

    def feed(self, event: dict[str, Any]) -> StreamPart | None:
        """Take in one stream event; what the consumer should see of it, if anything."""
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            index = event["index"]
            block = self.blocks[index]
            delta_kind = delta["type"]
            if delta_kind == "text_delta":
                block["text"] += delta["text"]
                return StreamText(delta["text"])
            if delta_kind == "input_json_delta":
                partial = delta["partial_json"]
                size = self.json_size[index] = self.json_size[index] + len(partial)
                if size > TOOL_INPUT_LIMIT:  # counted from here on, never kept nor shown
                    self.json[index].clear()
                    return None
                self.json[index].append(partial)
                return StreamToolInput(block["id"], partial)
            if delta_kind == "thinking_delta":
                block["thinking"] += delta["thinking"]
                return StreamThinking(delta["thinking"])
            if delta_kind == "signature_delta":
                block["signature"] += delta["signature"]
            return None
        if kind == "content_block_start":
            block = self.blocks[event["index"]] = dict(event["content_block"])
            if block["type"] in ("tool_use", "server_tool_use"):
                self.json[event["index"]] = []
                self.json_size[event["index"]] = 0
                return StreamToolStart(block["id"], block["name"])
            return None
        if kind == "message_start":
            self.model = event["message"]["model"]
            self._merge_usage(event["message"].get("usage"))
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason") or self.stop_reason
            self._merge_usage(event.get("usage"))
        elif kind == "message_stop":
            self.complete = True
        elif kind == "error":
            error = event.get("error") or {}
            raise StreamFault(str(error.get("message", "")), error.get("type"))
        return None

    def _merge_usage(self, usage: dict[str, Any] | None) -> None:
        if not usage:
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ):
            value = usage.get(key)
            if value is not None:
                self.usage[key] = value

    def response(self, pricing: Pricing) -> ModelResponse:
        if not self.complete:
            raise StreamFault("the stream ended before the reply did", ended_early=True)
        truncated: list[str] = []
        content: list[ContentBlock] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.json and self.json_size[index] > TOOL_INPUT_LIMIT:
                block["input"] = left_out(self.json_size[index])
            elif index in self.json:
                raw = "".join(self.json[index])
                try:
                    block["input"] = json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    block["input"] = {}
                    truncated.append(block["id"])
            kind = block["type"]
            # The two kinds of every step are built directly; the rest (and any surprise)
            # go through validation.
            if kind == "text":
                content.append(TextBlock(text=block["text"]))
            elif kind == "tool_use" and isinstance(block["input"], dict):
                content.append(
                    ToolUseBlock(id=block["id"], name=block["name"], input=block["input"])
                )
            elif kind in ("thinking", "redacted_thinking", "tool_use"):
                content.extend(BlocksAdapter.validate_python([block]))
        usage = Usage(**self.usage, calls=1)
        usage.cost_usd = pricing.cost(usage)
        return ModelResponse(content, self.stop_reason, usage, self.model, truncated)
