"""Tool rows as a first-time user meets them, in real JupyterLab in headless Chromium with
scripted models: rows folded unless they failed or wait for the user, their raw input behind
a "Details" toggle, and one name for a cell everywhere ("cell 4", its id only on hover and
in the link's target). Each state is shot into ``test-artifacts/screenshots/`` and audited
with axe-core (no serious or critical violation).
"""

from __future__ import annotations

from typing import Any

from axe_audit import violation_lines
from panel_ui import agent_notebook, call, shoot, start, status
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
    no_serious_violations(page, panel)
    # The edit reached the open notebook's fourth cell.
    expect(notebook.cells.nth(3).locator(".cm-content")).to_have_text("rate = 0.2")
