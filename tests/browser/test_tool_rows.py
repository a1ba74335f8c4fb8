"""Tool rows and run states as a first-time user meets them, in real JupyterLab in headless
Chromium with scripted models: rows folded unless they failed or wait for the user, their
raw input behind a "Details" toggle, and one name for a cell everywhere ("cell 4", its id
only on hover and in the link's target); states said honestly: a command ticks while it
runs and, stopped, says "stopped" (not a red "failed") with the time it ran; a denied call
says so in the user's words (the model still gets its instruction); after Continue plan the
strip says the step is in progress again, and a finished plan leaves the strip once another
task starts. Each state is shot into ``test-artifacts/screenshots/`` and audited with
axe-core (no serious or critical violation); each test's last state also inline and in the
sidebar at 300 and 500 px, in both themes.
"""

from __future__ import annotations

import re
from typing import Any

from axe_audit import violation_lines
from panel_ui import PLAN, agent_notebook, call, in_every_place, send, shoot, start, status, step
from playwright.sync_api import expect

SOURCES = ["import pandas as pd", "df = pd.read_csv('sales.csv')", "df.head()", "rate = 0.02"]


def no_serious_violations(page: Any, panel: Any) -> None:
    found = violation_lines(page, panel, "JupyterLab Light")
    assert not found, "\n".join(found)


def test_rows_are_folded_and_name_a_cell_one_way(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "rows",
        [
            call("read_notebook", "Let me look first."),
            call("update_cell", "I will fix the rate.", cell_id="cell-3", source="rate = 0.2"),
            call("read_file", path="missing.csv"),
            call("task_complete", summary="Fixed the rate."),
        ],
        sources=SOURCES,
    )
    panel = start(notebook, "%agent act --model $m Fix the rate")
    expect(status(panel)).to_have_text("completed")
    edit = panel.locator('.ja-tool[data-tool="update_cell"]')
    expect(edit).to_have_attribute("data-state", "done")
    # Folded: the row says what was done; its diff and input wait for a click.
    expect(edit).not_to_have_attribute("open", "")
    expect(edit.locator(".ja-tool-body")).to_be_hidden()
    row = edit.locator("summary").first
    expect(row).to_contain_text("Edit cell 4")
    # A failed row opens by itself: what went wrong shows without a click.
    failed = panel.locator('.ja-tool[data-tool="read_file"]')
    expect(failed).to_have_attribute("data-state", "error")
    expect(failed).to_have_attribute("open", "")
    expect(failed.locator(".ja-tool-result")).to_be_visible()
    shoot(panel, "rows-folded.png")
    no_serious_violations(page, panel)

    # On the row, the cell's name has its id on hover (the row is a toggle: no link in it).
    mention = row.locator(".ja-cell-name")
    expect(mention).to_have_text("cell 4")
    expect(mention).to_have_attribute("title", "Cell id cell-3")
    row.click()
    expect(edit.locator(".ja-tool-result pre").first).to_have_text("Updated the source of cell 4.")
    expect(edit.locator(".ja-tool-result .ja-label").nth(1)).to_have_text("Diff of cell 4")
    expect(edit.locator(".ja-diff-del")).to_have_text(["-rate = 0.02\n"])
    expect(edit.locator(".ja-diff-add")).to_have_text(["+rate = 0.2\n"])
    # One name for the cell: every mention is the link "cell 4", its id on hover only.
    links = edit.locator("a.ja-reveal-cell")
    expect(links).to_have_count(2)  # the result's and the diff's heading
    for i in range(2):
        expect(links.nth(i)).to_have_text("cell 4")
        expect(links.nth(i)).to_have_attribute("title", "Show cell cell-3 in the notebook")
    expect(edit.locator(".ja-tool-summary, .ja-tool-result")).not_to_contain_text(["cell-3"])
    # The raw input is there for whoever checks it, behind its own toggle.
    details = edit.locator("details.ja-raw-input")
    expect(details.locator("pre")).to_be_hidden()
    details.get_by_text("Details").click()
    expect(details.locator("pre")).to_contain_text('"cell_id": "cell-3"')
    shoot(panel, "rows-one-cell-name.png")
    # The edit reached the open notebook's fourth cell.
    expect(notebook.cells.nth(3).locator(".cm-content")).to_have_text("rate = 0.2")
    assert in_every_place(page, notebook, "rows") == []


def approval(panel: Any, nth: int = 0) -> Any:
    return panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(nth)


def test_a_stopped_command_ticks_then_says_stopped_with_its_time(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "stopped_command",
        [
            call("execute_command", "Let me wait for the export.", command="sleep 30"),
            {"text": "Fine, I will not wait for it."},
        ],
    )
    panel = start(notebook, "%agent act --model $m Wait for the export")
    card = approval(panel)
    # The command once, in its block; what it does in the analysis's words.
    expect(card.locator("code.ja-code")).to_have_text("sleep 30")
    expect(card.locator("ul.ja-programs")).to_have_text("no file effects")
    expect(card).not_to_contain_text("only reads")
    expect(card).not_to_contain_text("`")
    expect(card.get_by_role("button", name="Always allow", exact=True)).to_be_visible()
    expect(card.locator(".ja-remember")).to_have_text(
        "“Always allow” remembers: allow sleep (no file effects)."
    )
    shoot(card, "shell-approval.png")
    no_serious_violations(page, panel)

    card.get_by_role("button", name="Allow", exact=True).click()
    row = panel.locator('.ja-tool[data-tool="execute_command"]')
    # While it runs, its row ticks the time, as a cell's does.
    expect(row.locator(".ja-tool-status")).to_have_text(re.compile(r"^running… [2-9] s$"))
    expect(row).not_to_have_attribute("open", "")
    shoot(panel, "command-running.png")
    panel.get_by_role("button", name="Stop").click()
    expect(status(panel)).to_have_text("stopped")
    # Stopped by the user: "stopped", with the time it ran; not red, not "failed".
    expect(row).to_have_attribute("data-state", "stopped")
    expect(row.locator(".ja-tool-status")).to_have_text(re.compile(r"^stopped · \d+\.\d s$"))
    expect(row.locator(".ja-tool-error-line")).to_be_hidden()
    color = row.locator(".ja-tool-status").evaluate("s => getComputedStyle(s).color")
    red = panel.locator(".ja-stop").evaluate("b => getComputedStyle(b).color")
    assert color != red
    expect(panel.locator(".ja-stopped")).to_have_text("■ Stopped by the user.")
    shoot(panel, "command-stopped.png")
    assert in_every_place(page, notebook, "command-stopped") == []


def test_a_denied_call_says_so_in_the_users_words(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "denied",
        [
            call("execute_command", "Let me clear the temporary files.", command="rm a.tmp"),
            call("task_complete", summary="Left the files alone."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Tidy up")
    approval(panel).get_by_role("button", name="Deny").click()
    expect(status(panel)).to_have_text("completed")
    row = panel.locator('.ja-tool[data-tool="execute_command"]')
    expect(row).to_have_attribute("data-state", "denied")
    expect(row.locator(".ja-tool-status")).to_have_text("denied")
    line = row.locator(".ja-tool-error-line")
    expect(line).to_have_text("You denied this call: it did not run.")
    expect(row.locator("summary").first).not_to_contain_text("Do not repeat")
    shoot(panel, "denied-row.png")
    assert in_every_place(page, notebook, "denied-row") == []
    # The model still got its instruction.
    out = notebook.run_cell("print([b.text for m in h.history for b in m.tool_results][0])")
    assert out.startswith("The user declined this call. Do not repeat it;")


def test_after_continue_plan_the_strip_says_in_progress_and_a_done_plan_leaves(
    open_notebook, lab, page
):
    ask = call("ask_user", question="Go on with step 2?", options=[{"label": "Yes", "value": "y"}])
    keep = call(
        "ask_user",
        question="Keep a copy of the duplicates?",
        options=[{"label": "No", "value": "n"}],
    )
    notebook = agent_notebook(
        open_notebook,
        lab,
        "carry_on_strip",
        [
            call("submit_plan", **PLAN),
            {"tool_calls": [step(1, "done"), step(2, "in_progress")]},
            ask,  # stopped here
            keep,  # after Continue plan: the run waits here, step 2 in progress
            {"tool_calls": [step(2, "done")]},
            call("task_complete", summary="Both steps are done."),
            {"text": "It is a CSV with 12 columns."},  # an unrelated question afterwards
        ],
    )
    panel = start(notebook, "%agent plan --model $m Clean the sales data")
    strip = panel.get_by_role("group", name="Plan progress")
    strip.get_by_role("button", name="Execute plan").click()
    expect(panel.get_by_role("button", name="Yes")).to_be_visible()
    panel.get_by_role("button", name="Stop").click()
    expect(strip).to_contain_text("Step 2 of 2: Drop duplicate rows stopped")
    strip.get_by_role("button", name="Continue plan").click()
    # The agent carries on with step 2: the strip says so, not "stopped".
    expect(panel.get_by_role("button", name="No", exact=True)).to_be_visible()
    expect(strip).to_contain_text("Step 2 of 2: Drop duplicate rows in progress")
    expect(strip).to_have_attribute("data-state", "running")
    expect(strip.locator(".ja-step-status")).to_have_text("in progress")
    shoot(panel, "continue-plan-running.png")
    no_serious_violations(page, panel)

    panel.get_by_role("button", name="No", exact=True).click()
    expect(status(panel)).to_have_text("completed")
    expect(strip).to_contain_text("✔ Plan done")
    # A task about something else: the finished plan is no longer pinned above it.
    send(panel, "What is in sales.csv?")
    expect(panel.locator(".ja-text").last).to_have_text("It is a CSV with 12 columns.")
    expect(strip).to_be_hidden()
    expect(panel.get_by_role("region", name=re.compile(r"^Plan: "))).to_have_count(1)  # kept
    shoot(panel, "finished-plan-unpinned.png")
    assert in_every_place(page, notebook, "finished-plan-unpinned") == []
