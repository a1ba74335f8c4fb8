"""The live bridge's requests (jupyter_agent.jupyter.bridge.live), against a stand-in comm
answered from other threads: every operation with its protocol arguments, the cells its
replies carry flagged when edited since they ran (or not, from older extensions), replies
resolved once, timeouts that name the operation, errors written for the model from
their code (every code the extension sends), cancel → interrupt, runs bound to a source,
runs without a time limit, and a loop blocked by a cell not mistaken for a silent
frontend. Connecting, reconnecting and the real kernel: test_live_bridge_connection.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from bridge_frontend import CELL, PING, Failure, FakeFrontend, connected
from inline_snapshot import snapshot

from jupyter_agent.errors import ToolError
from jupyter_agent.jupyter.bridge import live as bridge_module
from jupyter_agent.jupyter.bridge import messages as bridge_messages
from jupyter_agent.jupyter.bridge import protocol as _bridge_protocol
from jupyter_agent.jupyter.bridge.live import (
    ERROR_CODES,
    OPERATIONS,
    PROTOCOL,
    BridgeError,
    BridgeTimeout,
)
from jupyter_agent.jupyter.bridge.messages import INSERT_CELL_ID
from jupyter_agent.notebook.bridge import EditLanded, SourceChanged

pytestmark = pytest.mark.timeout(60)


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


async def test_a_cell_edited_since_it_ran_is_flagged_from_every_reply_that_carries_cells():
    # JupyterLab's isDirty, as the extension sends it; an older extension leaves it out.
    dirty = {**CELL, "source": "print(2)", "edited_since_run": True}
    frontend = FakeFrontend(
        {
            "read": lambda r: {"path": "x", "cells": [dirty, CELL], "dirty": True},
            "read_cell": lambda r: dirty if r["args"]["cell_id"] == "a" else CELL,
            "insert": lambda r: {**CELL, "id": "new", "outputs": [], "execution_count": None},
            "update": lambda r: {**dirty, "source": r["args"]["source"]},
            "delete": lambda r: {**dirty, "index": 0},
            "set_type": lambda r: CELL,
        }
    )
    bridge = await connected(frontend)
    assert [c.edited_since_run for c in await bridge.read()] == [True, False]
    assert (await bridge.read_cell("a")).edited_since_run
    assert not (await bridge.read_cell("b")).edited_since_run
    assert not (await bridge.insert("x", "code")).edited_since_run
    updated = await bridge.update("a", "print(3)")
    assert updated.edited_since_run and updated.outputs == CELL["outputs"]  # the old ones
    deleted, _ = await bridge.delete("a")
    assert deleted.edited_since_run
    assert not (await bridge.set_type("a", "code")).edited_since_run


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


async def test_an_edit_sent_before_a_stop_is_waited_for_and_said_to_have_landed():
    """The frontend makes an edit once it has it: a Stop after the request went out waits
    for the answer and raises EditLanded with the edit's result (so it is recorded); a
    Stop before the frontend answers a failure is a plain cancel."""
    release = threading.Event()

    def slow(result: Any) -> Any:
        return lambda _: (release.wait(5), result)[1]

    frontend = FakeFrontend(
        {
            "insert": slow({**CELL, "id": "new"}),
            "delete": slow({**CELL, "index": 3}),
            "move": slow({"index": 2}),
            "update": slow(Failure("no_such_cell", cell_id="a")),
        }
    )
    bridge = await connected(frontend)
    edits = {
        "insert": (bridge.insert("x = 1", after="a"), lambda r: r.id == "new"),
        "delete": (bridge.delete("a"), lambda r: r[0].id == "a" and r[1] == 3),
        "move": (bridge.move("a", before="b"), lambda r: r == 2),
    }
    for op, (edit, parsed) in edits.items():
        release.clear()
        task = asyncio.ensure_future(edit)
        await asyncio.sleep(0.05)  # sent, not answered
        task.cancel()
        await asyncio.sleep(0.05)
        assert not task.done(), op  # waiting for the answer
        release.set()
        with pytest.raises(EditLanded) as landed:
            await task
        assert parsed(landed.value.result), op
    release.clear()
    failing = asyncio.ensure_future(bridge.update("a", "y = 2"))
    await asyncio.sleep(0.05)
    failing.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError) as cancelled:
        await failing
    assert not isinstance(cancelled.value, EditLanded)
    assert bridge._pending == {}


async def test_no_interrupt_goes_for_a_cell_the_kernel_saw_end():
    """The agent's thread may learn that its cell ended (the kernel's post_run_cell)
    before the frontend does (the idle status is on its way): an interrupt sent then would
    stop whatever the frontend runs next, the user's cell. So none is sent."""
    ended: dict[str, float] = {}
    frontend = FakeFrontend({"run": lambda _: None, "interrupt": lambda _: {"interrupted": True}})
    bridge = await connected(frontend, cell_ended=ended.get)
    running = asyncio.ensure_future(bridge.run("quick", timeout=60))
    await asyncio.sleep(0.05)
    await bridge.interrupt("quick")  # still running: sent
    assert frontend.ops().count("interrupt") == 1
    ended["quick"] = time.monotonic()  # the kernel ran it to its end
    await bridge.interrupt("quick")
    running.cancel()  # a Stop now: the cell ended, nothing to interrupt
    with pytest.raises(asyncio.CancelledError):
        await running
    assert frontend.ops().count("interrupt") == 1
    # A later run of the same cell is new: its interrupt goes again.
    again = asyncio.ensure_future(bridge.run("quick", timeout=60))
    await asyncio.sleep(0.05)
    await bridge.interrupt("quick")
    assert frontend.ops().count("interrupt") == 2
    again.cancel()


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
