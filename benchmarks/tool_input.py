"""How long the event loop is held while a model sends a huge tool input, in one run.

    .venv/bin/python benchmarks/tool_input.py [--megabytes 10] [--rounds 3]

A model writes one ``execute_command`` call whose command is ``--megabytes`` long, through
the real ``anthropic`` client (Messages API) and the real ``openai`` client (Chat
Completions), each against its loopback server running in a process of its own. While
the agent takes the turn in, a heartbeat on the loop wakes every millisecond; the longest
it waited past its time is how long nothing else (a Stop click, a widget message) could
run. Prints, per client, the median over ``--rounds`` of that longest hold and of the
turn's whole time:

* for a 1 KB command (the reference);
* for the huge command, refused as it arrives (the input limit, as shipped);
* for the huge command with the limit lifted (as it was before: decoded, echoed on the
  tool card through the redaction pass, summarised, validated, parsed, recorded);

and the ratios of the holds to the reference's, and of the lifted limit's to the limit's.

Nothing is asserted: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_agent import Agent, AnthropicModel, input_limit  # noqa: E402
from jupyter_agent.config.rules import Everything, Rule, Rules  # noqa: E402
from jupyter_agent.models import OpenAIModel, _anthropic_stream, _chat_stream  # noqa: E402
from jupyter_agent.testing import (  # noqa: E402
    ChatCompletionsServer,
    MessagesServer,
    Reply,
    text,
    tool_use,
)

CHUNK = 1 << 16
"""Characters of the input in each streamed delta."""


def _answer(body: dict[str, Any]) -> Reply:
    """A call of the size the task names; then, once its result is in, the end."""
    last = body["messages"][-1]
    content = last.get("content")
    said = content if isinstance(content, str) else ""
    if isinstance(content, list):
        said = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    if last.get("role") == "user" and said.startswith("size "):
        size = int(said.split()[1])
        command = {"command": "true # " + "x" * size}
        return Reply([tool_use("execute_command", command)], "tool_use", chunk_size=CHUNK)
    return Reply([text("done")])


def _serve(kind: str, urls: Any) -> None:
    server = MessagesServer() if kind == "anthropic" else ChatCompletionsServer()
    with server:
        server.responder = _answer
        urls.put(server.base_url if isinstance(server, ChatCompletionsServer) else server.url)
        threading.Event().wait()


@contextlib.contextmanager
def _limit(size: int) -> Iterator[None]:
    """The tool input limit set to ``size`` wherever it is read, for the time being."""
    places = [vars(module) for module in (input_limit, _anthropic_stream, _chat_stream)]
    kept = [p["TOOL_INPUT_LIMIT"] for p in places]
    defaults = input_limit.oversized.__defaults__
    try:
        for p in places:
            p["TOOL_INPUT_LIMIT"] = size
        input_limit.oversized.__defaults__ = (size,)
        yield
    finally:
        for p, value in zip(places, kept, strict=True):
            p["TOOL_INPUT_LIMIT"] = value
        input_limit.oversized.__defaults__ = defaults


async def _one_turn(model: Any, workspace: Path, size: int) -> tuple[float, float]:
    """The longest the loop was held during a turn with a command of ``size``, and the
    turn's time (seconds)."""
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        policy=Rules([Rule.allow(Everything())]),
        persist=False,
    )
    held = 0.0
    done = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal held
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            held = max(held, time.perf_counter() - before - 0.001)

    beat = asyncio.ensure_future(heartbeat())
    started = time.perf_counter()
    handle = agent.start(f"size {size}")
    # A call the sandbox cannot judge asks whatever the rules say: the user allows it.
    agent.subscribe(lambda event: handle.approve() if event.kind == "permission_request" else None)
    await handle.wait()
    took = time.perf_counter() - started
    done.set()
    await beat
    return held, took


async def main(megabytes: float = 10, rounds: int = 3) -> None:
    huge = int(megabytes * 1024 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for kind in ("anthropic", "openai"):
            urls: Any = multiprocessing.Queue()
            server = multiprocessing.Process(target=_serve, args=(kind, urls), daemon=True)
            server.start()
            try:
                url = urls.get(timeout=30)
                if kind == "anthropic":
                    model: Any = AnthropicModel(
                        "claude-test", api_key="benchmark-key", base_url=url, retry_delay=0.001
                    )
                else:
                    model = OpenAIModel("gpt-test", api_key="k", base_url=url, retry_delay=0.001)
                cases = {
                    "1 KB": (1024, None),
                    "limited": (huge, None),
                    "unlimited": (huge, 1 << 40),
                }
                found: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
                for _ in range(rounds):  # interleaved: all see the same machine load
                    for name, (size, limit) in cases.items():
                        with _limit(limit) if limit else contextlib.nullcontext():
                            found[name].append(await _one_turn(model, workspace, size))
                held = {n: statistics.median(h for h, _ in v) for n, v in found.items()}
                took = {n: statistics.median(t for _, t in v) for n, v in found.items()}
                print(f"{kind} client, a {megabytes:g} MB command:")
                for name in cases:
                    print(
                        f"  {name:<10} loop held at most {held[name] * 1000:8.1f} ms "
                        f"({held[name] / held['1 KB']:6.1f}× the 1 KB turn's)   "
                        f"turn {took[name] * 1000:8.1f} ms"
                    )
                print(
                    f"  limit lifted / limit: held {held['unlimited'] / held['limited']:.1f}×, "
                    f"turn {took['unlimited'] / took['limited']:.1f}×"
                )
            finally:
                server.terminate()
                server.join()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.megabytes, options.rounds))
