"""Helpers the tests share: scripted turns and conversation checks."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_agent.messages import Message, conversation_problems, to_api_messages


async def until(predicate: Any, timeout: float = 5.0, interval: float = 0.002) -> None:
    """Wait until ``predicate()`` is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
        await asyncio.sleep(interval)


def sent_key(request: Any) -> str:
    """The API key a request to the loopback server carried (as x-api-key, or as a bearer
    token: SDK versions differ)."""
    headers = request.headers
    return headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")


def assert_valid(history: list[Message]) -> None:
    problems = conversation_problems(to_api_messages(history))
    assert not problems, problems


def call(name: str, say: str = "", /, **arguments: Any) -> dict[str, Any]:
    """A scripted turn calling one tool (after saying ``say``)."""
    return {"text": say, "tool_calls": [{"name": name, "input": arguments}]}


def calls(*pairs: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """A scripted turn calling several tools."""
    return {"text": text, "tool_calls": [{"name": n, "input": a} for n, a in pairs]}


PLAN = {
    "goal": "Clean the sales data",
    "steps": [
        {
            "step_number": 1,
            "action": "Load sales.csv",
            "reason": "See what is there",
            "tools_needed": ["read_file"],
            "estimated_time": "~1 s",
        },
        {
            "step_number": 2,
            "action": "Drop duplicate rows",
            "reason": "Duplicates skew totals",
            "tools_needed": ["update_cell", "run_cell"],
            "estimated_time": "~5 s",
        },
    ],
    "estimated_total_time": "~10 s",
    "risks": ["Rows that look duplicated may be legitimate"],
    "prerequisites": [],
}


def live_processes() -> list[tuple[int, str, str]]:
    """(pid, command line, working folder) of every live process (zombies excluded), from
    the host's /proc: a sandboxed command's own pids are its PID namespace's, not these."""
    import os

    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{name}/cwd")
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            found.append((int(name), cmdline, cwd))
    return found


def running(mark: str) -> list[int]:
    """Pids of the live processes whose command line holds ``mark`` (a unique sleep time)."""
    return [pid for pid, cmdline, _ in live_processes() if mark in cmdline]
