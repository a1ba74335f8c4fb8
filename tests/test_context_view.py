"""The model's view of a history: context records clear results and compact turns, and
the history itself is never changed."""

from __future__ import annotations

import random
from typing import Any

import pytest

from jupyter_agent.messages import (
    ContextChange,
    Message,
    MessageAdapter,
    TextBlock,
    ToolUseBlock,
    conversation_problems,
    tool_result,
)
from jupyter_agent.sessions.context_view import (
    ModelView,
    clearable,
    compaction_boundary,
    stub,
    tool_uses,
)

BIG = "x" * 2_000


def step(n: int, name: str = "read_file", output: str = BIG, **args: object) -> list[Message]:
    """An assistant turn calling one tool, and its result."""
    use = ToolUseBlock(id=f"t{n}", name=name, input=args or {"path": f"f{n}.txt"})
    return [
        Message(role="assistant", content=[TextBlock(text=f"step {n}"), use]),
        Message(role="user", content=[tool_result(use.id, output)], message_type="tool_result"),
    ]


def history(steps: int) -> list[Message]:
    found = [Message.user("Read the files")]
    for n in range(1, steps + 1):
        found += step(n)
    return found


def clearing(*ids: str) -> Message:
    return Message(
        role="user", content=[], message_type="context", context=ContextChange(cleared=list(ids))
    )


def summary(through: Message, text: str = "SUMMARY") -> Message:
    return Message(
        role="user",
        content=[TextBlock(text=text)],
        message_type="context",
        context=ContextChange(compacted_through=through.id),
    )


def sent_texts(api: list[dict[str, Any]]) -> str:
    parts = []
    for turn in api:
        for block in turn["content"]:
            if block["type"] == "text":
                parts.append(block["text"])
            elif block["type"] == "tool_result":
                parts.extend(c["text"] for c in block["content"] if c["type"] == "text")
    return "\n".join(parts)


def test_stubs_say_what_was_there_and_how_to_get_it_again():
    read = ToolUseBlock(id="a", name="read_file", input={"path": "notes.md"})
    assert (
        stub(read, tool_result("a", "\n".join(["l"] * 2345)))
        == "[cleared: 2,345 lines of notes.md; read it again if needed]"
    )
    command = ToolUseBlock(id="b", name="execute_command", input={"command": "pytest -q"})
    assert "`pytest -q`; run it again only if it is safe" in stub(command, tool_result("b", "ok"))
    cell = ToolUseBlock(id="c", name="run_cell", input={"cell_id": "abc"})
    # Re-running a cell may cost an hour: the stub points at reading its outputs instead.
    assert "read_cell to see them" in stub(cell, tool_result("c", "out"))
    other = ToolUseBlock(id="d", name="grep", input={"pattern": "TODO"})
    assert stub(other, tool_result("d", "1\n2")).startswith('[cleared: 2 lines of grep {"pattern"')


def test_a_clearing_record_stubs_those_results_and_nothing_else():
    past = history(3)
    view = ModelView()
    before = view.api_messages(past)
    past.append(clearing("t1", "t2"))
    after = view.api_messages(past)
    text = sent_texts(after)
    assert "[cleared: 1 line of f1.txt; read it again if needed]" in text
    assert "[cleared: 1 line of f2.txt" in text
    assert text.count(BIG) == 1  # t3 is whole
    assert len(after) == len(before)
    assert not conversation_problems(after)
    # the history itself keeps every result whole
    assert sum(BIG in m.tool_results[0].text for m in past if m.tool_results) == 3


def test_a_summary_stands_for_the_turns_it_covers_and_the_rest_follows_whole():
    past = history(4)
    past.append(summary(past[4]))  # through step 2's result
    past += step(5)
    api = ModelView().api_messages(past)
    assert api[0]["role"] == "user"
    assert api[0]["content"][0]["text"] == "SUMMARY"
    text = sent_texts(api)
    assert "Read the files" not in text and "step 1" not in text and "step 2" not in text
    assert "step 3" in text and "step 4" in text and "step 5" in text
    assert not conversation_problems(api)


def test_context_records_survive_the_session_file():
    record = summary(Message.user("x"))
    record.context.cleared = ["t1"]  # type: ignore[union-attr]
    again = MessageAdapter.validate_json(MessageAdapter.dump_json(record))
    assert again.context == record.context
    assert again.message_type == "context"
    # records written before context records existed still load
    old = b'{"role":"user","content":[{"type":"text","text":"hi"}],"message_type":"text"}'
    assert MessageAdapter.validate_json(old).context is None


@pytest.mark.parametrize("seed", range(40))
def test_the_growing_view_equals_a_fresh_one(seed):
    """Built a record at a time (as a run does), the view is what a resumed session
    builds from the whole file."""
    rng = random.Random(seed)
    past = [Message.user("task")]
    view = ModelView()
    n = 0
    for _ in range(rng.randint(1, 25)):
        roll = rng.random()
        if roll < 0.6:
            n += 1
            past += step(n)
        elif roll < 0.8 and n:
            past.append(clearing(*(f"t{k}" for k in rng.sample(range(1, n + 1), min(n, 2)))))
        else:
            boundary = compaction_boundary(view(past).messages, rng.choice([0, 3000]))
            if boundary is not None:
                past.append(summary(view(past).messages[boundary - 1], f"S{len(past)}"))
        grown = view.api_messages(past)
        assert grown == ModelView().api_messages(past)
        assert not conversation_problems(grown)


def test_clearable_keeps_the_newest_steps_small_results_and_what_the_task_names():
    past = [Message.user("task")]
    past += step(1)
    past += step(2, output="small")
    past += step(3, path="report.md")
    past += step(4)
    past += step(5)
    view = ModelView()(past)
    found = [
        i for i, _ in clearable(view, tool_uses(past), keep_newest=2, referenced="fix report.md")
    ]
    assert found == ["t1"]  # t2 is small, t3 is named by the task, t4 and t5 are newest


def test_a_compaction_never_keeps_a_result_without_its_call():
    past = history(6)
    for keep in range(0, 20_000, 500):
        k = compaction_boundary(past, keep)
        assert k is not None
        kept = past[k:]
        assert not (kept[0].role == "user" and kept[0].tool_results)
        assert len(kept) >= 2  # at least the newest step stays


def test_nothing_to_summarise_in_a_single_message_or_a_summary_alone():
    assert compaction_boundary([Message.user("only")], 0) is None
    done = summary(Message.user("x"))
    assert compaction_boundary([done, *step(1)], 0) is None
