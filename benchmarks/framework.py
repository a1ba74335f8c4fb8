"""Framework benchmarks, measured in one run against the loopback Messages API server.

    .venv/bin/python benchmarks/framework.py [--samples 30] [--rounds 60] [--paced-rounds 10]

Prints, with the real ``anthropic`` client on loopback:

* stop latency — ``handle.stop()`` to the terminal state — p50/p95 while the model
  streams, while a tool awaits, while the agent waits for an answer (target: p95 ≤ 20 ms),
  and while it reads a notebook with a 20 MB output (target: p95 well under the read);
* the agent loop's overhead as a ratio to a bare ``AsyncAnthropic`` streaming loop doing
  the same 20 scripted tool-use steps with requests of the same shape (the same cache
  breakpoints) (target ≤ 1.05×): once with a server that answers at once (the loop's own
  cost laid bare) and once with a server that paces its events, still faster than a real
  model streams. Two bare SDK loops are measured: the leanest one can write (raw stream
  events, gathered by hand: the target's reference) and the one the SDK's documentation
  shows (``messages.stream()`` and its final message). Each ratio comes with a 95%
  interval for its median over the rounds, and the verdict on the target is read from
  that interval: on a shared machine one figure can land on either side of 1.05. A third
  bare loop runs on jupyter_agent's own model layer (which encodes the request and reads
  the stream itself, more cheaply than ``messages.create()``): against it the ratio is the
  cost of the agent's own bookkeeping, with no target;
* the cacheable share of each request over a 10-step task: the bytes before the newest
  cache breakpoint that repeat the previous request's prefix, over the request's size
  (target ≥ 0.8 from step 2).

Numbers are ratios and percentiles measured side by side in one process; they are not
asserted anywhere (machines here are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import multiprocessing
import os
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anthropic

from jupyter_agent import Agent, AnthropicModel, tool
from jupyter_agent.messages import ApiTools, ApiTurn, ToolUseBlock
from jupyter_agent.models import ModelRequest, StreamDone
from jupyter_agent.testing import MessagesServer, Reply, text, tool_use

os.environ.setdefault("ANTHROPIC_API_KEY", "benchmark-key")


@tool
async def nap(seconds: float) -> str:
    """Sleep (stands for a tool that awaits I/O)."""
    await asyncio.sleep(seconds)
    return "rested"


@tool
def step(n: int) -> str:
    """One unit of scripted work."""
    return f"step {n} done"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


# --- stop latency -------------------------------------------------------------------------


def huge_outputs_notebook(folder: Path) -> Path:
    """A notebook whose one output is a 20 MB line: reading it takes the tool a while."""
    cells = [
        {"cell_type": "code", "id": "load", "metadata": {}, "execution_count": 1,
         "source": "print('x' * 20_000_000)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "x" * 20_000_000}]},
        {"cell_type": "code", "id": "after", "metadata": {}, "execution_count": 2,
         "source": "print('after')",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "after\n"}]},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = folder / "huge-outputs.ipynb"
    path.write_text(json.dumps(notebook))
    return path


async def stop_latency(
    server: MessagesServer, workspace: Path, samples: int
) -> dict[str, list[float]]:
    model = AnthropicModel(base_url=server.url)
    agent = Agent("actor", model, workspace=workspace, tools=[nap])
    reader = Agent("planner", model, workspace=workspace, notebook=huge_outputs_notebook(workspace))
    situations = {
        "while streaming": (
            agent,
            lambda: Reply([text("streamed words " * 200)], chunk_size=8, hold_after=20),
            lambda h: any(e.kind == "text_delta" for e in h.events_so_far),
        ),
        "while a tool awaits": (
            agent,
            lambda: Reply([tool_use("nap", {"seconds": 30})], "tool_use"),
            lambda h: any(e.kind == "tool_start" for e in h.events_so_far),
        ),
        "while waiting for an answer": (
            agent,
            lambda: Reply([tool_use("ask_user", {"question": "Go on?"})], "tool_use"),
            lambda h: h.pending_question is not None,
        ),
        "while reading huge outputs": (
            reader,
            lambda: Reply([tool_use("read_notebook", {})], "tool_use"),
            lambda h: any(e.kind == "tool_start" for e in h.events_so_far),
        ),
    }
    results: dict[str, list[float]] = {}
    for name, (runner, reply, reached) in situations.items():
        times = []
        for _ in range(samples):
            server.push(reply())
            handle = runner.start("benchmark task")
            while not reached(handle):  # noqa: ASYNC110 - polling is what we measure around
                await asyncio.sleep(0.001)
            ended: list[float] = []

            def record_end(_handle: object, ended: list[float] = ended) -> None:
                ended.append(time.perf_counter())

            handle.add_done_callback(record_end)
            started = time.perf_counter()
            handle.stop()
            await handle.wait()
            times.append((ended[0] - started) * 1000)
            server.release()
        results[name] = times
    return results


# --- loop overhead --------------------------------------------------------------------------

STEPS = 20
SAY = "Working on the next part of the task now. "


PACE = 0.003
"""Seconds between two SSE events for the paced run: ~300 small deltas a second, still
faster than a real model streams."""


def scripted_step(body: dict[str, Any], pace: float = 0.0) -> Reply:
    done = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if done < STEPS - 1:
        return Reply(
            [text(SAY), tool_use("step", {"n": done + 1})], "tool_use", chunk_size=4, delay=pace
        )
    return Reply([text("All steps are done.")], chunk_size=4, delay=pace)


def bare_request(
    tools: list[dict[str, Any]], system: str, messages: list[dict[str, Any]]
) -> dict[str, Any]:
    """One request of a bare loop, with the prompt-caching breakpoints the agent sends
    (tools, system, newest message): the loops send requests of the same shape, so only
    the loops differ."""
    cache = {"type": "ephemeral"}
    last = messages[-1]
    marked = [*last["content"][:-1], {**last["content"][-1], "cache_control": cache}]
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 8192,
        "system": [{"type": "text", "text": system, "cache_control": cache}],
        "tools": [*tools[:-1], {**tools[-1], "cache_control": cache}],
        "tool_choice": {"type": "auto"},
        "messages": [*messages[:-1], {**last, "content": marked}],
    }


def run_tools(uses: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A bare loop's next user turn: the results of the reply's (id, input) tool uses."""
    results = [
        {
            "type": "tool_result",
            "tool_use_id": use_id,
            "content": [{"type": "text", "text": step.fn(**args)}],
        }
        for use_id, args in uses
    ]
    return {"role": "user", "content": results}


TASK = {"role": "user", "content": [{"type": "text", "text": "Do the task in steps."}]}


async def bare_loop(
    client: anthropic.AsyncAnthropic, tools: list[dict[str, Any]], system: str
) -> float:
    """What a programmer would write with the SDK alone: stream, run the tool, repeat."""
    started = time.perf_counter()
    messages: list[dict[str, Any]] = [TASK]
    while True:
        stream = await client.messages.create(**bare_request(tools, system, messages), stream=True)
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, list[str]] = {}
        stop_reason = None
        async for event in stream:
            if event.type == "content_block_start":
                blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                partial[event.index] = []
            elif event.type == "content_block_delta":
                if event.delta.type == "text_delta":
                    blocks[event.index]["text"] += event.delta.text
                elif event.delta.type == "input_json_delta":
                    partial[event.index].append(event.delta.partial_json)
            elif event.type == "message_delta":
                stop_reason = event.delta.stop_reason
        content = []
        for i in sorted(blocks):
            block = blocks[i]
            if block["type"] == "tool_use":
                block["input"] = json.loads("".join(partial[i]) or "{}")
            content.append(block)
        messages.append({"role": "assistant", "content": content})
        if stop_reason != "tool_use":
            return time.perf_counter() - started
        uses = [(b["id"], b["input"]) for b in content if b["type"] == "tool_use"]
        messages.append(run_tools(uses))


async def helper_loop(
    client: anthropic.AsyncAnthropic, tools: list[dict[str, Any]], system: str
) -> float:
    """The same loop as the SDK's documentation writes it: ``messages.stream()``, whose
    helper gathers the reply, then its final message."""
    started = time.perf_counter()
    messages: list[dict[str, Any]] = [TASK]
    while True:
        async with client.messages.stream(**bare_request(tools, system, messages)) as stream:
            async for _event in stream:
                pass  # where a program would show the text as it comes
            reply = await stream.get_final_message()
        # Dumped once, so each later request does not convert the SDK's objects again.
        content = [b.model_dump(exclude_none=True) for b in reply.content]
        messages.append({"role": "assistant", "content": content})
        if reply.stop_reason != "tool_use":
            return time.perf_counter() - started
        messages.append(run_tools([(b.id, b.input) for b in reply.content if b.type == "tool_use"]))


async def model_layer_loop(
    model: AnthropicModel, tools: list[dict[str, Any]], system: str
) -> float:
    """The bare loop again, on jupyter_agent's own model layer instead of the SDK's
    ``messages.create()``: the agent's loop against this one is what the agent's own
    bookkeeping costs (events, states, permissions, validation, records)."""
    started = time.perf_counter()
    history: list[dict[str, Any]] = [ApiTurn(TASK)]
    tools = ApiTools(tools)  # as a run offers them: encoded once
    while True:
        request = ModelRequest(system=system, messages=history, tools=tools)
        async for part in model.stream(request):
            if isinstance(part, StreamDone):
                reply = part.response
        history.append(ApiTurn(role="assistant", content=[b.to_api() for b in reply.content]))
        if reply.stop_reason != "tool_use":
            return time.perf_counter() - started
        uses = [(b.id, b.input) for b in reply.content if isinstance(b, ToolUseBlock)]
        history.append(ApiTurn(run_tools(uses)))


async def agent_loop(url: str, workspace: Path) -> float:
    """The same steps through an Agent (made beforehand: we time the loop, not the set-up)."""
    agent = Agent("actor", AnthropicModel(base_url=url), workspace=workspace, tools=[step])
    agent.subscribe(lambda event: None)  # a frontend listening, as in a notebook
    started = time.perf_counter()
    handle = await agent.run("Do the task in steps.")
    assert handle.state.value == "completed", handle.stop_message
    return time.perf_counter() - started


def _serve_scripted_steps(urls: Any, pace: float = 0.0) -> None:
    with MessagesServer() as server:
        server.responder = lambda body: scripted_step(body, pace)
        urls.put(server.url)
        threading.Event().wait()


async def loop_overhead(workspace: Path, rounds: int, pace: float = 0.0) -> dict[str, list[float]]:
    """Seconds per 20-step task of each loop, one list per loop, ``rounds`` long."""
    # The server runs in a process of its own: in this one, its thread would compete with
    # the loops for the GIL and blur a difference of a fraction of a millisecond a step.
    urls: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve_scripted_steps, args=(urls, pace), daemon=True)
    server.start()
    try:
        url = urls.get(timeout=30)
        reference = Agent("actor", AnthropicModel(base_url=url), tools=[step], persist=False)
        system = reference.system_prompt()
        tools = [t.spec() for t in reference.tools.allowed(reference.roles["actor"].permissions)]
        client = anthropic.AsyncAnthropic(base_url=url)
        model = AnthropicModel(base_url=url)
        loops = {
            "bare": lambda: bare_loop(client, tools, system),
            "helper": lambda: helper_loop(client, tools, system),
            "model": lambda: model_layer_loop(model, tools, system),
            "agent": lambda: agent_loop(url, workspace),
        }
        times: dict[str, list[float]] = {name: [] for name in loops}
        for run in loops.values():  # warm up every path
            await run()
        for _ in range(rounds):  # interleaved, so all see the same machine load
            for name, run in loops.items():
                # Each loop starts from a collected heap: the garbage earlier loops left
                # (an agent's run leaves reference cycles) is not collected on its clock,
                # nor is a full collection, which takes longer than a whole task here.
                gc.collect()
                times[name].append(await run())
        return times
    finally:
        server.terminate()
        server.join()


LOOP_NAMES = {
    "bare": "bare loop, raw stream events",
    "helper": "bare loop, SDK stream helper",
    "model": "bare loop, jupyter_agent model layer",
    "agent": "jupyter_agent loop",
}


def report_overhead(times: dict[str, list[float]]) -> None:
    for name, label in LOOP_NAMES.items():
        print(
            f"    {label:<37} median {statistics.median(times[name]) * 1000:7.1f} ms   "
            f"best {min(times[name]) * 1000:7.1f} ms"
        )
    ours = times["agent"]
    for name in ("bare", "helper", "model"):
        reference = times[name]
        extra = (statistics.median(ours) - statistics.median(reference)) / STEPS * 1000
        # Each round's loops ran back to back: their ratio cancels the machine's drift
        # between rounds; the quartiles show how much the rounds disagree, and the
        # interval how well their median is known.
        ratios = [o / r for o, r in zip(ours, reference, strict=True)]
        paired = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        low, high = median_interval(ratios)
        # Against our own model layer there is no target: it shows the bookkeeping alone.
        judged = verdict(low, high, TARGET) if name != "model" else "the agent's bookkeeping"
        print(
            f"    against the {LOOP_NAMES[name].removeprefix('bare loop, ')}: "
            f"ratio of medians {statistics.median(ours) / statistics.median(reference):.3f}×, "
            f"{extra:+.2f} ms per step; paired per round {statistics.median(ratios):.3f}× "
            f"(95% interval {low:.3f}–{high:.3f}×; quartiles {paired[0]:.3f}–{paired[2]:.3f}×)"
            f" — {judged}"
        )


TARGET = 1.05


def median_interval(values: list[float], resamples: int = 2000) -> tuple[float, float]:
    """A 95% bootstrap interval for the median of ``values`` (seeded: the same data
    always gives the same interval)."""
    rng = random.Random(0)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def verdict(low: float, high: float, target: float) -> str:
    if high <= target:
        return f"within {target:g}×"
    if low > target:
        return f"above {target:g}×"
    return f"not told apart from {target:g}× by this run (more rounds, or a quieter machine)"


# --- cacheable share ---------------------------------------------------------------------------


def _blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as the cache sees it, in order: tools, system, messages' blocks.
    Each item: (canonical bytes without markers, whether a breakpoint sits there)."""

    def canon(block: dict[str, Any]) -> tuple[str, bool]:
        marked = "cache_control" in block
        clean = {k: v for k, v in block.items() if k != "cache_control"}
        return json.dumps(clean, sort_keys=True), marked

    items = [canon(t) for t in body.get("tools", [])]
    items += [canon(b) for b in body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        items += [(f"{message['role']}:{c}", m) for c, m in map(canon, content)]
    return items


def cacheable_share(previous: dict[str, Any], current: dict[str, Any]) -> float:
    prev, cur = _blocks(previous), _blocks(current)
    total = sum(len(c) for c, _ in cur)
    last_breakpoint = max((i for i, (_, marked) in enumerate(cur) if marked), default=-1)
    shared = 0
    for i, (content, _) in enumerate(cur[: last_breakpoint + 1]):
        if i >= len(prev) or prev[i][0] != content:
            break
        shared += len(content)
    return shared / total


async def cache_shares(server: MessagesServer, workspace: Path) -> list[float]:
    steps = 10

    def responder(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done < steps - 1:
            return Reply([text(SAY), tool_use("step", {"n": done + 1})], "tool_use")
        return Reply([text("Finished.")])

    server.responder = responder
    first = len(server.requests)
    agent = Agent("actor", AnthropicModel(base_url=server.url), workspace=workspace, tools=[step])
    await agent.run("Do the task in ten steps.")
    server.responder = None
    bodies = [r.body for r in server.requests[first:]]
    return [cacheable_share(a, b) for a, b in itertools.pairwise(bodies)]


# --- main -----------------------------------------------------------------------------------------


async def main(
    samples: int, rounds: int, paced_rounds: int, paces: tuple[float, ...] = (0.0, PACE)
) -> None:
    with MessagesServer() as server, tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        print(
            f"jupyter_agent framework benchmarks (loopback Messages API, {samples} samples each)\n"
        )

        print("Stop latency: stop() → terminal state (target p95 ≤ 20 ms)")
        for name, times in (await stop_latency(server, workspace, samples)).items():
            p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
            print(f"  {name:<28} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms")

        print(
            f"\nLoop overhead, {STEPS} tool-use steps, rounds of the four loops interleaved "
            f"(target ≤ {TARGET:g}× the raw-event loop)"
        )
        for pace in paces:
            count = paced_rounds if pace else rounds
            label = f"server paced, {pace * 1000:g} ms/event" if pace else "server answers at once"
            print(f"  {label}, {count} rounds:")
            report_overhead(await loop_overhead(workspace, count, pace))
            print()

        shares = await cache_shares(server, workspace)
        print("\nCacheable share of each request over a 10-step task (target ≥ 0.8 from step 2)")
        print("  " + "  ".join(f"s{i + 2}:{s:.2f}" for i, s in enumerate(shares)))
        print(f"  minimum {min(shares):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument(
        "--rounds", type=int, default=60, help="rounds with a server that answers at once"
    )
    parser.add_argument("--paced-rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.samples, args.rounds, args.paced_rounds))
