"""``%agent mcp`` in a real kernel: it returns at once, starts the servers in the
background, updates its listing in place; the servers go away with the kernel."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import live_processes, own_processes
from kernels import agent_kernel, stop_kernel

from jupyter_agent.mcp._connection import SDK_LOGGERS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

SERVER = str(Path(__file__).with_name("mcp_server_for_tests.py"))


def test_agent_mcp_lists_starts_and_updates_in_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    (home / ".jupyter_agent" / "settings.toml").write_text(
        f'[mcpServers.srv]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        'read_only_tools = ["echo"]\n'
    )
    k = agent_kernel(tmp_path, HOME=str(home))
    try:
        since = len(k.seen)
        cell = k.ok("%agent mcp").msg_id
        k.wait_for(lambda m: m["msg_type"] == "update_display_data", timeout=20, since=since)
        seen = k.seen[since:]
        # The magic does not wait for the server: its cell is over before the listing changes.
        kinds = [
            "idle"
            if m["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle"
            and m["parent_header"].get("msg_id") == cell
            else m["msg_type"]
            for m in seen
        ]
        assert "idle" in kinds and "update_display_data" in kinds, kinds
        assert kinds.index("idle") < kinds.index("update_display_data"), kinds
        shown = [m for m in seen if m["msg_type"] == "display_data"]
        assert "srv: not started" in shown[0]["content"]["data"]["text/plain"]
        display_id = shown[0]["content"]["transient"]["display_id"]
        updates = [
            m["content"]["data"]["text/plain"]
            for m in seen
            if m["msg_type"] == "update_display_data"
            and m["content"]["transient"]["display_id"] == display_id
        ]
        assert updates, "the listing was never updated"
        assert "srv: running, test-server" in updates[-1]
        assert "echo as mcp__srv__echo (read-only: the Planner may use it)" in updates[-1]
        assert "add as mcp__srv__add\n" in updates[-1] + "\n"
        servers = {p for p, cmd, _ in own_processes() if SERVER in cmd}
        assert servers
    finally:
        stop_kernel(k)
    # The server's stdin closed with the kernel: it exits (an orphan is no longer ours,
    # so its pid is what is looked for).
    deadline = time.monotonic() + 10
    while servers & {p for p, _, _ in live_processes()}:
        assert time.monotonic() < deadline, "the MCP server outlived its kernel"
        time.sleep(0.1)


def test_what_the_sdk_logs_never_reaches_the_notebook(tmp_path: Path) -> None:
    """A user who sends every log record to the notebook (``basicConfig(DEBUG)``) sees none
    of the SDK's while it serves our servers: connecting, a server going away, shutting
    down."""
    port_probe = socket.socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    server = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port)], stderr=subprocess.DEVNULL
    )
    home = tmp_path / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    (home / ".jupyter_agent" / "settings.toml").write_text(
        f'[mcpServers.web]\nurl = "http://127.0.0.1:{port}/mcp"\n'
    )
    k = agent_kernel(tmp_path, HOME=str(home))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP MCP server did not start"
                time.sleep(0.05)
        k.ok("import logging; logging.basicConfig(level=logging.DEBUG, force=True)")
        since = len(k.seen)
        k.ok("%agent mcp")
        k.wait_for(lambda m: m["msg_type"] == "update_display_data", timeout=30, since=since)
        server.terminate()
        server.wait(10)
        time.sleep(2)  # the SDK notices: its event stream reconnects, and fails
        k.ok(
            "import asyncio\n"
            "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
            "_k = kernel_agent()\n"
            "asyncio.run_coroutine_threadsafe(_k.agent.mcp.close(), _k.home).result(30)\n"
        )
        time.sleep(0.5)
        printed = [
            line
            for m in k.seen[since:]
            if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
            for line in m["content"]["text"].splitlines()
        ]
        sdk = [
            line
            for line in printed
            if line.split(":")[1:2] and line.split(":")[1].split(".")[0] in SDK_LOGGERS
        ]
        assert sdk == [], sdk
        assert any(":jupyter_agent.mcp." in line for line in printed)  # said in our debug log
    finally:
        stop_kernel(k)
        server.kill()
        server.wait(10)
