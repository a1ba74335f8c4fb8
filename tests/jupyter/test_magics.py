"""The %agent magics and the panel's comm protocol, in real kernels through jupyter_client.

Each kernel runs in a temporary folder holding ``analysis.ipynb``, which it knows as its
notebook (``JPY_SESSION_NAME``), with no API key and no reachable model API: every run
uses a scripted model, passed as ``--model $name`` or ``--model scripted:PATH.json``.
The panel is driven the way panel.js drives it: custom comm messages (hello, commands).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import inline_snapshot
import nbformat
import pytest
from helpers import PLAN
from kernels import TIMEOUT, Kernel, Result, agent_kernel, stop_kernel

pytestmark = pytest.mark.slow  # real kernels


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    k = agent_kernel(tmp_path)
    try:
        yield k
    finally:
        stop_kernel(k)


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """One kernel for the tests that only parse and refuse (they start no run)."""
    k = agent_kernel(tmp_path_factory.mktemp("magics"))
    try:
        yield k
    finally:
        stop_kernel(k)


def scripted(
    kernel: Kernel,
    name: str,
    turns: list[dict[str, Any]],
    delay: float = 0.0,
    summaries: list[str] | None = None,
) -> None:
    """Define ``name`` in the kernel: a ScriptedModel replaying ``turns`` (and answering
    compaction requests with ``summaries``)."""
    path = kernel.folder / f"{name}.json"
    path.write_text(json.dumps(turns))
    kernel.ok(
        f"from jupyter_agent import ScriptedModel\n"
        f"{name} = ScriptedModel({path.name!r}, delay={delay}, chunk_size=4, "
        f"summaries={summaries or []!r})"
    )


def plan_turns(text: str = "I read the notebook. Here is the plan.") -> list[dict[str, Any]]:
    return [{"text": text, "tool_calls": [{"name": "submit_plan", "input": PLAN}]}]


LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 200  # ~2,000 pieces of 4


# --- the extension and the help -------------------------------------------------------


def test_load_ext_registers_the_line_and_cell_magics(shared_kernel: Kernel) -> None:
    out = shared_kernel.ok(
        "m = get_ipython().magics_manager.magics\nprint('agent' in m['line'], 'agent' in m['cell'])"
    )
    assert out.stdout.split() == ["True", "True"]


def test_help_documents_every_subcommand_and_option(shared_kernel: Kernel) -> None:
    page = shared_kernel.ok("%agent?").page
    for word in (
        "%agent plan TASK",
        "%agent act TASK",
        "%agent remember TEXT",
        "%agent compact",
        "%agent stop",
        "%agent role NAME",
        "%%agent",
        "--model",
        "scripted:PATH.json",
        "$name",
        "--max-steps",
        "--loop tool_use|roa",
        "--resume [SESSION_ID]",
        "--side",
        "await h.wait()",
    ):
        assert word in page, word
    said = shared_kernel.ok("%agent help").stdout.strip()
    assert said.startswith("The AI agent of this kernel")
    assert said == inline_snapshot.snapshot("""\
The AI agent of this kernel: plans, then edits and runs cells and files.

Usage::

  %agent                   show the agent's panel (the agent is made if needed)
  %agent plan TASK         the Planner studies the notebook, files and variables
                           and proposes a plan; it changes nothing
  %agent act TASK          the Actor does the task: edits and runs cells and files
                           under your permission rules, asking when unsure
  %agent remember TEXT     add TEXT as a line of this folder's AGENTS.md (the
                           project instructions every later run reads): an edit
                           like any other, under your permission rules, with its diff
  %agent compact           make the conversation smaller now (the panel's Compact
                           now): old tool results are cleared and earlier turns
                           summarised by the model, as when the context window
                           fills up; the session's history on disk stays whole
  %agent stop              stop the running agent (the next message continues)
  %agent role NAME         switch role: planner, actor, or one from your settings
  %agent model [MODEL]     switch to MODEL for the next runs (the panel's model
                           picker does the same); without MODEL, list the models
                           configured and whether each is ready
  %agent trust             trust this folder's settings (.jupyter_agent/settings.toml):
                           until then they may only narrow; the panel's trust
                           prompt lists what trusting enables, and this prints
                           what now applies
  %agent login             ask for the model's API key (Anthropic's or OpenAI's;
                           hidden input, kept out of the notebook): for this
                           session, or saved for your user in
                           ~/.jupyter_agent/credentials.json (owner-only)
  %agent logout            remove the saved keys
  %agent mcp               the MCP servers of your settings (mcpServers), their
                           state and tools; starts those not running
  %agent help              this text

  %%agent [--role planner|actor]
  TASK...                  the cell's body is the task (default: the current role)

Options (before the task):

  --model MODEL            the model: claude-sonnet-4-6 (Anthropic), openai:gpt-5,
                           ollama:qwen3 (served on this machine), bedrock:ID,
                           vertex:ID, openai-compatible:NAME@URL (vLLM, LM Studio,
                           LiteLLM, OpenRouter…), NAME:MODEL for a provider of your
                           settings ([providers.NAME]), scripted:PATH.json for a
                           scripted replay, $name for a Model in your namespace
                           (default: $JUPYTER_AGENT_MODEL, else [models] default
                           in your settings, else Claude, or OpenAI when only
                           OPENAI_API_KEY is set)
  --max-steps N            model turns per run (the panel's max iterations)
  --loop tool_use|roa      the native tool-use loop (default) or
                           reason → act → observe
  --resume [SESSION_ID]    continue a saved session (the newest without an id);
                           the panel's session picker does the same
  --side                   dock the panel in JupyterLab's right sidebar

The run goes on in the background: the cell ends at once and the kernel stays
usable. ``h = %agent plan …`` keeps the run's handle: ``await h.wait()`` in a later
cell, then ``h.plan``, ``h.summary``, ``h.history``; ``h.stop()``, ``h.answer(…)``,
``h.approve(…)`` steer it from code. A bare ``%agent plan …`` shows no result (the
panel shows the run; an echo would show the state it began in forever); its
handle is ``_`` in the next cell, as any result's would be.

Each ``%agent`` cell shows the panel under it; the display shown before becomes a
static record of the runs it showed (a notebook viewer shows it without a kernel),
so only the newest display, and the sidebar, is live.

The panel shows the transcript, the plan (Execute plan hands it to the Actor),
questions and approvals as buttons, every tool call with its diff, usage and cost,
how full the model's context window is (with Compact now), and a Stop button.
Where widgets cannot show (nbconvert, nbclient, papermill) the panel's text is
the transcript, refreshed at each plan, question and run end. In
terminal IPython the run is printed as it goes and the magic waits for it (Ctrl-C
stops it; questions are asked at the prompt).

The agent works in the notebook's folder and on the notebook itself: live through
JupyterLab with the jupyter_agent extension, or on the .ipynb file otherwise (the
panel says which).\
""")  # the help, word for word


BAD = {
    "frobnicate the data": "unknown subcommand 'frobnicate'",
    "plan": "say what to do: %agent plan TASK",
    "act   ": "say what to do: %agent act TASK",
    "--max-steps x plan a": "--max-steps needs a whole number, got 'x'",
    "--max-steps 0 plan a": "--max-steps must be at least 1",
    "--loop fast plan a": "--loop is one of tool_use, roa, got 'fast'",
    "plan --model": "--model needs a value",
    "--bogus plan a": "unknown option --bogus",
    "--side=yes": "--side takes no value",
    "role": "say which role: %agent role NAME",
    "role a b": "say which role",
    "role nobody": "unknown role 'nobody'; known roles: actor, planner",
    "stop now": "%agent stop takes no text",
    "remember": "say what to remember: %agent remember TEXT",
    "compact now": "%agent compact takes no text",
    "--role actor plan a": "--role is for %%agent",
    "--model $nothere plan a": "there is no variable 'nothere'",
    "--model $In plan a": "In is a list, not a model",
    "--model scripted:missing.json plan a": "no such file 'missing.json'",
    "--resume 0123456789ab": "0123456789ab",
}


@pytest.mark.parametrize("line", list(BAD))
def test_bad_arguments_give_one_line_and_no_traceback(shared_kernel: Kernel, line: str) -> None:
    result = shared_kernel.run(f"%agent {line}")
    assert result.reply["content"]["status"] == "error"
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("UsageError: "), lines[0]
    assert BAD[line] in lines[0]
    assert "Traceback" not in result.stderr
    assert not result.errors  # no error output, so no traceback shown anywhere


def test_a_cell_magic_refuses_text_on_its_line_and_an_empty_body(shared_kernel: Kernel) -> None:
    for cell, expected in (
        ("%%agent plan\nDo it", "%%agent takes only options on its first line"),
        ("%%agent --role actor\n   \n", "the %%agent cell is empty"),
    ):
        result = shared_kernel.run(cell)
        assert result.stderr.strip().startswith("UsageError: "), result.stderr
        assert expected in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_without_an_api_key_the_default_model_says_so_in_one_line(shared_kernel: Kernel) -> None:
    result = shared_kernel.run("%agent plan Clean the data")
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("UsageError: No Anthropic API key found")
    assert "ANTHROPIC_API_KEY" in lines[0]
    assert not result.errors


def test_options_set_the_kernels_agent(shared_kernel: Kernel) -> None:
    shared_kernel.ok("%agent --max-steps 7 --loop roa")
    out = shared_kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "a = kernel_agent().agent\n"
        "print(a.limits.max_steps, a.loop, a.workspace.name == get_ipython().user_ns['__session__'].split('/')[-2])"
    )
    assert out.stdout.split() == ["7", "roa", "True"]
    shared_kernel.ok("%agent --loop tool_use --max-steps 30")


def test_role_switches_the_agents_role(shared_kernel: Kernel) -> None:
    assert shared_kernel.ok("%agent role actor").stdout.strip() == "Role: actor"
    assert shared_kernel.ok("%agent role planner").stdout.strip() == "Role: planner"


def test_model_lists_switches_and_the_panel_follows(kernel: Kernel) -> None:
    """``%agent model`` lists what is configured and ready; ``%agent model X`` and the
    panel's picker (``set_model``) switch; a string that names no model is one line."""
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    listed = kernel.ok("%agent model").stdout.splitlines()
    assert listed[0].startswith("* claude-sonnet-4-6  (No Anthropic API key found.")
    assert listed[-1].startswith("Switch with %agent model MODEL")
    assert kernel.ok("%agent model scripted").stdout.splitlines() == ["Model: scripted (scripted)"]
    kernel.state_of(comm, "model_name", "scripted")
    kernel.state_of(comm, "model_ready", True)
    listed = kernel.ok("%agent model").stdout.splitlines()
    assert listed[0] == "* scripted replay  (ready)"
    bad = kernel.run("%agent model openai-compatible:llama3")
    assert bad.stderr.strip().splitlines() == [
        "UsageError: 'openai-compatible:llama3': an OpenAI-compatible model is written "
        "openai-compatible:NAME@URL (e.g. openai-compatible:llama3@http://gpu:8000/v1)"
    ]
    reply = command(kernel, comm, "set_model", model="claude-haiku-4-5")
    assert reply["ok"] is True
    kernel.state_of(comm, "model_name", "claude-haiku-4-5")
    kernel.state_of(comm, "model_ready", False)
    assert command(kernel, comm, "set_model", model="a b")["error"].startswith(
        "'a b' is not a model string"
    )
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "a = kernel_agent().agent\n"
        "print(a.model.name, a.session.metadata.model, a.session.metadata.provider)"
    )
    assert out.stdout.split() == ["claude-haiku-4-5", "claude-haiku-4-5", "anthropic"]


def test_the_trust_prompt_shows_as_the_panel_opens_and_trust_applies_it(tmp_path: Path) -> None:
    """Before any message, the panel's first state holds the trust prompt; ``%agent trust``
    says in text what now applies, and the panel drops the prompt and says the same."""
    folder, home = tmp_path / "project", tmp_path / "home"
    (folder / ".jupyter_agent").mkdir(parents=True)
    home.mkdir()
    (folder / ".jupyter_agent" / "settings.toml").write_text(
        '[[rules]]\ndecision = "allow"\nscope = "user"\ndescription = "only reads"\n'
        'matcher = { kind = "command", prefix = "make" }\n'
    )
    k = agent_kernel(folder, HOME=str(home))
    try:
        k.ok("%agent\nfrom jupyter_agent.jupyter.kernel.agent import kernel_agent")
        comm = k.panel_comm()
        opened = next(
            m for m in k.seen if m["msg_type"] == "comm_open" and m["content"]["comm_id"] == comm
        )
        prompt = opened["content"]["data"]["state"]["trust"]
        (effect,) = prompt["effects"]
        assert effect["kind"] == "rule"
        assert effect["summary"].startswith("Allow commands starting with `make`, for every role")
        assert "only reads" not in json.dumps(prompt)
        k.to_panel(comm, {"type": "hello", "view": "v"})
        k.from_panel(comm, lambda c: c["type"] == "snapshot")
        said = k.ok("%agent trust").stdout.strip()
        assert said.startswith(f"Trusted {folder}: its settings (")
        assert "- Allow commands starting with `make`, for every role" in said
        k.state_of(comm, "trust", None)
        entries = k.from_panel(
            comm, lambda c: c["type"] == "events" and c["entries"][-1]["kind"] == "trusted"
        )["entries"]
        assert entries[-1]["applied"] == prompt
        decided = k.ok(
            "from jupyter_agent.permissions import ToolCall\n"
            "a = kernel_agent().agent\n"
            "print(a.policy.decide(ToolCall(name='execute_command', category='execute', "
            "input={'command': 'make'}, summary='', role='actor', "
            "permissions=frozenset({'execute_commands'}))).decision)"
        ).stdout.strip()
        assert decided == "allow"
        trusted = json.loads((home / ".jupyter_agent" / "trusted-folders.json").read_text())
        assert list(trusted) == ["trusted"]  # each folder with what it was trusted to grant
        assert list(trusted["trusted"]) == [str(folder.resolve())]
    finally:
        stop_kernel(k)


def test_remember_appends_to_agents_md_with_a_diff_and_respects_a_deny_rule(
    tmp_path: Path,
) -> None:
    from jupyter_agent.config.instructions import REMEMBER_HEADER

    home, allowed, denied = tmp_path / "home", tmp_path / "allowed", tmp_path / "denied"
    for folder in (home, allowed, denied / ".jupyter_agent"):
        folder.mkdir(parents=True)
    (denied / ".jupyter_agent" / "settings.toml").write_text(
        '[[rules]]\ndecision = "deny"\nscope = "user"\n'
        'matcher = { kind = "path", pattern = "AGENTS.md" }\n'
    )
    report = (
        "await h.wait()\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(h.agent.role, kernel_agent().panel.role, '|', h.summary)\n"
        "print(*[e.diff for e in h.events_so_far if e.kind == 'tool_end' and e.diff], sep='')"
    )
    k = agent_kernel(allowed, HOME=str(home))
    try:
        out = k.ok(f"h = %agent remember Amounts are in EUR\n{report}")
        said = f"planner planner | Remembered in {allowed.resolve()}/AGENTS.md"
        assert out.stdout.startswith(said)  # the run was the Actor's; the role stays
        assert "+- Amounts are in EUR" in out.stdout  # the diff, as the tool card shows it
        assert len(out.displays) == 1  # the panel, which shows the run
        assert (allowed / "AGENTS.md").read_text() == REMEMBER_HEADER + "- Amounts are in EUR\n"
        assert k.ok("%agent remember Dates are ISO 8601").result is None  # a bare line
        k.ok("await _.wait()")
        assert (allowed / "AGENTS.md").read_text().endswith("EUR\n- Dates are ISO 8601\n")
    finally:
        stop_kernel(k)
    k = agent_kernel(denied, HOME=str(home))
    try:
        out = k.ok(f"h = %agent remember Amounts are in EUR\n{report}")
        assert "Not remembered: Refused by a permission rule" in out.stdout
        assert not (denied / "AGENTS.md").exists()
    finally:
        stop_kernel(k)


def test_compact_summarises_the_conversation_and_the_panel_marks_where(kernel: Kernel) -> None:
    summary = "The user asked for the answer; it is 42."
    scripted(kernel, "m", [{"text": "The answer is 42."}], summaries=[summary])
    refused = kernel.run("%agent --model $m compact")
    assert refused.stderr.strip() == inline_snapshot.snapshot(
        "UsageError: there is nothing to compact yet: the conversation is empty"
    )
    kernel.ok("h = %agent act What is the answer?\nawait h.wait()")
    out = kernel.ok(
        "h = %agent compact\nawait h.wait()\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(h.summary, '|', kernel_agent().panel.context['estimated'])\n"
        "print(*[e.describe() for e in h.events_so_far if e.kind == 'compaction'])"
    )
    done, marker = out.stdout.splitlines()
    assert done == "Compacted the conversation. | True"
    assert marker.startswith("Compacted the conversation (you asked): summarised 1 earlier")
    assert len(out.displays) == 1  # the panel, which shows the run
    # The panel's transcript marks it, with the summary the model wrote.
    comm = kernel.panel_comm()
    kernel.to_panel(comm, {"type": "hello", "view": "t"})
    snapshot = kernel.from_panel(comm, lambda c: c.get("type") == "snapshot")
    (entry,) = [e for e in snapshot["entries"] if e["kind"] == "compaction"]
    assert (entry["reason"], entry["summary"]) == ("manual", summary)


def test_stop_when_nothing_runs_says_so(shared_kernel: Kernel) -> None:
    assert shared_kernel.ok("%agent stop").stdout.strip() == "The agent is not running."


def test_side_publishes_a_dock_request(shared_kernel: Kernel) -> None:
    shown = shared_kernel.ok("%agent --side")
    assert len(shown.displays) == 1
    assert "application/vnd.jupyter.widget-view+json" in shown.displays[0]["data"]
    out = shared_kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "p = kernel_agent().panel\nprint(p.dock, p.widget_id == p.model_id, p.model_id)"
    )
    side, same, model_id = out.stdout.split()
    assert (side, same) == ("side", "True")
    shared_kernel.state_of(model_id, "dock", "side")


def test_without_a_frontend_the_panel_says_edits_go_to_the_file(shared_kernel: Kernel) -> None:
    shared_kernel.ok("%agent")
    out = shared_kernel.ok(
        "import asyncio\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "p = kernel_agent().panel\n"
        "while p.bridge_mode == 'connecting': await asyncio.sleep(0.05)\n"
        "print(p.bridge_mode)\nprint(p.notebook)"
    )
    mode, description = out.stdout.strip().split("\n", 1)
    assert mode == "file"
    assert "analysis.ipynb" in description and "file mode" in description


# --- runs ---------------------------------------------------------------------------------


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


# --- the panel's protocol over the comm ------------------------------------------------------


async def test_a_resumed_session_offers_to_carry_on_a_plan_whose_execution_stopped(
    tmp_path: Path,
) -> None:
    from helpers import until

    from jupyter_agent import Agent, ScriptedModel
    from jupyter_agent.jupyter.panel.transcript import history_entries

    def mark(number: int, status: str) -> dict[str, Any]:
        return {"name": "update_plan_step", "input": {"step_number": number, "status": status}}

    ask = {"name": "ask_user", "input": {"question": "Go on with step 2?"}}
    model = ScriptedModel(
        [
            *plan_turns(),
            {"tool_calls": [mark(1, "done"), mark(2, "in_progress")]},
            {"tool_calls": [ask]},
        ]
    )
    agent = Agent("planner", model, workspace=tmp_path)
    await agent.run("Clean the sales data")
    handle = agent.execute_plan()
    await until(lambda: handle.pending_question is not None)
    handle.stop()
    await handle.wait()

    resumed = Agent.resume(agent.session.id, workspace=tmp_path, model=ScriptedModel([]))
    entries = history_entries(resumed.history, resumed)
    kinds = [e["kind"] for e in entries]
    assert kinds[-5:] == ["plan", "plan_step", "plan_step", "plan_stopped", "note"]
    # What the user did: typed a task, then pressed Execute plan (the prompt it became is
    # there for the view to fold, never a message the user wrote).
    users = [e for e in entries if e["kind"] == "user"]
    assert [e.get("action") for e in users] == [None, "execute_plan"]
    assert users[0]["text"] == "Clean the sales data"
    assert users[1]["text"].startswith("Execute the approved plan.")
    # Not offered for a plan whose steps are all settled, nor after a run that completed.
    meta = resumed.session.metadata
    meta.stop_reason = "completed"
    assert "plan_stopped" not in [e["kind"] for e in history_entries(resumed.history, resumed)]
    meta.stop_reason = "manual_stop"
    for progress in meta.plan_progress:
        progress.status = "done"
    assert "plan_stopped" not in [e["kind"] for e in history_entries(resumed.history, resumed)]


def test_the_transcript_merges_streams_and_a_finished_block_keeps_its_text() -> None:
    from jupyter_agent.jupyter.panel.transcript import Transcript

    t = Transcript()
    t.add({"kind": "turn_start", "step": 1})
    for piece in ("Hel", "lo ", "wor"):
        t.add({"kind": "text_delta", "text": piece})
    assert [e["kind"] for e in t.take()] == ["turn_start", "text_delta"]
    # A view arriving mid-stream gets the pieces so far as one entry.
    assert t.snapshot()[-1] == {"kind": "text_delta", "text": "Hello wor", "n": 4}
    t.add({"kind": "text_delta", "text": "ld"})
    t.add({"kind": "text", "text": "Hello world", "interrupted": False})
    t.add({"kind": "tool_progress", "tool_use_id": "a", "output": "1\n"})
    t.add({"kind": "tool_progress", "tool_use_id": "a", "output": "2\n"})
    t.add({"kind": "tool_progress", "tool_use_id": "b", "output": "x"})
    assert t.take() == [
        {"kind": "text_delta", "text": "ld", "n": 5},
        {"kind": "text_end", "phase": None, "interrupted": False, "n": 6},
        {"kind": "tool_progress", "tool_use_id": "a", "output": "1\n2\n", "n": 8},
        {"kind": "tool_progress", "tool_use_id": "b", "output": "x", "n": 9},
    ]
    assert t.snapshot() == [
        {"kind": "turn_start", "step": 1, "n": 1},
        {"kind": "text", "text": "Hello world", "interrupted": False, "n": 6},
        {"kind": "tool_progress", "tool_use_id": "a", "output": "1\n2\n", "n": 8},
        {"kind": "tool_progress", "tool_use_id": "b", "output": "x", "n": 9},
    ]
    # Text that differs from what streamed (e.g. cut short) is sent whole.
    t.add({"kind": "text_delta", "text": "Par"})
    t.add({"kind": "text", "text": "Partial", "interrupted": True})
    assert t.take()[-1]["text"] == "Partial"


def test_the_transcript_merges_each_subagents_stream_apart() -> None:
    """Two subagents streaming at once: each one's pieces merge with its own only, in the
    batch and in the log, and what was sent is never changed by what the log merges."""
    from jupyter_agent.jupyter.panel.transcript import Transcript

    def piece(child: str, text: str) -> dict[str, Any]:
        return {
            "kind": "subagent_output",
            "child_session_id": child,
            "event": {"kind": "text_delta", "text": text},
        }

    t = Transcript()
    t.add(piece("a", "A1 "))
    t.add(piece("a", "A2 "))
    t.add(piece("b", "B1 "))
    t.add(piece("b", "B2 "))
    sent = t.take()
    assert [(e["child_session_id"], e["event"]["text"]) for e in sent] == [
        ("a", "A1 A2 "),
        ("b", "B1 B2 "),
    ]
    t.add(piece("b", "B3"))
    t.add(piece("a", "A3"))
    assert [e["event"]["text"] for e in t.take()] == ["B3", "A3"]
    log = t.snapshot()
    assert [(e["child_session_id"], e["event"]["text"]) for e in log] == [
        ("a", "A1 A2 "),
        ("b", "B1 B2 B3"),
        ("a", "A3"),
    ]
    assert [e["event"]["text"] for e in sent] == ["A1 A2 ", "B1 B2 "]  # as sent


def hello(kernel: Kernel, comm: str, view: str = "v1") -> list[dict[str, Any]]:
    since = len(kernel.seen)
    kernel.to_panel(comm, {"type": "hello", "view": view})
    snapshot = kernel.from_panel(comm, lambda c: c["type"] == "snapshot", since=since)
    assert snapshot["view"] == view
    entries: list[dict[str, Any]] = snapshot["entries"]
    return entries


def command(kernel: Kernel, comm: str, name: str, **args: Any) -> dict[str, Any]:
    cid = f"c{time.monotonic_ns()}"
    since = len(kernel.seen)
    kernel.to_panel(comm, {"type": "command", "id": cid, "name": name, **args})
    return kernel.from_panel(comm, lambda c: c["type"] == "reply" and c["id"] == cid, since=since)


def entries_after(kernel: Kernel, comm: str, since: int) -> list[dict[str, Any]]:
    found = []
    for m in kernel.seen[since:]:
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm:
            data = m["content"]["data"]
            if data.get("method") != "custom":
                continue
            content = data["content"]
            if content["type"] == "events":
                found.extend(content["entries"])
            elif content["type"] == "text":
                found.append({"kind": "text_delta", "n": content["n"], "text": content["text"]})
    return found


def test_a_view_gets_a_snapshot_then_live_batches(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns(LONG_TEXT[:800]), delay=0.002)
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    assert hello(kernel, comm) == []
    since = len(kernel.seen)
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    live = entries_after(kernel, comm, since)
    kinds = [e["kind"] for e in live]
    assert kinds[0] == "agent_start" and kinds[-1] == "completed"
    assert "plan" in kinds and "state" not in kinds and "usage" not in kinds
    numbers = [e["n"] for e in live]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    streamed = "".join(e["text"] for e in live if e["kind"] == "text_delta")
    assert streamed.startswith(LONG_TEXT[:800])
    # 200 pieces of text went out as far fewer, coalesced messages.
    assert sum(1 for e in live if e["kind"] == "text_delta") < 100
    # A second view (a page reload) gets the same transcript, deltas merged.
    # The text block's end carries no text: the view has it from the pieces.
    end = next(e for e in live if e["kind"] in ("text", "text_end"))
    assert end["kind"] == "text_end" and "text" not in end
    snapshot = hello(kernel, comm, "v2")
    assert [e["kind"] for e in snapshot][:3] == ["agent_start", "turn_start", "text"]
    assert snapshot[2]["text"] == LONG_TEXT[:800]
    assert snapshot[-1]["kind"] == "completed" and snapshot[-1]["n"] == live[-1]["n"]


def test_commands_answer_approve_and_report_errors(kernel: Kernel) -> None:
    ask = {
        "tool_calls": [
            {
                "name": "ask_user",
                "input": {
                    "question": "Drop the duplicates?",
                    "options": [
                        {"label": "Drop them", "value": "drop"},
                        {"label": "Keep them", "value": "keep"},
                    ],
                    "default": "drop",
                },
            }
        ]
    }
    command_call = {
        "tool_calls": [{"name": "execute_command", "input": {"command": "echo approved-ok"}}]
    }
    done = {"tool_calls": [{"name": "task_complete", "input": {"summary": "All done."}}]}
    scripted(kernel, "m", [ask, command_call, done])
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    reply = command(kernel, comm, "frobnicate")
    assert reply["ok"] is False and reply["error"] == "unknown command 'frobnicate'"
    assert command(kernel, comm, "answer", question_id="nope", value="x")[
        "error"
    ] == inline_snapshot.snapshot("That question is no longer pending.")
    kernel.ok("h = %agent act --model $m Clean up")
    kernel.state_of(comm, "status", "waiting_user")
    question = kernel.from_panel(
        comm, lambda c: c["type"] == "events" and any(e["kind"] == "question" for e in c["entries"])
    )
    qid = next(e for e in question["entries"] if e["kind"] == "question")["question_id"]
    bad = command(kernel, comm, "answer", question_id=qid, value="maybe")
    assert bad["ok"] is False and "not one of the options" in bad["error"]
    assert command(kernel, comm, "answer", question_id=qid, value="keep")["ok"] is True
    approval = kernel.from_panel(
        comm,
        lambda c: (
            c["type"] == "events" and any(e["kind"] == "permission_request" for e in c["entries"])
        ),
    )
    rid = next(e for e in approval["entries"] if e["kind"] == "permission_request")["request_id"]
    assert (
        command(kernel, comm, "approve", request_id=rid, allow=True, remember=False)["ok"] is True
    )
    out = kernel.ok("await h.wait(); print(h.state.value, h.summary)")
    assert out.stdout.strip() == "completed All done."
    results = kernel.ok("print([b.text for m in h.history for b in m.tool_results])").stdout
    assert "The user chose “Keep them” (value: keep)." in results
    assert "approved-ok" in results
    # Busy or not, a role switch and a limit apply to the next run.
    assert command(kernel, comm, "set_role", role="planner")["ok"] is True
    assert command(kernel, comm, "set_max_steps", value=4)["ok"] is True
    assert (
        command(kernel, comm, "set_max_steps", value=0)["error"]
        == "Max iterations must be at least 1."
    )
    out = kernel.ok("a = h.agent\nprint(a.role, a.limits.max_steps)")
    assert out.stdout.split() == ["planner", "4"]


def _stopped(kernel: Kernel, comm: str, since: int) -> None:
    """Stop from the panel, and see the run stopped long before what it was doing would have
    ended by itself (a 30-s command, a question nobody answers, a long stream). How fast a
    Stop is belongs to benchmarks/framework.py, not to an assert on a shared machine."""
    reply = command(kernel, comm, "stop")
    assert reply["ok"] is True
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "stopped" for e in c["entries"]),
        timeout=10.0,
        since=since,
    )


def test_stop_over_the_comm_while_streaming_running_a_command_and_waiting(kernel: Kernel) -> None:
    shell = {
        "tool_calls": [
            {
                "name": "execute_command",
                "input": {"command": "sleep 30 && echo ja-marker-done", "timeout": 60},
            }
        ]
    }
    ask = {"tool_calls": [{"name": "ask_user", "input": {"question": "Which file?"}}]}
    scripted(
        kernel,
        "m",
        [{"text": LONG_TEXT}, shell, ask, {"text": "Still here."}],
        delay=0.005,
    )
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    kernel.ok("%agent role actor")

    # 1. while streaming
    since = len(kernel.seen)
    kernel.ok("h = %agent act --model $m Write a lot")
    kernel.from_panel(comm, lambda c: c["type"] == "text", since=since)
    _stopped(kernel, comm, since)
    out = kernel.ok("await h.wait(); print(h.stop_reason, h.history[-1].interrupted)")
    assert out.stdout.split() == ["manual_stop", "True"]

    # 2. while a 30-s command runs (after it was approved): its process group is killed
    since = len(kernel.seen)
    assert command(kernel, comm, "send", text="Run the slow command")["ok"] is True
    approval = kernel.from_panel(
        comm,
        lambda c: (
            c["type"] == "events" and any(e["kind"] == "permission_request" for e in c["entries"])
        ),
        since=since,
    )
    rid = next(e for e in approval["entries"] if e["kind"] == "permission_request")["request_id"]
    command(kernel, comm, "approve", request_id=rid, allow=True)
    kernel.state_of(comm, "detail", "execute_command")
    kernel.ok("import time; time.sleep(0.3)")  # the command is surely running
    _stopped(kernel, comm, since)
    assert subprocess.run(["pgrep", "-f", "ja-marker-done"], capture_output=True).returncode == 1

    # 3. while waiting for an answer
    since = len(kernel.seen)
    command(kernel, comm, "send", text="Ask me something")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "question" for e in c["entries"]),
        since=since,
    )
    kernel.state_of(comm, "status", "waiting_user")
    _stopped(kernel, comm, since)

    # The next message continues the session, and the history is a valid conversation.
    since = len(kernel.seen)
    command(kernel, comm, "send", text="Go on")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    out = kernel.ok(
        "from jupyter_agent.messages import conversation_problems, to_api_messages\n"
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(conversation_problems(to_api_messages(kernel_agent().agent.history)))"
    )
    assert out.stdout.strip() == "[]"


def test_execute_plan_switches_to_the_actor_with_the_plan(kernel: Kernel) -> None:
    step = lambda n, s: {"name": "update_plan_step", "input": {"step_number": n, "status": s}}  # noqa: E731
    scripted(
        kernel,
        "m",
        [
            *plan_turns(),
            {"tool_calls": [step(1, "in_progress")]},
            {"tool_calls": [step(1, "done"), step(2, "in_progress")]},
            {"tool_calls": [step(2, "done")]},
            {"tool_calls": [{"name": "task_complete", "input": {"summary": "Both steps done."}}]},
        ],
    )
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    assert command(kernel, comm, "execute_plan")["error"] == "There is no plan to execute yet."
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    # The planning run completed with its plan: the header says it awaits review.
    kernel.state_of(comm, "plan_ready", True)
    since = len(kernel.seen)
    assert command(kernel, comm, "execute_plan")["ok"] is True
    kernel.state_of(comm, "role", "actor")
    kernel.from_panel(
        comm,
        lambda c: c["type"] == "events" and any(e["kind"] == "completed" for e in c["entries"]),
        since=since,
    )
    live = entries_after(kernel, comm, since)
    live = live[[e["kind"] for e in live].index("agent_start") :]
    assert live[0]["role"] == "actor"
    assert live[0]["action"] == "execute_plan"  # the view shows the action, not the prompt
    kernel.state_of(comm, "plan_ready", False)  # executing: no plan awaits review
    assert live[0]["task"].startswith("Execute the approved plan.")
    assert "| 2 | Drop duplicate rows |" in live[0]["task"]
    steps = [(e["step_number"], e["status"]) for e in live if e["kind"] == "plan_step"]
    assert steps == [(1, "in_progress"), (1, "done"), (2, "in_progress"), (2, "done")]


# --- frontends without widgets ---------------------------------------------------------------


def test_nbclient_output_shows_the_transcript(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    (tmp_path / "turns.json").write_text(json.dumps(plan_turns()))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell(
            "h = %agent plan --model scripted:turns.json Clean the sales data"
        ),
        nbformat.v4.new_code_cell("await h.wait();"),
    ]
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = nb.cells[1].outputs
    assert len(outputs) == 1
    text = outputs[0]["data"]["text/plain"]
    assert "Scripted replay" in text
    assert "I read the notebook. Here is the plan." in text
    assert "| 2 | Drop duplicate rows |" in text
    assert "✔ completed" in text


def _updates(kernel: Kernel, display_id: str, since: int = 0) -> list[dict[str, Any]]:
    return [
        m["content"]["data"]
        for m in kernel.seen[since:]
        if m["msg_type"] == "update_display_data"
        and m["content"]["transient"]["display_id"] == display_id
    ]


def _slot_records(kernel: Kernel, since: int = 0) -> list[dict[str, Any]]:
    """What the displays' slots (ipywidgets.Output) were set to show."""
    return [
        output["data"]
        for m in kernel.seen[since:]
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "update"
        for output in m["content"]["data"].get("state", {}).get("outputs", [])
    ]


def _display_id(result: Result) -> str:
    (display,) = result.displays
    return str(display["transient"]["display_id"])


def test_a_later_cell_turns_the_earlier_display_into_a_record_of_its_own_runs(
    kernel: Kernel,
) -> None:
    scripted(kernel, "m", [*plan_turns(), {"text": "Second answer."}, {"text": "Third."}])
    first = kernel.ok("h = %agent plan --model $m Clean the sales data")
    one = _display_id(first)
    kernel.ok("await h.wait()")
    mark = len(kernel.seen)
    second = kernel.ok("h = %agent act Say the second thing")
    two = _display_id(second)
    assert two != one
    # The new display is the live panel (a widget); the first one is now a record.
    assert "application/vnd.jupyter.widget-view+json" in second.displays[0]["data"]
    (record,) = _updates(kernel, one, mark)
    assert "application/vnd.jupyter.widget-view+json" not in record
    text, html = record["text/plain"], record["text/html"]
    assert "Clean the sales data" in text
    assert "| 2 | Drop duplicate rows |" in text
    assert "Second answer" not in text
    assert 'class="ja-record"' in html
    assert ">Drop duplicate rows</td>" in html
    assert html.count("<table>") == 1
    assert "Second answer" not in html
    # A widget frontend sees it in the display's slot (it gets no update of another cell).
    assert record in _slot_records(kernel, mark)

    # Without a widget frontend, the live display's text is its own run only.
    kernel.ok("await h.wait()")
    kernel.ok("pass")  # a cell's start and end publish the text
    live = _updates(kernel, two)[-1]["text/plain"]
    assert "Second answer." in live
    assert "Clean the sales data" not in live

    # The first cell run again: its new display is the live one; the second is frozen.
    mark = len(kernel.seen)
    again = kernel.ok("h = %agent act Say the third thing")
    three = _display_id(again)
    (frozen,) = _updates(kernel, two, mark)
    assert "Second answer." in frozen["text/plain"]
    assert "Second answer." in frozen["text/html"]
    assert "Third" not in frozen["text/plain"]
    assert "Clean the sales data" not in frozen["text/html"]
    assert _updates(kernel, one, mark) == []  # a record stays as it was
    assert three not in (one, two)


def test_the_record_escapes_everything_the_model_wrote(kernel: Kernel) -> None:
    from html.parser import HTMLParser

    hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script> **bold** [a](javascript:x)'
    plan = {**PLAN, "goal": hostile, "risks": ["<b onmouseover=alert(3)>risk</b>"]}
    turns = [{"text": hostile, "tool_calls": [{"name": "submit_plan", "input": plan}]}]
    scripted(kernel, "m", turns)
    kernel.ok(f"h = %agent plan --model $m {hostile}\nawait h.wait()")
    mark = len(kernel.seen)
    kernel.ok("%agent")
    html = _slot_records(kernel, mark)[0]["text/html"]
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;" in html

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: set[str] = set()
            self.attributes: list[tuple[str, str | None]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.found.add(tag)
            self.attributes.extend(attrs)

    tags = Tags()
    tags.feed(html)
    allowed = {"div", "p", "small", "strong", "em", "ul", "li", "br"}
    assert tags.found <= allowed | {"table", "thead", "tbody", "tr", "th", "td"}
    assert set(tags.attributes) == {("class", "ja-record"), ("style", "text-align: left")}


def test_a_replay_shows_tokens_but_no_cost(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns())
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "panel = kernel_agent().panel\n"
        "print(sorted(panel.usage))\nprint(panel.text())"
    )
    assert "'run_input_tokens'" in out.stdout
    assert "cost" not in out.stdout
    assert "tokens: " in out.stdout
    assert "$" not in out.stdout


def test_nbclient_stores_each_display_with_its_own_runs(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    turns = [*plan_turns(), {"text": "The second run's answer."}]
    (tmp_path / "turns.json").write_text(json.dumps(turns))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell(
            "h = %agent plan --model scripted:turns.json Clean the sales data"
        ),
        nbformat.v4.new_code_cell("await h.wait();"),
        nbformat.v4.new_code_cell("h = %agent act Now the second thing"),
        nbformat.v4.new_code_cell("await h.wait();"),
    ]
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    (first,) = nb.cells[1].outputs
    (second,) = nb.cells[3].outputs
    assert "application/vnd.jupyter.widget-view+json" not in first["data"]
    assert "| 2 | Drop duplicate rows |" in first["data"]["text/plain"]
    assert "second" not in first["data"]["text/plain"]
    assert ">Drop duplicate rows</td>" in first["data"]["text/html"]
    text = second["data"]["text/plain"]
    assert "The second run's answer." in text
    assert "Drop duplicate rows" not in text
    assert "<td" not in second["data"]["text/html"]


def test_terminal_ipython_prints_the_run_and_asks_at_the_prompt(tmp_path: Path) -> None:
    ask = {
        "tool_calls": [
            {
                "name": "ask_user",
                "input": {
                    "question": "Which column?",
                    "options": [{"label": "Price", "value": "price"}],
                },
            }
        ]
    }
    done = {"tool_calls": [{"name": "task_complete", "input": {"summary": "Used price."}}]}
    (tmp_path / "turns.json").write_text(json.dumps([ask, done]))
    code = textwrap.dedent(
        """\
        %load_ext jupyter_agent
        h = %agent act --model scripted:turns.json Pick a column
        print("STATE", h.state.value, h.summary)
        """
    )
    script = tmp_path / "run.ipy"
    script.write_text(code)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--quick",
            "--no-banner",
            "--colors=nocolor",
            str(script),
        ],
        cwd=tmp_path,
        input="price\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "▶ actor on scripted" in out and "Scripted replay" in out
    assert "? Which column?" in out
    assert "→ Price" in out
    assert "STATE completed Used price." in out


def test_a_long_sessions_log_stays_within_its_budget_and_says_what_it_left_out(
    monkeypatch,
) -> None:
    import jupyter_agent.jupyter.panel.transcript as transcript

    monkeypatch.setattr(transcript, "LOG_BUDGET", 200_000)
    monkeypatch.setattr(transcript, "LOG_KEEP_RECENT", 10)
    t = transcript.Transcript()
    for step in range(300):
        t.add({"kind": "turn_start", "step": step})
        t.add({"kind": "tool_end", "tool_use_id": f"t{step}", "result": f"{step}:" + "x" * 5_000})
    size = sum(len(json.dumps(e)) for e in t.snapshot())
    assert size <= 200_000
    entries = t.snapshot()
    # The newest entries are whole; older long results keep head and tail; the oldest are
    # gone, and a note at the top says so.
    assert entries[-1]["result"] == "299:" + "x" * 5_000
    trimmed = [e for e in entries if "of this earlier entry trimmed" in e.get("result", "")]
    assert trimmed and all(len(e["result"]) < 2_200 for e in trimmed)
    assert entries[0]["kind"] == "note"
    assert entries[0]["text"].endswith("earlier entries of this session are not shown.")
    assert sum(e["kind"] == "note" for e in entries) == 1


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
