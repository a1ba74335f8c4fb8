"""The approval moment in a real JupyterLab: the card shows the cell's code, highlighted, and
where the cell is (its link scrolls the notebook to it); "Always allow" is a button of two
words whose scope is said below the card's body, the others in its menu; the tool row waits
for you; a cell that raised is red.

Set up with panel_ui.py: a scripted model, ``%agent … --model $m``, accessible names.
"""

from __future__ import annotations

import re
from typing import Any

from panel_ui import agent_notebook, call, shoot, shot_path, start, status
from playwright.sync_api import expect

SOURCES = [
    *[f"# step {i}\nvalue_{i} = {i}" for i in range(12)],
    "def total():\n    return sum(range(10))  # the sum\n\nprint(total())",
    "1/0",
    "",
]
"""Cells cell-0 … cell-14: cell-12 defines and prints, cell-13 raises."""


def _tool(panel: Any, name: str, nth: int = 0) -> Any:
    return panel.locator(f'.ja-tool[data-tool="{name}"]').nth(nth)


def test_an_approval_shows_the_cell_its_place_and_the_scopes(open_notebook, lab):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "approval_moment",
        [
            call("run_cell", "Let me run the total.", cell_id="cell-12"),
            call("execute_command", command="ls -la"),
            call("run_cell", cell_id="cell-13"),
            call("task_complete", summary="Done."),
        ],
        sources=SOURCES,
    )
    panel = start(notebook, "h = %agent act --model $m Compute the total")

    # The card shows the code itself, highlighted, and which cell it is.
    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    code = card.locator("code.ja-code")
    expect(code).to_contain_text("def total():")
    expect(code).to_contain_text("# the sum")
    expect(code.locator(".hljs-keyword").first).to_be_visible()
    expect(code.locator(".hljs-comment")).to_have_text("# the sum")
    link = card.get_by_role("link", name=re.compile(r"^cell 13 of \d+$"))
    expect(link).to_have_attribute("title", re.compile("cell-12"))
    expect(card.locator("details.ja-raw-input")).not_to_have_attribute("open", "")

    # The tool row waits for you (not "running…") while the card waits.
    row = _tool(panel, "run_cell")
    expect(row.locator(".ja-tool-status")).to_have_text("waiting for you")
    expect(status(panel)).to_contain_text("waiting for you")
    card.screenshot(path=str(shot_path("approval-card.png")))

    # The link asks JupyterLab to show that cell: it becomes the active cell, in view.
    link.click()
    target = notebook.cells.nth(12)
    expect(target).to_have_class(re.compile(r"\bjp-mod-active\b"))
    expect(target).to_be_in_viewport()

    card.get_by_role("button", name="Allow", exact=True).click()
    expect(row).to_have_attribute("data-state", "done")
    expect(row.locator(".ja-tool-error-line")).to_be_hidden()

    # A command: its programs, and "Always allow" in the scope chosen from the menu.
    second = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(1)
    expect(second.locator("ul.ja-programs")).to_have_text("only reads")  # the block has ls -la
    expect(second.locator(".ja-remember")).to_have_text(
        "“Always allow” remembers: allow ls when it only reads."
    )
    always = second.get_by_role("button", name="Always allow", exact=True)
    expect(always).to_be_visible()
    second.get_by_role("button", name="Other scopes").click()
    menu = second.get_by_role("menu", name="“Always allow” scopes")
    expect(menu.get_by_role("menuitem")).to_have_text(
        ["ls … when it only reads", "this exact command"]
    )
    shoot(panel, "approval-scopes.png")
    menu.get_by_role("menuitem", name="this exact command").click()
    expect(second.locator(".ja-answered")).to_have_text("Always allowed (allow exactly ls -la)")

    # A cell that raises: the row is red, with the error's line on it.
    third = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(2)
    expect(third.locator("code.ja-code")).to_have_text("1/0")
    third.get_by_role("button", name="Always allow", exact=True).click()
    failed = _tool(panel, "run_cell", 1)
    expect(failed).to_have_attribute("data-state", "error")
    expect(failed.locator(".ja-tool-status")).to_contain_text("failed")
    expect(failed.locator(".ja-tool-error-line")).to_have_text(
        "ZeroDivisionError: division by zero"
    )
    expect(status(panel)).to_have_text("completed")
    shoot(panel, "approval-error-row.png")
    out = notebook.run_cell(
        "print([(e.scope, e.rule) for e in h.events_so_far if e.kind == 'permission_response'])"
    )
    assert out == (
        "[(None, None), ('exact', 'allow exactly `ls -la`'), ('tool', 'allow tool run_cell')]"
    )


def test_an_mcp_tool_is_asked_about_by_its_server_and_its_result_shows(
    open_notebook, lab, tmp_path
):
    """A real MCP server (stdio) from the user's settings: its tool's approval card and row
    name the server; allowed, the server's answer shows in the transcript."""
    import sys
    from pathlib import Path

    server = Path(__file__).parents[1] / "mcp" / "mcp_server_for_tests.py"
    home = tmp_path / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    (home / ".jupyter_agent" / "settings.toml").write_text(
        f'[mcpServers.srv]\ncommand = "{sys.executable}"\nargs = ["{server}"]\n'
    )
    notebook = agent_notebook(
        open_notebook,
        lab,
        "mcp_tool",
        [
            {
                "text": "Asking the server.",
                "tool_calls": [{"name": "mcp__srv__echo", "input": {"text": "hello from the lab"}}],
            },
            call("task_complete", summary="The server answered."),
        ],
    )
    notebook.run_cell(f"import os\nos.environ['HOME'] = {str(home)!r}")
    panel = start(notebook, "h = %agent act --model $m Ask the server to echo")

    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card).to_contain_text("srv · echo")
    row = _tool(panel, "mcp__srv__echo")
    expect(row).to_contain_text("srv · echo")
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(row).to_have_attribute("data-state", "done")
    row.click()  # open the card: the server's own words
    expect(row).to_contain_text("echo: hello from the lab")
    expect(status(panel)).to_contain_text("completed")


def test_a_cell_the_user_edits_while_its_card_waits_is_asked_about_again(open_notebook, lab, page):
    """The card binds the code it shows; the extension compares it with the cell's source
    in the step that starts the execution, so a cell edited after Allow runs nothing."""
    notebook = agent_notebook(
        open_notebook,
        lab,
        "approval_bound",
        [
            call("run_cell", "Let me run the first cell.", cell_id="cell-0"),
            call("task_complete", summary="Done."),
        ],
        sources=["shown = 'harmless'", ""],
    )
    panel = start(notebook, "h = %agent act --model $m Run the first cell")
    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card.locator("code.ja-code")).to_have_text("shown = 'harmless'")

    # The user edits the cell while the card waits, then clicks Allow on what they saw.
    notebook.cells.nth(0).locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text("edited = 'by the user'")
    card.get_by_role("button", name="Allow", exact=True).click()

    # Nothing ran: a fresh card shows the code as it is now, and says why it asks again.
    again = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(1)
    expect(again.locator("code.ja-code")).to_have_text("edited = 'by the user'")
    expect(again).to_contain_text("Changed since the last approval: cell cell-0.")
    again.get_by_role("button", name="Deny", exact=True).click()
    expect(status(panel)).to_contain_text("completed")
    assert notebook.run_cell("print('shown' in dir(), 'edited' in dir())") == "False False"

    # At the seam: a run that expects other code than the cell holds is refused by the
    # extension itself, before anything reaches the kernel.
    refused = notebook.run_cell(
        "from jupyter_agent.jupyter.bridge.live import connect_notebook\n"
        "bridge = await connect_notebook()\n"
        "try:\n"
        "    await bridge.run('cell-0', source=\"shown = 'harmless'\")\n"
        "except Exception as error:\n"
        "    print(type(error).__name__)\n"
        "print('shown' in dir(), 'edited' in dir())"
    )
    assert refused == "SourceChanged\nFalse False"
