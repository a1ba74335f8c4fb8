"""What the Messages server tests share: the model they name and the one message they
send (``MODEL``, ``HI``), and readers of the SDK's replies and errors."""

from __future__ import annotations

from typing import Any

import anthropic
from anthropic.types import Message, MessageParam, TextBlock

MODEL = "claude-test-model"
HI: list[MessageParam] = [{"role": "user", "content": "hi"}]


def first_text(message: Message) -> str:
    """The text of a reply's first block (a text block, as scripted)."""
    block = message.content[0]
    assert isinstance(block, TextBlock)
    return block.text


def error_json(error: anthropic.APIError) -> dict[str, Any]:
    """The error's body as the SDK parsed it: a JSON object, on every route here."""
    assert isinstance(error.body, dict)
    return error.body
