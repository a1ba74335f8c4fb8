"""The live notebook bridge end to end: an agent in the kernel of a notebook open in real
JupyterLab (headless Chromium) edits and runs that notebook's cells through the lab
extension; the edits show at once, each is one step of the notebook's undo history, and
the agent can undo its run.

The agents run on a ScriptedModel and are started from a cell (``agent.start``): they work
in the background once that cell has returned, as they do under ``%agent``. The test waits
on the notebook's model in the page, never on the clock.
"""

from __future__ import annotations

import json
import re
from typing import Any

import nbformat
from shared_model import PANEL_OF, cells, command_mode, wait_for_cells

from jupyter_agent.notebook.view import EDITED_SINCE_RUN

CONNECT = """\
from jupyter_agent.jupyter.bridge.live import connect_notebook

bridge = await connect_notebook()
print(bridge.mode, bridge.path)
"""

AGENT = """\
from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import Everything, Rule, Rules

def call(name, **arguments):
    return {{"text": "", "tool_calls": [{{"name": name, "input": arguments}}]}}

agent = Agent(
    "actor",
    ScriptedModel([{turns}, call("task_complete", summary="done")]),
    notebook=bridge,
    policy=Rules([Rule.allow(Everything())]),
    persist=False,
)
handle = agent.start("Work on the notebook")
"""

# The results of the agent's tool calls, once its run ended (it runs no more cells then).
TOOL_RESULTS = """\
import json
await handle.wait()
print(json.dumps({"state": handle.state.value, "results": [
    [r.is_error, r.text] for m in agent.history for r in m.tool_results]}))
"""


def agent_cell(*turns: str) -> str:
    return AGENT.format(turns=", ".join(turns))


def summary(page: Any, path: str) -> list[tuple[str, str]]:
    return [(c["id"], c["source"]) for c in cells(page, path)]


def ui_cell(notebook: Any, cell_id: str) -> Any:
    """The cell's node in the page (by its position in the model)."""
    ids = [c["id"] for c in cells(notebook.page, notebook.path)]
    return notebook.cells.nth(ids.index(cell_id))


def tool_results(notebook: Any) -> dict[str, Any]:
    results: dict[str, Any] = json.loads(notebook.run_cell(TOOL_RESULTS))
    return results


ORIGINAL = ["x = 21", "print('hello')", "# a cell to delete\nz = 0", ""]


def test_an_agent_edits_and_runs_cells_each_edit_one_undo_step(open_notebook, page):
    notebook = open_notebook("agent.ipynb", ORIGINAL)
    path = notebook.path
    assert notebook.run_cell(CONNECT) == "live agent.ipynb"
    notebook.run_cell(
        agent_cell(
            'call("insert_cell", source="y = x * 2", after="cell-0")',
            'call("update_cell", cell_id="cell-1", find="hello", replace="bonjour")',
            'call("run_cell", cell_id="cell-1")',
            'call("delete_cell", cell_id="cell-2")',
        )
    )
    after = wait_for_cells(
        page,
        path,
        "cells => !cells.some(c => c.id === 'cell-2')",
        "the agent did not delete cell-2",
    )
    inserted = after[1]["id"]
    assert [(c["id"], c["source"]) for c in after[:4]] == [
        ("cell-0", "x = 21"),
        (inserted, "y = x * 2"),
        ("cell-1", "print('bonjour')"),
        ("cell-3", CONNECT),
    ]
    assert inserted not in {"cell-0", "cell-1", "cell-2", "cell-3"}

    # The run shows in the notebook as if the user ran it: output and execution count.
    count = after[2]["execution_count"]
    assert isinstance(count, int) and count > 0
    ran = ui_cell(notebook, "cell-1")
    assert ran.locator(".jp-OutputArea-output").inner_text().strip() == "bonjour"
    assert ran.locator(".jp-InputPrompt").inner_text().strip() == f"[{count}]:"

    # Z (Edit → Undo Cell Operation) undoes the agent's edits one at a time, newest first.
    edited = summary(page, path)
    command_mode(notebook)
    page.keyboard.press("z")
    restored = wait_for_cells(
        page, path, "cells => cells.some(c => c.id === 'cell-2')", "undo did not restore cell-2"
    )
    assert [c["id"] for c in restored[:5]] == ["cell-0", inserted, "cell-1", "cell-2", "cell-3"]
    assert restored[3]["source"] == ORIGINAL[2]
    assert restored[2]["source"] == "print('bonjour')"  # only the delete was undone

    page.keyboard.press("z")
    wait_for_cells(
        page,
        path,
        "cells => cells.find(c => c.id === 'cell-1').source === \"print('hello')\"",
        "undo did not restore cell-1's source",
    )
    assert [c["id"] for c in cells(page, path)[:2]] == ["cell-0", inserted]  # insert kept

    page.keyboard.press("z")
    wait_for_cells(
        page, path, f"cells => !cells.some(c => c.id === '{inserted}')", "undo kept the insert"
    )
    assert summary(page, path)[:4] == [(f"cell-{i}", s) for i, s in enumerate(ORIGINAL[:3])] + [
        ("cell-3", CONNECT)
    ]

    # Shift+Z redoes them, one step each, back to what the agent left.
    for _ in range(3):
        page.keyboard.press("Shift+Z")
    wait_for_cells(
        page, path, "cells => !cells.some(c => c.id === 'cell-2')", "redo did not delete cell-2"
    )
    assert summary(page, path)[:4] == edited[:4]

    # The agent's own undo puts back every cell it touched, whatever the UI did meanwhile.
    undone = notebook.run_cell("print(await agent.undo_notebook_changes())")
    assert "put back deleted cell cell-2" in undone and "restored cell cell-1" in undone
    assert summary(page, path)[:4] == [(f"cell-{i}", s) for i, s in enumerate(ORIGINAL[:3])] + [
        ("cell-3", CONNECT)
    ]

    # What the run_cell tool told the model is what the notebook shows.
    shown = tool_results(notebook)
    assert shown["state"] == "completed"
    run_text = next(text for _, text in shown["results"] if text.startswith("Cell cell-1 ran"))
    assert run_text == f"Cell cell-1 ran [{count}].\n⤷ 1 stdout:\nbonjour"
    assert not any(is_error for is_error, _ in shown["results"])


def test_runs_report_outputs_errors_and_timeouts_as_the_notebook_shows_them(
    open_notebook, page, lab
):
    notebook = open_notebook(
        "runs.ipynb",
        [
            "print('out', 6 * 7)\n'value'",
            "1 / 0",
            "import time\nfor _ in range(600):\n    time.sleep(0.05)",
            "",
        ],
    )
    path = notebook.path
    notebook.run_cell(
        CONNECT
        + """
runs = []
original_run = bridge.run

async def recording_run(cell_id, timeout=None):
    result = await original_run(cell_id, timeout)
    runs.append(result.model_dump())
    return result

bridge.run = recording_run
"""
    )
    notebook.run_cell(
        agent_cell(
            'call("run_cell", cell_id="cell-0")',
            'call("run_cell", cell_id="cell-1")',
            'call("run_cell", cell_id="cell-2", timeout=1)',
        )
    )
    wait_for_cells(
        page,
        path,
        "cells => cells[2].outputs.some(o => o.output_type === 'error')",
        "the slow cell was not interrupted",
    )
    shown = tool_results(notebook)
    runs = json.loads(notebook.run_cell("print(json.dumps(runs))"))
    done = cells(page, path)  # the agent's run has ended: nothing changes these any more
    assert [r["status"] for r in runs] == ["ok", "error", "timeout"]

    # The run op's outputs are the notebook's outputs, and the tool results say the same.
    for run, cell in zip(runs, done[:3], strict=True):
        assert run["outputs"] == cell["outputs"]
        assert run["execution_count"] == cell["execution_count"]
    texts = [text for _, text in shown["results"]]
    ok, error, timeout = runs
    assert ok["outputs"][0]["text"] == "out 42\n"
    assert texts[0] == (
        f"Cell cell-0 ran [{ok['execution_count']}].\n⤷ 1 stdout:\nout 42\n⤷ 2 result:\n'value'"
    )
    assert error["error"]["ename"] == "ZeroDivisionError"
    assert error["outputs"][0]["ename"] == "ZeroDivisionError"
    assert texts[1].startswith(
        f"Cell cell-1 [{error['execution_count']}] raised ZeroDivisionError: division by zero"
    )
    assert "ZeroDivisionError" in ui_cell(notebook, "cell-1").inner_text()
    assert timeout["error"]["ename"] == "KeyboardInterrupt"
    assert texts[2].startswith("Cell cell-2 did not finish within 1 s and was interrupted.")
    assert "KeyboardInterrupt" in ui_cell(notebook, "cell-2").inner_text()
    assert shown["state"] == "completed"

    # An interrupt for a cell the bridge is no longer running touches nothing; save
    # writes what the notebook shows to disk.
    shown = notebook.run_cell(
        "from jupyter_agent.jupyter.bridge.messages import INTERRUPT\n"
        'print(json.dumps(await bridge._request(INTERRUPT({"cell_id": "cell-2"}))))\n'
        "await bridge.save()"
    )
    assert json.loads(shown) == {"interrupted": False}
    saved = nbformat.read(lab.root / path, as_version=4).cells  # multiline strings joined
    assert [c["outputs"] for c in saved[:3]] == [c["outputs"] for c in done[:3]]


LONG_CELL = (
    "import asyncio\nfor i in range(5):\n    print('step', i)\n    await asyncio.sleep(1)\n'done'"
)


def test_a_long_cell_keeps_running_past_the_window_and_is_waited_for(open_notebook, page):
    """run_cell returns "still running" after its window with the output so far; the cell
    is not interrupted, the agent reads it meanwhile, and wait_for_cell gets its result."""
    notebook = open_notebook("long.ipynb", [LONG_CELL, ""])
    notebook.run_cell(CONNECT)
    notebook.run_cell(
        agent_cell(
            'call("run_cell", cell_id="cell-0", wait=1.5)',
            'call("read_cell", cell_id="cell-0")',
            'call("wait_for_cell", cell_id="cell-0", timeout=30)',
        )
    )
    shown = tool_results(notebook)
    ran, meanwhile, waited, _ = [text for _, text in shown["results"]]
    assert ran.startswith("Cell cell-0 is still running (")
    assert "it was not interrupted" in ran and "stdout:\nstep 0" in ran
    assert "step 4" not in ran
    assert meanwhile.startswith("── 1 · cell-0 · code [")
    assert " · running (" in meanwhile.split("\n")[0]  # the view says so: not to run it again
    assert waited.startswith("Cell cell-0 ran [") and "in 5" in waited.split("\n")[0]
    assert "step 4" in waited and "'done'" in waited
    outputs = cells(page, notebook.path)[0]["outputs"]
    assert [o["output_type"] for o in outputs] == ["stream", "execute_result"]
    assert shown["state"] == "completed"


def test_each_kernels_agent_edits_only_its_own_notebook(open_notebook, open_another, page):
    # The second notebook's kernel path (…/pair/a.ipynb) ends with the first one's
    # (a.ipynb): only the kernel id keeps them apart.
    first = open_notebook("a.ipynb", ["first = 1", ""])
    page.set_viewport_size({"width": 2400, "height": 900})  # both toolbars in full
    second = open_another("pair/a.ipynb", ["second = 2", ""], mode="split-right")
    for notebook in (first, second):
        assert notebook.run_cell(CONNECT) == f"live {notebook.path}"
        notebook.run_cell(
            agent_cell(
                f'call("insert_cell", source="# added by the agent of {notebook.path}", '
                'before="cell-0")'
            )
        )
    for notebook in (first, second):
        done = wait_for_cells(
            page,
            notebook.path,
            "cells => cells[0].source.startsWith('# added by')",
            "the agent did not insert its cell",
        )
        added = [c["source"] for c in done if c["source"].startswith("# added by")]
        assert added == [f"# added by the agent of {notebook.path}"]


def test_the_bridge_works_again_after_a_kernel_restart(open_notebook, page):
    notebook = open_notebook("restarted.ipynb", ["", ""])
    path = notebook.path
    for label in ("before", "after"):
        if label == "after":
            notebook.restart_kernel()
        assert notebook.run_cell(CONNECT) == f"live {path}"
        notebook.run_cell(
            agent_cell(
                f'call("update_cell", cell_id="cell-0", source="# {label} the restart")',
                'call("run_cell", cell_id="cell-0")',
            )
        )
        wait_for_cells(
            page,
            path,
            f"cells => cells[0].source === '# {label} the restart' "
            "&& cells[0].execution_count !== null",
            f"the agent did not edit and run cell-0 {label} the restart",
        )
        assert tool_results(notebook)["state"] == "completed"
    count = cells(page, path)[0]["execution_count"]
    assert re.fullmatch(
        r"\[\d+\]:", ui_cell(notebook, "cell-0").locator(".jp-InputPrompt").inner_text().strip()
    )
    assert count >= 1


def test_with_the_notebook_open_in_two_tabs_only_one_answers(open_notebook, page, browser, lab):
    """Both tabs accept the comm and answer the ping; the kernel then addresses its requests
    to the tab that answered first, so a cell the agent runs runs once, not once per tab."""
    notebook = open_notebook("twice.ipynb", ["runs = globals().get('runs', 0) + 1", ""])
    other_context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        other = other_context.new_page()
        other.goto(f"{lab.url}/lab/tree/twice.ipynb")
        other.wait_for_function(
            f"path => {{ {PANEL_OF} const k = panelOf(path)?.sessionContext.session?.kernel;"
            " return k?.status === 'idle' && k?.connectionStatus === 'connected'; }",
            arg=notebook.path,
            timeout=30_000,
        )
        same_kernel = "path => { %s return panelOf(path).sessionContext.session.kernel.id; }"
        assert other.evaluate(same_kernel % PANEL_OF, notebook.path) == page.evaluate(
            same_kernel % PANEL_OF, notebook.path
        )
        assert notebook.run_cell(CONNECT) == "live twice.ipynb"
        notebook.run_cell(agent_cell('call("run_cell", cell_id="cell-0")'))
        shown = tool_results(notebook)
        assert shown["state"] == "completed"
        assert shown["results"][0][1].startswith("Cell cell-0 ran")
        assert notebook.run_cell("print(runs, bool(bridge.frontend['instance']))") == "1 True"
    finally:
        other_context.close()


# The code cells the bridge reads as edited since they ran (JupyterLab's isDirty).
EDITED = """\
import json
print(json.dumps([c.id for c in await bridge.read() if c.edited_since_run]))
"""

IS_DIRTY = f"path => {{ {PANEL_OF} return panelOf(path).content.widgets[0].model.isDirty; }}"


def test_a_cell_edited_since_it_ran_is_read_as_such_until_it_runs_again(open_notebook, page):
    """By the agent or by the user: its outputs are of its earlier source, and the bridge
    says so (the notebook's own isDirty) until it runs again or its source is put back."""
    notebook = open_notebook("edited.ipynb", ["x = 1", ""])
    path = notebook.path
    assert notebook.run_cell(CONNECT) == "live edited.ipynb"

    def run_first_cell() -> None:
        count = cells(page, path)[0]["execution_count"]
        notebook.run_from(0, "notebook:run-cell")
        wait_for_cells(
            page,
            path,
            f"cells => ![null, {json.dumps(count)}].includes(cells[0].execution_count)",
            "cell-0 did not run",
        )

    def edited() -> list[str]:
        flagged: list[str] = json.loads(notebook.run_cell(EDITED))
        return flagged

    run_first_cell()
    assert edited() == []

    # The agent changes the cell that ran; what it reads next says the outputs are older.
    notebook.run_cell(
        agent_cell(
            'call("update_cell", cell_id="cell-0", source="x = 2")',
            'call("read_cell", cell_id="cell-0")',
        )
    )
    shown = tool_results(notebook)
    assert shown["state"] == "completed"
    assert EDITED_SINCE_RUN in shown["results"][1][1].split("\n")[0]
    assert page.evaluate(IS_DIRTY, path) is True
    assert edited() == ["cell-0"]

    run_first_cell()
    assert edited() == []

    # The user types into it: flagged again; the agent putting back what ran clears it.
    editor = ui_cell(notebook, "cell-0").locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("3")
    page.keyboard.press("Escape")
    wait_for_cells(page, path, "cells => cells[0].source === 'x = 23'", "the typing did not land")
    assert edited() == ["cell-0"]
    put_back = notebook.run_cell('print((await bridge.update("cell-0", "x = 2")).edited_since_run)')
    assert put_back == "False"
    assert edited() == []
