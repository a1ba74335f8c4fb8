"""The panel for keyboard and screen-reader users, checked with axe-core (the engine behind
the browsers' accessibility audits) in real JupyterLab: inline and in the sidebar, in the
Light and Dark themes, with a plan and an approval card on screen. Serious and critical
violations fail the test, each named with its rule and where it is, as does text whose
contrast with what is behind it is below 3:1."""

from __future__ import annotations

import re

import pytest
from axe_audit import AXE, THEMES, change_theme, lowest_contrast, violation_lines
from panel_ui import PLAN, agent_notebook, call, step
from playwright.sync_api import expect


@pytest.mark.parametrize("place", ["inline", "sidebar"])
def test_the_panel_has_no_serious_accessibility_violations(open_notebook, lab, page, place):
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
    page.emulate_media(reduced_motion="reduce")  # judge the cards at rest, not mid-flash
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
    found: list[str] = []
    try:
        for theme in THEMES:  # the same panel, in each theme
            change_theme(page, theme)
            found += violation_lines(page, root, theme)
            ratio, where = lowest_contrast(panel)
            # 3:1 is WCAG's floor for large text and controls; dim captions stay above it.
            if ratio < 3:
                found.append(f"{theme}: contrast {ratio:.2f} at {where}")
    finally:
        change_theme(page, THEMES[0])
    assert not found, "\n".join(found)
