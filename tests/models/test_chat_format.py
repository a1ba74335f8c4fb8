"""A history converted between the two formats: to Chat Completions for an OpenAI-compatible
model, and made fit for Claude after another provider wrote part of it.

Invariant: whatever the history, the request is valid for the API it goes to (every tool
call answered right after it, in order), and what the history says (texts, calls, results,
images) is all there, in the same order.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from helpers import chat_problems

from jupyter_agent.messages import (
    ApiTurn,
    ContentBlock,
    ImageBlock,
    ImageSource,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    conversation_problems,
    to_api_messages,
    tool_result,
)
from jupyter_agent.models._chat_format import (
    ERROR_PREFIX,
    NO_IMAGES,
    NO_RESULT,
    call_id,
    chat_messages,
    chat_tools,
)
from jupyter_agent.models._foreign_turns import EMPTY_TURN, claude_turns, safe_id

IMAGE = ImageBlock(source=ImageSource(media_type="image/png", data="iVBORw0KGgo="))
ODD_IDS = ["functions.lookup:0", "call-" + "x" * 60, "toolu_01abc", "call 7", "a/b"]


def random_history(rng: random.Random) -> list[Message]:
    """A history as runs write it: tasks, replies with thinking, text and calls, results
    (errors and images among them), partial texts of stopped calls."""
    history = [Message.user("task 0")]
    for step in range(rng.randint(1, 8)):
        content: list[ContentBlock] = []
        if rng.random() < 0.4:
            content.append(
                ThinkingBlock(thinking=f"think {step}", signature=rng.choice(["", "sig"]))
            )
        if rng.random() < 0.7:
            content.append(TextBlock(text=f"say {step}"))
        uses = [
            ToolUseBlock(
                id=rng.choice([*ODD_IDS, f"id{step}_{n}"]) + f"_{step}{n}", name="t", input={"n": n}
            )
            for n in range(rng.choice([0, 0, 1, 2, 3]))
        ]
        content += uses
        if not content:
            content = [TextBlock(text=f"say {step}")]
        history.append(
            Message(role="assistant", content=content, interrupted=not uses and rng.random() < 0.2)
        )
        if uses:
            results: list[ContentBlock] = [
                tool_result(
                    u.id,
                    f"result {u.id}",
                    is_error=rng.random() < 0.2,
                    images=[IMAGE] * rng.choice([0, 0, 1, 2]),
                )
                for u in uses
            ]
            history.append(Message(role="user", content=results))
            if rng.random() < 0.3:
                history.append(Message.user(f"steer {step}"))  # merged into the same turn
        else:
            history.append(Message.user(f"task {step + 1}"))
            if rng.random() < 0.2:
                history[-1].content.append(IMAGE)
    return history


def said(turns: list[dict[str, Any]]) -> list[str]:
    """The texts, calls and results of an API view, in order."""
    out = []
    for turn in turns:
        for b in turn["content"]:
            if b["type"] == "text" and b["text"].strip():
                out.append(b["text"])
            elif b["type"] == "tool_use":
                out.append(f"call {call_id(b['id'])} {json.dumps(b['input'])}")
            elif b["type"] == "tool_result":
                body = "\n".join(p["text"] for p in b["content"] if p["type"] == "text")
                prefix = ERROR_PREFIX if b.get("is_error") else ""
                out.append(f"result {call_id(b['tool_use_id'])} {prefix}{body}")
    return out


def said_in_chat(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            out.append(f"result {m['tool_call_id']} {m['content']}")
            continue
        content = m.get("content")
        if isinstance(content, str):
            out += [p for p in content.split("\n\n") if p]
        elif content:
            out += [
                p["text"]
                for p in content
                if p["type"] == "text" and not p["text"].startswith("The images of")
            ]
        for c in m.get("tool_calls") or ():
            out.append(f"call {c['id']} {c['function']['arguments']}")
    return out


@pytest.mark.parametrize("seed", range(60))
def test_any_history_converts_to_a_valid_chat_with_everything_in_order(seed):
    rng = random.Random(seed)
    history = random_history(rng)
    turns = to_api_messages(history)
    assert not conversation_problems(turns)
    messages = chat_messages("the system prompt", turns)
    assert not chat_problems(messages), messages
    assert messages[0] == {"role": "system", "content": "the system prompt"}
    assert said_in_chat(messages) == said(turns)
    images = sum(str(m).count("image_url") for m in messages) // 2
    assert images == str(turns).count("'type': 'image'")
    assert "think " not in str(messages)  # no thinking is ever sent back


@pytest.mark.parametrize("seed", range(20))
def test_without_images_each_becomes_a_note_and_nothing_else_changes(seed):
    rng = random.Random(seed)
    turns = to_api_messages(random_history(rng))
    messages = chat_messages("s", turns, images=False)
    assert not chat_problems(messages)
    assert "image_url" not in str(messages)
    assert str(messages).count(NO_IMAGES) == str(turns).count("'type': 'image'")


def test_a_callers_history_with_missing_and_stray_results_is_made_valid():
    turns: list[dict[str, Any]] = [
        {"role": "user", "content": "plain string content"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "t", "input": {}},
                {"type": "tool_use", "id": "b", "name": "t", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [{"type": "text", "text": "B"}],
                },
                {"type": "tool_result", "tool_use_id": "zzz", "content": "stray"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c", "name": "t", "input": {}}],
        },
    ]
    messages = chat_messages("", turns)
    assert not chat_problems(messages), messages
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
    ]
    assert [m.get("content") for m in messages if m["role"] == "tool"] == [
        NO_RESULT,
        "B",
        NO_RESULT,
    ]
    assert "[A tool result (zzz)]" in messages[4]["content"]


def test_tools_become_functions_and_server_tools_are_left_out():
    spec = {
        "name": "t",
        "description": "Do t.",
        "input_schema": {"type": "object"},
        "cache_control": {},
    }
    server_tool = {"type": "web_search_20250305", "name": "web_search"}
    assert chat_tools([spec, server_tool]) == [
        {
            "type": "function",
            "function": {"name": "t", "parameters": {"type": "object"}, "description": "Do t."},
        }
    ]


# --- the other way: a history another provider helped write, sent to Claude ---------------


def test_foreign_thinking_is_dropped_and_claudes_kept():
    turns = to_api_messages(
        [
            Message.user("go"),
            Message(
                role="assistant",
                content=[ThinkingBlock(thinking="server's", signature=""), TextBlock(text="a")],
            ),
            Message.user("more"),
            Message(
                role="assistant",
                content=[ThinkingBlock(thinking="Claude's", signature="sig"), TextBlock(text="b")],
            ),
            Message.user("and"),
            Message(role="assistant", content=[ThinkingBlock(thinking="only this", signature="")]),
            Message.user("end"),
        ]
    )
    fitted = claude_turns(turns)
    assert [b["type"] for b in fitted[1]["content"]] == ["text"]
    assert fitted[3] is turns[3]  # nothing to change: the same object, its encoding kept
    assert fitted[5]["content"] == [{"type": "text", "text": EMPTY_TURN}]
    assert isinstance(fitted[1], ApiTurn)
    assert not conversation_problems(fitted)
    assert [b["type"] for b in turns[1]["content"]] == ["thinking", "text"]  # not changed


@pytest.mark.parametrize("seed", range(30))
def test_tool_ids_claude_refuses_are_replaced_the_same_way_in_calls_and_results(seed):
    turns = to_api_messages(random_history(random.Random(seed)))
    fitted = claude_turns(turns)
    assert not conversation_problems(fitted)
    for turn in fitted:
        for b in turn["content"]:
            for key in ("id", "tool_use_id"):
                if b["type"] in ("tool_use", "tool_result") and key in b:
                    assert safe_id(b[key]) == b[key]
            assert not (b["type"] == "thinking" and not b["signature"])
    assert [t["role"] for t in fitted] == [t["role"] for t in turns]
