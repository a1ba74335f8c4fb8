"""The agent while the user's own cell runs synchronous code, in a real kernel.

The agent lives on a thread of its own: its stream, tools and panel go on while the main
thread sleeps in a cell, and the panel's messages sent over a subshell (as the lab
extension sends them) are carried out at once. A Stop then ends the run, not the cell.
"""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from kernels import Kernel, Message
from magic_kernel import LONG_TEXT, command, hello, scripted

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SLEEP = "import time\nt0 = time.monotonic()\ntime.sleep({s})\nt1 = time.monotonic()"


def _custom(m: Message, comm: str) -> dict[str, Any] | None:
    """A custom message the panel sent to its views, if ``m`` is one."""
    if m["msg_type"] != "comm_msg" or m["content"]["comm_id"] != comm:
        return None
    data = m["content"]["data"]
    return data["content"] if data.get("method") == "custom" else None


def _has_text(content: dict[str, Any] | None) -> bool:
    if content is None:
        return False
    if content["type"] == "text":
        return True
    return content["type"] == "events" and any(
        e["kind"] in ("text_delta", "text") for e in content["entries"]
    )


def _has_event(content: dict[str, Any] | None, kind: str) -> bool:
    return (
        content is not None
        and content["type"] == "events"
        and any(e["kind"] == kind for e in content["entries"])
    )


def _busy(kernel: Kernel, cell: str) -> int:
    """Once the kernel runs ``cell``: the index in ``seen`` of its busy status."""
    kernel.wait_for(
        lambda m: (
            m["parent_header"].get("msg_id") == cell
            and m["msg_type"] == "status"
            and m["content"]["execution_state"] == "busy"
        )
    )
    return len(kernel.seen)


def _panel_over_a_subshell(kernel: Kernel, magic: str = "%agent") -> tuple[str, str]:
    """Show the panel (``magic``), say hello as a view does, and open a subshell as the
    lab extension does: the panel's comm id and the subshell's id."""
    kernel.ok(magic)
    comm = kernel.panel_comm()
    hello(kernel, comm)
    return comm, kernel.subshell()


def _index(kernel: Kernel, message: Message) -> int:
    return next(i for i, m in enumerate(kernel.seen) if m is message)


def test_the_agent_streams_and_stops_at_once_while_the_users_cell_sleeps(kernel: Kernel) -> None:
    scripted(kernel, "m", [{"text": LONG_TEXT}], delay=0.005)  # ~10 s of text
    comm, subshell = _panel_over_a_subshell(kernel)
    since = len(kernel.seen)
    kernel.ok("h = %agent plan --model $m Write a lot")
    kernel.from_panel(comm, lambda c: c["type"] == "text", since=since)

    cell = kernel.execute(SLEEP.format(s=8))
    during = _busy(kernel, cell)
    # The stream goes on while the main thread sleeps.
    for _ in range(5):
        found = kernel.from_panel(comm, lambda c: c["type"] == "text", since=len(kernel.seen))
        assert found["text"]
    assert not any(_is_idle(m, cell) for m in kernel.seen[during:])

    # Stop over the subshell: carried out, and the run stopped, while the cell still runs.
    reply = command(kernel, comm, "stop", subshell=subshell)
    assert reply["ok"] is True
    stopped = kernel.wait_for(lambda m: _has_event(_custom(m, comm), "stopped"), since=during)
    assert not any(_is_idle(m, cell) for m in kernel.seen[during:])

    # The cell was not interrupted: it slept its 8 s and ended without an error.
    end = kernel.idle_after(cell)
    assert not [m for m in kernel.outputs(cell) if m["msg_type"] == "error"]
    assert kernel.value("t1 - t0") >= 8
    assert kernel.ok("await h.wait(); print(h.stop_reason)").stdout == "manual_stop\n"
    # Nothing the run had streamed arrives after its Stop.
    after = kernel.seen[_index(kernel, stopped) + 1 : _index(kernel, end) + 1]
    assert not [m for m in after if _has_text(_custom(m, comm))]


def test_an_answer_and_an_allow_take_effect_while_the_users_cell_sleeps(kernel: Kernel) -> None:
    ask = {"tool_calls": [{"name": "ask_user", "input": {"question": "Which file?"}}]}
    shell = {"tool_calls": [{"name": "execute_command", "input": {"command": "echo ja-ran"}}]}
    scripted(kernel, "m", [ask, shell, {"text": "All done."}])
    comm, subshell = _panel_over_a_subshell(kernel)
    since = len(kernel.seen)
    kernel.ok("h = %agent act --model $m Ask, then run a command")
    asked = kernel.from_panel(comm, lambda c: _has_event(c, "question"), since=since)
    qid = next(e for e in asked["entries"] if e["kind"] == "question")["question_id"]

    cell = kernel.execute(SLEEP.format(s=8))
    during = _busy(kernel, cell)
    answer = command(kernel, comm, "answer", question_id=qid, value="data.csv", subshell=subshell)
    assert answer["ok"] is True
    request = kernel.from_panel(comm, lambda c: _has_event(c, "permission_request"), since=during)
    rid = next(e for e in request["entries"] if e["kind"] == "permission_request")["request_id"]
    allow = command(kernel, comm, "approve", request_id=rid, allow=True, subshell=subshell)
    assert allow["ok"] is True
    # The command ran and the run completed, all while the cell slept.
    kernel.from_panel(comm, lambda c: _has_event(c, "completed"), since=during)
    assert not any(_is_idle(m, cell) for m in kernel.seen[during:])

    kernel.idle_after(cell)
    assert kernel.value("h.state.value") == "completed"
    results = kernel.value("[r.text for m in h.history for r in m.tool_results]")
    assert results[0] == "data.csv" or "data.csv" in results[0]
    assert "ja-ran" in results[1]


def test_the_agent_reads_a_file_while_a_synchronous_cell_it_started_runs(
    kernel: Kernel,
) -> None:
    """File mode (no frontend answers): the agent runs the cell on the kernel's main
    thread, which sleeps; after the window the agent goes on, then waits for the cell."""
    notebook = kernel.folder / "analysis.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time\ntime.sleep(10)\nprint('slept')", id="sync")]
    nbformat.write(nb, notebook)
    (kernel.folder / "notes.txt").write_text("the notes say hello\n")
    turns = [
        {"tool_calls": [{"name": "run_cell", "input": {"cell_id": "sync", "wait": 2}}]},
        {"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]},
        {"tool_calls": [{"name": "wait_for_cell", "input": {"cell_id": "sync"}}]},
        {"tool_calls": [{"name": "task_complete", "input": {"summary": "ran it"}}]},
    ]
    scripted(kernel, "m", turns)
    kernel.ok(
        "from jupyter_agent.config.rules import Everything, Rule, Rules\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "kernel_agent().ensure().policy = Rules([Rule.allow(Everything())])"
    )
    kernel.ok("h = %agent act --model $m Run the cell")
    kernel.ok("await h.wait()", timeout=90)
    assert kernel.value("h.state.value") == "completed"
    results = kernel.value("[r.text for m in h.history for r in m.tool_results]")
    ran, read, waited = results[0], results[1], results[2]
    assert ran.startswith("Cell sync is still running (")
    assert "the notes say hello" in read
    assert waited.startswith("Cell sync ran [") and "slept" in waited
    # The file was read while the cell ran: before the cell's end, by the kernel's clock.
    times = kernel.value("[(e.name, e.time) for e in h.events_so_far if e.kind == 'tool_end']")
    read_at = next(t for name, t in times if name == "read_file")
    waited_at = next(t for name, t in times if name == "wait_for_cell")
    assert waited_at - read_at > 4  # the cell slept 10 s from the first call


def _is_idle(m: Message, cell: str) -> bool:
    return bool(
        m["parent_header"].get("msg_id") == cell
        and m["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle"
    )


def test_a_message_sent_during_the_users_cell_starts_a_run_that_reads_its_variables(
    kernel: Kernel,
) -> None:
    look = {"tool_calls": [{"name": "inspect_variable", "input": {"name": "step"}}]}
    scripted(kernel, "m", [look, {"text": "Seen."}])
    comm, subshell = _panel_over_a_subshell(kernel, "%agent --model $m")
    cell = kernel.execute("import time\nfor step in range(80):\n    time.sleep(0.1)")
    during = _busy(kernel, cell)
    sent = command(kernel, comm, "send", text="What is step now?", subshell=subshell)
    assert sent["ok"] is True
    kernel.from_panel(comm, lambda c: _has_event(c, "completed"), since=during)
    assert not any(_is_idle(m, cell) for m in kernel.seen[during:])
    kernel.idle_after(cell)
    kernel.ok("from jupyter_agent.jupyter.kernel.agent import kernel_agent")
    (result,) = kernel.value(
        "[r.text for m in kernel_agent().agent.history for r in m.tool_results]"
    )
    assert result.startswith("step: int = ")
    assert 0 <= int(result.split("=")[1].split()[0]) < 79  # read mid-loop
    assert "A cell is running in the kernel, for " in result
    assert "They may change while it runs" in result


NOISY = '''
import logging
from jupyter_agent import tool
from jupyter_agent.config.rules import Everything, Rule, Rules
from jupyter_agent.jupyter.kernel.agent import kernel_agent

@tool
def noisy() -> str:
    """Print and log, as a careless tool or library does."""
    print("ja-agent-print")
    logging.getLogger("somewhere").warning("ja-agent-log")
    return "made noise"

agent = kernel_agent().ensure()
agent.tools.register(noisy)
agent.policy = Rules([Rule.allow(Everything())])
'''


def test_nothing_the_agent_prints_lands_in_the_users_running_cell(kernel: Kernel) -> None:
    scripted(kernel, "m", [{"tool_calls": [{"name": "noisy", "input": {}}]}, {"text": "Ok."}])
    kernel.ok(NOISY)
    comm, subshell = _panel_over_a_subshell(kernel, "%agent --model $m")
    cell = kernel.execute("import time\nprint('user output')\ntime.sleep(4)")
    during = _busy(kernel, cell)
    command(kernel, comm, "send", text="Make some noise", subshell=subshell)
    kernel.from_panel(comm, lambda c: _has_event(c, "completed"), since=during)
    kernel.idle_after(cell)
    ran = [m["content"] for m in kernel.outputs(cell)]
    # The cell's print alone (ipykernel may send its line and its newline apart).
    assert {c.get("name") for c in ran} == {"stdout"}
    assert "".join(c["text"] for c in ran) == "user output\n"
    # What the tool wrote went to no cell: no request is its parent.
    noise = [
        m for m in kernel.seen if m["msg_type"] == "stream" and "ja-agent-" in m["content"]["text"]
    ]
    assert noise and all(not m["parent_header"] for m in noise)


def test_a_magic_changes_the_panel_on_the_agents_thread(kernel: Kernel) -> None:
    """The panel's traits are set on one thread, the agent's, whoever asks: a magic in a
    cell (main thread) hands its refresh over rather than racing the agent's events."""
    kernel.ok("%agent")
    kernel.ok(
        "import threading\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "SET_ON = []\n"
        "kernel_agent().panel.observe(\n"
        "    lambda change: SET_ON.append(threading.current_thread().name), names=['role'])"
    )
    assert kernel.ok("%agent role actor").stdout == "Role: actor\n"
    assert kernel.value("SET_ON") == ["jupyter-agent"]


def test_the_kernel_notes_when_each_cell_ended_by_the_id_the_frontend_gave(
    kernel: Kernel,
) -> None:
    """What guards the live bridge against a late interrupt: a cell's end, by the cell id
    JupyterLab puts in its execute request's metadata."""
    request = kernel.client.session.msg(
        "execute_request",
        {
            "code": "x = 1",
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
        metadata={"cellId": "cell-7"},
    )
    kernel.client.shell_channel.send(request)
    kernel.idle_after(request["header"]["msg_id"])
    kernel.ok(
        "import time\n"
        "from jupyter_agent.jupyter.kernel.runner import CellTimes\n"
        "ended = CellTimes.of(get_ipython()).ended_at"
    )
    assert kernel.value("sorted(ended)") == ["cell-7"]
    assert kernel.value("0 < time.monotonic() - ended['cell-7'] < 60")


def test_a_role_switched_from_a_cell_during_a_run_is_done_on_the_agents_thread(
    kernel: Kernel,
) -> None:
    """``%agent role`` while a run streams stops that run (the role changes for the next
    one): the stop, its warning and the session's write happen on the agent's thread, where
    the run reads them, not on the main thread beside it."""
    scripted(kernel, "m", [{"text": LONG_TEXT}], delay=0.005)
    kernel.ok("%agent")
    kernel.ok(
        "import threading\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "WARNED_ON = []\n"
        "kernel_agent().agent.subscribe(lambda e: e.kind == 'warning' and "
        "WARNED_ON.append(threading.current_thread().name))"
    )
    kernel.ok("h = %agent plan --model $m Write a lot")
    kernel.until("h.state.value == 'thinking' and h.events_so_far[-1].kind == 'text_delta'")
    assert kernel.ok("%agent role actor").stdout == "Role: actor\n"
    kernel.ok("await h.wait()")
    assert kernel.value("[h.stop_reason, h.agent.role]") == ["manual_stop", "actor"]
    assert kernel.value("WARNED_ON") == ["jupyter-agent"]
