"""Helpers the tests share: scripted turns and conversation checks (a real kernel: kernels.py)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterable
from typing import Any, TypeVar

from jupyter_agent.messages import Message, conversation_problems, to_api_messages
from jupyter_agent.notebook.bridge import RunResult
from jupyter_agent.sessions.context_view import ModelView
from jupyter_agent.testing import RecordedRequest
from jupyter_agent.workspace.stamps import file_clock_ns

T = TypeVar("T")


def of_type(items: Iterable[object], kind: type[T]) -> list[T]:
    """The items that are instances of ``kind`` (the events or blocks of one kind), typed so."""
    return [item for item in items if isinstance(item, kind)]


async def until(predicate: Any, timeout: float = 30.0, interval: float = 0.002) -> None:
    """Wait until ``predicate()`` is true (the bound only decides how long a failure takes)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
        await asyncio.sleep(interval)


def sent_key(request: RecordedRequest) -> str:
    """The API key a request to the loopback server carried (as x-api-key, or as a bearer
    token: SDK versions differ)."""
    headers = request.headers
    return headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")


def assert_valid(history: list[Message]) -> None:
    """The history is a valid conversation, and so is what the model sees of it (cleared
    results and compacted turns applied)."""
    problems = conversation_problems(to_api_messages(history))
    assert not problems, problems
    problems = conversation_problems(ModelView().api_messages(history))
    assert not problems, ("the model's view", problems)


def chat_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Every way ``messages`` break the Chat Completions API's rules; empty when valid:
    each assistant message's tool calls answered by tool messages right after it, in
    order, and tool messages nowhere else; no empty message; ids as OpenAI takes them."""
    problems: list[str] = []
    pending: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            problems.extend(_tool_message_problems(i, message, pending))
            continue
        if pending:
            problems.append(f"tool calls {pending} are not answered before message {i}")
            pending = []
        if role == "system":
            if i:
                problems.append(f"message {i} is a system message after the first")
        elif role == "assistant":
            problems.extend(_assistant_message_problems(i, message))
            pending = [c["id"] for c in message.get("tool_calls") or []]
        elif role == "user":
            problems.extend(_user_message_problems(i, message.get("content")))
        else:
            problems.append(f"message {i} has the role {role!r}")
    if pending:
        problems.append(f"the last tool calls {pending} have no results")
    if not any(m.get("role") == "user" for m in messages):
        problems.append("there is no user message")
    return problems


def _tool_message_problems(i: int, message: dict[str, Any], pending: list[str]) -> list[str]:
    """A tool message answers the first call still pending (which it takes off), in text."""
    problems = []
    if not pending:
        problems.append(f"message {i} is a tool message that answers no call")
    elif message.get("tool_call_id") != pending[0]:
        problems.append(f"message {i} answers {message.get('tool_call_id')}, not {pending[0]}")
    else:
        pending.pop(0)
    content = message.get("content")
    if not isinstance(content, str) or not content:
        problems.append(f"tool message {i} has no text")
    return problems


def _assistant_message_problems(i: int, message: dict[str, Any]) -> list[str]:
    """An assistant message says something or calls tools, each call with an id OpenAI
    takes, once, and arguments that are JSON."""
    problems = []
    content = message.get("content")
    calls = message.get("tool_calls") or []
    if not calls and not (isinstance(content, str) and content.strip()):
        problems.append(f"assistant message {i} is empty")
    ids = [c["id"] for c in calls]
    if len(set(ids)) != len(ids):
        problems.append(f"message {i} repeats a tool call id")
    for c in calls:
        if not c["id"] or len(c["id"]) > 40:
            problems.append(f"message {i} has a tool call id OpenAI refuses: {c['id']!r}")
        json.loads(c["function"]["arguments"])
    return problems


def _user_message_problems(i: int, content: Any) -> list[str]:
    """A user message holds text, or parts of the kinds OpenAI knows."""
    if isinstance(content, str):
        return [] if content.strip() else [f"user message {i} is empty"]
    if not content or any(p["type"] not in ("text", "image_url") for p in content):
        return [f"user message {i} has no content, or parts of unknown types"]
    return []


async def stopped_in_its_first_tool(
    agent: Any, task: str, after: float = 0.05, timeout: float = 30.0
) -> Any:
    """Start ``task``, Stop it ``after`` seconds into its first tool call, and return its
    handle once the run has ended."""
    from jupyter_agent.events import ToolStartEvent

    started: list[Any] = []
    agent.subscribe(lambda e: started.append(e) if isinstance(e, ToolStartEvent) else None)
    handle = agent.start(task)
    await until(lambda: bool(started))
    await asyncio.sleep(after)
    handle.stop()
    await asyncio.wait_for(handle.wait(), timeout)
    return handle


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


def live_processes(*, descendants_of: int | None = None) -> list[tuple[int, str, str]]:
    """(pid, command line, working folder) of every live process (zombies excluded), from
    the host's /proc: a sandboxed command's own pids are its PID namespace's, not these.
    ``descendants_of``: only the processes below that pid (another test process running
    beside this one, the browser suite's, starts the same programs)."""
    import os

    found, parents = [], {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                state, ppid = f.read().rsplit(b")", 1)[1].split()[:2]
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{name}/cwd")
        except (OSError, IndexError, ValueError):
            continue
        parents[int(name)] = int(ppid)
        if state not in (b"Z", b"X"):
            found.append((int(name), cmdline, cwd))
    if descendants_of is None:
        return found

    def below(pid: int) -> bool:
        for _ in range(64):  # a chain of parents, bounded
            pid = parents.get(pid, 0)
            if pid == descendants_of:
                return True
            if pid <= 1:
                return False
        return False

    return [p for p in found if below(p[0])]


def own_processes() -> list[tuple[int, str, str]]:
    """The live processes this test process started, and theirs."""
    import os

    return live_processes(descendants_of=os.getpid())


def running(mark: str) -> list[int]:
    """Pids of the live processes whose command line holds ``mark`` (a unique sleep time)."""
    return [pid for pid, cmdline, _ in live_processes() if mark in cmdline]


# --- a long cell, at the executor seam ----------------------------------------------------


class PrintingCell:
    """An executor running one cell that prints a line a tick until it is told to end, or
    interrupted (a RunningExecutor)."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] | None = None
        self.end = asyncio.Event()
        self.interrupted = False

    async def __call__(self, code: str, timeout: float | None) -> RunResult:
        self.outputs = [{"output_type": "stream", "name": "stdout", "text": ""}]
        try:
            for step in range(1000):
                self.outputs[0]["text"] += f"loss {1 / (step + 1):.3f}\n"
                if self.interrupted:
                    error = {"ename": "KeyboardInterrupt", "evalue": "", "traceback": []}
                    outputs = [*self.outputs, {"output_type": "error", **error}]
                    return RunResult(
                        status="error", execution_count=3, outputs=outputs, error=error
                    )
                if self.end.is_set():
                    return RunResult(status="ok", execution_count=3, outputs=self.outputs)
                await asyncio.sleep(0.02)
            raise AssertionError("the cell never ended")
        finally:
            self.outputs = None

    def outputs_so_far(self) -> list[dict[str, Any]] | None:
        return None if self.outputs is None else [dict(o) for o in self.outputs]

    def interrupt(self) -> bool:
        self.interrupted = True
        return True


def there_before_the_agent(*paths: str | os.PathLike[str]) -> None:
    """Make files count as there before an agent started next: their modification time
    put back, and the file clock moved past their change time (which no one can set)."""
    newest = 0
    for path in paths:
        os.utime(path, (1_600_000_000, 1_600_000_000))
        newest = max(newest, os.stat(path).st_ctime_ns)
    while file_clock_ns() <= newest:
        time.sleep(0.001)
