"""Panel benchmarks: a real kernel through jupyter_client, and JupyterLab in Chromium.

    .venv/bin/python benchmarks/panel.py [--samples 20] [--tokens 20000] [--no-browser]

Prints:

* comm traffic while the panel streams an answer of ``--tokens`` tokens (about 4
  characters each) from a scripted model: messages per second, and bytes per streamed
  token, both as the panel's JSON payload and as whole Jupyter messages on the wire
  (target: payload ≤ 3× the answer's size), at full speed and at ~100 tokens a second
  (a Claude-like rate);
* the delay a user cell (``1+1``) sees while the agent streams, against the same cell on
  an idle kernel (target: ≤ 50 ms added);
* in the browser, the time from a click on **Stop** to the panel's status line saying
  "stopped" (p50/p95; target p95 ≤ 150 ms) while the agent streams, while it waits for an
  answer, while it runs a shell command, and while it streams during the user's own
  ``time.sleep`` cell (the Stop goes over the agent's subshell).

Measured in one run on this machine; printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]
PANEL = "jupyter_agent.jupyter.panel.widget.AgentPanel"
CHARS_PER_TOKEN = 4


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def answer_text(tokens: int) -> str:
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
    ]
    text: list[str] = []
    i = 0
    while sum(map(len, text)) < tokens * CHARS_PER_TOKEN:
        text.append(words[i % len(words)] + (" " if i % 40 else "\n\n"))
        i += 1
    return "".join(text)[: tokens * CHARS_PER_TOKEN]


# --- the kernel side -----------------------------------------------------------------------


class Kernel:
    """A kernel whose iopub messages a thread collects, with their arrival times."""

    def __init__(self, folder: Path) -> None:
        notebook = folder / "bench.ipynb"
        nbformat.write(nbformat.v4.new_notebook(), notebook)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env["JPY_SESSION_NAME"] = str(notebook)
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(folder), env=env)
        self.client = self.manager.blocking_client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while not self._stop.is_set():
            try:
                msg = self.client.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            self.messages.append((time.monotonic(), msg))

    def run(self, code: str, timeout: float = 60) -> float:
        """Run ``code``; return the seconds until its execute_reply."""
        started = time.monotonic()
        msg_id = self.client.execute(code)
        while True:
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"{code!r} failed: {reply['content'].get('evalue')}")
        return time.monotonic() - started

    def panel_comm(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for _, msg in list(self.messages):
                data = msg["content"].get("data", {})
                if (
                    msg["msg_type"] == "comm_open"
                    and data.get("state", {}).get("_anywidget_id") == PANEL
                ):
                    return str(msg["content"]["comm_id"])
            time.sleep(0.05)
        raise RuntimeError("the panel's comm never opened")

    def to_panel(self, comm_id: str, content: dict[str, Any]) -> None:
        data = {"method": "custom", "content": content}
        self.client.shell_channel.send(
            self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        )

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def wire_size(msg: dict[str, Any]) -> int:
    """Bytes of a message as jupyter_client frames it (JSON parts, signature, delimiter)."""
    parts = [msg["header"], msg["parent_header"], msg["metadata"], msg["content"]]
    frames = [json.dumps(p, default=str, ensure_ascii=False).encode() for p in parts]
    return sum(map(len, frames)) + 64 + len(b"<IDS|MSG>") + len(b"comm_msg")


def stream_traffic(folder: Path, tokens: int, delay: float, probe: bool) -> dict[str, Any]:
    """Stream one answer of ``tokens`` tokens through the panel; measure its comm traffic
    and, with ``probe``, a user cell's round trip meanwhile."""
    text = answer_text(tokens)
    (folder / "answer.json").write_text(json.dumps([{"text": text}]))
    kernel = Kernel(folder)
    try:
        kernel.run(
            "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
            f"m = ScriptedModel('answer.json', chunk_size={CHARS_PER_TOKEN}, delay={delay})\n"
            "%agent --model $m"
        )
        comm = kernel.panel_comm()
        kernel.to_panel(comm, {"type": "hello", "view": "bench"})
        idle = [kernel.run("1+1") for _ in range(20)] if probe else []
        first = len(kernel.messages)
        kernel.run("h = %agent plan Write it all")
        busy: list[float] = []
        while not _finished(kernel, comm, first):
            if probe:
                busy.append(kernel.run("1+1"))
            time.sleep(0.1 if probe else 0.25)
        time.sleep(0.3)
        ours = [
            (at, msg)
            for at, msg in kernel.messages[first:]
            if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == comm
        ]
        custom = [(at, m) for at, m in ours if m["content"]["data"].get("method") == "custom"]
        streamed = [
            (at, m)
            for at, m in custom
            if m["content"]["data"]["content"]["type"] in ("text", "events")
        ]
        span = streamed[-1][0] - streamed[0][0] if len(streamed) > 1 else float("nan")
        payload = sum(
            len(json.dumps(m["content"]["data"]["content"], ensure_ascii=False).encode())
            for _, m in custom
        )
        return {
            "answer_bytes": len(text.encode()),
            "seconds": span,
            "messages": len(ours),
            "custom": len(custom),
            "payload": payload,
            "wire": sum(wire_size(m) for _, m in ours),
            "idle": idle,
            "busy": busy,
        }
    finally:
        kernel.close()


def _finished(kernel: Kernel, comm: str, since: int) -> bool:
    """Whether the panel has sent the end of the run."""
    for _, msg in kernel.messages[since:]:
        if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm:
            continue
        content = msg["content"]["data"].get("content") or {}
        entries = content.get("entries", []) if content.get("type") == "events" else []
        if any(e["kind"] in ("completed", "stopped", "error") for e in entries):
            return True
    return False


# --- the browser side ----------------------------------------------------------------------


SLEEP_IN_A_CELL = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  window.__jaSleeping = true;
  const future = kernel.requestExecute({ code: 'import time; time.sleep(3)' });
  void future.done.then(() => { window.__jaSleeping = false; });
}"""
"""A 3-second synchronous cell of the user's, started from the page (not waited for)."""


def stop_clicks(samples: int) -> dict[str, list[float]]:
    from playwright.sync_api import expect, sync_playwright

    # the browser tests' JupyterLab, extension and browser flags (tests/browser, first on
    # the path now)
    sys.path[:0] = [str(ROOT / "tests" / "browser"), str(ROOT / "tests")]
    from browser_pages import CHROMIUM, CHROMIUM_ARGS
    from lab_server import start_lab_server, stop_lab_server
    from panel_ui import stop_and_time

    base = Path(tempfile.mkdtemp(prefix="ja-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    server = start_lab_server(base, env)
    url = server.url
    turns: list[dict[str, Any]] = []
    for _ in range(samples):
        turns.append({"text": answer_text(3000)})
        turns.append({"tool_calls": [{"name": "ask_user", "input": {"question": "Which?"}}]})
        turns.append(
            {"tool_calls": [{"name": "execute_command", "input": {"command": "sleep 30"}}]}
        )
        turns.append({"text": answer_text(3000)})  # stopped while the user's cell sleeps
    (base / "root" / "stop.json").write_text(json.dumps(turns))
    setup = (
        "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
        "m = ScriptedModel('stop.json', chunk_size=4, delay=0.005)\n"
        "%agent act --model $m Begin\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(setup)]
    nbformat.write(nb, base / "root" / "stop.ipynb")
    times: dict[str, list[float]] = {
        "while streaming": [],
        "while waiting for an answer": [],
        "while a command runs": [],
        "while your cell sleeps": [],
    }
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)
            page.goto(f"{url}/lab/tree/stop.ipynb?reset")
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
                "?.status === 'idle'"
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            panel = page.locator(".ja-panel")
            status = panel.get_by_role("status")
            message = panel.get_by_role("textbox", name="Message")

            def measure(name: str) -> None:
                times[name].append(stop_and_time(page, panel))

            # The first run ("Begin") streams the first answer.
            for i in range(samples):
                if i:
                    message.fill("Write it again")
                    panel.get_by_role("button", name="Send").click()
                expect(status).to_have_text("thinking…")
                panel.locator(".ja-text").last.wait_for()
                measure("while streaming")
                message.fill("Ask me")
                panel.get_by_role("button", name="Send").click()
                expect(status).to_have_text("waiting for you (your answer)")
                measure("while waiting for an answer")
                message.fill("Run it")
                panel.get_by_role("button", name="Send").click()
                if i == 0:  # later runs are allowed by the rule this click adds
                    panel.get_by_role("button", name="Always allow").click()
                expect(status).to_have_text("running tool execute_command")
                measure("while a command runs")
                # The user's own synchronous cell runs: the Stop goes over the agent's
                # subshell, and the cell is not interrupted.
                message.fill("Write it again")
                panel.get_by_role("button", name="Send").click()
                expect(status).to_have_text("thinking…")
                page.evaluate(SLEEP_IN_A_CELL)
                page.wait_for_function("() => window.__jaSleeping === true")
                measure("while your cell sleeps")
                if not page.evaluate("() => window.__jaSleeping"):
                    print("  (a cell ended before its Stop was measured: not during a cell)")
                page.wait_for_function("() => window.__jaSleeping === false")
            browser.close()
    finally:
        stop_lab_server(server)
        shutil.rmtree(base, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    print("jupyter_agent panel benchmarks\n")

    with tempfile.TemporaryDirectory() as tmp:
        fast = stream_traffic(Path(tmp), args.tokens, 0.0005, probe=True)
    with tempfile.TemporaryDirectory() as tmp:
        slow = stream_traffic(Path(tmp), 1500, 0.01, probe=False)
    print("Comm traffic while streaming one answer (target: payload ≤ 3× the answer)")
    for name, tokens, run in (
        (f"{args.tokens:,} tokens, full speed", args.tokens, fast),
        ("1,500 tokens at ~100 tokens/s", 1500, slow),
    ):
        seconds = run["seconds"]
        print(
            f"  {name:<32} {seconds:5.1f} s  {run['messages'] / seconds:5.1f} msgs/s  "
            f"payload {run['payload'] / tokens:5.2f} B/token "
            f"({run['payload'] / run['answer_bytes']:.2f}× the answer)  "
            f"wire {run['wire'] / tokens:6.1f} B/token "
            f"({run['wire'] / run['answer_bytes']:.2f}×)"
        )

    idle, busy = fast["idle"], fast["busy"]
    print("\nA user cell (1+1) round trip (target: ≤ 50 ms added while the agent streams)")
    for name, times in (("idle kernel", idle), ("while the agent streams", busy)):
        print(
            f"  {name:<26} p50 {percentile(times, 0.5) * 1000:6.1f} ms   "
            f"p95 {percentile(times, 0.95) * 1000:6.1f} ms   ({len(times)} cells)"
        )
    added = statistics.median(busy) - statistics.median(idle)
    print(f"  added (medians)            {added * 1000:6.1f} ms")

    if args.no_browser:
        return
    print(
        f"\nStop in the browser: click → status says stopped ({args.samples} samples each; "
        "target p95 ≤ 150 ms)"
    )
    for name, times in stop_clicks(args.samples).items():
        print(
            f"  {name:<30} p50 {percentile(times, 0.5):6.1f} ms   "
            f"p95 {percentile(times, 0.95):6.1f} ms   max {max(times):6.1f} ms"
        )


if __name__ == "__main__":
    main()
