"""The agent while the user's cell runs synchronous code: a real kernel through jupyter_client.

    .venv/bin/python benchmarks/busy_cell.py [--samples 20]

The agent lives on a thread of its own, and the lab extension sends the panel's messages
over a kernel subshell (here, as it does: ``create_subshell_request``, then each message
with the subshell's id). Prints, each beside the same figure on an idle kernel:

* stop latency — the panel's Stop command sent to the ``stopped`` event back on iopub —
  p50/p95 while the agent streams (target: p95 ≤ 150 ms during a ``time.sleep`` cell);
  and, for contrast, one Stop sent on the main shell during the cell (what a frontend
  without subshells gets: it waits for the cell);
* event throughput while the agent streams a long answer: the panel's streamed
  characters per second and messages per second, idle against during the cell (target:
  a ratio near 1).

Measured in one run on this machine; printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from panel import Kernel, answer_text, percentile

STOPPED_TIMEOUT = 30.0


def subshell(kernel: Kernel) -> str:
    request = kernel.client.session.msg("create_subshell_request", {})
    kernel.client.control_channel.send(request)
    while True:
        reply = kernel.client.get_control_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
            return str(reply["content"]["subshell_id"])


def send(kernel: Kernel, comm: str, content: dict[str, Any], shell: str | None) -> None:
    msg = kernel.client.session.msg(
        "comm_msg", {"comm_id": comm, "data": {"method": "custom", "content": content}}
    )
    if shell is not None:
        msg["header"]["subshell_id"] = shell
    kernel.client.shell_channel.send(msg)


def _custom(msg: dict[str, Any], comm: str) -> dict[str, Any] | None:
    if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm:
        return None
    data = msg["content"]["data"]
    return data["content"] if data.get("method") == "custom" else None


def _stopped_after(kernel: Kernel, comm: str, since: int) -> float:
    """The arrival time of the first ``stopped`` event after message ``since``."""
    deadline = time.monotonic() + STOPPED_TIMEOUT
    while time.monotonic() < deadline:
        for at, msg in kernel.messages[since:]:
            content = _custom(msg, comm)
            if (
                content
                and content["type"] == "events"
                and any(e["kind"] == "stopped" for e in content["entries"])
            ):
                return at
        time.sleep(0.002)
    raise RuntimeError("the run never stopped")


def _streaming(kernel: Kernel, comm: str, since: int) -> None:
    deadline = time.monotonic() + STOPPED_TIMEOUT
    while time.monotonic() < deadline:
        if any(
            (c := _custom(m, comm)) is not None and c["type"] == "text"
            for _, m in kernel.messages[since:]
        ):
            return
        time.sleep(0.005)
    raise RuntimeError("the agent never streamed")


def _sleeping_cell(kernel: Kernel, seconds: float) -> str:
    """Start a ``time.sleep`` cell; return once the kernel runs it."""
    msg_id = str(kernel.client.execute(f"import time; time.sleep({seconds})"))
    _wait_status(kernel, msg_id, "busy")
    return msg_id


def _wait_status(kernel: Kernel, msg_id: str, state: str) -> None:
    """Until the kernel said it is ``state`` for request ``msg_id``."""
    while not any(
        m["parent_header"].get("msg_id") == msg_id
        and m["msg_type"] == "status"
        and m["content"]["execution_state"] == state
        for _, m in list(kernel.messages)
    ):
        time.sleep(0.002)


def stop_latency(kernel: Kernel, comm: str, shell: str | None, busy: bool) -> float:
    """One Stop while the agent streams: seconds from sending it to the stopped event."""
    since = len(kernel.messages)
    send(kernel, comm, {"type": "command", "id": f"s{since}", "name": "send", "text": "Go"}, shell)
    _streaming(kernel, comm, since)
    cell = _sleeping_cell(kernel, 3) if busy else None
    time.sleep(0.05)
    since = len(kernel.messages)
    sent = time.monotonic()
    send(kernel, comm, {"type": "command", "id": f"x{since}", "name": "stop"}, shell)
    latency = _stopped_after(kernel, comm, since) - sent
    if cell is not None:
        _wait_status(kernel, cell, "idle")
    return latency


def throughput(
    kernel: Kernel, comm: str, shell: str, busy: bool, seconds: float
) -> tuple[float, float]:
    """Characters and messages per second the panel streams over ``seconds``."""
    since = len(kernel.messages)
    send(kernel, comm, {"type": "command", "id": f"t{since}", "name": "send", "text": "Go"}, shell)
    _streaming(kernel, comm, since)
    cell = _sleeping_cell(kernel, seconds + 1) if busy else None
    start = len(kernel.messages)
    begun = time.monotonic()
    time.sleep(seconds)
    window = [m for at, m in kernel.messages[start:] if at - begun <= seconds]
    texts = [c for m in window if (c := _custom(m, comm)) is not None and c["type"] == "text"]
    chars = sum(len(c["text"]) for c in texts)
    send(kernel, comm, {"type": "command", "id": f"y{since}", "name": "stop"}, shell)
    _stopped_after(kernel, comm, start)
    if cell is not None:
        _wait_status(kernel, cell, "idle")
    return chars / seconds, len(texts) / seconds


def main(samples: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # ~100 tokens a second (a Claude-like rate): 20 s of text, longer than any
        # measurement (each stops its run).
        turns = [{"text": answer_text(2_000)}] * (4 * samples + 8)
        (folder / "answer.json").write_text(json.dumps(turns))
        kernel = Kernel(folder)
        try:
            kernel.run(
                "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
                "m = ScriptedModel('answer.json', chunk_size=4, delay=0.01)\n"
                "%agent --model $m"
            )
            comm = kernel.panel_comm()
            send(kernel, comm, {"type": "hello", "view": "bench"}, None)
            shell = subshell(kernel)
            print(f"stop latency while the agent streams ({samples} samples each)")
            for label, during in (("idle kernel", False), ("during a time.sleep cell", True)):
                stops = [stop_latency(kernel, comm, shell, during) for _ in range(samples)]
                p50 = statistics.median(stops) * 1000
                p95 = percentile(stops, 0.95) * 1000
                print(f"  {label:<28} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
            main_shell = stop_latency(kernel, comm, None, True)
            print(f"  {'same, no subshell (fallback)':<28} one sample {main_shell * 1000:7.0f} ms")
            print(f"event throughput while the agent streams ({seconds:g} s each)")
            idle = throughput(kernel, comm, shell, False, seconds)
            busy = throughput(kernel, comm, shell, True, seconds)
            for label, (chars, msgs) in (("idle kernel", idle), ("during a time.sleep cell", busy)):
                print(f"  {label:<28} {chars:8.0f} chars/s   {msgs:6.1f} messages/s")
            ratio = busy[0] / idle[0] if idle[0] else float("nan")
            print(f"  ratio busy/idle              {ratio:.2f}× (characters)")
        finally:
            kernel.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    main(args.samples, args.seconds)
