"""A plan's progress in view, in a real JupyterLab in headless Chromium (scripted models).

While a plan exists, a strip pinned above the transcript (outside its scroll) says what the
plan is for, which step is in hand, how many are done, and holds the plan's button; a
planning run ends "plan ready for review", not "completed"; Execute plan shows as that
action, not as a message the user never wrote; and in the right sidebar at its narrowest
(300 px) nothing of the panel, the plan table included, hides behind a horizontal
scrollbar. Screenshots land in ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

from typing import Any

from panel_ui import agent_notebook, call, shoot, shot_path, sidebar_width, start, status, step
from playwright.sync_api import expect

PLAN = {
    "goal": "Clean the sales data so the monthly totals can be trusted again",
    "steps": [
        {
            "step_number": 1,
            "action": "Load sales.csv",
            "reason": "See what is there",
            "tools_needed": ["read_file"],
            "estimated_time": "~1 s",
        },
        {
            "step_number": 2,
            "action": "Drop duplicate rows",
            "reason": "Duplicates skew totals, and the February export doubled some orders",
            "tools_needed": ["update_cell", "run_cell", "execute_command"],
            "estimated_time": "~5 s",
        },
        {
            "step_number": 3,
            "action": "Fill the missing prices from the catalogue",
            "reason": "Rows without a price count as zero revenue",
            "tools_needed": ["read_file", "update_cell"],
            "estimated_time": "~10 s",
        },
        {
            "step_number": 4,
            "action": "Save clean_sales.csv",
            "reason": "Keep the result for the report",
            "tools_needed": ["write_file"],
            "estimated_time": "~1 s",
        },
    ],
    "estimated_total_time": "~20 s",
    "risks": ["Rows that look duplicated may be legitimate"],
}
FINDINGS = "\n".join(f"- Row {n}: a duplicate of row {n - 1}, dropped." for n in range(2, 70))


def strip_of(panel: Any) -> Any:
    return panel.get_by_role("group", name="Plan progress")


def overflow(locator: Any) -> list[str]:
    """The elements under ``locator`` (itself included) wider than their box: what a
    horizontal scrollbar would hide."""
    return list(
        locator.evaluate(
            """root => [root, ...root.querySelectorAll('*')]
                 .filter(e => e.scrollWidth > e.clientWidth + 1
                              && getComputedStyle(e).overflowX !== 'hidden'
                              && e.clientWidth > 0)
                 .map(e => `${e.tagName.toLowerCase()}.${e.className}: `
                           + `${e.scrollWidth} > ${e.clientWidth}`)"""
        )
    )


def test_the_strip_keeps_the_step_in_hand_in_view_and_continues_a_stopped_plan(open_notebook, lab):
    ask = call(
        "ask_user", question="Go on with step 3?", options=[{"label": "Yes", "value": "yes"}]
    )
    notebook = agent_notebook(
        open_notebook,
        lab,
        "progress",
        [
            call("submit_plan", "I looked at the data. Here is my plan.", **PLAN),
            {"tool_calls": [step(1, "in_progress")]},
            {"text": FINDINGS, "tool_calls": [step(1, "done"), step(2, "in_progress")]},
            ask,
            {"tool_calls": [step(2, "done"), step(3, "done"), step(4, "done")]},
            call("task_complete", summary="All four steps are done."),
        ],
    )
    panel = start(notebook, "%agent plan --model $m Clean the sales data")
    strip = strip_of(panel)
    # Planning did nothing yet: the header and the run's last line say the plan awaits review.
    expect(status(panel)).to_have_text("plan ready for review")
    expect(panel.locator(".ja-completed").last).to_have_text(
        f"✔ Plan ready for review: {PLAN['goal']}"
    )
    expect(strip).to_contain_text("Step 1 of 4: Load sales.csv pending")
    expect(strip).to_contain_text("0 of 4 done")

    strip.get_by_role("button", name="Execute plan").click()
    expect(panel.get_by_role("button", name="Yes")).to_be_visible()
    # Held at the question, with the findings long enough to scroll the plan card away.
    expect(strip).to_contain_text("Step 2 of 4: Drop duplicate rows in progress")
    expect(strip).to_contain_text("1 of 4 done")
    expect(strip.get_by_role("button")).to_have_count(0)  # nothing to click while it runs
    transcript = panel.locator(".ja-transcript")
    at_bottom = layout(panel, scroll_top=None)
    assert at_bottom["card"]["bottom"] < at_bottom["log"]["top"], "the plan card is in view"
    assert at_bottom["strip"]["bottom"] <= at_bottom["log"]["top"] + 1  # above the scroll
    assert strip.evaluate("s => s.closest('.ja-transcript') === null")
    # Scrolled back to the top, the strip has not moved within the panel.
    at_top = layout(panel, scroll_top=0)
    assert at_top["card"]["top"] >= at_top["log"]["top"] - 1  # the card is back in view
    assert abs(at_top["strip"]["top"] - at_bottom["strip"]["top"]) < 1
    layout(panel, scroll_top=None)
    expect(strip).to_be_in_viewport()
    # The action the user took, not a message they never typed.
    expect(panel.locator(".ja-user")).to_have_text(["Clean the sales data"])
    expect(panel.locator(".ja-action .ja-action-label")).to_have_text("▶ Executing the plan")
    expect(transcript).to_be_visible()
    shoot(panel, "progress-strip.png")

    panel.get_by_role("button", name="Stop").click()
    expect(panel.locator(".ja-stopped")).to_have_text("■ Stopped by the user.")
    expect(strip).to_contain_text("Step 2 of 4: Drop duplicate rows stopped")
    carry_on = strip.get_by_role("button", name="Continue plan")
    expect(carry_on).to_be_enabled()
    carry_on.click()
    expect(panel.locator(".ja-completed").last).to_have_text(
        "✔ Completed: All four steps are done."
    )
    expect(status(panel)).to_have_text("completed")
    expect(strip).to_contain_text("4 of 4 done")
    expect(strip).to_contain_text("✔ Plan done")
    expect(strip.get_by_role("button")).to_have_count(0)
    expect(panel.locator(".ja-action")).to_have_count(2)  # Execute, then Continue


def layout(panel: Any, *, scroll_top: int | None) -> dict[str, Any]:
    """Scroll the transcript (to the bottom for None), then the boxes of the strip, the
    transcript and the plan card, relative to the panel's top."""
    return dict(
        panel.evaluate(
            """(panel, top) => {
              const log = panel.querySelector('.ja-transcript');
              log.scrollTop = top === null ? log.scrollHeight : top;
              const origin = panel.getBoundingClientRect().top;
              const box = s => {
                const r = panel.querySelector(s).getBoundingClientRect();
                return { top: r.top - origin, bottom: r.bottom - origin };
              };
              return { strip: box('.ja-plan-strip'), log: box('.ja-transcript'),
                       card: box('.ja-plan') };
            }""",
            scroll_top,
        )
    )


def test_in_the_sidebar_at_300_px_the_plan_fits_without_a_horizontal_scrollbar(
    open_notebook, lab, page
):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "narrow",
        [call("submit_plan", "Here is the plan, docked.", **PLAN)],
    )
    notebook.run_cell("%agent plan --side --model $m Clean the sales data")
    side = page.locator("#jupyter-agent-sidebar")
    panel = side.locator(".ja-panel")
    expect(panel.locator(".ja-plan-table tbody tr")).to_have_count(4, timeout=30_000)
    expect(status(panel)).to_have_text("plan ready for review")
    strip = strip_of(panel)
    expect(strip.get_by_role("button", name="Execute plan")).to_be_enabled()

    default = side.evaluate("s => s.getBoundingClientRect().width")
    assert overflow(side) == [], f"at the default width ({default:.0f} px)"

    sidebar_width(page, 300)
    page.wait_for_function(
        "() => document.querySelector('#jupyter-agent-sidebar')"
        ".getBoundingClientRect().width <= 301"
    )
    assert overflow(side) == [], "at 300 px"
    table = panel.locator(".ja-plan-table")
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth")
    assert panel.evaluate("p => p.scrollWidth <= p.clientWidth")
    # Every step's action and status are on screen, the Time and Status columns included.
    expect(table.locator("tbody tr").nth(1)).to_contain_text("Drop duplicate rows")
    # Stacked, each cell says what it is (the header row is hidden).
    expect(table.locator("tbody tr").nth(1).get_by_role("cell", name="Time: ~5 s")).to_be_visible()
    expect(table.locator(".ja-step-status").nth(3)).to_be_visible()
    expect(strip).to_be_in_viewport()
    side.screenshot(path=str(shot_path("sidebar-plan.png")))
