"""The extension in Jupyter Notebook 7 (the same server; its single-document pages).

Notebook 7 is built from JupyterLab's components, so the bridge and the sidebar plugin
run there as well: the agent edits the open notebook live, "Agent: Open panel" docks its
panel in Notebook's right side panel, and the panel calls the app by its name.
"""

from __future__ import annotations

import json

from panel_ui import in_every_place, start
from playwright.sync_api import expect

AGENT = """\
from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.jupyter.bridge.live import connect_notebook
from jupyter_agent.config.rules import Everything, Rule, Rules

turns = [
    {"tool_calls": [{"name": "insert_cell", "input": {
        "source": "print('inserted by the agent')", "after": "cell-0"}}]},
    {"tool_calls": [{"name": "task_complete", "input": {"summary": "done"}}]},
]
bridge = await connect_notebook()
agent = Agent("actor", ScriptedModel(turns), notebook=bridge,
              policy=Rules([Rule.allow(Everything())]), persist=False)
handle = agent.start("Add a cell")
await handle.wait()
print(bridge.mode, handle.state.value)
"""


def test_the_bridge_and_the_side_panel_work_in_notebook_7(open_notebook, page):
    notebook = open_notebook("nb7.ipynb", ui="notebook")
    assert notebook.run_cell(AGENT, timeout=60_000) == "live completed"
    expect(notebook.cells.nth(1).locator(".cm-content")).to_have_text(
        "print('inserted by the agent')"
    )
    page.evaluate(
        "() => window.jupyterapp.commands.execute('jupyter-agent:open-panel').then(() => null)"
    )
    side = page.locator("#jupyter-agent-sidebar")
    expect(side).to_be_visible()
    expect(side.locator(".jp-AgentSidebar-header")).to_have_text("Agent of nb7.ipynb")
    # The kernel's own agent (not the one the cell made) has no model yet: it says so.
    expect(side.locator(".ja-panel").get_by_role("status")).to_have_text(
        "set-up needed", timeout=30_000
    )
    assert json.loads(notebook.run_cell("import json; print(json.dumps(1 + 1))")) == 2


def test_the_panel_calls_notebook_7_by_its_name(open_notebook, lab, page):
    """The panel names the app the notebook is open in: Jupyter Notebook, not JupyterLab
    (one extension serves both; it says which in its answer to the kernel)."""
    (lab.root / "nb7_name.json").write_text(json.dumps([{"text": "Hello from Notebook 7."}]))
    notebook = open_notebook("nb7_name.ipynb", ui="notebook")
    notebook.run_cell(
        "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
        "m = ScriptedModel('nb7_name.json')"
    )
    panel = start(notebook, "%agent act --model $m Say hello")
    expect(panel.locator(".ja-transcript")).to_contain_text("Hello from Notebook 7.")
    line = panel.locator(".ja-notebook")
    expect(line).to_contain_text("nb7_name.ipynb — live in Jupyter Notebook:", timeout=30_000)
    expect(line).not_to_contain_text("JupyterLab")
    assert in_every_place(page, notebook, "notebook7-named") == []
