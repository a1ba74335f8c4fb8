"""The panel with the keyboard only, in a real JupyterLab: a question answered with Tab and
Enter, an approval allowed with Enter, Esc stopping a streaming run, the sidebar opened
from the command palette with its message input focused, and a cell named in the
transcript shown in the notebook from its link.

One rule for focus, checked here: after an action that disables the control used (an
answer, Allow, Stop), focus goes to the message input, which stays usable while the agent
works. Set up with panel_ui.py: a scripted model, ``%agent … --model $m``.
"""

from __future__ import annotations

import re
from typing import Any

from panel_ui import (
    LONG_TEXT,
    agent_notebook,
    call,
    open_from_palette,
    shoot,
    sidebar,
    start,
    status,
)
from playwright.sync_api import expect

SOURCES = [f"value_{i} = {i}" for i in range(6)]
"""Cells cell-0 … cell-5."""


def message(panel: Any) -> Any:
    return panel.get_by_role("textbox", name="Message")


def active_cell_index(page: Any) -> int:
    return int(page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"))


def test_a_question_is_answered_with_tab_and_enter_and_focus_goes_to_the_input(
    open_notebook, lab, page
):
    question = call(
        "ask_user",
        question="Which column holds the price?",
        severity="major",
        options=[
            {"label": "price", "value": "price", "description": "What was paid, in euros"},
            {"label": "cost", "value": "cost", "description": "What it cost us"},
        ],
    )
    notebook = agent_notebook(
        open_notebook, lab, "kbd_question", [question, call("task_complete", summary="Noted.")]
    )
    panel = start(notebook, "h = %agent act --model $m Find the price column")
    card = panel.get_by_role("region", name="Question: Which column holds the price?")
    price = card.get_by_role("button", name="price", exact=True)
    cost = card.get_by_role("button", name="cost", exact=True)
    expect(cost).to_have_accessible_description("What it cost us")
    # The new question has the focus, on its first option; Tab, then Enter, answers.
    expect(price).to_be_focused()
    page.keyboard.press("Tab")
    expect(cost).to_be_focused()
    shoot(panel, "keyboard.png")
    page.keyboard.press("Enter")
    expect(card.locator(".ja-answered")).to_have_text("Answered: cost")
    expect(message(panel)).to_be_focused()
    expect(status(panel)).to_have_text("completed")


def test_an_approval_is_allowed_with_enter_and_focus_goes_to_the_input(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "kbd_approval",
        [
            call("execute_command", command="echo keyboard-run"),
            call("task_complete", summary="Done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Look around")
    card = panel.get_by_role("region", name=re.compile(r"^Approval: "))
    allow = card.get_by_role("button", name="Allow", exact=True)
    allow.focus()
    page.keyboard.press("Enter")
    expect(card.locator(".ja-answered")).to_have_text("Allowed")
    expect(allow).to_be_disabled()
    expect(message(panel)).to_be_focused()
    expect(status(panel)).to_have_text("completed")


def test_esc_stops_a_streaming_run_and_focus_is_in_the_input(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook, lab, "kbd_stop", [{"text": LONG_TEXT}, {"text": "Again."}], delay=0.01
    )
    panel = start(notebook, "%agent plan --model $m Write a long report")
    expect(panel.locator(".ja-text strong").first).to_have_text("writing")
    # Streamed text is hidden from screen readers until its block ends (one announcement).
    expect(panel.locator(".ja-text").last).to_have_attribute("aria-hidden", "true")
    expect(panel.get_by_role("log", name="Transcript")).to_have_attribute("aria-live", "polite")
    panel.get_by_role("button", name="Stop").focus()
    page.keyboard.press("Escape")
    expect(status(panel)).to_have_text(re.compile(r"^stopped"))
    expect(message(panel)).to_be_focused()
    expect(panel.get_by_role("button", name="Stop")).to_be_disabled()
    expect(panel.locator(".ja-text").last).not_to_have_attribute("aria-hidden", "true")


def test_opening_the_sidebar_from_the_palette_focuses_its_input(open_notebook, page):
    open_notebook("kbd_sidebar.ipynb")
    open_from_palette(page)
    panel = sidebar(page).locator(".ja-panel")
    expect(message(panel)).to_be_focused(timeout=30_000)


def test_a_cell_named_in_the_transcript_is_a_link_that_shows_the_cell(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "kbd_link",
        [call("read_cell", cell_id="cell-3"), call("task_complete", summary="Read it.")],
        sources=SOURCES,
    )
    panel = start(notebook, "h = %agent act --model $m Read cell 3")
    expect(status(panel)).to_have_text("completed")
    tool = panel.locator('.ja-tool[data-tool="read_cell"]')
    # The row is a toggle: Enter opens it, and the link in its result shows the cell.
    notebook.cells.nth(0).click()
    assert active_cell_index(page) == 0
    tool.locator("summary").first.focus()
    page.keyboard.press("Enter")
    link = tool.locator(".ja-tool-result").get_by_role("link").first
    expect(link).to_have_attribute("title", "Show cell cell-3 in the notebook")
    link.focus()
    page.keyboard.press("Enter")
    expect(notebook.cells.nth(3)).to_have_class(re.compile(r"\bjp-mod-active\b"))
    assert active_cell_index(page) == 3
