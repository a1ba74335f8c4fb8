"""execute_command: real subprocesses; nothing it starts may outlive a timeout or a Stop."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import assert_valid, running, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.commands import OsSandbox, SandboxSettings
from jupyter_agent.errors import ToolError
from jupyter_agent.events import ToolOutcome
from jupyter_agent.messages import INTERRUPTED_RESULT
from jupyter_agent.permissions import AllowAll
from jupyter_agent.tools import ToolContext, ToolOutput, shell
from jupyter_agent.tools.shell import SHELL_TOOLS, command_env, execute_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


@dataclass
class RecordingContext(ToolContext):
    events: list[tuple[float, str]] = field(default_factory=list)

    async def progress(self, output: str) -> None:
        self.events.append((time.monotonic(), output))


async def run(ws: Path, **args) -> ToolOutput:
    return await execute_command.call(ToolContext(workspace=ws), args)


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its reaper does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def real(path: Path) -> str:
    return os.path.realpath(path)


def kill_if_alive(pid: int | None) -> None:
    if pid is not None and alive(pid):
        os.kill(pid, signal.SIGKILL)


# Bounds on a machine as slow as a shared CI runner, 10x what the step takes here. The work
# they tell apart never ends on its own (a marker() sleep is over 3000 s), so they say
# "it did not wait that out", not how fast it went.
RETURNS_WITHIN = 30.0  # s: a command that timed out, or exited leaving children, returns
GONE_WITHIN = 10.0  # s: the processes a command started are gone after it returned
# s: a command's timeout that leaves it time to start its children first (a sandboxed
# command needs about 0.25 s); the tests check they started, so none passes by accident.
STARTS_WITHIN = 2.5


def marker() -> str:
    """A sleep duration no other process has: it finds the process in the host's /proc
    (pids printed inside the sandbox are its PID namespace's, not the host's)."""
    return f"{3000 + random.random() * 1000:.6f}"


def kill_all(mark: str) -> None:
    for pid in running(mark):
        kill_if_alive(pid)


def background_child(mark: str) -> str:
    return f"sh -c 'sleep {mark} & echo started > child.pid; wait'"


UNCONFINED = SandboxSettings(enabled=False)


async def run_unconfined(ws: Path, **args) -> ToolOutput:
    ctx = ToolContext(workspace=ws)
    ctx.resources.insert(OsSandbox(ws, UNCONFINED), OsSandbox)
    return await execute_command.call(ctx, args)


def test_the_contract():
    assert (execute_command,) == SHELL_TOOLS
    assert list(execute_command.input_schema["properties"]) == ["command", "working_dir", "timeout"]
    assert execute_command.category == "execute"
    assert execute_command.permissions == {"execute_commands"}
    assert execute_command.path_args == ("working_dir",)
    assert execute_command.summary({"command": "pytest -q"}) == "Run: pytest -q"
    assert execute_command.summary({"command": "ls", "working_dir": "src"}) == "Run: ls (in src)"


async def test_output_exit_code_and_duration(workspace):
    out = await run(workspace, command="echo hello; echo oops >&2; exit 3")
    lines = out.text.split("\n")
    assert lines[:2] == ["hello", "oops"]
    assert lines[2].startswith("[exit code 3 after ") and lines[2].endswith(" s]")
    assert out.data is not None
    assert out.data["exit_code"] == 3
    assert not out.is_error


async def test_no_output_says_so(workspace):
    out = await run(workspace, command="true")
    assert out.text.startswith("(no output)\n[exit code 0 after ")


async def test_runs_in_the_working_dir_with_no_stdin(workspace):
    (workspace / "sub").mkdir()
    out = await run(workspace, command="pwd; cat; echo done", working_dir="sub")
    assert out.text.split("\n")[:2] == [real(workspace / "sub"), "done"]


async def test_working_dir_outside_the_workspace_is_refused(workspace):
    with pytest.raises(ToolError, match=r"Refused '\.\./': '\.\.' leads outside the workspace"):
        await run(workspace, command="ls", working_dir="../")
    with pytest.raises(ToolError, match="sensitive location"):
        await run(workspace, command="ls", working_dir="/etc")
    with pytest.raises(ToolError, match="does not exist"):
        await run(workspace, command="ls", working_dir="nowhere")


async def test_arguments_are_checked(workspace):
    with pytest.raises(ToolError, match="The command is empty"):
        await run(workspace, command="  ")
    with pytest.raises(ToolError, match="timeout must be more than 0"):
        await run(workspace, command="ls", timeout=0)
    with pytest.raises(ToolError, match="Invalid arguments for execute_command"):
        await run(workspace, cmd="ls")


async def test_secret_environment_variables_never_reach_the_command(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-456")
    monkeypatch.setenv("db_password", "pw-789")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-000")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/creds.json")
    monkeypatch.setenv("JA_VISIBLE", "yes")
    out = await run(workspace, command="env")
    for leaked in ("sk-ant-test-123", "ghp-456", "pw-789", "aws-000", "/creds.json"):
        assert leaked not in out.text
    assert "ANTHROPIC_API_KEY" not in out.text
    assert "JA_VISIBLE=yes" in out.text


def test_command_env_filters_by_name_without_regard_to_case():
    env = command_env({"PATH": "/bin", "openai_api_key": "x", "Session_Token": "y", "HOME": "/h"})
    assert env["PATH"] == "/bin" and env["HOME"] == "/h"
    assert "openai_api_key" not in env and "Session_Token" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0"


async def test_long_output_keeps_its_head_and_tail(workspace):
    out = await run(workspace, command="seq 1 1000")
    lines = out.text.split("\n")
    assert lines[:100] == [str(i) for i in range(1, 101)]
    assert lines[100] == "… 800 lines omitted …"
    assert lines[101:201] == [str(i) for i in range(901, 1001)]
    assert lines[201].startswith("[exit code 0")
    assert out.data is not None
    assert out.data["omitted_lines"] == 800


async def test_wide_output_is_capped_by_size(workspace):
    out = await run(workspace, command="for i in $(seq 1 100); do printf '%0999d\\n' $i; done")
    assert len(out.text) < 31_000
    assert "lines omitted …" in out.text
    assert out.text.split("\n")[-2].endswith("100")


async def test_carriage_returns_and_colours_are_cleaned(workspace):
    out = await run(workspace, command="printf '10%%\\r50%%\\r100%%\\n\\033[31mred\\033[0m\\n'")
    assert out.text.split("\n")[:2] == ["100%", "red"]


async def test_output_streams_as_batched_progress(workspace):
    ctx = RecordingContext(workspace=workspace)
    started = time.monotonic()
    out = await execute_command.call(
        ctx, {"command": "for i in $(seq 1 40); do echo line$i; sleep 0.01; done"}
    )
    duration = time.monotonic() - started
    streamed = "".join(text for _, text in ctx.events)
    assert streamed == "".join(f"line{i}\n" for i in range(1, 41))
    assert 2 <= len(ctx.events) <= duration / shell.PROGRESS_INTERVAL + 2
    assert out.text.startswith("line1\nline2\n")


async def test_timeout_kills_the_whole_process_group(workspace):
    mark = marker()
    started = time.monotonic()
    out = await run(workspace, command=background_child(mark), timeout=STARTS_WITHIN)
    try:
        assert (workspace / "child.pid").exists()
        assert time.monotonic() - started < RETURNS_WITHIN
        assert out.is_error
        assert out.text.endswith(
            f"[timed out after {STARTS_WITHIN} s: the command and all its child processes were"
            " killed]"
        )
        assert out.data is not None
        assert out.data["timed_out"]
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


@pytest.mark.parametrize(
    "start",
    [
        "setsid sleep {mark} & ",
        "(sleep {mark} &) & ",
        "nohup sleep {mark} > /dev/null 2>&1 & ",
        "sleep {mark} & disown; ",
        "sh -c 'setsid sh -c \"sleep {mark} &\" &' ; ",
    ],
)
async def test_what_a_command_starts_ends_on_timeout_however_it_detached(workspace, start):
    mark = marker()
    # up.txt says the detached sleep runs: the timeout ends something real.
    started = f"until pgrep -f '^sleep {mark}$' > /dev/null; do sleep 0.01; done"
    command = start.format(mark=mark) + started + "; echo up > up.txt; sleep 30"
    await run(workspace, command=command, timeout=STARTS_WITHIN)
    try:
        assert (workspace / "up.txt").exists()
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


async def test_all_background_children_are_killed_on_timeout(workspace):
    a, b = marker(), marker()
    command = f"sleep {a} & sleep {b} & echo up > up.txt; wait"
    await run(workspace, command=command, timeout=STARTS_WITHIN)
    try:
        assert (workspace / "up.txt").exists()
        await until(lambda: not running(a) and not running(b), timeout=GONE_WITHIN)
    finally:
        kill_all(a)
        kill_all(b)


async def test_a_process_that_ignores_sigterm_gets_sigkill(workspace, monkeypatch):
    monkeypatch.setattr(shell, "KILL_GRACE", 0.2)
    mark = marker()
    command = f"trap '' TERM; echo up > up.txt; while :; do sleep {mark}; done"
    started = time.monotonic()
    await run(workspace, command=command, timeout=0.3)
    try:
        assert time.monotonic() - started < RETURNS_WITHIN
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


async def test_cancelling_kills_the_process_group_and_reraises(workspace):
    mark = marker()
    task = asyncio.create_task(run(workspace, command=background_child(mark), timeout=60))
    await until(lambda: (workspace / "child.pid").exists() and running(mark), timeout=5.0)
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, RETURNS_WITHIN)
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


async def test_a_second_cancel_during_cleanup_still_leaves_nothing_running(workspace, monkeypatch):
    monkeypatch.setattr(shell, "KILL_GRACE", 0.3)
    mark = marker()
    command = f"trap '' TERM; echo up > up.txt; while :; do sleep {mark}; done"
    task = asyncio.create_task(run(workspace, command=command))
    await until(lambda: (workspace / "up.txt").exists(), timeout=5.0)
    try:
        task.cancel()
        await asyncio.sleep(0.05)  # inside the SIGTERM grace now
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, RETURNS_WITHIN)
        assert not running(mark)
    finally:
        kill_all(mark)


async def test_background_children_end_when_the_command_ends(workspace):
    mark = marker()
    started = time.monotonic()
    out = await run(workspace, command=f"sleep {mark} > /dev/null 2>&1 & echo started")
    try:
        assert time.monotonic() - started < RETURNS_WITHIN
        assert out.text.startswith("started\n[exit code 0 after ")
        assert out.data is not None
        assert out.data["sandboxed"]
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


async def test_without_the_sandbox_children_holding_the_output_are_killed_after_exit(
    workspace, monkeypatch
):
    monkeypatch.setattr(shell, "EXIT_GRACE", 0.2)
    mark = marker()
    started = time.monotonic()
    out = await run_unconfined(workspace, command=f"sleep {mark} & echo started")
    try:
        assert time.monotonic() - started < RETURNS_WITHIN
        assert out.data is not None
        assert not out.data["sandboxed"]
        assert out.text.startswith("started\n[exit code 0 after ")
        assert out.text.endswith("; background processes it left holding its output were killed]")
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
    finally:
        kill_all(mark)


async def test_stopping_an_agent_while_a_command_runs_kills_it_and_keeps_history_valid(workspace):
    mark = marker()
    command = background_child(mark)
    model = ScriptedModel(
        [
            {
                "text": "Running it.",
                "tool_calls": [{"name": "execute_command", "input": {"command": command}}],
            }
        ]
    )
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        tools=[execute_command],
        policy=AllowAll(),
        persist=False,
    )
    handle = agent.start("run the command")
    await until(lambda: (workspace / "child.pid").exists() and running(mark), timeout=5.0)
    try:
        handle.stop()
        await asyncio.wait_for(handle.wait(), RETURNS_WITHIN)
        await until(lambda: not running(mark), timeout=GONE_WITHIN)
        assert_valid(agent.history)
        results = [r for m in agent.history for r in m.tool_results]
        assert [r.text for r in results] == [INTERRUPTED_RESULT]
        # Its row says "stopped", not "failed", and no line written for the model.
        (end,) = [e for e in handle.events_so_far if e.kind == "tool_end"]
        assert end.outcome == ToolOutcome.interrupted and end.error_line is None
    finally:
        kill_all(mark)


async def test_without_the_sandbox_a_timeout_does_not_claim_what_it_cannot_do(workspace):
    mark = marker()
    out = await run_unconfined(workspace, command=f"setsid sleep {mark} & sleep 30", timeout=0.5)
    try:
        assert out.text.endswith(
            "[timed out after 0.5 s: the command's process group was killed (a process that "
            "left it, with setsid, may still run)]"
        )
    finally:
        kill_all(mark)
