"""What a ``%agent`` line asks for, read without a kernel: every subcommand of the fixed set
reads the rest of its line its own way, and every mistake is one line of ``UsageError``."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_agent.jupyter.magic import AgentMagics
from jupyter_agent.jupyter.magic_line import SUBCOMMANDS, Command, Subcommand, parse


def test_options_subcommand_and_task_are_read_in_that_order():
    command = parse("--model m --max-steps 3 plan --loop roa sum the sales --force")
    assert command == Command(
        name=Subcommand.plan, task="sum the sales --force", model="m", max_steps=3, loop="roa"
    )
    assert parse("").name == Subcommand.show
    assert parse("--resume").resume == ""
    assert parse("--resume 0123456789ab").resume == "0123456789ab"
    assert parse("--resume=abc --side").resume == "abc"
    assert parse("role planner").role == "planner"
    assert parse("model").model is None and parse("model openai:x").model == "openai:x"


def test_a_cell_is_the_task_for_its_role():
    assert parse("--role planner", "  look  ").name == Subcommand.plan
    assert parse("", "do it") == Command(name=Subcommand.cell, task="do it")


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("fly", None, "unknown subcommand 'fly'"),
        ("--fast", None, "unknown option --fast"),
        ("plan", None, "say what to do: %agent plan TASK"),
        ("remember", None, "say what to remember: %agent remember TEXT"),
        ("role a b", None, "say which role: %agent role NAME"),
        ("model a b", None, "say which model"),
        ("login sk-secret", None, "%agent login takes no text: it asks for the key"),
        ("stop now", None, "%agent stop takes no text, got 'now'"),
        ("--role actor plan x", None, "--role is for %%agent"),
        ("--max-steps 0 act x", None, "--max-steps must be at least 1"),
        ("--max-steps many act x", None, "--max-steps needs a whole number, got 'many'"),
        ("--loop other act x", None, "--loop is one of tool_use, roa, got 'other'"),
        ("--model", None, "--model needs a value"),
        ("--side=yes", None, "--side takes no value"),
        ("plan", "task", "%%agent takes only options on its first line, not 'plan'"),
        ("", "  ", "the %%agent cell is empty"),
    ],
)
def test_each_mistake_says_what_is_wrong(line, cell, message):
    with pytest.raises(UsageError, match=None) as caught:
        parse(line, cell)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "sk-secret" not in str(caught.value)  # a key typed after login is never echoed


def test_every_subcommand_is_in_the_help():
    help_text = AgentMagics.agent.__doc__ or ""
    for name in SUBCOMMANDS:
        assert f"%agent {name}" in help_text, name
