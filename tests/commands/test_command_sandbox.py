"""The agent's commands in the OS sandbox, end to end: the OS refuses what the rules
allowed, a Stop ends everything a command started, the user's settings (and only the
user's) shape the sandbox, and a machine without one says so once."""

from __future__ import annotations

import asyncio
import io
import os
import random
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import assert_valid, call, running, until

from jupyter_agent import Agent, ScriptedModel, TextRenderer
from jupyter_agent.commands import OsSandbox, SandboxSettings
from jupyter_agent.permissions import AllowAll

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the OS sandbox is Linux's")


@pytest.fixture
def place() -> Iterator[tuple[Path, Path]]:
    """A workspace and a folder beside it, outside /tmp (commands get a private /tmp)."""
    base = Path.home() / ".cache" / "jupyter_agent-tests" / uuid.uuid4().hex[:12]
    ws, outside = base / "work", base / "outside"
    ws.mkdir(parents=True)
    outside.mkdir()
    try:
        yield ws, outside
    finally:
        shutil.rmtree(base, ignore_errors=True)


def results(agent: Agent) -> list[str]:
    return [r.text for m in agent.history for r in m.tool_results]


async def test_the_os_refuses_a_write_outside_that_every_rule_allowed(place):
    ws, outside = place
    target = outside / "escaped.txt"
    command = f'python3 -c \'open("{target}", "w").write("x")\'; echo done > inside.txt'
    agent = Agent(
        "actor",
        ScriptedModel(
            [call("execute_command", command=command), call("task_complete", summary="ok")]
        ),
        workspace=ws,
        policy=AllowAll(),  # no rule stands in the way: only the OS does
        persist=False,
    )
    await agent.run("write")
    (output, _) = results(agent)
    assert "Read-only file system" in output
    assert not target.exists()
    assert (ws / "inside.txt").read_text() == "done\n"  # the workspace stays writable
    assert_valid(agent.history)


@pytest.mark.parametrize(
    "start",
    [
        "setsid sleep {mark} &",
        "(sleep {mark} &) &",
        "nohup sleep {mark} > /dev/null 2>&1 &",
        "sleep {mark} & disown",
    ],
)
async def test_stop_ends_what_a_command_started_however_it_detached(place, start):
    ws, _ = place
    mark = f"{6000 + random.random() * 1000:.6f}"
    command = start.format(mark=mark) + "\necho up > up.txt; sleep 60"
    agent = Agent(
        "actor",
        ScriptedModel([call("execute_command", command=command, timeout=120)]),
        workspace=ws,
        policy=AllowAll(),
        persist=False,
    )
    handle = agent.start("run")
    await until(lambda: (ws / "up.txt").exists() and running(mark), timeout=5)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)
    await until(lambda: not running(mark), timeout=10)
    assert_valid(agent.history)


class _Loopback:
    """A TCP server on 127.0.0.1 that answers every connection with a line."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello\n")


def probe(port: int) -> str:
    return (
        'python3 -c \'import socket; s = socket.create_connection(("127.0.0.1", '
        f"{port}), 2); print(s.recv(10).decode().strip())'"
    )


async def test_the_users_settings_can_take_the_network_away(place, monkeypatch):
    ws, outside = place
    server = _Loopback()
    home = outside / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    (home / ".jupyter_agent" / "settings.toml").write_text("[sandbox]\nnetwork = false\n")
    monkeypatch.setenv("HOME", str(home))
    script = [
        call("execute_command", command=probe(server.port)),
        call("task_complete", summary=""),
    ]
    agent = Agent("actor", ScriptedModel(script), workspace=ws, policy=AllowAll(), persist=False)
    assert agent.command_sandbox.status().summary == "commands sandboxed to this folder, no network"
    await agent.run("connect")
    assert "hello" not in results(agent)[0]
    # the same command with the network on (the default) reaches the server
    monkeypatch.setenv("HOME", str(outside / "nobody"))
    agent = Agent("actor", ScriptedModel(script), workspace=ws, policy=AllowAll(), persist=False)
    await agent.run("connect")
    assert results(agent)[0].startswith("hello\n")
    server.sock.close()


async def test_a_workspace_cannot_turn_its_own_sandbox_off(place, monkeypatch):
    ws, outside = place
    monkeypatch.setenv("HOME", str(outside / "home"))
    (ws / ".jupyter_agent").mkdir()
    (ws / ".jupyter_agent" / "settings.toml").write_text(
        "[sandbox]\nenabled = false\nwritable = ['/']\n"
    )
    target = outside / "escaped.txt"
    command = f'python3 -c \'open("{target}", "w")\''
    model = ScriptedModel(
        [call("execute_command", command=command), call("task_complete", summary="")]
    )
    agent = Agent("actor", model, workspace=ws, policy=AllowAll(), persist=False)
    assert agent.command_sandbox.status().active
    handle = await agent.run("write")
    warnings = [e.message for e in handle.events_so_far if e.kind == "warning"]
    assert any("was ignored" in w and "settings.toml" in w for w in warnings)
    assert not target.exists()


async def test_without_an_os_sandbox_the_run_says_so_once(place):
    ws, _ = place
    missing = OsSandbox(ws, bwrap=ws / "no-such-bwrap")
    out = io.StringIO()
    script = [call("execute_command", command="echo hi"), call("task_complete", summary="")]
    agent = Agent(
        "actor",
        ScriptedModel(script * 2),
        workspace=ws,
        policy=AllowAll(),
        command_sandbox=missing,
        persist=False,
    )
    agent.subscribe(TextRenderer(out, color=False))
    first = await agent.run("first")
    second = await agent.run("second")
    said = [e.message for h in (first, second) for e in h.events_so_far if e.kind == "warning"]
    assert len(said) == 1
    assert "bubblewrap is not installed" in said[0]
    assert "the permission rules alone apply" in said[0]
    assert said[0] in out.getvalue()  # the text renderer prints it
    assert missing.status().summary == "commands not sandboxed"
    assert results(agent)[0].startswith("hi\n")  # commands still run, unconfined


async def test_a_planner_is_not_told_about_a_sandbox_it_cannot_use(place):
    ws, _ = place
    missing = OsSandbox(ws, bwrap=ws / "no-such-bwrap")
    agent = Agent(
        "planner",
        ScriptedModel([call("task_complete", summary="")]),
        workspace=ws,
        command_sandbox=missing,
        persist=False,
    )
    handle = await agent.run("plan")
    assert not [e for e in handle.events_so_far if e.kind == "warning"]


async def test_turned_off_in_the_users_settings_the_sandbox_says_so(place):
    ws, _ = place
    agent = Agent(
        "actor",
        ScriptedModel([call("task_complete", summary="")]),
        workspace=ws,
        command_sandbox=SandboxSettings(enabled=False),
        persist=False,
    )
    handle = await agent.run("nothing")
    (warning,) = [e.message for e in handle.events_so_far if e.kind == "warning"]
    assert "turned off" in warning
    assert (
        agent.command_sandbox.status().summary == "commands not sandboxed (turned off in settings)"
    )


def test_programs_the_kernel_runs_itself_never_come_from_the_workspace(place, monkeypatch):
    """A PATH that starts with a virtual environment inside the workspace must not make the
    kernel run a planted `bwrap` (a fake that confines nothing) or `git`."""
    from jupyter_agent.workspace.autorun import autorun_for

    ws, outside = place
    fake = ws / ".venv" / "bin"
    fake.mkdir(parents=True)
    ran = outside / "ran"
    for name in ("bwrap", "git", "bash"):
        (fake / name).write_text(f"#!/bin/sh\necho {name} >> {ran}\nexit 0\n")
        (fake / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n\thooksPath = hooks\n")
    sandbox = OsSandbox(ws)
    status = sandbox.status()
    assert status.active
    launch = sandbox.launch(["/bin/true"], ws)
    try:
        assert launch.argv[0] == shutil.which("bwrap", path="/usr/bin:/bin")
    finally:
        launch.close()
    autorun_for(ws)
    assert not ran.exists()
