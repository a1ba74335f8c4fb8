"""Real-time collaboration (jupyter-collaboration): Alice and Bob have one notebook open
in two browser contexts, and Alice's ``%agent`` (a scripted model) edits and runs its cells.

What must hold, since every view edits one shared Yjs document that the server saves:

- The agent's inserts, edits and runs reach Bob's view live, without a reload.
- Each agent edit is one step of Alice's undo history; undoing it reaches Bob and leaves
  Bob's own typing alone (a remote change is never in Alice's history).
- Bob typing in one cell while the agent edits another: both edits survive.
- The bridge's save writes every edit to disk (the server writes it, with no "File
  Changed" dialog in anyone's way), and no cell is lost.

The test waits on the notebook's shared model in each page, never on the clock.
"""

from __future__ import annotations

import json
from typing import Any

import nbformat
from playwright.sync_api import expect
from shared_model import PANEL_OF, cells, command_mode, wait_for_cells

# Bob's page keeps the times (performance.now()) at which cell-0's source changed.
WATCH_CELL_0 = f"""path => {{ {PANEL_OF}
  const cell = panelOf(path).content.model.sharedModel.cells.find(c => c.getId() === 'cell-0');
  window.__cell0Changes = [];
  cell.changed.connect((_, change) => {{
    if (change.sourceChange) window.__cell0Changes.push(performance.now());
  }});
}}"""

ORIGINAL = ["x = 21", "print('hello')", "", ""]
AGENT_EDITS = 6  # of cell-0, while Bob types in cell-2
BOB_TYPES = "bob = 'typed while the agent edited cell-0'"
TYPING = "bob-is-typing"
"""The file the test makes once Bob has begun typing."""
BOB_IS_HERE = "bob-is-here"
"""The file the test makes once Bob has the notebook open."""


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"text": "", "tool_calls": [{"name": name, "input": arguments}]}


def edit_0(i: int) -> str:
    return f"x = 21  # agent edit {i}"


SCRIPT = [
    call("insert_cell", source="y = x * 2", after="cell-0"),
    call("update_cell", cell_id="cell-1", find="hello", replace="bonjour"),
    call("run_cell", cell_id="cell-1"),
    call("task_complete", summary="Inserted, edited and ran."),
    # The second run ("Go on"): edits of cell-0, one per model turn.
    *[call("update_cell", cell_id="cell-0", source=edit_0(i)) for i in range(1, AGENT_EDITS + 1)],
    call("task_complete", summary="Edited cell-0."),
]


# The model waits before its first turn until Bob is there (BOB_IS_HERE), and before its
# second edit of cell-0 (with AGENT_EDITS turns left) until Bob types (TYPING): so he sees
# every edit live, and the edits and his typing overlap however loaded the machine is.
SETUP = f"""\
%load_ext jupyter_agent
import asyncio, os
from jupyter_agent import ScriptedModel

class Gated(ScriptedModel):
    gates = {{{len(SCRIPT)}: {BOB_IS_HERE!r}, {AGENT_EDITS}: {TYPING!r}}}

    async def stream(self, request):
        gate = self.gates.get(self.remaining)
        while gate is not None and not os.path.exists(gate):
            await asyncio.sleep(0.05)
        async for part in super().stream(request):
            yield part

m = Gated('shared.json', delay=0.2)
"""


BRIDGE_MODE = """\
import asyncio
from jupyter_agent.jupyter.kernel.agent import kernel_agent
agent = kernel_agent(get_ipython())
while agent.bridge.mode == "connecting":
    await asyncio.sleep(0.05)
print(agent.bridge.mode)"""
"""A cell that waits for the agent's notebook bridge and prints how it edits."""


def source_of(cell_id: str) -> str:
    return f"cells.find(c => c.id === '{cell_id}')?.source"


def ui_cell(notebook: Any, cell_id: str) -> Any:
    """The cell's node in the page (by its position in the model)."""
    return notebook.cells.nth([c["id"] for c in cells(notebook.page, notebook.path)].index(cell_id))


def start_agent(alice: Any, line: str) -> Any:
    """Run an ``%agent`` line in Alice's page; return the panel it shows."""
    alice.run_cell(line)
    panel = alice.panel.locator(".ja-panel").last
    expect(panel.locator(".ja-transcript")).not_to_contain_text("Connecting to the kernel")
    return panel


def test_a_collaborator_sees_the_agents_edits_and_runs_live_and_nothing_is_lost(
    collaborator, collaborative_lab
):
    (collaborative_lab.root / "shared.json").write_text(json.dumps(SCRIPT))
    alice = collaborator("alice", "shared.ipynb", ORIGINAL)
    path = alice.path
    alice.run_cell(SETUP)
    panel = start_agent(alice, "%agent act --model $m Work on the notebook")
    # The agent's bridge is Alice's view (the first to answer its ping), so its edits are
    # in her undo history; Bob opens the notebook after that, as a second user would.
    assert alice.run_cell(BRIDGE_MODE) == "live"
    bob = collaborator("bob", "shared.ipynb", write=False)  # the same notebook, another user
    bob.page.evaluate("() => { window.__sameLoad = true; }")
    (collaborative_lab.root / BOB_IS_HERE).touch()

    # The agent inserts, edits and runs; Bob's view shows each as it happens.
    seen = wait_for_cells(
        bob.page,
        bob.path,
        f"cells => cells.length > 4 && {source_of('cell-1')} === \"print('bonjour')\"",
        "Bob did not see the insert and the edit",
    )
    assert [c["id"] for c in seen][:1] == ["cell-0"] and seen[1]["source"] == "y = x * 2"
    inserted = seen[1]["id"]
    expect(ui_cell(bob, inserted).locator(".cm-content")).to_have_text("y = x * 2")
    expect(ui_cell(bob, "cell-1").locator(".cm-content")).to_have_text("print('bonjour')")
    panel.get_by_role("button", name="Allow", exact=True).click()  # run_cell asks
    expect(panel.get_by_role("status")).to_have_text("completed")
    ran = ui_cell(bob, "cell-1")
    expect(ran.locator(".jp-OutputArea-output")).to_have_text("bonjour")
    count = next(c for c in cells(alice.page, alice.path) if c["id"] == "cell-1")["execution_count"]
    assert isinstance(count, int)
    expect(ran.locator(".jp-InputPrompt")).to_have_text(f"[{count}]:")

    # Bob types in cell-2 while the agent edits cell-0 over and over.
    bob.page.evaluate(WATCH_CELL_0, path)
    panel.get_by_role("textbox", name="Message").fill("Go on")
    panel.get_by_role("button", name="Send").click()
    wait_for_cells(
        bob.page, bob.path, f"cells => {source_of('cell-0')} !== 'x = 21'", "no agent edit began"
    )
    ui_cell(bob, "cell-2").locator(".cm-content").click()
    began = bob.page.evaluate("() => performance.now()")
    half = len(BOB_TYPES) // 2
    bob.page.keyboard.type(BOB_TYPES[:half], delay=30)
    (collaborative_lab.root / TYPING).touch()  # the agent's next edit may come now
    bob.page.wait_for_function(
        f"() => window.__cell0Changes.some(t => t > {began})", timeout=90_000
    )
    bob.page.keyboard.type(BOB_TYPES[half:], delay=30)
    ended = bob.page.evaluate("() => performance.now()")
    expect(panel.get_by_role("status")).to_have_text("completed")
    final = edit_0(AGENT_EDITS)
    both = (
        f"cells => {source_of('cell-0')} === '{final}' && {source_of('cell-2')} === {BOB_TYPES!r}"
    )
    for notebook in (alice, bob):
        wait_for_cells(notebook.page, notebook.path, both, "an edit was lost")
    changes = bob.page.evaluate("() => window.__cell0Changes")
    assert any(began < t < ended for t in changes), (
        "the agent's edits and Bob's typing did not overlap"
    )

    # Undo in Alice's view takes back the agent's last edit, in one step, for Bob too;
    # Bob's typing is not in Alice's history, so it stays.
    command_mode(alice)
    alice.page.keyboard.press("z")
    undone = f"cells => {source_of('cell-0')} === '{edit_0(AGENT_EDITS - 1)}'"
    for notebook in (alice, bob):
        shown = wait_for_cells(
            notebook.page, notebook.path, undone, "undo did not take back the agent's last edit"
        )
        assert next(c for c in shown if c["id"] == "cell-2")["source"] == BOB_TYPES

    # The bridge's save: the server writes the shared document, every edit in it.
    alice.run_cell(
        "from jupyter_agent.jupyter.bridge.live import connect_notebook\n"
        "bridge = await connect_notebook()\n"
        "await bridge.save()"
    )
    saved = nbformat.read(collaborative_lab.root / path, as_version=4).cells
    by_id = {c["id"]: c for c in saved}
    assert [c["id"] for c in saved][:5] == ["cell-0", inserted, "cell-1", "cell-2", "cell-3"]
    assert by_id["cell-0"]["source"] == edit_0(AGENT_EDITS - 1)
    assert by_id[inserted]["source"] == "y = x * 2"
    assert by_id["cell-1"]["source"] == "print('bonjour')"
    assert by_id["cell-1"]["execution_count"] == count
    assert [o.get("text") for o in by_id["cell-1"]["outputs"]] == ["bonjour\n"]
    assert by_id["cell-2"]["source"] == BOB_TYPES
    assert by_id["cell-3"]["source"] == SETUP
    for notebook in (alice, bob):
        expect(notebook.page.get_by_role("dialog")).to_have_count(0)  # no "File Changed"
    assert bob.page.evaluate("() => window.__sameLoad") is True  # all of it live, no reload
