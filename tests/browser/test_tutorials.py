"""The quickstart tutorial, run top to bottom in real JupyterLab (headless Chromium).

nbval runs every tutorial without a frontend; this runs the first one where users meet
it: in JupyterLab with our extension, where the agent panel renders as a widget and the
agent is bound to the open notebook live. Its checked outputs must match the ones nbval
checks, and the panel must show the plan, its steps done, and the stopped run.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from playwright.sync_api import expect

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CHECK = "# NBVAL_CHECK_OUTPUT"

_ALL_RAN = """path => {
  const panel = Array.from(window.jupyterapp.shell.widgets('main'))
    .find(w => w.context?.path === path && w.content?.widgets !== undefined);
  const kernel = panel.sessionContext.session?.kernel;
  return kernel?.status === 'idle' && panel.content.widgets.every(
    cell => cell.model.type !== 'code' || cell.model.executionCount !== null);
}"""


def stdout(outputs: list[dict]) -> str:
    text = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    return re.sub(r"after \d+(\.\d+)? s", "after T s", text)  # durations vary


def test_the_quickstart_runs_top_to_bottom_in_jupyterlab(open_notebook, lab, page):
    for name in ("01_quickstart.ipynb", "01_quickstart.replay.json"):
        shutil.copy(NOTEBOOKS / name, lab.root / name)
    stored = nbformat.read(NOTEBOOKS / "01_quickstart.ipynb", as_version=4)
    notebook = open_notebook("01_quickstart.ipynb", write=False)

    # Edit → Clear Outputs of All Cells, then Run → Run All Cells, as a reader would.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(_ALL_RAN, arg=notebook.path, timeout=120_000)

    ran = page.evaluate(
        """path => Array.from(window.jupyterapp.shell.widgets('main'))
          .find(w => w.context?.path === path && w.content?.widgets !== undefined)
          .content.widgets.map(cell => cell.model.toJSON())""",
        notebook.path,
    )
    assert len(ran) == len(stored.cells)
    errors = [o for cell in ran for o in cell.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, errors
    checked = 0
    for now, before in zip(ran, stored.cells, strict=True):
        if now["cell_type"] == "code" and before.source.startswith(CHECK):
            assert stdout(now["outputs"]) == stdout(before.outputs), before.source
            checked += 1
    assert checked == sum(c.source.startswith(CHECK) for c in stored.cells) >= 4

    # The panel rendered as a widget: the plan as a table, both steps done, the run that
    # was stopped and the one after it; and the agent works on this notebook live.
    panel = notebook.panel.locator(".ja-panel").first
    rows = panel.get_by_role("table").first.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
    expect(panel).to_contain_text("South leads: 216.00 in revenue.")
    expect(panel.locator(".ja-stopped")).to_have_text(
        ["■ Stopped (manual stop): Stopped by the user."]
    )
    expect(panel.locator(".ja-notebook")).to_contain_text("live in JupyterLab")
