"""The lab extension end to end: built, installed, enabled, and answering the comm the
kernel opens, in a real JupyterLab in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

VERSION = version("jupyter-in-kernel-agent")  # the distribution name (pyproject.toml)
PROTOCOL = json.loads(
    (Path(__file__).parents[2] / "jupyter_agent/jupyter/bridge/bridge_protocol.json").read_text()
)["version"]  # what the extension answers a ping with

# What the kernel side does: open the comm with the notebook's path as the kernel knows
# it, keep the replies and the close message, ping.
OPEN_AND_PING = """\
import json
import comm

replies, closed = [], []
bridge = comm.create_comm(target_name="jupyter_agent", data={"path": __session__})
bridge.on_msg(lambda msg: replies.append(msg["content"]["data"]))
bridge.on_close(lambda msg: closed.append(msg["content"]["data"]))
bridge.send({"id": "1", "op": "ping"})
print(__session__)
"""

# The frontend answers as soon as it sees the request, so its reply reaches the kernel's
# shell channel ahead of this cell's execute_request and has been handled by the time
# the cell runs; the short wait only matters with comms on subshells.
PRINT_REPLIES = """\
import time

deadline = time.monotonic() + 10
while not replies and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({"replies": replies, "closed": closed}))
"""


def _shown_json(text: str) -> dict[str, Any]:
    """The JSON object a cell printed (its output is exactly one line of JSON)."""
    shown: dict[str, Any] = json.loads(text)
    return shown


def test_the_extension_is_installed_and_enabled():
    result = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    lines = [line for line in listing.splitlines() if "jupyter-agent" in line]
    assert lines, f"jupyter-agent is not installed as a lab extension:\n{listing}"
    assert re.search(rf"jupyter-agent v{re.escape(VERSION)} enabled OK", lines[0]), lines[0]


def test_the_built_extension_has_the_python_package_version():
    built = Path(__file__).resolve().parents[2] / "jupyter_agent" / "labextension" / "package.json"
    assert json.loads(built.read_text())["version"] == VERSION


def test_ping_over_the_comm_answers_for_this_notebook(open_notebook, page, lab):
    notebook = open_notebook("bridge.ipynb")
    assert page.evaluate("() => window.jupyterapp.isPluginActivated('jupyter-agent:bridge')")

    kernel_path = notebook.run_cell(OPEN_AND_PING)
    assert kernel_path.endswith("bridge.ipynb"), kernel_path

    shown = _shown_json(notebook.run_cell(PRINT_REPLIES))
    assert shown == {
        "replies": [
            {
                "id": "1",
                "ok": True,
                "result": {
                    "path": "bridge.ipynb",
                    "frontend": "jupyterlab",
                    "version": VERSION,
                    "protocol": PROTOCOL,
                    "server_root": str(lab.root),
                },
            }
        ],
        "closed": [],
    }

    # An unknown operation and a request without an id get an error reply, and the comm
    # stays open for the next request.
    notebook.run_cell(
        'bridge.send({"id": "2", "op": "frobnicate"})\n'
        'bridge.send({"op": "ping"})\n'
        'bridge.send({"id": "3", "op": "ping"})'
    )
    shown = _shown_json(notebook.run_cell(PRINT_REPLIES))
    assert shown["replies"][1:] == [
        {
            "id": "2",
            "ok": False,
            "code": "unknown_operation",
            "op": "frobnicate",
            "message": "unknown operation frobnicate",
        },
        {
            "id": None,
            "ok": False,
            "code": "malformed_request",
            "problem": 'no string "id"',
            "message": 'malformed request: no string "id"',
        },
        {
            "id": "3",
            "ok": True,
            "result": {
                "path": "bridge.ipynb",
                "frontend": "jupyterlab",
                "version": VERSION,
                "protocol": PROTOCOL,
                "server_root": str(lab.root),
            },
        },
    ]
    assert shown["closed"] == []


def test_a_comm_for_another_path_is_closed_with_an_error(open_notebook, lab):
    # A folder with a space, so the path is also URL-quoted on the way in.
    notebook = open_notebook("sub dir/other.ipynb")
    notebook.run_cell(
        OPEN_AND_PING
        + """
import os

folder, name = os.path.split(__session__)
refused = {}
for label, data in {
    "elsewhere": {"path": "elsewhere/other.ipynb"},
    "not on a segment boundary": {"path": os.path.join(folder, "x" + name)},
}.items():
    other = comm.create_comm(target_name="jupyter_agent", data=data)
    other.on_close(lambda msg, label=label: refused.__setitem__(label, msg["content"]["data"]))
# A kernel that knows no path (a remote one) is given the one notebook open on it.
named = []
pathless = comm.create_comm(target_name="jupyter_agent", data={})
pathless.on_msg(lambda msg: named.append(msg["content"]["data"]["result"]["path"]))
pathless.send({"id": "9", "op": "ping"})
"""
    )
    shown = _shown_json(
        notebook.run_cell(
            PRINT_REPLIES.replace('"closed": closed', '"refused": refused, "named": named').replace(
                "while not replies", "while not (replies and named)"
            )
        )
    )
    mismatch = {
        "code": "path_mismatch",
        "message": "path mismatch: no notebook on this kernel has that path",
    }
    assert shown["refused"] == {
        "elsewhere": mismatch,
        "not on a segment boundary": mismatch,
    }
    assert shown["named"] == ["sub dir/other.ipynb"]
    # The comm with the right path, in the same kernel, is unaffected.
    assert shown["replies"] == [
        {
            "id": "1",
            "ok": True,
            "result": {
                "path": "sub dir/other.ipynb",
                "frontend": "jupyterlab",
                "version": VERSION,
                "protocol": PROTOCOL,
                "server_root": str(lab.root),
            },
        }
    ]


def test_the_comm_target_is_there_again_after_a_restart_and_a_kernel_change(open_notebook, lab):
    notebook = open_notebook("restart.ipynb")
    one_ping = {
        "replies": [
            {
                "id": "1",
                "ok": True,
                "result": {
                    "path": "restart.ipynb",
                    "frontend": "jupyterlab",
                    "version": VERSION,
                    "protocol": PROTOCOL,
                    "server_root": str(lab.root),
                },
            }
        ],
        "closed": [],
    }
    notebook.run_cell(OPEN_AND_PING)
    assert _shown_json(notebook.run_cell(PRINT_REPLIES)) == one_ping

    # Same kernel connection, new kernel process: exactly one answer, not two.
    notebook.restart_kernel()
    notebook.run_cell(OPEN_AND_PING)
    assert _shown_json(notebook.run_cell(PRINT_REPLIES)) == one_ping

    # A new kernel, hence a new kernel connection.
    notebook.change_kernel()
    notebook.run_cell(OPEN_AND_PING)
    assert _shown_json(notebook.run_cell(PRINT_REPLIES)) == one_ping
