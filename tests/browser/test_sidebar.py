"""The agent panel docked in JupyterLab's right sidebar, in headless Chromium.

"Agent: Open panel" (command palette, or the sidebar's tab) shows the active notebook's
agent there, loading the extension in its kernel when needed; ``%agent --side`` docks it
from a cell. The sidebar follows the active notebook and comes back after a reload.
"""

from __future__ import annotations

import json
import re
from typing import Any

from panel_ui import open_from_palette, shot_path, sidebar
from playwright.sync_api import expect

PLAN = {
    "goal": "Tidy the data",
    "steps": [
        {"step_number": 1, "action": "Load data.csv", "reason": "See it"},
        {"step_number": 2, "action": "Drop empty rows", "reason": "They break totals"},
        {"step_number": 3, "action": "Save tidy.csv", "reason": "Keep the result"},
    ],
}


def scripted(notebook: Any, lab: Any, name: str, turns: list[dict[str, Any]]) -> None:
    """``m`` in the notebook's kernel: a scripted model playing ``turns``."""
    (lab.root / f"{name}.json").write_text(json.dumps(turns))
    notebook.run_cell(
        f"from jupyter_agent import ScriptedModel\nm = ScriptedModel('{name}.json', chunk_size=4)"
    )


def plan_turn(text: str) -> dict[str, Any]:
    return {"text": text, "tool_calls": [{"name": "submit_plan", "input": PLAN}]}


def test_the_palette_command_docks_the_agent_and_loads_the_extension(open_notebook, page):
    notebook = open_notebook("palette.ipynb")
    open_from_palette(page)
    side = sidebar(page)
    expect(side).to_be_visible()
    expect(side.locator(".jp-AgentSidebar-header")).to_have_text("Agent of palette.ipynb")
    panel = side.locator(".ja-panel")
    # No model is configured in this kernel: the panel says so before anyone types.
    expect(panel.get_by_role("status")).to_have_text("set-up needed", timeout=30_000)
    # The kernel has the extension now: %agent works without %load_ext, and the docked
    # panel is the same widget as the kernel's (a role change shows there at once).
    assert notebook.run_cell("%agent role actor") == "Role: actor"
    expect(panel.locator(".ja-role-badge")).to_have_text("actor")
    # At the sidebar's width the role picker is in the ⋯ menu, showing the change too.
    panel.get_by_role("button", name="Settings and sessions").click()
    expect(panel.get_by_role("combobox", name="Role")).to_have_value("actor")


def test_the_sidebar_tab_opens_it_and_it_follows_the_active_notebook(
    open_notebook, open_another, page, lab
):
    first = open_notebook("first.ipynb")
    first.run_cell("%load_ext jupyter_agent")
    scripted(first, lab, "first", [plan_turn("A plan for the first notebook.")])
    first.run_cell("h = %agent plan --model $m Tidy the data")
    first.run_cell("await h.wait(); print(h.state.value)")
    # The right sidebar's tab for the agent (its icon) opens the panel.
    page.locator('.jp-SideBar.jp-mod-right .lm-TabBar-tab[title="Agent"]').click()
    side = sidebar(page)
    expect(side.locator(".jp-AgentSidebar-header")).to_have_text("Agent of first.ipynb")
    expect(side.locator(".ja-plan-table tbody tr")).to_have_count(3, timeout=30_000)

    second = open_another("second.ipynb")
    expect(side.locator(".jp-AgentSidebar-header")).to_have_text("Agent of second.ipynb")
    # Its own agent (no model configured there yet) and its own, empty transcript.
    expect(side.locator(".ja-panel").get_by_role("status")).to_have_text(
        "set-up needed", timeout=30_000
    )
    expect(side.locator(".ja-plan-table")).to_have_count(0)
    assert second.run_cell("print(get_ipython().find_line_magic('agent') is not None)") == "True"

    page.locator(".jp-mod-current .lm-TabBar-tab, .lm-DockPanel-tabBar .lm-TabBar-tab").filter(
        has_text=re.compile(r"^first\.ipynb")
    ).first.click()
    expect(side.locator(".jp-AgentSidebar-header")).to_have_text("Agent of first.ipynb")
    expect(side.locator(".ja-plan-table tbody tr")).to_have_count(3)
    expect(side.locator(".ja-text").first).to_contain_text("A plan for the first notebook.")


def test_agent_side_docks_the_run_and_a_reload_restores_it(open_notebook, page, lab):
    notebook = open_notebook("side.ipynb")
    notebook.run_cell("%load_ext jupyter_agent")
    scripted(notebook, lab, "side", [plan_turn("Here is the plan, docked.")])
    notebook.run_cell("%agent plan --side --model $m Tidy the data")
    side = sidebar(page)
    expect(side).to_be_visible()
    expect(side.locator(".ja-plan-table tbody tr")).to_have_count(3, timeout=30_000)
    expect(side.locator(".ja-panel").get_by_role("status")).to_have_text("plan ready for review")
    inline = notebook.panel.locator(".jp-OutputArea-output .ja-panel")
    expect(inline).to_contain_text("The agent panel is in the right sidebar.")
    side.screenshot(path=str(shot_path("sidebar.png")))

    notebook.save()
    page.reload()
    side = sidebar(page)
    expect(side).to_be_visible(timeout=30_000)
    expect(side.locator(".ja-plan-table tbody tr")).to_have_count(3, timeout=30_000)
    expect(side.locator(".ja-user")).to_have_text("Tidy the data")
    expect(side.locator(".ja-panel").get_by_role("status")).to_have_text("plan ready for review")


def test_the_sidebar_says_why_when_the_kernel_cannot_give_a_panel(open_notebook, page):
    notebook = open_notebook("broken.ipynb")
    # This kernel cannot import the package: the sidebar says so instead of hanging.
    notebook.run_cell(
        "import sys\n"
        "sys.modules['jupyter_agent.jupyter'] = None  # an import of it now fails\n"
        "sys.modules['jupyter_agent'] = None"
    )
    open_from_palette(page)
    message = sidebar(page).locator(".jp-AgentSidebar-message")
    expect(message).to_have_text(
        "jupyter_agent is not installed in this notebook's kernel environment",
        timeout=30_000,
    )
