"""Session search benchmark, measured in one run.

    .venv/bin/python benchmarks/sessions.py [--sessions 200] [--messages 30]

Prints:

* what indexing costs a session write on the event loop: ``Session.flush`` of one step's
  records with the index hook and without it, interleaved, median, and the difference
  (the hook only queues bytes; the writer thread does the SQLite work); and how late a
  1 ms timer fires on the loop while a session writes a step every 10 ms, with the hook
  (the writer thread working beside the loop, sharing the GIL) and without;
* how long the writer thread takes to index ``--sessions`` sessions as they are written,
  and a rebuild of the index from their ``history.jsonl`` files;
* the index's size beside the histories';
* search times (median of 20) for a rare word, a common word, a prefix, several words
  that no one passage holds together (the any-word fallback), and a 100 KB query.

Nothing is asserted: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_agent.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from jupyter_agent.sessions import store as _session  # noqa: E402
from jupyter_agent.sessions.index import (  # noqa: E402
    INDEX_FILE,
    SESSIONS_DIR,
    SessionIndex,
    index_records,
)
from jupyter_agent.sessions.store import Session  # noqa: E402

WORDS = [
    "sales",
    "churn",
    "cohort",
    "revenue",
    "forecast",
    "outliers",
    "duplicates",
    "pipeline",
    "schema",
    "warehouse",
    "latency",
    "gradient",
    "boosting",
    "features",
    "missing",
    "values",
    "join",
    "merge",
    "plot",
    "histogram",
    "median",
]


def step(n: int, i: int) -> list[Message]:
    """One step of a session: a question, a tool call and its result, an answer."""
    a, b = WORDS[(n + i) % len(WORDS)], WORDS[(n * 7 + i) % len(WORDS)]
    call = Message(
        role="assistant",
        content=[
            TextBlock(text=f"Let me look at the {a} data."),
            ToolUseBlock(id=f"t{n}_{i}", name="read_file", input={"path": f"{b}.csv"}),
        ],
        message_type="tool_call",
    )
    result = Message(
        role="user",
        content=[
            ToolResultBlock(
                tool_use_id=f"t{n}_{i}", content=[TextBlock(text=f"{a},{b}\n" + "1,2\n" * 200)]
            )
        ],
        message_type="tool_result",
    )
    return [
        Message.user(f"session {n}: check the {a} against the {b} table"),
        call,
        result,
        Message.assistant(f"The {a} looks fine; {b} has {n + i} rows to fix."),
    ]


def hook_index(hook: Callable[..., None]) -> None:
    """Give the session store ``hook`` as what ``Session.flush`` indexes its records with."""
    _session.index_records = hook  # type: ignore[attr-defined]  # its import, swapped on purpose


def median_us(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1e6:8.1f} µs"


def flush_cost(workspace: Path, rounds: int) -> None:
    hooked: list[float] = []
    bare: list[float] = []
    session = Session.create(workspace, session_id="flush-cost", title="flush cost")
    for i in range(rounds):
        for hook, into in ((index_records, hooked), (lambda *a: None, bare)):
            hook_index(hook)
            for message in step(10_000, i):
                session.history.append(message)
                session._unwritten.append(message)
            session._metadata_changed = True
            started = time.perf_counter()
            session.flush()
            into.append(time.perf_counter() - started)
    hook_index(index_records)
    session.close()
    extra = statistics.median(hooked) - statistics.median(bare)
    print(f"flush of one step (4 records + metadata), median of {rounds}:")
    print(f"  with the index hook      {median_us(hooked)}")
    print(f"  without it               {median_us(bare)}")
    print(f"  the hook's cost on the loop  {extra * 1e6:+.1f} µs")


async def lag(workspace: Path, steps: int, hooked: bool) -> list[float]:
    """How late a 1 ms timer fires on the event loop while a session writes ``steps`` steps
    (one every 10 ms, as if each were a quick model call), with the index hook or not."""
    if not hooked:
        hook_index(lambda *a: None)
    late: list[float] = []
    done = False

    async def ticker() -> None:
        loop = asyncio.get_running_loop()
        while not done:
            started = loop.time()
            await asyncio.sleep(0.001)
            late.append(loop.time() - started - 0.001)

    tick = asyncio.create_task(ticker())
    session = Session.create(workspace, title=f"lag {hooked}")
    try:
        for i in range(steps):
            for message in step(20_000, i):
                session.append(message)
            session.save()
            await asyncio.sleep(0.01)
        SessionIndex.of(workspace / SESSIONS_DIR).wait()
    finally:
        done = True
        await tick
        session.close()
        hook_index(index_records)
    return late


def loop_lag(workspace: Path, steps: int) -> None:
    print(f"\nevent-loop lag of a 1 ms timer while a session writes {steps} steps:")
    for hooked in (False, True, False, True):
        late = sorted(asyncio.run(lag(workspace, steps, hooked)))
        p99 = late[int(len(late) * 0.99)]
        name = "with the index hook" if hooked else "without it"
        print(
            f"  {name:<20} p50 {statistics.median(late) * 1e3:5.2f} ms  "
            f"p99 {p99 * 1e3:5.2f} ms  max {late[-1] * 1e3:5.2f} ms"
        )


def main(sessions: int = 200, messages: int = 30, rounds: int = 40) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        index = SessionIndex.of(workspace / SESSIONS_DIR)
        (workspace / SESSIONS_DIR).mkdir(parents=True)
        index.rebuild()  # as a first search would: from now on the writer thread keeps it
        flush_cost(workspace, rounds)
        loop_lag(workspace, rounds * 2)

        started = time.perf_counter()
        for n in range(sessions):
            session = Session.create(workspace, title=f"{WORDS[n % len(WORDS)]} study {n}")
            for i in range(messages // 4):
                for message in step(n, i):
                    session.append(message)
            session.close()
        written = time.perf_counter() - started
        index.wait(120)
        indexed = time.perf_counter() - started
        print(f"\n{sessions} sessions of {messages // 4 * 4} messages:")
        print(f"  written in               {written:8.2f} s")
        print(f"  indexed as written after {indexed:8.2f} s (writer thread)")
        started = time.perf_counter()
        index.rebuild()
        print(f"  rebuilt from histories   {time.perf_counter() - started:8.2f} s")
        root = workspace / SESSIONS_DIR
        histories = sum(p.stat().st_size for p in root.glob("*/history.jsonl"))
        size = sum(p.stat().st_size for p in root.glob(INDEX_FILE + "*"))
        print(f"  index {size / 1e6:.1f} MB beside {histories / 1e6:.1f} MB of history")

        queries = {
            "a rare word": "session 137",
            "a common word": "sales",
            "a prefix": "forec",
            "words held apart": "warehouse histogram nothing",
            "a 100 KB query": "churn " * 17_000,
        }
        print("\nsearch, median of 20:")
        for label, query in queries.items():
            times = []
            for _ in range(20):
                started = time.perf_counter()
                hits = index.search(query, limit=10)
                times.append(time.perf_counter() - started)
            print(f"  {label:<18} {statistics.median(times) * 1e3:8.2f} ms  ({len(hits)} found)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    main(args.sessions, args.messages, args.rounds)
