"""Sessions of other notebooks, in a real kernel whose notebook is ``b.ipynb`` beside
``a.ipynb`` in one workspace, through the panel's comm as panel.js drives it and through
``%agent --resume``.

Invariants: the picker (the ``sessions`` trait) lists this notebook's sessions first, then
other notebooks' (each named, with the path a frontend opens it by), then those whose
notebook is not known; a search hit names its notebook and carries its outcome, this
notebook's first; a session of another notebook is resumed only by the user's choice
(``here``), and then goes on here with a note where its own notebook's conversation ends
(its cell references are not links here); ``%agent --resume`` of one says so in a line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import call
from kernels import Kernel, agent_env, start_kernel, stop_kernel
from magic_kernel import command, hello, scripted

from jupyter_agent import Agent, ScriptedModel

pytestmark = pytest.mark.slow  # a real kernel


def past_session(workspace: Path, notebook: str | None, task: str, summary: str) -> str:
    """A finished session of ``notebook`` (None: one saved before sessions named theirs)."""
    turns = [
        {"text": "Cell c1 holds it.", "tool_calls": [{"name": "list_directory", "input": {}}]},
        call("task_complete", summary=summary),
    ]
    agent = Agent("actor", ScriptedModel(turns), workspace=workspace)
    if notebook is not None:
        agent.session.work_on(notebook)
    asyncio.run(agent.run(task))
    return agent.session.id


@pytest.fixture
def kernel_of_b(tmp_path: Path) -> Any:
    for name in ("a.ipynb", "b.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(), tmp_path / name)
    # As JupyterLab names a notebook at the server's root: by its path relative to it.
    env = {**agent_env(tmp_path / "b.ipynb"), "JPY_SESSION_NAME": "b.ipynb"}
    k = start_kernel(tmp_path, env)
    try:
        k.ok("%load_ext jupyter_agent")
        yield k
    finally:
        stop_kernel(k)


def trait(kernel: Kernel, name: str) -> Any:
    out = kernel.ok(
        "import json\nfrom jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        f"print(json.dumps(kernel_agent().panel.{name}))"
    )
    return json.loads(out.stdout)


def test_the_picker_and_the_search_put_this_notebooks_sessions_first_and_resuming_another_asks(
    kernel_of_b: Kernel,
) -> None:
    kernel, folder = kernel_of_b, kernel_of_b.folder
    old = past_session(folder, None, "sales by region, long ago", "Old regions.")
    from_a = past_session(folder, "a.ipynb", "sales cleanup in a", "Cleaned the sales in a.")
    earlier = past_session(folder, "b.ipynb", "sales chart draft", "Drafted.")
    scripted(kernel, "m", [call("task_complete", summary="Sales plotted in b.")])
    kernel.ok("h = %agent plan --model $m plot the sales in b\nawait h.wait()")
    here = kernel.ok("print(h.session_id)").stdout.strip()

    kernel.ok("%agent")
    comm = kernel.panel_comm()
    hello(kernel, comm)
    listed = [
        (s["id"], s["notebook"], s["where"], s["open_path"]) for s in trait(kernel, "sessions")
    ]
    assert listed == [
        (here, "b.ipynb", "here", "b.ipynb"),
        (earlier, "b.ipynb", "here", "b.ipynb"),
        (from_a, "a.ipynb", "other", "a.ipynb"),
        (old, "", "unknown", ""),
    ]

    found = command(kernel, comm, "search_sessions", query="sales")["found"]
    # This notebook's first (the current session is left out of a search).
    assert [(f["id"], f["where"]) for f in found][0] == (earlier, "here")
    hit = next(f for f in found if f["id"] == from_a)
    assert (hit["notebook"], hit["where"], hit["open_path"]) == ("a.ipynb", "other", "a.ipynb")
    assert (hit["outcome_kind"], hit["outcome"]) == ("summary", "Cleaned the sales in a.")
    assert hit["stop_reason"] == "completed"

    # Another notebook's session: refused unless the user chose to go on with it here.
    refused = command(kernel, comm, "resume", session_id=from_a)
    assert refused["ok"] is False and "worked on a.ipynb" in refused["error"]
    assert trait(kernel, "session_id") == here
    since = len(kernel.seen)
    assert command(kernel, comm, "resume", session_id=from_a, here=True)["ok"] is True
    snapshot = kernel.from_panel(
        comm, lambda c: c["type"] == "snapshot" and c["view"] is None, since=since
    )
    entries = snapshot["entries"]
    (at,) = [i for i, e in enumerate(entries) if e.get("cells_of")]
    assert entries[at]["cells_of"] == "a.ipynb"
    assert [e["kind"] for e in entries[:at]] == [
        "user",
        "text",
        "tool_start",
        "tool_end",
        "tool_start",
        "tool_end",
    ]
    assert entries[-1]["text"] == f"Resumed session {from_a}."
    # It is this notebook's now: listed first, resumed again without asking.
    assert [s["id"] for s in trait(kernel, "sessions")][:3] == [from_a, here, earlier]
    assert command(kernel, comm, "resume", session_id=here)["ok"] is True


def test_agent_resume_of_another_notebooks_session_says_so_in_a_line(kernel_of_b: Kernel) -> None:
    kernel, folder = kernel_of_b, kernel_of_b.folder
    from_a = past_session(folder, "a.ipynb", "sales cleanup in a", "Cleaned.")
    out = kernel.ok(f"%agent --resume {from_a}")
    assert out.stdout == (
        f"Session {from_a} worked on a.ipynb: it goes on in this notebook, and its cell "
        "references (cells of that notebook) are dropped.\n"
    )
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "meta = kernel_agent().agent.session.metadata\n"
        "print(meta.notebook, meta.moved.from_notebook, meta.moved.messages)"
    )
    assert out.stdout.split() == ["b.ipynb", "a.ipynb", "5"]  # task, 2 calls, 2 results
    # Its own notebook's session now: resumed again without a word.
    assert kernel.ok(f"%agent --resume {from_a}").stdout == ""


def test_agent_resume_without_an_id_takes_this_notebooks_newest(kernel_of_b: Kernel) -> None:
    kernel, folder = kernel_of_b, kernel_of_b.folder
    mine = past_session(folder, "b.ipynb", "sales in b", "Done in b.")
    past_session(folder, "a.ipynb", "sales in a, newer", "Done in a.")
    assert kernel.ok("%agent --resume").stdout == ""
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(kernel_agent().agent.session.id)"
    )
    assert out.stdout.strip() == mine
