"""The panel with the keyboard only, in a real JupyterLab: a question answered with Tab and
Enter, an approval allowed with Enter, Esc stopping a streaming run, the sidebar opened
from the command palette with its message input focused, a cell named in the transcript
shown in the notebook from its link, the "Always allow" scopes chosen from their menu with
the arrow keys, and a key given in the set-up box.

One rule for focus, checked here: after an action that disables the control used (an
answer, Allow, Stop, "Use for this session"), focus goes to the message input, which stays
usable while the agent works. A card that waits for the user (a question, an approval)
takes the focus when it comes, unless the user is writing a message. Set up with
panel_ui.py: a scripted model, ``%agent … --model $m``.
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

from jupyter_agent.testing import MessagesServer

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


def approval(panel: Any, nth: int = 0) -> Any:
    return panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(nth)


def test_a_new_approval_takes_the_focus_unless_a_message_is_being_written(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "kbd_approval_focus",
        [
            call("execute_command", command="echo first"),
            call("execute_command", command="echo second"),
            call("execute_command", command="echo third"),
            call("task_complete", summary="Done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Say three things")
    # The card takes the focus on Allow, as a question's takes it on its first option.
    first = approval(panel).get_by_role("button", name="Allow", exact=True)
    expect(first).to_be_focused()
    page.keyboard.press("Enter")
    expect(approval(panel).locator(".ja-answered")).to_have_text("Allowed")
    # The next one takes it from the (empty) message input, where the Allow had put it.
    second = approval(panel, 1).get_by_role("button", name="Allow", exact=True)
    expect(second).to_be_focused()
    # Someone writing a message keeps the focus and what they wrote: a key meant for the
    # message must not allow the call.
    message(panel).click()
    page.keyboard.type("and then")
    second.click()
    third = approval(panel, 2)
    expect(third).to_contain_text("echo third")
    expect(message(panel)).to_be_focused()
    expect(message(panel)).to_have_value("and then")
    page.keyboard.type(" also")
    expect(message(panel)).to_have_value("and then also")
    expect(third.locator(".ja-answered")).to_be_hidden()


def test_the_always_allow_scopes_are_a_menu_the_arrow_keys_stay_in(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "kbd_scopes",
        [call("execute_command", command="ls -la"), call("task_complete", summary="Listed.")],
    )
    panel = start(notebook, "h = %agent act --model $m List the files")
    card = approval(panel)
    more = card.get_by_role("button", name="Other scopes")
    menu = card.get_by_role("menu", name="“Always allow” scopes")
    scopes = menu.get_by_role("menuitem")
    more.focus()
    page.keyboard.press("Enter")
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(scopes).to_have_text(["ls … when it only reads", "this exact command"])
    expect(scopes.nth(0)).to_be_focused()
    # Down and up move between the two scopes and wrap; focus never leaves the menu.
    for key, at in [("ArrowDown", 1), ("ArrowDown", 0), ("ArrowUp", 1), ("Home", 0), ("End", 1)]:
        page.keyboard.press(key)
        expect(scopes.nth(at)).to_be_focused()
    shoot(card, "approval-scopes-keyboard.png")
    # Esc closes the menu and gives focus back to ▾; the run goes on waiting (no Stop).
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(more).to_be_focused()
    expect(more).to_have_attribute("aria-expanded", "false")
    expect(status(panel)).to_contain_text("waiting for you")
    # ArrowDown on ▾ opens it on its first scope; Tab closes it and goes on to Deny.
    page.keyboard.press("ArrowDown")
    expect(scopes.nth(0)).to_be_focused()
    page.keyboard.press("Tab")
    expect(menu).to_be_hidden()
    expect(card.get_by_role("button", name="Deny")).to_be_focused()
    # Open, then focus taken elsewhere by a click: the menu does not stay open.
    more.click()
    expect(scopes.nth(0)).to_be_focused()
    card.get_by_role("heading", name="Approval needed").click()
    expect(menu).to_be_hidden()
    expect(more).to_have_attribute("aria-expanded", "false")
    # A scope chosen with the keys: remembered, and focus goes to the message input.
    more.focus()
    page.keyboard.press("ArrowUp")
    expect(scopes.nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(card.locator(".ja-answered")).to_have_text("Always allowed (allow exactly ls -la)")
    expect(message(panel)).to_be_focused()
    expect(status(panel)).to_have_text("completed")


def test_after_use_for_this_session_focus_goes_to_the_message_input(
    open_notebook, lab, page, tmp_path
):
    with MessagesServer() as api:
        notebook = open_notebook("kbd_setup.ipynb")
        notebook.run_cell(
            "import os\n"
            "for name in ('ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'JUPYTER_AGENT_MODEL'):\n"
            "    os.environ.pop(name, None)\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {api.url!r}\n"
            f"os.environ['JUPYTER_AGENT_CREDENTIALS'] = {str(tmp_path / 'credentials.json')!r}\n"
            "%load_ext jupyter_agent"
        )
        panel = start(notebook, "%agent")
        setup = panel.get_by_role("form", name="Set up the model")
        panel.get_by_label("API key").fill("sk-ant-api03-KEYBOARD-0123456789abcdef")
        use = setup.get_by_role("button", name="Use for this session")
        use.focus()
        page.keyboard.press("Enter")
        expect(setup).to_be_hidden()
        expect(status(panel)).to_have_text("ready")
        expect(message(panel)).to_be_focused()
