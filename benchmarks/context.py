"""Context management, measured in one run against the loopback Messages API server.

    .venv/bin/python benchmarks/context.py [--steps 60] [--window 40000]

A scripted session of ``--steps`` steps, each reading an 8 KB file (the model re-reads
ten files in turn), runs twice with the real ``anthropic`` client: once with context
management (a window of ``--window`` tokens, which the server enforces), once without it
(a server with no limit). Printed, side by side:

* the input tokens the session sends in all, and the same weighted as the API bills a
  cached prefix (a cache read at 0.1×, a cache write at 1.25× the input price), with the
  ratio of the two sessions;
* the cacheable share of each request (the bytes before the newest cache breakpoint
  that repeat the previous request's prefix, over the request's size): its mean from
  step 2, across the compactions (target ≥ 0.8), and the share of the first request after
  each compaction (low by nature: the prefix changed once there).

Figures are measured, never asserted (machines here are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from jupyter_agent import Agent, AnthropicModel, ContextPolicy
from jupyter_agent.testing import Fault, MessagesServer, Reply, text, tool_use

os.environ.setdefault("ANTHROPIC_API_KEY", "benchmark-key")
FILES = 10
FILE_BYTES = 8_000


def _framework() -> Any:
    """benchmarks/framework.py, for its measure of the cacheable share."""
    path = Path(__file__).resolve().parent / "framework.py"
    spec = importlib.util.spec_from_file_location("framework_benchmark", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_files(workspace: Path) -> None:
    for i in range(FILES):
        line = f"file {i}: " + "measurements and notes " * 3
        lines = (line for _ in range(FILE_BYTES // len(line)))
        (workspace / f"notes{i}.txt").write_text("\n".join(lines) + "\n")


class Session:
    """The server's script: read a file per step, then finish; summaries on request."""

    def __init__(self, steps: int, limit: int | None) -> None:
        self.steps = steps
        self.limit = limit
        self.issued = 0
        self.refused = 0

    def __call__(self, body: dict[str, Any], raw: bytes) -> Reply | Fault:
        if self.limit is not None and len(raw) // 4 > self.limit:
            self.refused += 1
            return Fault.status(400, "invalid_request_error", "prompt is too long")
        last = body["messages"][-1]["content"][-1]
        if last.get("type") == "text" and last["text"].startswith("[Compaction"):
            return Reply([text("Summary: the notes were read in turn; nothing is pending.")])
        if self.issued < self.steps - 1:
            path = f"notes{self.issued % FILES}.txt"
            self.issued += 1
            return Reply(
                [text(f"Reading {path}."), tool_use("read_file", {"path": path})], "tool_use"
            )
        return Reply([text("Done.")])


async def session(steps: int, window: int | None, workspace: Path) -> dict[str, Any]:
    with MessagesServer() as server:
        script = Session(steps, window)
        server.responder = lambda body: script(body, server.requests[-1].raw)
        model = AnthropicModel("claude-sonnet-4-5", base_url=server.url, retry_delay=0.001)
        policy = ContextPolicy(window=window) if window else ContextPolicy(auto=False)
        agent = Agent("actor", model, workspace=workspace, max_steps=steps + 5, context=policy)
        compactions: list[int] = []
        agent.subscribe(
            lambda e: compactions.append(len(server.requests)) if e.kind == "compaction" else None
        )
        handle = await agent.run("Read the notes, one file a step.")
        assert handle.state.value == "completed", handle.error
        bodies = [r.body for r in server.requests]
        sizes = [len(r.raw) // 4 for r in server.requests]
        return {
            "bodies": bodies,
            "sizes": sizes,
            "compactions": compactions,
            "refused": script.refused,
        }


def billed(sizes: list[int], shares: list[float]) -> float:
    """Input tokens as billed: the cached share read at 0.1×, the rest written at 1.25×."""
    total = sizes[0] * 1.25
    for size, share in zip(sizes[1:], shares, strict=True):
        total += size * share * 0.1 + size * (1 - share) * 1.25
    return total


async def main(steps: int, window: int) -> None:
    framework = _framework()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        write_files(workspace)
        print(f"jupyter_agent context benchmark ({steps} steps of an 8 KB read each)\n")
        runs = {}
        for label, limit in (("managed", window), ("unmanaged", None)):
            run = await session(steps, limit, workspace)
            shares = [framework.cacheable_share(a, b) for a, b in itertools.pairwise(run["bodies"])]
            run["shares"] = shares
            run["billed"] = billed(run["sizes"], shares)
            runs[label] = run
            print(
                f"{label:10} {len(run['sizes']):3} requests   input {sum(run['sizes']):>10,} tokens"
                f"   billed as {run['billed']:>12,.0f}   largest request {max(run['sizes']):,}"
            )
        managed, unmanaged = runs["managed"], runs["unmanaged"]
        print(
            f"\ninput tokens, managed / unmanaged: "
            f"{sum(managed['sizes']) / sum(unmanaged['sizes']):.2f}×   "
            f"billed: {managed['billed'] / unmanaged['billed']:.2f}×"
        )
        shares = managed["shares"]
        after = [shares[i - 1] for i in managed["compactions"] if 0 < i <= len(shares)]
        print(
            f"\ncacheable share from step 2 (window {window:,}, {len(managed['compactions'])} "
            f"compactions, {managed['refused']} refusals): mean {statistics.mean(shares):.2f}"
            f" (target ≥ 0.8), lowest {min(shares):.2f}"
        )
        print("first request after each compaction: " + " ".join(f"{s:.2f}" for s in after))
        print(f"unmanaged, for comparison: mean {statistics.mean(unmanaged['shares']):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--window", type=int, default=40_000)
    args = parser.parse_args()
    asyncio.run(main(args.steps, args.window))
