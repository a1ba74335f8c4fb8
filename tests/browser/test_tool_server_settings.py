"""Tool-server settings as people have them, in real JupyterLab: a user's ``mcpServers``
copied from other clients (Cline's ``disabled``/``autoApprove``/``timeout``, an entry of a
transport we do not know) start what they can. The unreadable entry and the disabled one
are said in ``%agent mcp`` and never take the others with them: the real stdio server's
tool is asked about and answers in the panel."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from panel_ui import agent_notebook, call, in_every_place, start, status
from playwright.sync_api import expect

SERVER = Path(__file__).parents[1] / "mcp" / "mcp_server_for_tests.py"


def test_a_bad_entry_disables_only_its_server_and_the_others_work(open_notebook, lab, tmp_path):
    home = tmp_path / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    (home / ".jupyter_agent" / "settings.toml").write_text(
        "[mcpServers.srv]\n"
        f'command = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        "disabled = false\nautoApprove = []\ntimeout = 60\n\n"
        '[mcpServers.old]\ncommand = "node"\nargs = ["old-server.js"]\ndisabled = true\n\n'
        '[mcpServers.odd]\ntype = "carrier-pigeon"\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    notebook = agent_notebook(
        open_notebook,
        lab,
        "mcp_settings",
        [
            {
                "text": "Asking the server.",
                "tool_calls": [{"name": "mcp__srv__echo", "input": {"text": "still here"}}],
            },
            call("task_complete", summary="The server answered."),
        ],
    )
    notebook.run_cell(f"import os\nos.environ['HOME'] = {str(home)!r}")
    listing = notebook.run_cell("%agent mcp")
    assert re.search(r"odd\b.*carrier-pigeon", listing, re.S), listing
    assert re.search(r"old\b.*disabled", listing, re.S), listing
    # The listing updates in place once the good server has started, the others unchanged.
    shown = notebook.panel.locator(".jp-OutputArea-output", has_text="old: disabled")
    expect(shown).to_contain_text(re.compile(r"srv: running.*echo", re.S), timeout=30_000)
    expect(shown).to_contain_text("odd: not started: its settings entry is wrong")
    panel = start(notebook, "h = %agent act --model $m Ask the server to echo")
    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card).to_contain_text("srv · echo")
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(status(panel)).to_contain_text("completed", timeout=30_000)
    row = panel.locator('.ja-tool[data-tool="mcp__srv__echo"]')
    row.locator("summary").first.click()
    expect(row).to_contain_text("echo: still here")
    assert in_every_place(panel.page, notebook, "mcp-settings") == []
