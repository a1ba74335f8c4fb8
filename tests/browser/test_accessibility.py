"""The panel for keyboard and screen-reader users, checked with axe-core (the engine behind
the browsers' accessibility audits) in real JupyterLab: inline and in the sidebar, in the
Light and Dark themes, with a plan and an approval card on screen. Serious and critical
violations fail the test, each named with its rule and where it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from test_panel import PLAN, agent_notebook, call, step

AXE = Path(__file__).resolve().parents[2] / "js" / "node_modules" / "axe-core" / "axe.min.js"

# axe's own result, reduced to what a failure message needs.
RUN_AXE = """async element => {
  const result = await window.axe.run(element, { resultTypes: ['violations'] });
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      where: v.nodes.slice(0, 3).map(n => n.target.join(' ')),
    }));
}"""


def violations(page: Any, panel: Any) -> list[dict[str, Any]]:
    if not page.evaluate("() => 'axe' in window"):
        page.add_script_tag(path=str(AXE))
    return panel.evaluate(RUN_AXE)


@pytest.mark.parametrize("place", ["inline", "sidebar"])
@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_the_panel_has_no_serious_accessibility_violations(open_notebook, lab, page, theme, place):
    assert AXE.is_file(), "axe-core is a dev dependency of js/: run npm install in js/"
    notebook = agent_notebook(
        open_notebook,
        lab,
        f"a11y-{place}",
        [
            call("submit_plan", "Here is my **plan**.", **PLAN),
            {"tool_calls": [step(1, "in_progress")]},
            call("execute_command", "Counting.", command="echo hi"),
        ],
    )
    page.emulate_media(reduced_motion="reduce")
    page.evaluate(
        f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})"
    )
    try:
        expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme)
        side = " --side" if place == "sidebar" else ""
        notebook.run_cell(f"h = %agent plan{side} --model $m Clean the sales data")
        root = (
            page.locator("#jupyter-agent-sidebar")
            if place == "sidebar"
            else notebook.panel.locator(".jp-OutputArea-output .ja-panel").last
        )
        panel = root.locator(".ja-panel").first if place == "sidebar" else root
        expect(panel.get_by_role("button", name="Execute plan").first).to_be_visible(timeout=30_000)
        panel.get_by_role("button", name="Execute plan").first.click()
        expect(panel.get_by_role("region", name=re.compile(r"^Approval: ")).first).to_be_visible(
            timeout=30_000
        )
        found = violations(page, root)
        assert not found, "\n".join(
            f"{v['impact']} {v['rule']}: {v['help']} at {v['where']}" for v in found
        )
    finally:
        page.evaluate(
            "() => window.jupyterapp.commands.execute('apputils:change-theme', "
            "{theme: 'JupyterLab Light'})"
        )
