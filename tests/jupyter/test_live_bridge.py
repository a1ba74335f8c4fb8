"""The live bridge's kernel side (jupyter_agent.jupyter.bridge.live).

Two halves. With a stand-in comm: replies resolved from other threads, duplicates
ignored, timeouts and closes that say what failed, cancel → interrupt, errors written for
the model, a blocked loop not mistaken for a silent frontend. With a real kernel
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
from inline_snapshot import snapshot
from kernels import Kernel, kernel

from jupyter_agent.errors import ToolError
from jupyter_agent.jupyter.bridge import live as bridge_module
from jupyter_agent.jupyter.bridge import messages as bridge_messages
from jupyter_agent.jupyter.bridge import protocol as _bridge_protocol
from jupyter_agent.jupyter.bridge.live import (
    ERROR_CODES,
    OPERATIONS,
    PROTOCOL,
    TARGET,
    BridgeClosed,
    BridgeError,
    BridgeTimeout,
    LiveBridge,
    connect_notebook,
)
from jupyter_agent.jupyter.bridge.messages import INSERT_CELL_ID
from jupyter_agent.notebook.bridge import NotebookBridge, SourceChanged
from jupyter_agent.notebook.file import FileBridge

pytestmark = pytest.mark.timeout(60)

PING = {"path": "work/analysis.ipynb", "frontend": "jupyterlab", "version": "0", "instance": "tab1"}
CELL = {
    "id": "a",
    "cell_type": "code",
    "source": "print(1)",
    "execution_count": 1,
    "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}],
    "metadata": {},
}

# --- a stand-in comm, answered from another thread ----------------------------------------

Answer = Callable[[dict[str, Any]], Any]


class Failure(Exception):
    """A failed reply as the lab extension sends it: a code, its fields, a message for logs."""

    def __init__(self, code: str, message: str = "", **fields: str) -> None:
        super().__init__(message)
        self.body = {"code": code, "message": message or code, **fields}


class FakeComm:
    """The comm as the bridge sees it; ``frontend`` answers each request, on a thread of its
    own (as replies arrive on the shell or a subshell thread, never the loop's)."""

    def __init__(self, frontend: FakeFrontend, **kwargs: Any) -> None:
        self.frontend = frontend
        self.target_name = kwargs["target_name"]
        self.open_data = kwargs["data"]
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self._on_msg: Callable[[dict[str, Any]], None] | None = None
        self._on_close: Callable[[dict[str, Any]], None] | None = None

    def on_msg(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._on_msg = callback

    def on_close(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._on_close = callback

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)
        self.frontend.received(self, data)

    def close(self) -> None:
        self.closed = True

    # the frontend's side
    def reply(self, data: dict[str, Any]) -> None:
        assert self._on_msg is not None
        self._on_msg({"content": {"comm_id": "c", "data": data}})

    def close_from_frontend(self, data: dict[str, Any]) -> None:
        assert self._on_close is not None
        self._on_close({"content": {"comm_id": "c", "data": data}})


class FakeFrontend:
    """Answers requests with ``answers[op](request)`` from a worker thread: a dict is the
    reply's result, a :class:`Failure` an error reply, None no reply at all."""

    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.answers: dict[str, Answer] = {"ping": lambda _: PING, **(answers or {})}
        self.comms: list[FakeComm] = []
        self.requests: list[dict[str, Any]] = []
        self.threads: set[str] = set()

    def factory(self, **kwargs: Any) -> FakeComm:
        comm = FakeComm(self, **kwargs)
        self.comms.append(comm)
        return comm

    def received(self, comm: FakeComm, request: dict[str, Any]) -> None:
        self.requests.append(request)

        def answer() -> None:
            self.threads.add(threading.current_thread().name)
            handler = self.answers.get(request["op"])
            if handler is None:
                result: Any = Failure("unknown_operation", op=request["op"])
            else:
                result = handler(request)
            if result is None:
                return
            if isinstance(result, Failure):
                comm.reply({"id": request["id"], "ok": False, **result.body})
            else:
                comm.reply({"id": request["id"], "ok": True, "result": result})

        threading.Thread(target=answer, name="shell-or-subshell").start()

    def ops(self) -> list[str]:
        return [r["op"] for r in self.requests]


async def connected(frontend: FakeFrontend, **kwargs: Any) -> LiveBridge:
    bridge = LiveBridge("/srv/work/analysis.ipynb", comm_factory=frontend.factory, **kwargs)
    await bridge.connect()
    return bridge


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
    assert [c.model_dump() for c in cells] == [CELL]
    assert "shell-or-subshell" in frontend.threads
    ping, read = frontend.requests
    assert "to" not in ping  # nobody known yet: every frontend may answer the ping
    assert read["to"] == "tab1"  # then only the one that answered first
    assert read["id"] != ping["id"]


async def test_every_operation_sends_the_protocol_arguments():
    frontend = FakeFrontend(
        {
            "read": lambda r: {"path": "x", "cells": [CELL], "dirty": False},
            "read_cell": lambda r: {**CELL, "id": r["args"]["cell_id"]},
            "insert": lambda r: {**CELL, "id": r["args"].get("id", "new"), "outputs": []},
            "update": lambda r: {**CELL, "source": r["args"]["source"]},
            "delete": lambda r: {**CELL, "index": 3},
            "move": lambda r: {"index": 0},
            "set_type": lambda r: {**CELL, "cell_type": r["args"]["cell_type"], "outputs": []},
            "run": lambda r: {"status": "ok", "execution_count": 7, "outputs": CELL["outputs"]},
            "interrupt": lambda r: {"interrupted": True},
            "save": lambda r: {},
        }
    )
    bridge = await connected(frontend)
    assert [c.id for c in await bridge.read()] == ["a"]
    assert (await bridge.read_cell("a")).id == "a"
    assert (await bridge.insert("x", "markdown", after="a", cell_id="old")).id == "old"
    assert (await bridge.update("a", "y")).source == "y"
    cell, index = await bridge.delete("a")
    assert (cell.id, index) == ("a", 3)
    assert await bridge.move("a", before="b") == 0
    assert (await bridge.set_type("a", "raw")).cell_type == "raw"
    result = await bridge.run("a", timeout=5)
    assert (result.status, result.execution_count) == ("ok", 7)
    assert result.outputs == CELL["outputs"]
    await bridge.interrupt()
    await bridge.save()
    args = {r["op"]: r["args"] for r in frontend.requests}
    assert args["insert"] == {"source": "x", "cell_type": "markdown", "after": "a", "id": "old"}
    assert args["update"] == {"cell_id": "a", "source": "y"}
    assert args["move"] == {"cell_id": "a", "before": "b"}
    assert args["set_type"] == {"cell_id": "a", "cell_type": "raw"}
    assert args["run"] == {"cell_id": "a", "timeout": 5}
    assert args["interrupt"] == {} and args["save"] == {}
    assert set(frontend.ops()) == set(OPERATIONS)  # each one the protocol defines


async def test_insert_names_the_id_to_reuse_cell_id_from_protocol_3_and_id_before():
    def insert(request: dict[str, Any]) -> Any:
        return {**CELL, "id": "old", "outputs": []}

    for protocol, key in ((PROTOCOL, "cell_id"), (INSERT_CELL_ID - 1, "id")):
        ping = {**PING, "protocol": protocol}

        def answer_ping(_request: dict[str, Any], ping: dict[str, Any] = ping) -> Any:
            return ping

        frontend = FakeFrontend({"ping": answer_ping, "insert": insert})
        bridge = await connected(frontend)
        assert (await bridge.insert("x", "code", before="a", cell_id="old")).id == "old"
        args = frontend.requests[-1]["args"]
        assert args == {"source": "x", "cell_type": "code", "before": "a", key: "old"}, protocol
    assert PROTOCOL >= INSERT_CELL_ID


def test_the_message_schema_is_what_bridge_messages_defines():
    # Regenerate with `python -m jupyter_agent.jupyter.bridge.messages`, then
    # `npm run build:protocol` in js/.
    assert bridge_messages.SCHEMA_FILE.read_text(encoding="utf-8") == bridge_messages.render()
    assert list(bridge_messages.OPERATIONS) == list(OPERATIONS)


async def test_a_second_reply_with_the_same_id_is_ignored():
    def twice(request: dict[str, Any]) -> None:
        comm = frontend.comms[0]
        cells = {"path": "x", "cells": [CELL], "dirty": False}
        comm.reply({"id": request["id"], "ok": True, "result": cells})
        comm.reply({"id": request["id"], "ok": True, "result": {"path": "x", "cells": []}})
        comm.reply({"id": "never-asked", "ok": True, "result": {}})

    frontend = FakeFrontend({"read": twice})
    bridge = await connected(frontend)
    assert [c.id for c in await bridge.read()] == ["a"]
    assert [c.id for c in await bridge.read()] == ["a"]  # the stray replies changed nothing


async def test_a_request_without_an_answer_fails_naming_the_operation():
    frontend = FakeFrontend({"save": lambda _: None})
    bridge = await connected(frontend, request_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(BridgeTimeout, match=r"'save' request within 0.3 s") as caught:
        await bridge.save()
    assert 0.25 < time.monotonic() - started < 3  # it waited the 0.3 s, and gave up then
    assert isinstance(caught.value, ToolError)  # tools show it to the model
    assert bridge._pending == {}


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


async def test_errors_are_written_for_the_model_from_the_code_not_the_message():
    frontend = FakeFrontend(
        {
            "update": lambda r: Failure("no_cell", "for the log", cell_id=r["args"]["cell_id"]),
            "run": lambda r: Failure("not_code", "for the log", cell_id="m", cell_type="markdown"),
            "save": lambda r: Failure("failed", "the disk is full"),
            "move": lambda r: Failure("a_code_from_a_newer_extension", "it moved elsewhere"),
        }
    )
    bridge = await connected(frontend)
    with pytest.raises(ToolError) as caught:
        await bridge.update("zz", "x")
    assert str(caught.value) == snapshot(
        "There is no cell with id 'zz' in work/analysis.ipynb. Call read_notebook to see "
        "the cell ids."
    )
    assert isinstance(caught.value, BridgeError)
    assert (caught.value.code, caught.value.fields) == ("no_cell", {"cell_id": "zz"})
    with pytest.raises(ToolError) as caught:
        await bridge.run("m")
    assert str(caught.value) == snapshot(
        "JupyterLab could not run cell m: Cell m is a markdown cell; only code cells run."
    )
    # Only an error nobody foresaw is told in the frontend's words.
    with pytest.raises(BridgeError, match=r"could not save the notebook: The disk is full\.$"):
        await bridge.save()
    with pytest.raises(
        BridgeError, match=r"could not move cell a: It moved elsewhere\.$"
    ) as caught:
        await bridge.move("a", before="b")
    assert caught.value.code == "failed"
    with pytest.raises(BridgeError, match="does not know the operation 'frobnicate'") as caught:
        await bridge._request(bridge_messages.Request("frobnicate", {}))
    assert (caught.value.code, caught.value.fields) == ("unknown_operation", {"op": "frobnicate"})


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
async def test_every_error_code_the_extension_sends_is_worded_in_python(code):
    """The extension makes its errors only from bridge_protocol.json's codes (a compile-time
    check in js/src/errors.ts); each one has its wording here, built from its fields."""
    spec = bridge_module.SPEC["errors"][code]
    fields = {name: f"<{name}>" for name in spec["fields"]}
    frontend = FakeFrontend({"read_cell": lambda r: Failure(code, "<message>", **fields)})
    bridge = await connected(frontend)
    with pytest.raises(BridgeError) as caught:
        await bridge.read_cell("c")
    assert (caught.value.code, caught.value.fields) == (code, fields)
    text = str(caught.value)
    assert all(value in text for value in fields.values())
    assert ("<message>" in text) == (code == "failed")  # the wording is Python's own


def test_python_words_exactly_the_protocols_codes():
    assert set(_bridge_protocol._WHY) == ERROR_CODES
    closes = {"path_mismatch", "notebook_closed"} | bridge_module.KERNEL_ERROR_CODES - {"timeout"}
    assert closes <= set(_bridge_protocol._CLOSED_WHY)
    assert set(_bridge_protocol._CLOSED_WHY) <= ERROR_CODES | bridge_module.KERNEL_ERROR_CODES


async def test_cancelling_a_run_asks_the_frontend_to_interrupt_that_cell():
    frontend = FakeFrontend({"run": lambda _: None, "interrupt": lambda _: {"interrupted": True}})
    bridge = await connected(frontend)
    running = asyncio.ensure_future(bridge.run("slow", timeout=60))
    await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert frontend.requests[-1]["op"] == "interrupt"
    assert frontend.requests[-1]["args"] == {"cell_id": "slow"}
    assert frontend.requests[-1]["to"] == "tab1"
    assert bridge._pending == {}  # the interrupt's answer is not waited for


async def test_a_run_bound_to_a_source_sends_it_and_a_changed_cell_runs_nothing():
    """The extension compares the source in the step that starts the execution (a browser
    test checks that half); here: the source goes with the request, and its refusal is
    the typed signal run_cell turns into a fresh card."""
    current = {"source": "print('edited by the user')"}

    def run(request: dict[str, Any]) -> Any:
        expected = request["args"].get("source")
        if expected is not None and expected != current["source"]:
            return Failure("source_changed", "changed", cell_id=request["args"]["cell_id"])
        return {"status": "ok", "execution_count": 1, "outputs": []}

    frontend = FakeFrontend({"ping": lambda _: {**PING, "protocol": PROTOCOL}, "run": run})
    bridge = await connected(frontend)
    with pytest.raises(SourceChanged, match="Cell a was not run: its code changed"):
        await bridge.run("a", timeout=5, source="print(1)")
    assert frontend.requests[-1]["args"] == {"cell_id": "a", "timeout": 5, "source": "print(1)"}
    result = await bridge.run("a", source="print('edited by the user')")
    assert result.status == "ok"


async def test_an_extension_that_does_not_check_sources_is_not_asked_to_run_a_bound_cell():
    frontend = FakeFrontend({"run": lambda _: {"status": "ok", "outputs": []}})  # protocol 1
    bridge = await connected(frontend)
    with pytest.raises(BridgeError, match="extension is older than this kernel's") as caught:
        await bridge.run("a", source="print(1)")
    assert caught.value.code == "old_extension"
    assert "run" not in frontend.ops()  # never sent: it would run whatever the cell holds
    assert (await bridge.run("a")).status == "ok"  # a run no card bound is as before


async def test_a_run_without_timeout_waits_past_any_request_limit_and_can_be_looked_at():
    """A long cell has no limit: the run's answer is waited for however long it takes, and
    meanwhile its outputs so far are read and the cell interrupted by its id."""
    so_far = [{"output_type": "stream", "name": "stdout", "text": "epoch 1\n"}]
    frontend = FakeFrontend(
        {
            "run": lambda _: None,
            "read_cell": lambda r: {**CELL, "id": r["args"]["cell_id"], "outputs": so_far},
            "interrupt": lambda _: {"interrupted": True},
        }
    )
    bridge = await connected(frontend, request_timeout=0.2)
    running = asyncio.ensure_future(bridge.run("train"))
    await asyncio.sleep(0.6)  # three request limits
    assert not running.done()
    assert await bridge.outputs("train") == so_far
    await bridge.interrupt("train")
    run, _, interrupt = frontend.requests[-3:]
    assert run["args"] == {"cell_id": "train", "timeout": None}
    assert interrupt["args"] == {"cell_id": "train"}
    frontend.comms[0].reply(
        {"id": run["id"], "ok": True, "result": {"status": "error", "outputs": so_far}}
    )
    assert (await running).status == "error"


async def test_a_loop_blocked_by_a_cell_is_not_a_silent_frontend():
    """A synchronous cell blocks the loop past the timeout while the reply waits to be read;
    once the cell ends, reading it takes the kernel a few loop iterations. It still counts."""
    frontend = FakeFrontend({"read": lambda _: None})
    bridge = await connected(frontend, request_timeout=0.5)
    reading = asyncio.ensure_future(bridge.read())
    await asyncio.sleep(0.01)  # the request is out
    time.sleep(1.0)  # noqa: ASYNC251 - the synchronous cell, blocking the loop on purpose
    request_id = frontend.requests[-1]["id"]

    async def kernel_reads_the_reply() -> None:
        for _ in range(5):
            await asyncio.sleep(0)
        frontend.comms[0].reply(
            {"id": request_id, "ok": True, "result": {"path": "x", "cells": [CELL]}}
        )

    reader = asyncio.ensure_future(kernel_reads_the_reply())
    assert [c.id for c in await reading] == ["a"]
    await reader


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
