"""The Actor under rules: deny holds, ask pauses, remember stays narrow, the sandbox holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_valid, call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import PathGlob, Rule, Rules
from jupyter_agent.states import AgentState


def results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


async def test_a_deny_rule_holds_for_the_actor(workspace):
    (workspace / "data").mkdir()
    (workspace / "data" / "raw.csv").write_text("a,b\n")
    rules = Rules.defaults()
    rules.add(
        Rule.deny(PathGlob(pattern="data/"), scope="user", description="raw data is read-only")
    )
    model = ScriptedModel(
        [
            call("update_file", path="data/raw.csv", old_text="a,b", new_text="x,y"),
            call("create_file", path="data/new.csv", content="x"),
            call("create_file", path="clean.csv", content="a,b\n"),
            call("task_complete", summary="done"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, policy=rules)
    await agent.run("clean the data")
    got = results(agent)
    assert got[0] == ("Refused by a permission rule: raw data is read-only.", True)
    assert got[1] == ("Refused by a permission rule: raw data is read-only.", True)
    assert not got[2][1]
    assert (workspace / "data" / "raw.csv").read_text() == "a,b\n"
    assert not (workspace / "data" / "new.csv").exists()
    assert (workspace / "clean.csv").exists()


async def test_deleting_asks_and_waits_then_follows_the_answer(workspace):
    (workspace / "old.csv").write_text("x\n")
    model = ScriptedModel(
        [
            call("delete_file", path="old.csv"),
            call("delete_file", path="old.csv"),
            call("task_complete", summary="deleted"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("remove old.csv")
    await until(lambda: handle.pending_approval is not None)
    assert handle.state is AgentState.waiting_user
    request = next(e for e in handle.events_so_far if e.kind == "permission_request")
    assert request.tool_name == "delete_file"
    assert request.reason == "deleting files needs your approval"
    handle.approve(False)
    await until(lambda: handle.pending_approval is not None and len(results(agent)) == 1)
    assert (workspace / "old.csv").exists()
    handle.approve(True)
    await handle.wait()
    got = results(agent)
    assert got[0][1]
    assert "The user declined this call" in got[0][0]
    assert not got[1][1]
    assert not (workspace / "old.csv").exists()
    assert_valid(agent.history)


async def test_always_allow_says_what_it_will_remember_and_stays_narrow(workspace):
    model = ScriptedModel(
        [
            call("execute_command", command="echo hello first"),
            call("execute_command", command="echo hello second"),
            call("execute_command", command="echo hello third; touch sneaky"),
            call("execute_command", command="touch other"),
            call("task_complete", summary="done"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    handle = agent.start("say hello")
    await until(lambda: handle.pending_approval is not None)
    handle.approve(True, remember=True)
    # the second echo runs without asking; the compound one asks again
    await until(lambda: handle.pending_approval is not None and "sneaky" in handle.pending_approval)
    assert [t for t, _ in results(agent)][1].startswith("hello second")
    handle.approve(False)
    await until(lambda: handle.pending_approval is not None and "other" in handle.pending_approval)
    handle.approve(False)
    await handle.wait()
    remembered = [
        e.rule for e in handle.events_so_far if e.kind == "permission_response" and e.rule
    ]
    assert remembered == ["allow `echo` (no file effects)"]
    offered = [e.remember for e in handle.events_so_far if e.kind == "permission_request"]
    # what the card said before each click: the first, exactly what was then remembered
    assert offered == [
        "allow `echo` (no file effects)",
        "allow exactly `touch sneaky`",
        "allow exactly `touch other`",
    ]
    assert not (workspace / "sneaky").exists()
    assert not (workspace / "other").exists()


FILE_CALLS = [
    ("read_file", {"path": "../outside/secret.txt"}),
    ("list_directory", {"path": "../outside"}),
    ("grep", {"pattern": "s3cret", "path": "../outside"}),
    ("get_file_info", {"path": "../outside/secret.txt"}),
    ("update_file", {"path": "../outside/secret.txt", "old_text": "s3cret", "new_text": "x"}),
    ("create_file", {"path": "../outside/new.txt", "content": "x"}),
    ("delete_file", {"path": "../outside/secret.txt"}),
    ("read_file", {"path": "link_out/secret.txt"}),
    ("update_file", {"path": "link_out/secret.txt", "old_text": "s3cret", "new_text": "x"}),
    ("create_file", {"path": "link_out/new.txt", "content": "x"}),
    ("execute_command", {"command": "cat secret.txt", "working_dir": "../outside"}),
    ("read_file", {"path": ".env"}),
    ("update_file", {"path": ".env", "old_text": "A", "new_text": "B"}),
]


@pytest.mark.parametrize(
    ("name", "args"), FILE_CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FILE_CALLS)]
)
async def test_the_sandbox_holds_for_every_file_tool_even_with_everything_allowed(
    tmp_path, name, args
):
    workspace, outside = tmp_path / "work", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    (workspace / ".env").write_text("A=1\n")
    (workspace / "link_out").symlink_to(outside, target_is_directory=True)
    everything = Rules([Rule.allow(PathGlob(pattern="**")), Rule.allow("execute_command")])
    model = ScriptedModel([call(name, **args), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, policy=everything, persist=False)
    await agent.run("try")
    text, is_error = results(agent)[0]
    assert is_error, text
    assert text.startswith("Refused"), text
    assert "s3cret" not in text
    assert (outside / "secret.txt").read_text() == "s3cret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (workspace / ".env").read_text() == "A=1\n"
    assert Path(workspace).exists()
