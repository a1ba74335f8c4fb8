"""Reading a Chat Completions stream: chunks (as their JSON dicts) accumulated into
stream parts and a final :class:`ModelResponse`.

Servers that speak the API differ in the details, and all of these are taken:
tool-call deltas keyed by ``index`` whose id and name come in the first delta (or again
in every one, or a whole call in one delta, or no id at all: one is made); reasoning as
``reasoning_content`` (vLLM, DeepSeek, LM Studio) or ``reasoning`` (OpenRouter, Ollama);
usage in a last chunk without choices, or never. An ``error`` object in place of a chunk,
or a stream that ends before a ``finish_reason``, is a :class:`StreamFault`, which the
model may retry.

A tool call's arguments are kept only up to
:data:`~jupyter_agent.input_limit.TOOL_INPUT_LIMIT` characters of JSON: past it the rest is
counted, not kept nor shown, and the call's input becomes the small stand-in the
dispatcher refuses (:mod:`jupyter_agent.input_limit`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from ..input_limit import TOOL_INPUT_LIMIT, left_out
from ..messages import ContentBlock, TextBlock, ThinkingBlock, ToolUseBlock
from ._anthropic_stream import StreamFault
from ._base import (
    ModelResponse,
    StreamPart,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
)
from ._usage import Pricing, Usage

FOREIGN_SIGNATURE = ""
"""The signature of a thinking block a Chat Completions server sent: none, which marks
it as not Claude's, so it is never sent to Claude (see ``_foreign_turns``)."""

STOP_REASONS = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""``finish_reason`` in the words of our loops (those of the Messages API)."""


@dataclass
class _Call:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0
    """Characters of the arguments streamed so far (kept or not)."""
    started: bool = False


class ChatReply:
    """Accumulates a reply's chunks into content blocks, yielding parts as it goes."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.model = ""
        self.usage: dict[str, Any] | None = None

    def feed(self, chunk: dict[str, Any]) -> list[StreamPart]:
        """Take in one chunk; what the consumer should see of it."""
        error = chunk.get("error")
        if error:
            if isinstance(error, dict):
                kind = error.get("type") or error.get("code")
                raise StreamFault(str(error.get("message") or error), str(kind) if kind else None)
            raise StreamFault(str(error))
        if chunk.get("model"):
            self.model = chunk["model"]
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        parts: list[StreamPart] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # one answer was asked for
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                parts.append(StreamThinking(reasoning))
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                parts.append(StreamText(content))
            for position, call in enumerate(delta.get("tool_calls") or ()):
                parts += self._call_delta(position, call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return parts

    def _call_delta(self, position: int, delta: dict[str, Any]) -> list[StreamPart]:
        given_id = delta.get("id") or None
        index = delta.get("index")
        if not isinstance(index, int):  # a server that numbers nothing: go by the id
            known = [i for i, c in self.calls.items() if given_id and c.id == given_id]
            index = known[0] if known else (len(self.calls) if given_id else position)
        call = self.calls.get(index)
        if call is None:
            if not given_id or any(c.id == given_id for c in self.calls.values()):
                given_id = f"call_{secrets.token_hex(12)}"  # none, or another call's
            call = self.calls[index] = _Call(given_id)
        function = delta.get("function") or {}
        name = function.get("name")
        if name and not call.name:
            call.name = name  # a repeated name is the same name, not more of it
        parts: list[StreamPart] = []
        if call.name and not call.started:
            call.started = True
            parts.append(StreamToolStart(call.id, call.name))
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # sent as an object, not as JSON text
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and arguments:
            call.size += len(arguments)
            if call.size > TOOL_INPUT_LIMIT:  # counted from here on, never kept nor shown
                call.arguments.clear()
                return parts
            call.arguments.append(arguments)
            if call.started:
                parts.append(StreamToolInput(call.id, arguments))
        return parts

    def response(self, pricing: Pricing | None) -> ModelResponse:
        """The reply as a whole; ``pricing`` None: its cost is unknown."""
        if self.finish_reason is None:
            raise StreamFault("the stream ended before the reply did", ended_early=True)
        content: list[ContentBlock] = []
        if self.reasoning:
            content.append(
                ThinkingBlock(thinking="".join(self.reasoning), signature=FOREIGN_SIGNATURE)
            )
        text = "".join(self.text)
        if text:
            content.append(TextBlock(text=text))
        truncated: list[str] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            arguments = _arguments(call)
            if not isinstance(arguments, dict):
                arguments = {}
                truncated.append(call.id)
            content.append(ToolUseBlock(id=call.id, name=call.name, input=arguments))
        stop_reason = STOP_REASONS.get(self.finish_reason, "end_turn")
        if self.calls and stop_reason == "end_turn":
            stop_reason = "tool_use"  # some servers say "stop" after calling tools
        return ModelResponse(content, stop_reason, self._usage(pricing), self.model, truncated)

    def _usage(self, pricing: Pricing | None) -> Usage:
        raw = self.usage or {}
        prompt = _count(raw.get("prompt_tokens"))
        details = raw.get("prompt_tokens_details") or {}
        cached = min(_count(details.get("cached_tokens")), prompt)
        usage = Usage(
            input_tokens=prompt - cached,
            # Reasoning tokens are part of the completion's count, and billed as output.
            output_tokens=_count(raw.get("completion_tokens")),
            cache_read_input_tokens=cached,
            calls=1,
        )
        if pricing is None or self.usage is None:
            usage.unpriced_calls = 1
        else:
            usage.cost_usd = pricing.cost(usage)
        return usage


def _arguments(call: _Call) -> Any:
    """A call's arguments decoded (None: not JSON), or the stand-in of arguments over the
    limit."""
    if call.size > TOOL_INPUT_LIMIT:
        return left_out(call.size)
    raw = "".join(call.arguments)
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
