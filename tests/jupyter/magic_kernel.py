"""What the %agent magic tests share (test_magics, test_magic_runs, test_panel_comm,
test_magic_displays): a scripted model defined in a real kernel, the turns of a plan, a
long text to stream, and the panel's comm driven the way panel.js drives it (hello, then
commands, each answered by a reply)."""

from __future__ import annotations

import json
import time
from typing import Any

from helpers import PLAN
from kernels import Kernel


def scripted(
    kernel: Kernel,
    name: str,
    turns: list[dict[str, Any]],
    delay: float = 0.0,
    summaries: list[str] | None = None,
) -> None:
    """Define ``name`` in the kernel: a ScriptedModel replaying ``turns`` (and answering
    compaction requests with ``summaries``)."""
    path = kernel.folder / f"{name}.json"
    path.write_text(json.dumps(turns))
    kernel.ok(
        f"from jupyter_agent import ScriptedModel\n"
        f"{name} = ScriptedModel({path.name!r}, delay={delay}, chunk_size=4, "
        f"summaries={summaries or []!r})"
    )


def plan_turns(text: str = "I read the notebook. Here is the plan.") -> list[dict[str, Any]]:
    return [{"text": text, "tool_calls": [{"name": "submit_plan", "input": PLAN}]}]


LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 200  # ~2,000 pieces of 4


def hello(kernel: Kernel, comm: str, view: str = "v1") -> list[dict[str, Any]]:
    since = len(kernel.seen)
    kernel.to_panel(comm, {"type": "hello", "view": view})
    snapshot = kernel.from_panel(comm, lambda c: c["type"] == "snapshot", since=since)
    assert snapshot["view"] == view
    entries: list[dict[str, Any]] = snapshot["entries"]
    return entries


def command(
    kernel: Kernel, comm: str, name: str, *, subshell: str | None = None, **args: Any
) -> dict[str, Any]:
    cid = f"c{time.monotonic_ns()}"
    since = len(kernel.seen)
    kernel.to_panel(comm, {"type": "command", "id": cid, "name": name, **args}, subshell=subshell)
    return kernel.from_panel(comm, lambda c: c["type"] == "reply" and c["id"] == cid, since=since)
