"""How the live bridge (jupyter_agent.jupyter.bridge.live) connects to its frontend and
stays connected. With a stand-in comm: the path and protocol it opens with, a frontend
closing the comm and the reconnect (or its failure), JupyterLab without the extension,
the fallbacks of connect_notebook to the file, a renamed notebook. With a real kernel
(jupyter_client) and this test playing JupyterLab on the comm: a top-level ``await
connect_notebook()`` in a cell, the fallbacks to the file, replies over a subshell, and a
reply queued behind a synchronous cell.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from bridge_frontend import CELL, PING, Failure, FakeComm, FakeFrontend, connected
from kernels import Kernel, kernel

from jupyter_agent.jupyter.bridge import live as bridge_module
from jupyter_agent.jupyter.bridge.live import (
    PROTOCOL,
    TARGET,
    BridgeClosed,
    BridgeError,
    LiveBridge,
    connect_notebook,
)
from jupyter_agent.notebook.bridge import NotebookBridge
from jupyter_agent.notebook.file import FileBridge

pytestmark = pytest.mark.timeout(60)


async def test_connects_with_the_path_and_protocol_and_addresses_one_frontend():
    frontend = FakeFrontend({"read": lambda _: {"path": "x", "cells": [CELL], "dirty": False}})
    bridge = await connected(frontend)
    comm = frontend.comms[0]
    assert comm.target_name == TARGET == "jupyter_agent"
    assert comm.open_data == {"path": "/srv/work/analysis.ipynb", "protocol": PROTOCOL}
    assert isinstance(bridge, NotebookBridge)
    assert bridge.mode == "live" and bridge.connected
    assert bridge.path == "work/analysis.ipynb"  # as JupyterLab shows it
    assert bridge.describe().startswith("work/analysis.ipynb — live in JupyterLab")

    cells = await bridge.read()
    assert [c.model_dump() for c in cells] == [{**CELL, "edited_since_run": False}]
    assert "shell-or-subshell" in frontend.threads
    ping, read = frontend.requests
    assert "to" not in ping  # nobody known yet: every frontend may answer the ping
    assert read["to"] == "tab1"  # then only the one that answered first
    assert read["id"] != ping["id"]


async def test_notebook_7_is_called_by_its_name_not_jupyterlab():
    """One extension serves both apps; its ping says which, and what the user reads (the
    panel's notebook line, an error) names that one."""
    frontend = FakeFrontend(
        {
            "ping": lambda _: {**PING, "frontend": "notebook"},
            "run": lambda r: Failure("no_kernel", "for the log"),
        }
    )
    bridge = await connected(frontend)
    assert bridge.describe().startswith("work/analysis.ipynb — live in Jupyter Notebook:")
    with pytest.raises(BridgeError) as raised:
        await bridge.run("a")
    assert str(raised.value) == (
        "Jupyter Notebook could not run cell a: The notebook has no running kernel, so its "
        "cells cannot run."
    )
    assert "JupyterLab" not in bridge.describe() + str(raised.value)


async def test_a_frontend_closing_the_comm_fails_pending_requests_and_reconnects_later():
    frontend = FakeFrontend({"read": lambda _: None})
    bridge = await connected(frontend)
    reading = asyncio.ensure_future(bridge.read())
    await asyncio.sleep(0.05)
    assert not reading.done()
    frontend.comms[0].close_from_frontend({"code": "notebook_closed", "message": "closed"})
    with pytest.raises(BridgeClosed, match="the notebook was closed") as caught:
        await reading
    assert caught.value.code == "notebook_closed"
    assert not bridge.connected

    # The notebook is open again: the next request opens a new comm and pings first.
    frontend.answers["read"] = lambda _: {"path": "x", "cells": [], "dirty": False}
    assert await bridge.read() == []
    assert len(frontend.comms) == 2
    assert frontend.ops()[-2:] == ["ping", "read"]


async def test_a_failed_reconnect_says_why_and_leaves_no_comm_open():
    frontend = FakeFrontend()
    bridge = await connected(frontend, connect_timeout=0.3)
    frontend.comms[0].close_from_frontend({"code": "notebook_closed", "message": "closed"})
    frontend.answers["ping"] = lambda _: None  # nobody there any more
    await asyncio.sleep(0.05)
    with pytest.raises(
        BridgeClosed, match=r"closed \(the notebook was closed\) and reconnecting failed"
    ) as caught:
        await bridge.read()
    assert caught.value.code == "notebook_closed"
    assert frontend.comms[1].closed
    assert frontend.ops() == ["ping", "ping"]  # the read itself was never sent


async def test_a_frontend_without_the_extension_closes_the_comm_at_once():
    frontend = FakeFrontend({"ping": lambda _: None})
    bridge = LiveBridge("a.ipynb", comm_factory=frontend.factory, connect_timeout=30)
    connecting = asyncio.ensure_future(bridge.connect())
    await asyncio.sleep(0.05)
    frontend.comms[0].close_from_frontend({})
    with pytest.raises(BridgeClosed, match="no jupyter-agent extension") as caught:
        await asyncio.wait_for(connecting, 10)  # not the 30 s
    assert caught.value.code == "no_extension"


async def test_connect_notebook_falls_back_to_the_file(monkeypatch, tmp_path):
    import comm

    notebook = tmp_path / "a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)

    for close_with in ({}, {"code": "path_mismatch", "message": "path mismatch"}):
        frontend = FakeFrontend({"ping": lambda _: None})

        def closing(
            frontend: FakeFrontend = frontend, close_data: dict[str, str] = close_with, **kw: Any
        ) -> Any:
            made = frontend.factory(**kw)

            def send(data: dict[str, Any], made: FakeComm = made) -> None:
                threading.Thread(target=made.close_from_frontend, args=(close_data,)).start()

            made.send = send  # type: ignore[method-assign]  # this comm's frontend closes it
            return made

        monkeypatch.setattr(comm, "create_comm", closing)
        started = time.monotonic()
        bridge = await connect_notebook(str(notebook), timeout=30)
        assert isinstance(bridge, FileBridge), close_with
        # A close is an answer: no waiting out the 30 s.
        assert time.monotonic() - started < 10
        assert frontend.comms[0].closed is False  # the frontend closed it already

    # Nobody answers: file mode after the timeout, and the comm is closed.
    silent = FakeFrontend({"ping": lambda _: None})
    monkeypatch.setattr(comm, "create_comm", silent.factory)
    started = time.monotonic()
    bridge = await connect_notebook(str(notebook), timeout=0.3)
    assert isinstance(bridge, FileBridge) and bridge.file == notebook.resolve()
    assert 0.25 < time.monotonic() - started < 3  # the 0.3 s, then file mode
    assert silent.comms[0].closed

    # Outside a kernel comm's stand-in never answers: no wait at all.
    monkeypatch.undo()
    started = time.monotonic()
    assert isinstance(await connect_notebook(str(notebook), timeout=30), FileBridge)
    assert time.monotonic() - started < 10  # not the 30 s


async def test_connect_notebook_needs_a_notebook_path(monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(bridge_module, "kernel_notebook_path", lambda: None)
    with pytest.raises(ValueError, match="pass the notebook's path"):
        await connect_notebook()


async def test_a_renamed_notebook_is_named_and_reopened_by_its_new_path():
    frontend = FakeFrontend()
    bridge = await connected(frontend)
    told: list[str] = []
    bridge.on_renamed = told.append
    comm = frontend.comms[0]
    comm.reply({"event": "renamed", "path": "work/cleaned.ipynb"})
    await asyncio.sleep(0.05)  # delivered on the loop
    assert told == ["work/cleaned.ipynb"]
    assert bridge.path == "work/cleaned.ipynb"
    assert bridge.describe().startswith("work/cleaned.ipynb — live in JupyterLab")
    # A comm opened again (after the frontend closed this one) asks for the new path, so
    # the extension finds the notebook under its new name.
    comm.close_from_frontend({"code": "notebook_closed", "message": "closed"})
    await asyncio.sleep(0.05)
    frontend.answers["ping"] = lambda _: {**PING, "path": "work/cleaned.ipynb"}
    await bridge.connect()
    assert frontend.comms[-1].open_data["path"] == "work/cleaned.ipynb"
    # Events it does not know, or without a path, change nothing.
    comm = frontend.comms[-1]
    comm.reply({"event": "renamed", "path": ""})
    comm.reply({"event": "exploded"})
    await asyncio.sleep(0.05)
    assert told == ["work/cleaned.ipynb"] and bridge.path == "work/cleaned.ipynb"


# --- a real kernel, with this test playing JupyterLab ---------------------------------------


class PlayedLab:
    """A real kernel whose comm messages this test answers as the lab extension would.

    Every iopub message read (while a cell runs) goes through ``_read``: comm opens to
    ``jupyter_agent`` and requests on them, answered by ``answer(request)`` (a reply dict,
    or None for none).
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.opened: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.received_at: list[float] = []
        """When each request arrived (time.monotonic())."""
        self.on_open: Callable[[str, dict[str, Any]], None] = lambda comm_id, data: None
        self.answer: Callable[[dict[str, Any]], dict[str, Any] | None] = self.ping
        self.subshell: str | None = None
        """Send replies with this subshell id (as JupyterLab does with comms over subshells)."""
        kernel.on_message = self._read

    @staticmethod
    def ping(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["op"] != "ping":
            return None
        return {"id": request["id"], "ok": True, "result": {**PING, "path": "analysis.ipynb"}}

    def send_comm(self, msg_type: str, comm_id: str, data: dict[str, Any]) -> None:
        client = self.kernel.client
        msg = client.session.msg(msg_type, {"comm_id": comm_id, "data": data})
        if self.subshell is not None:
            msg["header"]["subshell_id"] = self.subshell
        client.shell_channel.send(msg)

    def _read(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == TARGET:
            self.opened.append(content["data"])
            self.on_open(content["comm_id"], content["data"])
        elif kind == "comm_msg":
            self.requests.append(content["data"])
            self.received_at.append(time.monotonic())
            reply = self.answer(content["data"])
            if reply is not None:
                self.send_comm("comm_msg", content["comm_id"], reply)

    def run(self, code: str, timeout: float = 20.0) -> str:
        """Execute a cell; return what it printed. Fails if it raised."""
        return self.kernel.ok(code, timeout).stdout

    def create_subshell(self) -> str:
        client = self.kernel.client
        client.control_channel.send(client.session.msg("create_subshell_request", {}))
        reply = client.control_channel.get_msg(timeout=10)
        return str(reply["content"]["subshell_id"])


@contextmanager
def played_lab(tmp_path: Path) -> Iterator[PlayedLab]:
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "analysis.ipynb")
    with kernel(tmp_path, env={"JPY_SESSION_NAME": "analysis.ipynb"}) as k:
        yield PlayedLab(k)


@pytest.mark.slow
def test_a_cell_can_await_connect_notebook_at_top_level(tmp_path):
    """ipykernel 7.4 reads comm messages while a cell awaits, so the ping's answer gets in."""
    with played_lab(tmp_path) as lab:
        shown = lab.run(
            """
            import time
            from jupyter_agent.jupyter.bridge.live import connect_notebook
            started = time.monotonic()
            bridge = await connect_notebook(timeout=30)
            print(bridge.mode, bridge.path, round(time.monotonic() - started, 1))
            """
        )
        mode, path, seconds = shown.split()
        assert (mode, path) == ("live", "analysis.ipynb")  # the answer got in, not the timeout
        assert float(seconds) < 10
        assert lab.opened == [{"path": "analysis.ipynb", "protocol": PROTOCOL}]


@pytest.mark.slow
def test_the_file_is_used_when_the_frontend_refuses_or_stays_silent(tmp_path):
    with played_lab(tmp_path) as lab:
        # JupyterLab without the extension closes the comm with empty data at once.
        lab.on_open = lambda comm_id, data: lab.send_comm("comm_close", comm_id, {})
        shown = lab.run(
            """
            import time
            from jupyter_agent.jupyter.bridge.live import connect_notebook
            started = time.monotonic()
            bridge = await connect_notebook(timeout=30)
            print(bridge.mode, round(time.monotonic() - started, 1))
            """
        )
        mode, seconds = shown.split()
        assert mode == "file" and float(seconds) < 10  # the close, not the 30 s

        # A frontend that never answers: file mode once the timeout passed.
        lab.on_open = lambda comm_id, data: None
        lab.answer = lambda request: None
        shown = lab.run(
            """
            started = time.monotonic()
            bridge = await connect_notebook(timeout=0.5)
            print(bridge.mode, bridge.path.endswith("analysis.ipynb"), time.monotonic() - started)
            """
        )
        mode, path_ok, seconds = shown.split()
        assert (mode, path_ok) == ("file", "True") and 0.4 < float(seconds) < 5


@pytest.mark.slow
def test_replies_over_a_subshell_and_from_a_background_task(tmp_path):
    """With comms over subshells JupyterLab sends replies with a subshell id; the bridge
    resolves its futures through call_soon_threadsafe whichever thread reads them."""
    with played_lab(tmp_path) as lab:
        lab.subshell = lab.create_subshell()

        def answer(request: dict[str, Any]) -> dict[str, Any] | None:
            if request["op"] == "read":
                return {"id": request["id"], "ok": True, "result": {"path": "x", "cells": [CELL]}}
            return PlayedLab.ping(request)

        lab.answer = answer
        lab.run(
            """
            import asyncio, threading
            from jupyter_agent.jupyter.bridge.live import LiveBridge
            bridge = LiveBridge("analysis.ipynb")
            threads = []
            original = bridge._on_msg
            bridge._on_msg = lambda msg: (threads.append(threading.current_thread().name), original(msg))

            async def work():
                await bridge.connect()
                return [c.id for c in await bridge.read()]

            task = asyncio.ensure_future(work())
            """
        )
        deadline = time.monotonic() + 10
        while True:
            shown = lab.run("print(task.done())")
            if shown.strip() == "True" or time.monotonic() > deadline:
                break
        shown = lab.run("import json\nprint(json.dumps([task.result(), bridge.mode]))")
        assert json.loads(shown) == [["a"], "live"]
        assert [r["op"] for r in lab.requests] == ["ping", "read"]
        assert lab.requests[1]["to"] == "tab1"


@pytest.mark.slow
def test_a_reply_queued_behind_a_synchronous_cell_still_counts(tmp_path):
    """The frontend answers at once, but the kernel is busy with a cell that sleeps past the
    timeout; the answer is read when the cell ends, and the bridge is live."""
    with played_lab(tmp_path) as lab:
        lab.run(
            """
            import asyncio
            from jupyter_agent.jupyter.bridge.live import connect_notebook
            task = asyncio.ensure_future(connect_notebook(timeout=0.5))
            """
        )
        sleeping = time.monotonic()
        lab.run("import time; time.sleep(5)")
        # The ping went out before the sleeping cell ended: its answer waited behind it.
        assert lab.received_at and lab.received_at[0] < sleeping + 4
        lab.run("await asyncio.wait_for(asyncio.shield(task), 5)")
        assert (lab.run("print(task.result().mode)")).strip() == "live"
