"""Runs started by the %agent magics in a real kernel: the handle returned at once while
the run goes on in the background (the kernel stays usable), the handle as the magic's
value, a task ending in a question mark, a scripted model from a file, the role a line or
a cell chooses, Stop and the next run continuing the session, --resume and the panel's
session picker, and the %agent cell as the place the agent's new cells follow.

Kernels as in test_magics.py: a temporary folder holding ``analysis.ipynb``, no API key,
a scripted model for every run.
"""

from __future__ import annotations

import json

import inline_snapshot
import pytest
from kernels import TIMEOUT, Kernel
from magic_kernel import LONG_TEXT, command, hello, plan_turns, scripted

pytestmark = pytest.mark.slow  # real kernels


# --- runs ---------------------------------------------------------------------------------


def test_a_lines_parameters_are_expanded_and_a_cells_body_is_not(kernel: Kernel) -> None:
    # As papermill injects them: a cell of plain values before the %agent line.
    scripted(kernel, "m", [{"text": "Done."}, {"text": "Done again."}])
    kernel.ok("region = 'north'\nyear = 2024")
    out = kernel.ok(
        "h = %agent plan --model $m Summarise $region for {year}, not {len(region)} or $$5\n"
        "await h.wait()\nprint(h.task)"
    )
    assert out.stdout.strip() == "Summarise north for 2024, not {len(region)} or $5"
    cell = kernel.ok("%%agent\nSummarise $region for {year}")
    assert cell.result is None
    later = kernel.ok("h = _\nawait h.wait()\nprint(h.task)")
    assert later.stdout.strip() == "Summarise $region for {year}"


def test_plan_returns_the_handle_at_once_and_runs_in_the_background(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns(LONG_TEXT[:2000]), delay=0.002)
    out = kernel.ok("h = %agent plan --model $m Clean the sales data\nprint(h.done, h.role)")
    assert out.stdout.split() == ["False", "planner"]  # returned while the run goes on
    # The panel is shown under the cell, with a text fallback saying what it is.
    assert len(out.displays) == 1
    data = out.displays[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "Scripted replay" in data["text/plain"]
    assert out.displays[0]["transient"]["display_id"]
    # The kernel stays usable while the agent works.
    busy = kernel.ok("print(h.done, 1 + 1)")
    assert busy.stdout.split() == ["False", "2"]
    done = kernel.ok("await h.wait()\nprint(h.state.value, h.stop_reason, h.plan.goal)")
    assert done.stdout.strip() == "completed completed Clean the sales data"
    # It printed nothing into the cell that started it: the panel shows it all.
    started_cell = [m for m in kernel.seen if m["msg_type"] == "stream"]
    assert all("fox" not in m["content"]["text"] for m in started_cell)


def test_the_magic_value_is_the_handle_and_a_bare_run_line_echoes_nothing(kernel: Kernel) -> None:
    scripted(kernel, "m", [*plan_turns(), {"text": "Done."}, {"text": "Done again."}])
    out = kernel.ok("h = %agent plan --model $m Clean the sales data\nprint(repr(h))")
    assert out.stdout.startswith("<RunHandle ")
    assert "planner" in out.stdout
    kernel.ok("await h.wait()")
    # Alone, the line's value would be echoed as the state the run had when it began
    # (idle), forever, under a panel that shows the run: it is kept quiet.
    bare = kernel.ok("%agent act Say it")
    assert bare.result is None
    assert len(bare.displays) == 1  # the panel
    cell = kernel.ok("%%agent --role actor\nSay it again")
    assert cell.result is None
    # The handle is still there for code: ``_``, as any result's would be.
    later = kernel.ok("h = _\nawait h.wait()\nprint(h.role, h.task, h.state.value)")
    assert later.stdout.split() == ["actor", "Say", "it", "again", "completed"]


def test_a_task_ending_in_a_question_mark_is_a_task_not_a_help_request(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns())
    out = kernel.ok("h = %agent plan --model $m Why is February low?\nprint(h.task)")
    assert out.stdout.strip() == "Why is February low?"
    assert not out.page
    assert "Object" not in out.stdout + out.stderr
    kernel.ok("await h.wait()")
    # Without an assignment, indented in a block, and the magic's own help still works.
    kernel.ok("%agent plan What now?")
    assert kernel.ok("await _.wait()\nprint(_.task)").stdout.strip() == "What now?"
    out = kernel.ok("if True:\n    g = %agent plan And then?\nprint(g.task)")
    assert out.stdout.strip() == "And then?"
    assert "%agent plan TASK" in kernel.ok("%agent?").page


def test_a_scripted_model_from_a_file(kernel: Kernel) -> None:
    (kernel.folder / "turns.json").write_text(json.dumps({"turns": plan_turns()}))
    kernel.ok("h = %agent plan --model scripted:turns.json Clean the sales data")
    out = kernel.ok("await h.wait(); print(h.plan.steps[1].action, h.agent.model.label)")
    assert out.stdout.strip() == inline_snapshot.snapshot(
        "Drop duplicate rows Scripted replay — no real model is called"
    )


def test_act_and_the_cell_magic_choose_the_role(kernel: Kernel) -> None:
    done = {"tool_calls": [{"name": "task_complete", "input": {"summary": "Done."}}]}
    scripted(kernel, "m", [done, done, done])
    out = kernel.ok("h = %agent act --model $m Tidy up\nawait h.wait(); print(h.role, h.summary)")
    assert out.stdout.strip() == "actor Done."
    out = kernel.ok("%%agent --role planner\nLook at the data\nand say what you see")
    kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\nh = kernel_agent().agent.handle\nawait h.wait()"
    )
    out = kernel.ok("print(h.role, repr(h.task))")
    assert out.stdout.strip() == "planner 'Look at the data\\nand say what you see'"
    # Without --role, a cell runs in the current role.
    kernel.ok("%agent role actor")
    kernel.ok("%%agent\nCarry on")
    out = kernel.ok("h = kernel_agent().agent.handle\nawait h.wait()\nprint(h.role)")
    assert out.stdout.strip() == "actor"


def test_stop_ends_the_run_and_the_next_run_continues_the_session(kernel: Kernel) -> None:
    scripted(
        kernel, "m", [{"text": LONG_TEXT}, {"text": "Continuing where I stopped."}], delay=0.01
    )
    kernel.ok("h = %agent plan --model $m Write a lot")
    kernel.ok("import asyncio\nwhile h.state.value != 'thinking': await asyncio.sleep(0.01)")
    assert kernel.ok("%agent stop").stdout == ""
    out = kernel.ok("await h.wait(); print(h.state.value, h.stop_reason)")
    assert out.stdout.strip() == "cancelled manual_stop"
    out = kernel.ok(
        "h2 = %agent plan Go on\nawait h2.wait()\n"
        "from jupyter_agent.messages import conversation_problems, to_api_messages\n"
        "print(h2.state.value, h2.session_id == h.session_id, conversation_problems(to_api_messages(h2.history)))"
    )
    assert out.stdout.strip() == "completed True []"


def test_resume_continues_a_saved_session(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns() * 3)
    kernel.ok("h = %agent plan --model $m First task\nawait h.wait()\nfirst = h.session_id")
    # Another session in the same folder (made through the Python API), then back.
    kernel.ok(
        "from jupyter_agent import Agent\n"
        "other = Agent(model=m, workspace='.')\n"
        "await other.run('Second task')"
    )
    kernel.ok("%agent --resume")
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "a = kernel_agent().agent\nprint(a.session.id == other.session.id, a.model is m)"
    )
    assert out.stdout.split() == ["True", "True"]
    kernel.ok("%agent --resume {}".format(kernel.ok("print(first)").stdout.strip()))
    out = kernel.ok("a = kernel_agent().agent\nprint(a.session.id == first, len(a.history))")
    assert out.stdout.split() == ["True", "3"]
    # The panel's session picker lists both, and resumes one: every view is sent the
    # saved conversation in place of the transcript it showed.
    kernel.ok("%agent")
    out = kernel.ok("p = kernel_agent().panel\nprint(sorted(s['title'] for s in p.sessions))")
    assert out.stdout.strip() == "['First task', 'Second task']"
    comm = kernel.panel_comm()
    hello(kernel, comm)
    second = kernel.ok("print(other.session.id)").stdout.strip()
    since = len(kernel.seen)
    assert command(kernel, comm, "resume", session_id=second)["ok"] is True
    snapshot = kernel.from_panel(
        comm, lambda c: c["type"] == "snapshot" and c["view"] is None, since=since
    )
    kinds = [e["kind"] for e in snapshot["entries"]]
    assert kinds == ["user", "text", "tool_start", "tool_end", "plan", "note"]
    assert snapshot["entries"][0]["text"] == "Second task"
    assert snapshot["entries"][-1]["text"] == f"Resumed session {second}."
    kernel.state_of(comm, "session_id", second)
    assert command(kernel, comm, "resume", session_id="nope")["ok"] is False


def test_the_agents_cell_is_where_its_new_cells_go(kernel: Kernel) -> None:
    # JupyterLab names the cell it runs in the request's metadata (cellId); the agent
    # remembers the %agent cell as the place its new cells follow.
    msg = kernel.client.session.msg(
        "execute_request",
        {"code": "%agent", "silent": False, "store_history": True, "allow_stdin": False},
        metadata={"cellId": "the-agent-cell"},
    )
    kernel.client.shell_channel.send(msg)
    reply = kernel.client.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
        reply = kernel.client.get_shell_msg(timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    code = (
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(kernel_agent(get_ipython()).agent.changes.anchor)"
    )
    assert kernel.ok(code).stdout.strip() == "the-agent-cell"
    # A run from a frontend that names no cell (nbclient, a console) keeps the last one.
    kernel.ok("%agent")
    assert kernel.ok(code).stdout.strip() == "the-agent-cell"
