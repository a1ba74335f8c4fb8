"""A deterministic model that replays scripted turns: for tests, tutorials and offline demos.

A script is a list of turns (in Python, or a JSON file). A turn is a dict::

    {"text": "I will read the data first.",
     "tool_calls": [{"name": "read_file", "input": {"path": "sales.csv"}}]}

with optional ``thinking``, ``stop_reason`` (default: ``tool_use`` when there are
tool calls, else ``end_turn``), ``usage`` and ``content`` (raw API blocks, used
as is). A turn may also be a callable taking the :class:`ModelRequest` and
returning such a dict, for scripts that react to what the agent sent.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from ..errors import ModelError
from ..messages import BlocksAdapter, ContentBlock, TextBlock, ToolUseBlock
from ..workspace.paths import read_regular
from ._base import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamPart,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
)
from ._usage import Pricing, UsageAdapter

ScriptedTurn = Mapping[str, Any] | Callable[[ModelRequest], Mapping[str, Any]]

LABEL = "Scripted replay — no real model is called"
SCRIPT_LIMIT = 256 << 20
"""Bytes of a replay script read at most."""


class ScriptedModel:
    """Replays ``turns`` in order, streaming their text in small pieces."""

    provider = "scripted"
    is_replay = True

    def __init__(
        self,
        turns: Iterable[ScriptedTurn] | str | Path = (),
        *,
        name: str = "scripted",
        chunk_size: int = 12,
        delay: float = 0.0,
        on_exhausted: Literal["end", "error"] = "end",
        label: str = LABEL,
        pricing: Pricing | None = None,
        context_window: int | None = None,
        summaries: Iterable[str] = (),
    ) -> None:
        if isinstance(turns, (str, Path)):
            turns = self.load(turns)
        self.turns: list[ScriptedTurn] = list(turns)
        self.name = name
        self.label: str | None = label
        self.chunk_size = max(1, chunk_size)
        self.delay = delay
        """Seconds between streamed pieces, to look like a real model."""
        self.on_exhausted = on_exhausted
        self.requests: list[ModelRequest] = []
        """Every request received, for tests to inspect."""
        self.pricing = pricing or Pricing(0.0, 0.0)
        """Prices to charge the scripted usage at (free by default)."""
        self.context_window = context_window
        """The window the agent plans for (None: the default table's), so a replay can
        show context management on a small conversation."""
        self.summaries = list(summaries)
        """What compaction requests get, in order; past the end, a summary made from the
        request itself (so a replay never spends a scripted turn on one)."""
        self._next = 0

    @staticmethod
    def load(path: str | Path, part: str = "turns") -> list[ScriptedTurn]:
        """Turns from a JSON file: a list, or an object whose ``part`` key holds the list."""
        raw, cut = read_regular(path, SCRIPT_LIMIT)
        if cut:
            raise ValueError(f"{path}: larger than {SCRIPT_LIMIT:,} bytes")
        data = json.loads(raw.decode("utf-8"))
        turns = data[part] if isinstance(data, dict) else data
        if not isinstance(turns, list):
            raise ValueError(f"{path}: a script is a JSON list of turns (or {{{part!r}: [...]}})")
        return turns

    def add(self, *turns: ScriptedTurn) -> None:
        self.turns.extend(turns)

    @property
    def remaining(self) -> int:
        return len(self.turns) - self._next

    def check(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        self.requests.append(request)
        if request.on_sent is not None:
            request.on_sent()  # nothing goes over a network: the request is out at once
        turn = self._summary(request) if request.purpose == "compaction" else self._take(request)
        content = turn_content(turn)
        for block in content:
            if isinstance(block, TextBlock):
                for piece in _pieces(block.text, self.chunk_size):
                    await self._pause()
                    yield StreamText(piece)
            elif isinstance(block, ToolUseBlock):
                await self._pause()
                yield StreamToolStart(block.id, block.name)
                yield StreamToolInput(block.id, json.dumps(block.input))
            elif block.type == "thinking":
                await self._pause()
                yield StreamThinking(block.thinking)
        has_tools = any(isinstance(b, ToolUseBlock) for b in content)
        stop = turn.get("stop_reason") or ("tool_use" if has_tools else "end_turn")
        usage = UsageAdapter.validate_python(turn.get("usage", {}))
        usage.calls = 1
        if not usage.input_tokens and not usage.output_tokens:
            # The whole request, as an API counts it: system prompt and tools too.
            sent = len(request.system) + len(json.dumps(request.tools))
            usage.input_tokens = (sent + len(json.dumps(request.messages))) // 4
            usage.output_tokens = max(1, len(json.dumps([b.to_api() for b in content])) // 4)
        usage.cost_usd = self.pricing.cost(usage)
        yield StreamDone(ModelResponse(content, stop, usage, self.name))

    async def _pause(self) -> None:
        # Always yield to the loop, so a stop lands mid-stream as with a real model.
        await asyncio.sleep(self.delay)

    def _summary(self, request: ModelRequest) -> Mapping[str, Any]:
        if self.summaries:
            return {"text": self.summaries.pop(0)}
        asked = [
            block["text"]
            for message in request.messages
            if message["role"] == "user"
            for block in message["content"]
            if block.get("type") == "text"
        ]
        first = " ".join(asked[0].split())[:200] if asked else "(nothing)"
        calls = sum(
            block.get("type") == "tool_use"
            for message in request.messages
            for block in message["content"]
        )
        return {
            "text": f"(scripted summary) The user asked: {first}. "
            f"{len(request.messages)} messages and {calls} tool calls came before this."
        }

    def _take(self, request: ModelRequest) -> Mapping[str, Any]:
        if self._next >= len(self.turns):
            if self.on_exhausted == "error":
                raise ModelError("the scripted model has no more turns")
            return {"text": "(The scripted replay has no more turns.)"}
        turn = self.turns[self._next]
        self._next += 1
        return turn(request) if callable(turn) else turn


def turn_content(turn: Mapping[str, Any]) -> list[ContentBlock]:
    """The content blocks of one scripted turn (as the model streams them)."""
    if "content" in turn:
        return BlocksAdapter.validate_python(turn["content"])
    blocks: list[dict[str, Any]] = []
    if turn.get("thinking"):
        blocks.append({"type": "thinking", "thinking": turn["thinking"], "signature": "scripted"})
    if turn.get("text"):
        blocks.append({"type": "text", "text": turn["text"]})
    for call in turn.get("tool_calls", ()):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:20]}",
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return BlocksAdapter.validate_python(blocks)


def _pieces(text: str, size: int) -> Iterable[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def text_turn(text: str) -> dict[str, Any]:
    """A turn that only says ``text``."""
    return {"text": text}


def tool_turn(name: str, text: str = "", **arguments: Any) -> dict[str, Any]:
    """A turn that calls one tool (with optional text before it)."""
    return {"text": text, "tool_calls": [{"name": name, "input": arguments}]}


def claude_or_replay(replay: str | Path, part: str = "turns", **options: Any) -> Any:
    """Claude when ``ANTHROPIC_API_KEY`` is set or a key was given in this kernel (the
    panel's key field, ``%agent login``); otherwise the scripted replay in ``replay``.

    Tutorials use it so they run offline (clearly labelled as a replay) and live alike.
    A key saved for the user is not enough: a tutorial run offline stays offline.
    """
    import os

    from ..secrets.credentials import session_key

    if os.environ.get("ANTHROPIC_API_KEY") or session_key():
        from .anthropic import AnthropicModel

        return AnthropicModel()
    return ScriptedModel(ScriptedModel.load(replay, part), **options)
