"""Waiting for, and interrupting, a cell the agent ran, in real JupyterLab: neither runs
code, so neither asks for approval once running the cell was allowed (the default rules
allow both). The approval card is for running the cell; the wait's row ticks and then
shows the cell's output; an interrupt stops the cell the agent started."""

from __future__ import annotations

import re

from panel_ui import agent_notebook, call, in_every_place, start, status
from playwright.sync_api import expect

APPROVALS = re.compile(r"^Approval: ")


def test_waiting_for_a_cell_the_agent_ran_asks_nothing(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "cell_wait",
        [
            call("run_cell", "Running the slow load.", cell_id="cell-0", wait=0.5),
            call("wait_for_cell", "It is still loading; I will wait.", cell_id="cell-0"),
            call("task_complete", summary="Loaded."),
        ],
        sources=["import time\ntime.sleep(4)\nprint('loaded', 42)"],
    )
    panel = start(notebook, "%agent act --model $m Load the data")
    cards = panel.get_by_role("region", name=APPROVALS)
    expect(cards).to_have_count(1)
    expect(cards.first).to_contain_text("time.sleep(4)")
    cards.first.get_by_role("button", name="Allow", exact=True).click()
    wait = panel.locator('.ja-tool[data-tool="wait_for_cell"]')
    expect(wait).to_be_attached(timeout=30_000)
    expect(status(panel)).to_have_text("completed", timeout=60_000)
    # Only the run was asked about: the wait ran without a card, and it saw the output.
    expect(cards).to_have_count(1)
    expect(wait).to_have_attribute("data-state", "done")
    wait.locator("summary").first.click()
    expect(wait.locator(".ja-tool-result")).to_contain_text("loaded 42")
    expect(notebook.cells.nth(0).locator(".jp-OutputArea-output")).to_contain_text("loaded 42")
    assert in_every_place(page, notebook, "cell-wait") == []


def test_interrupting_a_cell_the_agent_ran_asks_nothing(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "cell_interrupt",
        [
            call("run_cell", "Starting the long job.", cell_id="cell-0", wait=0.5),
            call("interrupt_cell", "Too slow: I will stop it.", cell_id="cell-0"),
            call("task_complete", summary="Stopped the job."),
        ],
        sources=["import time\ntime.sleep(60)"],
    )
    panel = start(notebook, "%agent act --model $m Run the job")
    cards = panel.get_by_role("region", name=APPROVALS)
    cards.first.get_by_role("button", name="Allow", exact=True).click()
    expect(status(panel)).to_have_text("completed", timeout=60_000)
    expect(cards).to_have_count(1)
    row = panel.locator('.ja-tool[data-tool="interrupt_cell"]')
    expect(row).to_have_attribute("data-state", "done")
    expect(notebook.cells.nth(0).locator(".jp-OutputArea-output")).to_contain_text(
        "KeyboardInterrupt"
    )
