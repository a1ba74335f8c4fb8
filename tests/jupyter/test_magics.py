"""The %agent magics in a real kernel through jupyter_client: the extension and its help,
the one-line refusals of bad arguments, the options, and the subcommands that are not a
run of a task (role, model, trust, remember, compact, stop, --side, the file-mode panel).

Each kernel runs in a temporary folder holding ``analysis.ipynb``, which it knows as its
notebook (``JPY_SESSION_NAME``), with no API key and no reachable model API: every run
uses a scripted model, passed as ``--model $name`` or ``--model scripted:PATH.json``.
The tests that only parse and refuse share one kernel; the others start their own.
Runs are in test_magic_runs.py, the panel's comm in test_panel_comm.py, what a cell
leaves in the notebook in test_magic_displays.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import inline_snapshot
import pytest
from kernels import Kernel, agent_kernel, stop_kernel
from magic_kernel import command, hello, scripted

pytestmark = pytest.mark.slow  # real kernels


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """One kernel for the tests that only parse and refuse (they start no run)."""
    k = agent_kernel(tmp_path_factory.mktemp("magics"))
    try:
        yield k
    finally:
        stop_kernel(k)


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
        "--notebook PATH",
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

In a line's task, ``$name`` and ``{name}`` of a str, number or bool variable (a
papermill parameter, say) are replaced by its value; ``$$``, ``{{`` and ``}}``
are a literal ``$``, ``{`` and ``}``; other braces and dollars stay as written
(expressions are not evaluated). A %%agent cell's body is taken as written.

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
  --resume [SESSION_ID]    continue a saved session (without an id, the newest:
                           this notebook's when it has one); a session of
                           another notebook goes on here without its cell
                           references; the panel's session picker does the same
  --side                   dock the panel in JupyterLab's right sidebar
  --notebook PATH          work on this notebook file, for a kernel that does not
                           know its own (papermill, nbclient, a remote kernel):
                           without one, no notebook tools are offered

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


def test_a_task_given_before_any_key_waits_in_the_panel_and_starts_once_it_can(
    tmp_path: Path,
) -> None:
    """Day one: ``%agent plan …`` before any key shows the panel (its set-up box says why
    and shows the task), raises nothing, and the task starts once the model can be called
    (here: a model the user switches to)."""
    k = agent_kernel(tmp_path)
    try:
        result = k.run("%agent plan Clean the data")
        assert not result.errors and "UsageError" not in result.stderr, result.stderr
        assert len(result.displays) == 1  # the panel
        assert "give one in the panel's set-up box" in result.stdout
        out = k.ok(
            "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
            "p = kernel_agent().panel\n"
            "print(p.model_ready, repr(p.waiting_task))\nprint(p.model_setup)"
        )
        first, why = out.stdout.strip().split("\n", 1)
        assert first == "False 'Clean the data'"
        assert why.startswith("No Anthropic API key found")
        scripted(k, "m", [{"text": "A plan."}])
        k.ok("%agent --model $m")
        done = k.ok(
            "import asyncio\n"
            "for _ in range(200):\n"
            "    if p.agent.handle and p.agent.handle.done: break\n"
            "    await asyncio.sleep(0.05)\n"
            "h = p.agent.handle\n"
            "print(h.task, '|', h.role, '|', h.state.value, '|', repr(p.waiting_task))"
        )
        assert done.stdout.strip() == "Clean the data | planner | completed | ''"
    finally:
        stop_kernel(k)


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


def test_a_bridge_connected_while_the_panel_is_made_is_shown(tmp_path: Path) -> None:
    """The bridge connects on the agent's thread while ``%agent`` makes the panel on the
    cell's: the panel reads "connecting", then the bridge connects before the kernel's agent
    has the panel to tell. Forced here by holding the panel's maker until the bridge is in;
    the panel still shows how edits reach the notebook."""
    k = agent_kernel(tmp_path)
    try:
        k.ok(
            "import time\n"
            "from jupyter_agent.agent._home import call_on\n"
            "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
            "from jupyter_agent.jupyter.panel import widget\n"
            "made = widget.AgentPanel.__init__\n"
            "def held(self, *a, **kw):\n"
            "    made(self, *a, **kw)\n"
            "    seen.append(self.bridge_mode)\n"
            "    ka = kernel_agent()\n"
            "    while ka.bridge is None or ka.bridge.mode == 'connecting': time.sleep(0.02)\n"
            "    call_on(ka.home, lambda: None)  # what the connection handed the agent ran\n"
            "seen = []\n"
            "widget.AgentPanel.__init__ = held"
        )
        k.ok("%agent")
        out = k.ok(
            "import asyncio\n"
            "p = kernel_agent().panel\n"
            "for _ in range(100):\n"
            "    if p.bridge_mode != 'connecting': break\n"
            "    await asyncio.sleep(0.05)\n"
            "print(seen, p.bridge_mode)"
        )
        assert out.stdout.split() == ["['connecting']", "file"]
    finally:
        stop_kernel(k)
