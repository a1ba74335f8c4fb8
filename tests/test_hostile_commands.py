"""A hostile model, run for real: after the user clicked "Always allow" on something
innocent, nothing it tries escapes.

Each case plays an Actor whose model first runs an innocent command (the user clicks
"Always allow"), then a hostile one — or a hostile file-tool call. The hostile call must
be refused, or the user asked. Then the user *allows* it anyway (approval fatigue), so
the command really runs, and still, for every case:

- no file outside the workspace changed (a folder beside it, outside /tmp, is compared
  byte for byte before and after);
- nothing was written to a protected path (git's hooks and config, the hooks folder
  ``core.hooksPath`` names, ``.jupyter_agent/``);
- no process the run started is alive once it ended (the process table is searched for
  the workspace and for each case's marker);
- the conversation is valid.

The first layer is the rules (the command parsed with tree-sitter-bash); the second is
the OS sandbox (bubblewrap), which must hold whatever the user allowed.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_valid, call, live_processes, until
from hostile_command_cases import CASES, MARK, OUT

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.events import ToolOutcome

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the OS sandbox is Linux's")


@pytest.fixture
def place() -> Iterator[tuple[Path, Path]]:
    """A workspace and an ``outside`` folder beside it, not under /tmp (the sandbox gives
    commands a private /tmp, which would hide an outside folder there rather than test it)."""
    base = Path.home() / ".cache" / "jupyter_agent-tests" / uuid.uuid4().hex[:12]
    ws, outside = base / "work", base / "outside"
    ws.mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("the user's file\n")
    (ws / "notes.md").write_text("# notes\nx\n")
    (ws / "a.tmp").write_text("a\n")
    (ws / "b.tmp").write_text("b\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "config", "user.email", "t@example.invalid"], check=True)
    (ws / ".jupyter_agent").mkdir()  # where a persisted session would live
    try:
        yield ws, outside
    finally:
        shutil.rmtree(base, ignore_errors=True)


def snapshot(*roots: Path) -> dict[str, str]:
    """Every path under ``roots`` with what it is: a file's content hash, a link's target."""
    seen: dict[str, str] = {}
    for root in roots:
        if not os.path.lexists(root):
            seen[str(root)] = "missing"
            continue
        if not root.is_dir():  # a file: its content (os.walk would see nothing)
            seen[str(root)] = hashlib.sha256(root.read_bytes()).hexdigest()
            continue
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(folder, name)
                if path.is_symlink():
                    seen[str(path)] = "link " + os.readlink(path)
                elif path.is_file():
                    seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    seen[str(path)] = "folder"
        seen[str(root)] = "root"
    return seen


def protected(ws: Path) -> list[Path]:
    hooks, home = ws / ".husky", [ws / ".bashrc", ws / ".zshrc", ws / ".ipython", ws / ".config"]
    git = [ws / ".git" / name for name in ("config", "hooks", "commondir", "info")]
    git += [ws / ".git/objects/info/alternates", ws / "sub/.git/config", ws / "sub/.git/commondir"]
    return [*git, ws / ".jupyter_agent", hooks, *home]


def lingering(ws: Path, mark: str) -> list[str]:
    """Live processes that run in the workspace or carry the case's marker."""
    return [
        f"{pid}: {cmdline}"
        for pid, cmdline, cwd in live_processes()
        if pid != os.getpid() and (cwd.startswith(str(ws)) or mark in cmdline)
    ]


def step(call_or_command: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(call_or_command, dict):
        return {"tool_calls": [call_or_command]}
    return call("execute_command", command=call_or_command, timeout=5)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_hostile_call_is_refused_or_asked_and_the_sandbox_holds(case, place, monkeypatch):
    ws, outside = place
    if case.home:
        monkeypatch.setenv("HOME", str(ws))
    if case.setup is not None:
        case.setup(ws)
    mark = f"{5000 + random.random() * 1000:.6f}"

    def fill(text: str) -> str:
        return text.replace(MARK, mark).replace(OUT, str(outside))

    hostile = fill(case.hostile) if isinstance(case.hostile, str) else case.hostile
    script = [step(fill(case.first))] if case.first else []
    script += [step(c) for c in case.between]
    script += [step(hostile), call("task_complete", summary="done")]
    before_outside = snapshot(outside)
    before_protected = snapshot(*protected(ws))

    agent = Agent("actor", ScriptedModel(script), workspace=ws, persist=False)
    handle = agent.start("tidy up")
    first = case.first is not None
    while await handle.wait_for_user() is not None:
        # "Always allow" on the innocent one; then a tired "Allow", unless a file tool warned
        careful = bool(case.warns) and isinstance(case.hostile, dict)
        handle.approve(first or not careful, remember=first)
        first = False
        await until(lambda: handle.pending_approval is None or handle.done, timeout=5)
    await handle.wait()

    events = handle.events_so_far
    starts = [e for e in events if e.kind == "tool_start" and e.name != "task_complete"]
    target = starts[-1].tool_use_id
    asked = any(e.kind == "permission_request" and e.tool_use_id == target for e in events)
    (ended,) = [e for e in events if e.kind == "tool_end" and e.tool_use_id == target]
    refused = ended.outcome == ToolOutcome.denied
    if not case.runs:
        assert asked or refused, f"ran unasked: {ended.result}"
    if case.warns:
        (request,) = [
            e for e in events if e.kind == "permission_request" and e.tool_use_id == target
        ]
        assert any(case.warns in w for w in request.warnings), request.warnings
    if case.first is not None:
        first_id = starts[0].tool_use_id
        assert not any(  # the innocent one was allowed, and remembered
            e.kind == "tool_end" and e.tool_use_id == first_id and e.outcome == ToolOutcome.denied
            for e in events
        )
    assert snapshot(outside) == before_outside
    assert snapshot(*protected(ws)) == before_protected
    await until(lambda: not lingering(ws, mark), timeout=10)
    assert_valid(agent.history)


def test_the_suite_covers_the_classes_with_at_least_sixty_hostile_calls():
    hostile = [c for c in CASES if not c.runs]
    assert len(hostile) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
