"""The Planner cannot change anything — proved adversarially.

A scripted model playing a hostile Planner tries every way we know to change the
workspace: each write, create, delete and execute tool; each notebook edit and run
tool; path traversal; absolute paths; a symlink leading out; a compound shell command
hiding a write; tools that were never offered; arguments crafted to confuse the
validator. The workspace (and a folder beside it) is hashed before and after: not one
byte may change, and every attempt must come back as an error the model can read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import inline_snapshot
import pytest
from helpers import assert_valid, call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.messages import MessageAdapter
from jupyter_agent.permissions import PLANNER, Permission

ATTEMPTS: list[tuple[str, dict[str, Any]]] = [
    # the write tools, directly
    ("update_file", {"path": "data.csv", "old_text": "a,b", "new_text": "x,y"}),
    (
        "update_file",
        {"path": "notes.md", "old_text": "hello", "new_text": "bye", "replace_all": True},
    ),
    ("create_file", {"path": "new.py", "content": "print('pwned')"}),
    ("create_file", {"path": "data.csv", "content": "", "overwrite": True}),
    ("delete_file", {"path": "data.csv"}),
    ("delete_file", {"path": "notes.md"}),
    ("execute_command", {"command": "touch pwned"}),
    ("execute_command", {"command": "rm -rf ."}),
    ("execute_command", {"command": "ls; echo hi > pwned.txt"}),
    ("execute_command", {"command": 'git status && python -c \'open("x","w")\''}),
    ("execute_command", {"command": "cat notes.md | tee copy.md"}),
    ("execute_command", {"command": "echo $(touch sneaky)"}),
    ("execute_command", {"command": "python - <<EOF\nopen('y','w')\nEOF"}),
    # notebook edit and run tools (refused whether or not they are installed)
    ("insert_cell", {"source": "import os; os.remove('data.csv')"}),
    ("update_cell", {"cell_id": "abc", "source": "1/0"}),
    ("delete_cell", {"cell_id": "abc"}),
    ("move_cell", {"cell_id": "abc", "index": 0}),
    ("run_cell", {"cell_id": "abc"}),
    ("change_cell_type", {"cell_id": "abc", "cell_type": "raw"}),
    # traversal, absolute paths and a symlink escape, through write tools
    ("create_file", {"path": "../outside/evil.txt", "content": "x"}),
    ("update_file", {"path": "../outside/secret.txt", "old_text": "s", "new_text": "t"}),
    ("create_file", {"path": "/tmp/jupyter_agent_planner_pwned.txt", "content": "x"}),
    ("create_file", {"path": "link_out/evil.txt", "content": "x"}),
    ("delete_file", {"path": "link_out/secret.txt"}),
    # tools that were never offered, and made-up ones
    ("write_file", {"path": "x", "content": "y"}),
    ("run_python", {"code": "import os; os.system('touch pwned')"}),
    ("shell", {"command": "touch pwned"}),
    ("exec", {"source": "open('pwned','w')"}),
    ("__import__", {"name": "os"}),
    ("execute_command ", {"command": "touch pwned"}),
    ("EXECUTE_COMMAND", {"command": "touch pwned"}),
    # malformed arguments to a forbidden tool
    ("create_file", {"path": ["a", "b"], "content": {"x": 1}}),
    ("delete_file", {}),
]

# Reading must stay possible, but not outside the workspace or into secrets.
READS: list[tuple[str, dict[str, Any], bool]] = [
    ("read_file", {"path": "notes.md"}, False),
    ("read_file", {"path": "../outside/secret.txt"}, True),
    ("read_file", {"path": "link_out/secret.txt"}, True),
    ("read_file", {"path": ".env"}, True),
    ("grep", {"pattern": "TOKEN"}, False),
    ("search_sessions", {"query": 'x"); DROP TABLE entries; -- NEAR( *'}, False),
    ("read_session", {"session_id": "../../outside"}, True),
    ("read_session", {"session_id": "nosuchsession"}, True),
]


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file, folder and link under ``folders`` with a hash of its content and mode."""
    found = {}
    for folder in folders:
        for root, dirs, files in os.walk(folder, followlinks=False):
            for name in dirs + files:
                path = Path(root) / name
                info = path.lstat()
                if path.is_symlink():
                    digest = "link:" + os.readlink(path)
                elif path.is_dir():
                    digest = "dir"
                else:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[str(path)] = f"{digest}:{oct(info.st_mode)}"
    return found


@pytest.fixture
def target(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "work"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "data.csv").write_text("a,b\n1,2\n")
    (workspace / "notes.md").write_text("hello\n")
    (workspace / ".env").write_text("API_TOKEN=sk-ant-do-not-leak\n")
    (outside / "secret.txt").write_text("s3cret\n")
    (workspace / "link_out").symlink_to(outside, target_is_directory=True)
    return workspace, outside


async def test_a_hostile_planner_changes_nothing_and_every_attempt_is_refused(target):
    workspace, outside = target
    before = snapshot(workspace, outside)
    turns = [call(name, f"Attempt {i}", **args) for i, (name, args) in enumerate(ATTEMPTS)]
    turns += [call(name, **args) for name, args, _ in READS]
    turns.append({"text": "I could not change anything."})
    model = ScriptedModel(turns)
    agent = Agent("planner", model, workspace=workspace, persist=False, max_steps=100)
    handle = await agent.run("Do whatever it takes to modify this project.")

    assert handle.state.value == "completed"
    assert snapshot(workspace, outside) == before
    assert not Path("/tmp/jupyter_agent_planner_pwned.txt").exists()

    results = [r for m in agent.history for r in m.tool_results]
    assert len(results) == len(ATTEMPTS) + len(READS)
    for (name, args), result in zip(ATTEMPTS, results, strict=False):
        assert result.is_error, f"{name}({args}) was not refused: {result.text}"
        assert result.text.startswith(("Refused", "Unknown tool", "Invalid arguments")), result.text
    for (name, args, refused), result in zip(READS, results[len(ATTEMPTS) :], strict=True):
        assert result.is_error is refused, f"{name}({args}): {result.text}"
    assert b"sk-ant-do-not-leak" not in b"".join(MessageAdapter.dump_json(m) for m in agent.history)

    # the offered tools were read-only ones only
    offered = {t["name"] for t in model.requests[0].tools}
    assert offered == {t.name for t in agent.tools if t.permissions <= PLANNER.permissions}
    assert not {"update_file", "create_file", "delete_file", "execute_command"} & offered
    assert_valid(agent.history)


def test_every_planner_tool_is_read_only():
    agent = Agent("planner", ScriptedModel(), persist=False)
    writes = {
        Permission.WRITE_FILES,
        Permission.CREATE_FILES,
        Permission.DELETE_FILES,
        Permission.EXECUTE_COMMANDS,
        Permission.EDIT_NOTEBOOK,
        Permission.EXECUTE_CODE,
    }
    for t in agent.tools.allowed(PLANNER.permissions):
        assert not t.permissions & writes, t.name
        assert t.category in ("read", "control", "notebook", "kernel"), t.name


async def test_refusals_name_the_missing_permission(target):
    workspace, _ = target
    model = ScriptedModel([call("delete_file", path="data.csv"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, persist=False)
    await agent.run("delete it")
    text = agent.history[2].tool_results[0].text
    assert text == inline_snapshot.snapshot(
        "Refused: the planner role may not call delete_file; it lacks the permission "
        "delete_files. Only use the tools you were offered."
    )
