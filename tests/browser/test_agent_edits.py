"""Finding what the agent changed, in real JupyterLab: its new cells land below the cell
that started it, in the order it wrote them, and each cell it inserts or edits is marked
for a moment in the notebook."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import expect
from shared_model import PANEL_OF, cells, wait_for_cells

SETUP = (
    "%load_ext jupyter_agent\n"
    "from jupyter_agent import ScriptedModel\n"
    "m = ScriptedModel('edits.json')"
)
AGENT = "%agent act --model $m Add two cells"

# Records every cell (by id) that gets the agent's mark, however briefly.
WATCH_MARKS = f"""path => {{ {PANEL_OF}
  window.__jaMarked = [];
  const node = panelOf(path).content.node;
  new MutationObserver(records => {{
    for (const r of records) {{
      if (r.target.classList && r.target.classList.contains('jp-Agent-changed')) {{
        const cell = panelOf(path).content.widgets.find(w => w.node === r.target);
        if (cell) window.__jaMarked.push(cell.model.id);
      }}
    }}
  }}).observe(node, {{ subtree: true, attributes: true, attributeFilter: ['class'] }});
}}"""


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"text": "", "tool_calls": [{"name": name, "input": arguments}]}


def test_new_cells_land_below_the_agents_cell_and_are_marked(open_notebook, lab, page):
    turns = [
        call("insert_cell", source="first = 1"),
        call("insert_cell", source="second = 2"),
        call("update_cell", cell_id="cell-2", source="last = 30"),
        call("task_complete", summary="Added two cells."),
    ]
    (lab.root / "edits.json").write_text(json.dumps(turns))
    notebook = open_notebook("edits.ipynb", [SETUP, AGENT, "last = 3"])
    path = notebook.path
    page.evaluate(WATCH_MARKS, path)
    # The reader runs the set-up cell, then the %agent cell in the middle of the notebook.
    notebook.run_from(0, "notebook:run-cell")
    notebook.wait_for_kernel_idle()
    notebook.run_from(1, "notebook:run-cell")
    after = wait_for_cells(
        page,
        path,
        "cells => cells.some(c => c.source === 'last = 30')",
        "the agent did not finish its edits",
    )
    assert [c["source"] for c in after] == [SETUP, AGENT, "first = 1", "second = 2", "last = 30"]
    ids = [c["id"] for c in after]
    marked = page.evaluate("() => window.__jaMarked")
    assert {ids[2], ids[3], ids[4]} <= set(marked), marked
    assert ids[0] not in marked and ids[1] not in marked
    # The mark goes again: a notebook the reader returns to is not left outlined.
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Agent-changed').length === 0", timeout=10_000
    )
    assert len(cells(page, path)) == 5


def test_the_panel_follows_a_notebook_rename(open_notebook, lab, page):
    (lab.root / "edits.json").write_text(json.dumps([]))
    notebook = open_notebook("before.ipynb", [SETUP, "%agent"])
    notebook.run_from(0, "notebook:run-cell")
    notebook.wait_for_kernel_idle()
    notebook.run_from(1, "notebook:run-cell")
    line = notebook.panel.locator(".ja-panel .ja-notebook").last
    expect(line).to_contain_text("before.ipynb", timeout=30_000)
    page.evaluate(
        "async () => { await window.jupyterapp.serviceManager.contents"
        ".rename('before.ipynb', 'after.ipynb'); }"
    )
    expect(line).to_contain_text("after.ipynb", timeout=15_000)
    expect(line).not_to_contain_text("before.ipynb")
