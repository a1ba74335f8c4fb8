from __future__ import annotations

import copy
import random

import pytest
from pydantic import ValidationError

from jupyter_agent.messages import (
    ApiView,
    Message,
    MessageAdapter,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    classify,
    conversation_problems,
    open_tool_uses,
    to_api_messages,
    tool_result,
)


def use(id_: str, name: str = "read_file") -> ToolUseBlock:
    return ToolUseBlock(id=id_, name=name, input={"path": "a"})


def test_records_without_message_type_load_as_text():
    old = '{"role": "user", "content": [{"type": "text", "text": "hi"}]}'
    assert MessageAdapter.validate_json(old).message_type == "text"


def test_message_round_trips_with_every_block_kind():
    msg = Message(
        role="assistant",
        content=[
            ThinkingBlock(thinking="hmm", signature="s"),
            TextBlock(text="hello"),
            ToolUseBlock(id="t1", name="x", input={"a": 1}),
        ],
    )
    assert MessageAdapter.validate_json(MessageAdapter.dump_json(msg)) == msg


def test_a_message_checks_what_it_is_given():
    given_as_dicts = Message(role="user", content=[{"type": "text", "text": "hi"}])  # type: ignore[list-item]  # a dict, validated
    assert given_as_dicts.content == [TextBlock(text="hi")]
    with pytest.raises(ValueError, match="'user' or 'assistant', not 'system'"):
        Message(role="system", content=[TextBlock(text="hi")])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="tool_use_id"):
        Message(role="user", content=[{"type": "tool_result", "content": []}])  # type: ignore[list-item]  # an invalid dict
    with pytest.raises(ValidationError):
        MessageAdapter.validate_json('{"role": "user", "content": [{"type": "video"}]}')


def test_classify_gives_the_frontend_its_card():
    assert classify(Message(role="assistant", content=[use("1", "submit_plan")])) == "plan"
    assert classify(Message(role="assistant", content=[use("1", "ask_user")])) == "question"
    assert classify(Message(role="assistant", content=[use("1")])) == "tool_call"
    assert classify(Message(role="user", content=[tool_result("1", "ok")])) == "tool_result"
    assert classify(Message.assistant("hi")) == "text"


def test_api_view_merges_neighbours_and_puts_tool_results_first():
    history = [
        Message.user("task"),
        Message(role="assistant", content=[TextBlock(text="partial")], interrupted=True),
        Message.assistant("more"),
        Message(role="assistant", content=[use("t1")]),
        Message(role="user", content=[tool_result("t1", "x")]),
        Message.user("new message"),
    ]
    api = to_api_messages(history)
    assert [m["role"] for m in api] == ["user", "assistant", "user"]
    assert [b["type"] for b in api[1]["content"]] == ["text", "text", "tool_use"]
    assert [b["type"] for b in api[2]["content"]] == ["tool_result", "text"]
    assert conversation_problems(api) == []
    # our own metadata never reaches the API
    assert "interrupted" not in str(api)


def test_api_view_drops_empty_text():
    api = to_api_messages([Message.user("task"), Message.assistant("   ")])
    assert len(api) == 1


def test_the_growing_api_view_equals_a_fresh_one_and_never_changes_what_it_gave():
    rng = random.Random(7)
    makers = [
        lambda i: Message.user(f"user {i}"),
        lambda i: Message.user("   "),
        lambda i: Message.assistant(f"assistant {i}"),
        lambda i: Message(role="assistant", content=[TextBlock(text=f"cut {i}")], interrupted=True),
        lambda i: Message(role="assistant", content=[use(f"t{i}")]),
        lambda i: Message(role="user", content=[tool_result(f"t{i}", "ok")]),
    ]
    for _ in range(50):
        view, history, given = ApiView(), [], []
        for i in range(rng.randint(1, 30)):
            history += [rng.choice(makers)(i) for _ in range(rng.randint(1, 3))]
            api = view(history)
            assert api == to_api_messages(history)
            given.append((api, copy.deepcopy(api)))
        for api, snapshot in given:
            assert api == snapshot  # later growth edited nothing already handed out
    # A history that did not grow from the last one is converted from the start.
    view = ApiView()
    view([Message.user("a"), Message.assistant("b")])
    other = [Message.user("c")]
    assert view(other) == to_api_messages(other)


def test_problems_found_for_each_broken_rule():
    def problems(*history: Message) -> list[str]:
        return conversation_problems(to_api_messages(history))

    assert problems(Message.assistant("hi")) == ["the first message is not from the user"]
    assert any(
        "have no results" in p
        for p in problems(Message.user("t"), Message(role="assistant", content=[use("a")]))
    )
    assert any(
        "lacks results" in p
        for p in problems(
            Message.user("t"),
            Message(role="assistant", content=[use("a"), use("b")]),
            Message(role="user", content=[tool_result("a", "x")]),
        )
    )
    assert any(
        "unknown tool uses" in p
        for p in problems(
            Message.user("t"),
            Message.assistant("x"),
            Message(role="user", content=[tool_result("zz", "x")]),
        )
    )
    assert conversation_problems([]) == ["the conversation is empty"]


def test_open_tool_uses_are_the_unanswered_ones_of_the_last_turn():
    history = [
        Message.user("t"),
        Message(role="assistant", content=[use("a"), use("b")]),
        Message(role="user", content=[tool_result("a", "x")]),
    ]
    assert [b.id for b in open_tool_uses(history)] == ["b"]
    history.append(Message(role="user", content=[tool_result("b", "y")]))
    assert open_tool_uses(history) == []
