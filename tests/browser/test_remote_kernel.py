"""A remote kernel: JupyterLab with ``--gateway-url`` pointing at a real Jupyter Kernel
Gateway, whose kernels run in a folder of their own (here on the same host, as they would on
another), with no ``__session__`` and no ``JPY_SESSION_NAME``.

What must hold:

- The agent is not left without its notebook: the lab extension names it (the kernel asks
  over the bridge's comm with no path), and the agent edits and runs it live: an inserted
  cell, and its output, appear in the page.
- The user is told once, in the transcript, that the kernel's folder is not the server's,
  and what works from there; the panel's notebook line says it too.
- A file tool asked for a file beside the notebook on the server says it does not exist in
  the kernel's folder, and why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser_pages import browser_page
from lab_server import LabServer, start_lab_server, stop_lab_server
from notebook_ui import open_notebook_in
from panel_ui import call, start, status
from playwright.sync_api import expect

GATEWAY_START_TIMEOUT = 60.0  # s: the gateway answering /api/kernelspecs


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_gateway(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + GATEWAY_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the kernel gateway exited with {process.returncode}; log:\n"
                + log.read_text(errors="replace")[-4000:]
            )
        try:
            with urllib.request.urlopen(f"{url}/api/kernelspecs", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError("the kernel gateway did not answer; log:\n" + log.read_text()[-4000:])


@dataclass
class GatewayLab:
    lab: LabServer
    """JupyterLab, its kernels started by the gateway."""
    kernel_folder: Path
    """Where the gateway runs its kernels (not the server's root)."""
    log: Path
    """The gateway's output."""


@pytest.fixture(scope="module")
def gateway_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayLab]:
    """JupyterLab (as the browser tests start it) whose kernels a Jupyter Kernel Gateway
    on a loopback port starts, in the gateway's folder, not in the server's root."""
    pytest.importorskip("kernel_gateway", reason="jupyter-kernel-gateway is not installed")
    base = tmp_path_factory.mktemp("gateway")
    kernel_folder = base / "kernel-host"
    kernel_folder.mkdir()
    runtime = Path(tempfile.mkdtemp(prefix="kg-"))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = base / "gateway.log"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "gateway-config"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    with log.open("wb") as sink:
        gateway = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kernel_gateway",
                "--KernelGatewayApp.ip=127.0.0.1",
                f"--KernelGatewayApp.port={port}",
                "--KernelGatewayApp.port_retries=0",
                # The Jupyter server lists the gateway's kernels (its /api/status too).
                "--JupyterWebsocketPersonality.list_kernels=True",
                # The kernels get PATH and these from the gateway's own environment (HOME:
                # where the agent's user settings would be).
                "--KernelGatewayApp.env_process_whitelist=HOME",
            ],
            cwd=kernel_folder,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_gateway(url, gateway, log)
        (base / "lab").mkdir()
        # Generous timeouts for the server's requests to the gateway and its kernels'
        # websockets: a kernel started on a loaded machine (CI runs three suites at once)
        # took longer than the defaults, and the page's kernel stayed "unknown".
        lab = start_lab_server(
            base / "lab",
            env={
                **os.environ,
                "JUPYTER_GATEWAY_URL": url,
                "JUPYTER_GATEWAY_REQUEST_TIMEOUT": "240",
                "JUPYTER_GATEWAY_CONNECT_TIMEOUT": "240",
            },
        )
    except BaseException:
        _end(gateway)
        raise
    try:
        yield GatewayLab(lab, kernel_folder, log)
    finally:
        stop_lab_server(lab)
        _end(gateway)
        shutil.rmtree(runtime, ignore_errors=True)


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


FROM_THE_AGENT = "print('hello from the kernel host')"

# Turns the kernel reads from its own folder; the run of the inserted cell is added in the
# kernel (its id is the one the insert answered with).
TURNS = [
    call("insert_cell", source=FROM_THE_AGENT, after="cell-0"),
    call("read_file", path="server_only.csv"),
    call("task_complete", summary="Inserted and ran a cell; the CSV is not here."),
]

SETUP = """\
%load_ext jupyter_agent
import re
from jupyter_agent import ScriptedModel
from jupyter_agent.models.scripted import tool_turn

def run_inserted(request):
    inserted = re.search(r"Inserted code cell ([\\w-]+)", str(request.messages[-1]))
    return tool_turn("run_cell", cell_id=inserted.group(1))

turns = ScriptedModel.load("remote.json")
turns.insert(1, run_inserted)
m = ScriptedModel(turns)
print(__session__ if "__session__" in dir() else "no __session__")"""


def test_a_gateway_kernel_works_on_its_open_notebook_and_says_where_it_runs(
    browser: Any, gateway_lab: GatewayLab, request: pytest.FixtureRequest
) -> None:
    lab, kernel_folder = gateway_lab.lab, gateway_lab.kernel_folder
    (kernel_folder / "remote.json").write_text(json.dumps(TURNS))
    (lab.root / "server_only.csv").write_text("region,sales\nnorth,1\n")
    with browser_page(browser, lab, request) as page:
        try:
            notebook = open_notebook_in(page, lab, "g.ipynb", ["x = 1", ""])
        except AssertionError as failed:  # the gateway's side of it, where only the report stays
            tail = gateway_lab.log.read_text(errors="replace")[-3000:]
            raise AssertionError(f"{failed}\n--- the gateway's log ---\n{tail}") from None
        out = notebook.run_cell(SETUP)
        # The kernel does not know its notebook: nothing in it names g.ipynb.
        assert "no __session__" in out, out
        panel = start(notebook, "%agent act --model $m Add a cell and check the CSV")

        # The run of the inserted cell waits for approval; the card names the code.
        card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
        expect(card).to_contain_text("hello from the kernel host")
        card.get_by_role("button", name="Allow", exact=True).click()
        expect(status(panel)).to_contain_text("completed")

        # Live in the page: the inserted cell, after cell-0, with its output.
        inserted = notebook.cells.nth(1)
        expect(inserted).to_contain_text(FROM_THE_AGENT)
        expect(inserted.locator(".jp-OutputArea-output")).to_have_text("hello from the kernel host")

        # Said once, in the transcript: where the kernel runs and what works from there.
        transcript = panel.locator(".ja-transcript")
        said = transcript.get_by_text("This kernel, started by Jupyter Kernel Gateway, runs in")
        expect(said).to_have_count(1)
        expect(said).to_contain_text(f"runs in {kernel_folder.resolve()}")
        expect(said).to_contain_text(f"not in the folder of g.ipynb ({lab.root}")
        expect(said).to_contain_text("live in JupyterLab")
        # The notebook line says it too, as long as the panel shows.
        expect(panel.locator(".ja-notebook")).to_contain_text("g.ipynb — live in JupyterLab")
        expect(panel.locator(".ja-notebook")).to_contain_text("this kernel runs apart from it")

        # The file tool looks in the kernel's folder, and says why the CSV is not there.
        row = panel.locator('.ja-tool[data-tool="read_file"]')
        row.locator("summary").first.click()
        expect(row).to_contain_text("'server_only.csv' does not exist.")
        expect(row).to_contain_text("The workspace is this kernel's folder")
