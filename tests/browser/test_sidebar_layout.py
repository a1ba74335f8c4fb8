"""The panel docked in the sidebar, at its default width (300 px) and wider, in JupyterLab
and Notebook 7: the header, the plan strip and the input with Send, Pause and Stop stay in
view while only the transcript scrolls, and at narrow widths the secondary controls (role,
model, sessions, context, search, usage) fold into a menu the header's "⋯" button opens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from panel_ui import (
    PLAN,
    agent_notebook,
    call,
    in_both_themes,
    in_every_place,
    open_sidebar,
    sidebar,
    sidebar_width,
    step,
)
from playwright.sync_api import expect

# A run long enough to overflow any sidebar: a plan, chatty reads, then a command that
# waits for approval (the run stays busy, so Stop is live).
LONG_RUN = [
    call("submit_plan", "Here is my **plan**.", **PLAN),
    {"tool_calls": [step(1, "in_progress")]},
    *[call("read_file", "Reading the data once more. " * 8, path="sales.csv") for _ in range(6)],
    call("execute_command", "Counting the rows.", command="wc -l sales.csv"),
]

# Where each part of the docked panel is, against what the sidebar shows; and which of
# the sidebar's view, the panel and the transcript have more to show than they hold.
LAYOUT = """side => {
  const box = side.getBoundingClientRect();
  const seen = el => {
    if (!el || !el.getClientRects().length) return false;
    const r = el.getBoundingClientRect();
    return r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.height > 0;
  };
  const overflows = el => el.scrollHeight > el.clientHeight + 1;
  const panel = side.querySelector('.ja-panel');
  const q = s => panel.querySelector(s);
  return {
    view_scrolls: overflows(side.querySelector('.jp-AgentSidebar-view')),
    panel_scrolls: overflows(panel),
    transcript_scrolls: overflows(q('.ja-transcript')),
    header: seen(q('.ja-header')),
    status: seen(q('.ja-status')),
    strip: seen(q('.ja-plan-strip')),
    message: seen(q('textarea.ja-message')),
    send: seen(q('.ja-input button[type=submit]')),
    stop: seen(q('button.ja-stop')),
    pause: seen(q('button.ja-pause')),
    role: seen(q('select[aria-label=Role]')),
  };
}"""


def layout(side: Any) -> dict[str, bool]:
    facts: dict[str, bool] = side.evaluate(LAYOUT)
    return facts


PINNED = ("header", "status", "strip", "message", "send", "stop", "pause")


def assert_pinned(side: Any) -> dict[str, bool]:
    """The sidebar's parts in view and only the transcript scrolling; returns the facts."""
    facts = layout(side)
    assert not facts["view_scrolls"] and not facts["panel_scrolls"], facts
    assert facts["transcript_scrolls"], facts
    assert all(facts[part] for part in PINNED), facts
    return facts


def long_run_in_the_sidebar(open_notebook: Any, lab: Any, page: Any, name: str) -> Any:
    notebook = agent_notebook(open_notebook, lab, name, LONG_RUN)
    (lab.root / "sales.csv").write_text("region,amount\nnorth,3\n")
    notebook.run_cell("h = %agent plan --side --model $m Clean the sales data")
    side = sidebar(page)
    panel = side.locator(".ja-panel")
    panel.get_by_role("button", name="Execute plan").first.click(timeout=30_000)
    expect(panel.get_by_role("region", name=re.compile(r"^Approval: "))).to_be_visible(
        timeout=30_000
    )
    return notebook


def test_at_300_px_only_the_transcript_scrolls_and_the_controls_fold_into_a_menu(
    open_notebook, lab, page
):
    notebook = long_run_in_the_sidebar(open_notebook, lab, page, "narrow")
    side = sidebar(page)
    sidebar_width(page, 300)
    panel = side.locator(".ja-panel")
    more = panel.get_by_role("button", name="Settings and sessions")
    expect(more).to_have_attribute("aria-expanded", "false")
    facts = assert_pinned(side)
    assert not facts["role"], "the role picker is folded into the menu"
    expect(panel.get_by_role("group", name="Settings and sessions")).to_be_hidden()

    # The menu opens under the header; the keyboard meets its controls right after the
    # button; the header and Stop stay in view, and the menu scrolls if it must.
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    menu = panel.get_by_role("group", name="Settings and sessions")
    expect(menu).to_be_visible()
    expect(menu).to_contain_text("Notebook: narrow.ipynb")
    for name in ("Role", "Session"):
        expect(menu.get_by_role("combobox", name=name)).to_be_visible()
    expect(menu.get_by_role("button", name="Compact now")).to_be_visible()
    expect(menu.get_by_role("searchbox")).to_be_visible()
    facts = layout(side)
    assert facts["header"] and facts["stop"] and facts["message"] and facts["role"], facts
    assert not facts["view_scrolls"] and not facts["panel_scrolls"], facts
    more.focus()
    page.keyboard.press("Tab")  # the first control a run leaves enabled
    expect(menu.get_by_role("spinbutton", name="Max iterations")).to_be_focused()
    more.click()
    expect(menu).to_be_hidden()

    # Stop is there to click, and stops the run.
    panel.get_by_role("button", name="Stop").click()
    expect(panel.get_by_role("status")).to_have_text(re.compile("^stopped"), timeout=30_000)
    notebook.run_cell("h.state.value")  # the kernel took the Stop


def test_at_500_px_the_controls_show_and_the_input_stays_in_view(open_notebook, lab, page):
    long_run_in_the_sidebar(open_notebook, lab, page, "wide")
    side = sidebar(page)
    sidebar_width(page, 500)
    panel = side.locator(".ja-panel")
    expect(panel.get_by_role("button", name="Settings and sessions")).to_be_hidden()
    facts = assert_pinned(side)
    assert facts["role"], facts
    # Narrow again, the menu comes back, closed.
    sidebar_width(page, 300)
    expect(panel.get_by_role("button", name="Settings and sessions")).to_have_attribute(
        "aria-expanded", "false"
    )
    assert_pinned(side)


def test_the_layout_in_both_themes_inline_and_docked_passes_axe(open_notebook, lab, page):
    notebook = agent_notebook(open_notebook, lab, "layout-shots", LONG_RUN)
    (lab.root / "sales.csv").write_text("region,amount\nnorth,3\n")
    notebook.run_cell("h = %agent plan --model $m Clean the sales data")
    inline = notebook.panel.locator(".jp-OutputArea-output .ja-panel").last
    inline.get_by_role("button", name="Execute plan").first.click(timeout=30_000)
    expect(inline.get_by_role("region", name=re.compile(r"^Approval: "))).to_be_visible(
        timeout=30_000
    )
    # Under a cell of a wide notebook the panel is wide: no menu, the controls below.
    expect(inline.get_by_role("button", name="Settings and sessions")).to_be_hidden()
    expect(inline.get_by_role("combobox", name="Role")).to_be_visible()
    assert in_every_place(page, notebook, "sidebar-layout") == []
    # The menu open, at 300 px, in both themes.
    open_sidebar(page)
    side = sidebar(page)
    sidebar_width(page, 300)
    side.locator(".ja-panel").get_by_role("button", name="Settings and sessions").click()
    assert in_both_themes(page, side, "sidebar-layout-menu-300") == []


def test_in_notebook_7_the_docked_panel_keeps_its_input_in_view(open_notebook, lab, page):
    notebook = open_notebook("nb7-layout.ipynb", ui="notebook")
    (lab.root / "nb7-layout.json").write_text(json.dumps(LONG_RUN))
    (lab.root / "sales.csv").write_text("region,amount\nnorth,3\n")
    notebook.run_cell(
        "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
        "m = ScriptedModel('nb7-layout.json', chunk_size=4)"
    )
    notebook.run_cell("h = %agent plan --side --model $m Clean the sales data")
    side = sidebar(page)
    if not side.is_visible():
        page.evaluate(
            "() => window.jupyterapp.commands.execute('jupyter-agent:open-panel').then(() => null)"
        )
    panel = side.locator(".ja-panel")
    panel.get_by_role("button", name="Execute plan").first.click(timeout=30_000)
    expect(panel.get_by_role("region", name=re.compile(r"^Approval: "))).to_be_visible(
        timeout=30_000
    )
    assert_pinned(side)
