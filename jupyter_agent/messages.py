"""Conversation messages, stored close to the Anthropic Messages format.

A :class:`Message` is one record of the history: a role, content blocks and our own
metadata (``message_type``, ``interrupted``, the ROA ``phase``). Records are
append-only; :func:`to_api_messages` turns them into the strictly alternating
list the API wants (merging neighbours of the same role), and
:func:`conversation_problems` checks that list against the API's rules.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import Discriminator, TypeAdapter


def new_id() -> str:
    """A random id of 12 hex digits (for messages, runs, sessions, questions).
    ``uuid.uuid4()`` would give the same randomness at ten times the cost, paid on
    every message of every step."""
    return os.urandom(6).hex()


MessageType = Literal[
    "text", "plan", "question", "tool_call", "tool_result", "execute_plan", "context"
]
"""How a frontend shows a message. ``execute_plan``: the task of a run the user started
with Execute plan (shown as that action, the prompt only on demand). ``context``: a
change to what the model sees of the history (see :class:`ContextChange`)."""
INTERRUPTED_RESULT = "Interrupted by the user before this tool finished."
DECLINED_RESULT = (
    "The user declined this call. Do not repeat it; take another approach "
    "or ask the user what they want."
)
"""The result of a call the user denied, as the model reads it (an instruction)."""
DECLINED_LINE = "You denied this call: it did not run."
"""What the call's row says instead, to the user who denied it."""
STOPPED_NOTE = "[The user stopped the previous run before it finished.]"
"""Put before the next task's text after a stop, so the model knows why its work ended
(the panel leaves it out when it shows the conversation again)."""


# Blocks are keyword-only slotted dataclasses, validated by pydantic where data comes in
# (a session file, a scripted turn, the API's reply) through BlocksAdapter: a step makes a
# few and the history keeps them all, and a pydantic model costs several times more.
# (The decorator is written out on each class: a type checker recognises a dataclass by
# its decorator, not through an alias.)


@dataclass(kw_only=True, slots=True)
class TextBlock:
    type: Literal["text"] = "text"
    text: str

    def to_api(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(kw_only=True, slots=True)
class ImageSource:
    type: Literal["base64"] = "base64"
    media_type: str
    data: str


@dataclass(kw_only=True, slots=True)
class ImageBlock:
    type: Literal["image"] = "image"
    source: ImageSource

    def to_api(self) -> dict[str, Any]:
        source = self.source
        return {
            "type": "image",
            "source": {"type": source.type, "media_type": source.media_type, "data": source.data},
        }


@dataclass(kw_only=True, slots=True)
class ThinkingBlock:
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str

    def to_api(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


@dataclass(kw_only=True, slots=True)
class RedactedThinkingBlock:
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str

    def to_api(self) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": self.data}


@dataclass(kw_only=True, slots=True)
class ToolUseBlock:
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


ToolResultContent = Annotated[TextBlock | ImageBlock, Discriminator("type")]


@dataclass(kw_only=True, slots=True)
class ToolResultBlock:
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ToolResultContent] = field(default_factory=list)
    is_error: bool = False

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_api(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.tool_use_id}
        data["content"] = [b.to_api() for b in self.content]
        if self.is_error:
            data["is_error"] = True
        return data


ContentBlock = Annotated[
    TextBlock | ImageBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock,
    Discriminator("type"),
]
BlocksAdapter: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])
"""Validates content blocks given as API dicts (or JSON) into block objects."""
_BLOCK_TYPES = get_args(get_args(ContentBlock)[0])  # the union's classes


@dataclass(kw_only=True, slots=True)
class ContextChange:
    """A record that shrinks the model's view of the history, never the history itself.

    Appended like any message (``history.jsonl`` stays append-only and whole, and a
    resumed session sees the same view): ``cleared`` tool results are shown to the model
    as one-line stubs from then on; ``compacted_through`` (a message id) says that every
    record up to and including it is replaced, for the model, by this record's text (a
    summary the model wrote)."""

    cleared: list[str] = field(default_factory=list)
    """Tool-use ids whose results the model no longer sees in full."""
    compacted_through: str | None = None
    reason: Literal["auto", "manual", "too_long"] = "auto"
    """Why: the budget was near, the user asked, or the API said the prompt was too long."""
    tokens_before: int = 0
    """The estimated size of the request before the change, and after it."""
    tokens_after: int = 0


@dataclass(kw_only=True)
class Message:
    """One record of a conversation. ``content`` may be given as API dicts: they are
    validated into blocks. Stored and loaded through :data:`MessageAdapter`."""

    role: Literal["user", "assistant"]
    content: list[ContentBlock]
    message_type: MessageType = "text"
    """How a frontend should render it; records without it are plain text."""
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)
    interrupted: bool = False
    """The user stopped the run while this message was being produced."""
    phase: str | None = None
    """For the reason → act → observe loop: which phase produced or prompted it."""
    context: ContextChange | None = None
    """Set on a ``context`` record: what it changes in the model's view."""

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"a message's role is 'user' or 'assistant', not {self.role!r}")
        if not all(isinstance(b, _BLOCK_TYPES) for b in self.content):
            self.content = BlocksAdapter.validate_python(self.content)

    def api_blocks(self) -> list[dict[str, Any]]:
        """The content as API dicts, computed once: the history is re-sent every step.
        (Kept as a plain attribute, not a field: never stored, compared or copied.)"""
        cached: list[dict[str, Any]] | None = self.__dict__.get("_api")
        if cached is None:
            cached = self.__dict__["_api"] = [
                b.to_api() for b in self.content if not _is_empty_text(b)
            ]
        return cached

    @classmethod
    def user(cls, text: str, **extra: Any) -> Message:
        return cls(role="user", content=[TextBlock(text=text)], **extra)

    @classmethod
    def assistant(cls, text: str, **extra: Any) -> Message:
        return cls(role="assistant", content=[TextBlock(text=text)], **extra)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]


MessageAdapter: TypeAdapter[Message] = TypeAdapter(Message)


def tool_result(
    tool_use_id: str, text: str, *, is_error: bool = False, images: Sequence[ImageBlock] = ()
) -> ToolResultBlock:
    content: list[TextBlock | ImageBlock] = [TextBlock(text=text or "(no output)")]
    content.extend(images)
    return ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error)


def classify(message: Message) -> MessageType:
    """The message_type a new assistant or tool-result message should carry."""
    if message.tool_results:
        return "tool_result"
    names = {b.name for b in message.tool_uses}
    if "submit_plan" in names:
        return "plan"
    if "ask_user" in names:
        return "question"
    if names:
        return "tool_call"
    return "text"


def to_api_messages(history: Iterable[Message]) -> list[dict[str, Any]]:
    """The API view of a history: neighbours with the same role merged, tool results first.

    Merging keeps storage append-only (an interrupted turn followed by a new user
    message are two records, one API turn) and the API view strictly alternating.
    """
    return ApiView()(list(history))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (what a byte that is not UTF-8 in a file name
    becomes in Python) replaced by U+FFFD: as is, it can be neither sent as JSON nor
    written to a file."""
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


class ApiTurn(dict[str, Any]):
    """One turn of the API view: a dict that is never changed once handed out, so a
    model may keep on it what it derives from it (``encoded``: its JSON), and a long
    history is not encoded again at every step."""

    __slots__ = ("encoded",)
    encoded: str
    """Set by the model that first encodes the turn; unset until then."""


class ApiTools(list[dict[str, Any]]):
    """The tools offered to a model, as API dicts, never changed once handed out: as on an
    :class:`ApiTurn`, a model may keep its encoding of them on it (``encoded``)."""

    __slots__ = ("encoded",)
    encoded: tuple[bool, str]
    """(whether the last tool carries a cache breakpoint, the JSON); unset until encoded."""


class ApiView:
    """:func:`to_api_messages` of a history that only grows, kept up to date: each call
    converts only the records added since the last one (the whole history is re-sent at
    every step). Turns handed out (:class:`ApiTurn`) are never changed afterwards; a
    history that did not grow from the one seen before is converted again from the start."""

    def __init__(self) -> None:
        self._turns: list[dict[str, Any]] = []
        self._count = 0
        self._last: Message | None = None

    def __call__(self, history: Sequence[Message]) -> list[dict[str, Any]]:
        if len(history) < self._count or (
            self._count and history[self._count - 1] is not self._last
        ):
            self._turns, self._count = [], 0
        turns = self._turns
        for message in history[self._count :]:
            blocks = message.api_blocks()
            if not blocks:
                continue
            if turns and turns[-1]["role"] == message.role:
                content = [*turns[-1]["content"], *blocks]
                turns[-1] = ApiTurn(role=message.role, content=content)  # new, not an edit
            else:
                content = list(blocks)
                turns.append(ApiTurn(role=message.role, content=content))
            if message.role == "user":
                # The API wants a user turn's tool results before anything else in it.
                content.sort(key=lambda b: b["type"] != "tool_result")
        self._count = len(history)
        self._last = history[-1] if history else None
        return list(turns)


def _is_empty_text(block: object) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()


def open_tool_uses(history: Sequence[Message]) -> list[ToolUseBlock]:
    """Tool uses of the last assistant turn that no later record answers."""
    answered: set[str] = set()
    for message in reversed(history):
        if message.role == "user":
            answered.update(r.tool_use_id for r in message.tool_results)
            continue
        if message.tool_uses:
            return [b for b in message.tool_uses if b.id not in answered]
        if message.content:
            return []
    return []


def conversation_problems(api_messages: Sequence[dict[str, Any]]) -> list[str]:
    """Every way ``api_messages`` breaks the Messages API's rules; empty when valid."""
    if not api_messages:
        return ["the conversation is empty"]
    problems: list[str] = []
    if api_messages[0]["role"] != "user":
        problems.append("the first message is not from the user")
    pending: set[str] = set()
    for i, turn in enumerate(api_messages):
        role, content = turn["role"], turn["content"]
        if i and api_messages[i - 1]["role"] == role:
            problems.append(f"messages {i - 1} and {i} are both from the {role}")
        if not content:
            problems.append(f"message {i} has no content")
        for block in content:
            if block["type"] == "text" and not block["text"].strip():
                problems.append(f"message {i} has an empty text block")
        if role == "user":
            problems.extend(_user_turn_problems(i, content, pending))
            pending = set()
        else:
            problems.extend(_assistant_turn_problems(i, content, pending))
            pending = {b["id"] for b in content if b["type"] == "tool_use"}
    if pending:
        problems.append(f"the last tool uses {sorted(pending)} have no results")
    return problems


def _user_turn_problems(i: int, content: list[dict[str, Any]], pending: set[str]) -> list[str]:
    """A user turn must answer exactly the tool uses ``pending``, results first."""
    problems = []
    results = {b["tool_use_id"] for b in content if b["type"] == "tool_result"}
    if pending - results:
        problems.append(f"message {i} lacks results for {sorted(pending - results)}")
    if results - pending:
        problems.append(f"message {i} answers unknown tool uses {sorted(results - pending)}")
    first_other = next((j for j, b in enumerate(content) if b["type"] != "tool_result"), None)
    if first_other is not None and any(b["type"] == "tool_result" for b in content[first_other:]):
        problems.append(f"message {i} has tool results after other content")
    return problems


def _assistant_turn_problems(i: int, content: list[dict[str, Any]], pending: set[str]) -> list[str]:
    """An assistant turn holds no results, follows no unanswered tool use, and names each
    of its tool uses once."""
    problems = []
    if any(b["type"] == "tool_result" for b in content):
        problems.append(f"message {i} is from the assistant but holds tool results")
    if pending:
        problems.append(f"tool uses {sorted(pending)} are never answered")
    ids = [b["id"] for b in content if b["type"] == "tool_use"]
    if len(set(ids)) != len(ids):
        problems.append(f"message {i} repeats a tool_use id")
    return problems
