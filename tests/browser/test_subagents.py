"""A subagent in a real JupyterLab: its events nest in the card of the delegate call that
started it, its approval card shows there and Allow reaches it, and its end shows on its row.

Set up with panel_ui.py: a scripted model, ``%agent … --model $m``, accessible names. One
subagent, so the shared script is read in order: the parent's turn, the subagent's, the
parent's again.
"""

from __future__ import annotations

import re

from panel_ui import agent_notebook, call, in_every_place, shoot, start, status
from playwright.sync_api import expect


def test_a_subagent_nests_in_its_card_and_its_approval_reaches_it(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "subagents",
        [
            call("delegate", "I will hand this over.", task="Say hello from a shell", role="actor"),
            call("execute_command", command="echo subagent-ok"),
            call("task_complete", summary="The shell said subagent-ok."),
            call("task_complete", summary="Parent done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Delegate a greeting")

    card = panel.locator('.ja-tool[data-tool="delegate"]')
    box = card.locator("details.ja-subagent")
    expect(box.locator(":scope > summary")).to_contain_text("↳ actor")
    # The task is said once, on the delegate call's row: not again on the subagent's row,
    # nor as a message in its box (the call's raw input stays folded under Details).
    expect(card.locator(":scope > summary")).to_contain_text("Say hello from a shell")
    expect(box.locator(":scope > summary")).not_to_contain_text("Say hello from a shell")
    expect(box.locator(".ja-user")).to_have_count(0)
    task = card.get_by_text("Say hello from a shell")
    expect(task.filter(visible=True)).to_have_count(1)

    # The subagent's approval is in its box, and the status line says someone waits.
    approval = box.get_by_role("region", name=re.compile(r"^Approval: "))
    expect(approval).to_contain_text("echo subagent-ok")
    expect(status(panel)).to_contain_text("a subagent is waiting for you")
    shoot(panel, "subagent-approval.png")
    assert in_every_place(page, notebook, "subagent-task-once") == []
    approval.get_by_role("button", name="Allow", exact=True).click()

    inner = box.locator('.ja-tool[data-tool="execute_command"]')
    expect(inner).to_have_attribute("data-state", "done")
    expect(box).to_have_attribute("data-state", "completed")
    expect(card).to_have_attribute("data-state", "done")
    expect(status(panel)).to_contain_text("completed")
    expect(panel.locator(".ja-transcript")).to_contain_text("Parent done.")
    # The subagent's own tool card is not in the parent's top level.
    expect(panel.locator('.ja-transcript > .ja-tool[data-tool="execute_command"]')).to_have_count(0)
