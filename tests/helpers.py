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
