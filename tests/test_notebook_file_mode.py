"""Notebook tools on the file bridge: edits land in the .ipynb, diffs, undo, no lost edits."""

from __future__ import annotations

import base64
import json

import nbformat
import pytest
from helpers import assert_valid, call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.errors import ToolError
from jupyter_agent.notebook.bridge import RunResult
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.view import render_notebook
from jupyter_agent.tools.notebook import NOTEBOOK_TOOLS

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5f0000000049454e44ae426082"
    )
).decode()


def make_notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell(
            "import pandas as pd\ndf = pd.read_csv('sales.csv')", id="load", execution_count=1
        ),
        nbformat.v4.new_code_cell(
            "df.describe()",
            id="describe",
            execution_count=2,
            outputs=[
                nbformat.v4.new_output(
                    "execute_result",
                    data={"text/plain": "\n".join(f"row {i}" for i in range(100))},
                    execution_count=2,
                ),
            ],
        ),
        nbformat.v4.new_code_cell(
            "df.plot()",
            id="plot",
            execution_count=4,
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={"image/png": PNG, "text/plain": "<Figure>"}
                ),
            ],
        ),
        nbformat.v4.new_code_cell(
            "1/0",
            id="boom",
            execution_count=3,
            outputs=[
                nbformat.v4.new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                ),
            ],
        ),
        nbformat.v4.new_code_cell(
            "API_KEY = 'sk-ant-abcdefghijklmnop1234'\nprint(API_KEY)",
            id="secret",
            execution_count=5,
            outputs=[
                nbformat.v4.new_output(
                    "stream", name="stdout", text="sk-ant-abcdefghijklmnop1234\n"
                ),
            ],
        ),
    ]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def notebook(workspace):
    return make_notebook(workspace / "analysis.ipynb")


def cells_on_disk(path):
    return [(c.id, c.cell_type, c.source) for c in nbformat.read(path, 4).cells]


async def test_the_view_is_compact_and_marks_provenance(notebook):
    class History:
        def source_of(self, n):
            return {1: "import pandas as pd\ndf = pd.read_csv('old.csv')", 2: "df.describe()"}.get(
                n
            )

        def cell_of(self, n):
            return {1: "load", 2: "describe"}.get(n)

    cells = await FileBridge(notebook).read()
    view = render_notebook(cells, "Notebook analysis.ipynb", History())
    text = view.text
    assert text.startswith(f"Notebook analysis.ipynb\n{len(cells)} cells (5 code, 1 markdown)")
    assert render_notebook(cells[:1], "one.ipynb").text.startswith("one.ipynb\n1 cell (")
    assert "── 2 · load · code [1] · edited since it ran" in text
    assert "── 5 · boom · code [3] · ran out of order" in text
    assert "… 75 lines omitted …" in text  # trimmed head and tail
    assert "row 0" in text and "row 99" in text and "row 50" not in text
    assert "error ZeroDivisionError: division by zero" in text
    assert "\x1b" not in text  # ANSI stripped
    assert f"[image png 1×1, {len(base64.b64decode(PNG))} B — attached as image 1]" in text
    assert len(view.images) == 1 and view.images[0].source.media_type == "image/png"
    assert "sk-ant-abcdefghijklmnop1234" not in text  # masked, in source and output
    assert "sk-a•••" in text


async def test_agent_edits_the_file_and_each_edit_has_a_diff(workspace, notebook):
    model = ScriptedModel(
        [
            call("read_notebook"),
            call("insert_cell", source="df = df.drop_duplicates()", after="load"),
            call(
                "update_cell",
                cell_id="describe",
                find="describe()",
                replace="describe(include='all')",
            ),
            call("update_cell", cell_id="intro", cell_type="raw"),
            call("move_cell", cell_id="plot", before="describe"),
            call("delete_cell", cell_id="boom"),
            call("task_complete", summary="cleaned"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=notebook)
    handle = await agent.run("clean the notebook")
    assert handle.state.value == "completed"
    results = [r for m in agent.history for r in m.tool_results]
    assert not any(r.is_error for r in results), [r.text for r in results if r.is_error]
    disk = cells_on_disk(notebook)
    ids = [c[0] for c in disk]
    new_id = ids[2]
    assert ids == ["intro", "load", new_id, "plot", "describe", "secret"]
    assert disk[0][1] == "raw"
    assert disk[2][2] == "df = df.drop_duplicates()"
    assert disk[4][2] == "df.describe(include='all')"
    ends = [e for e in handle.events_so_far if e.kind == "tool_end"]
    diff = next(e.diff for e in ends if e.name == "update_cell" and e.diff and "describe" in e.diff)
    assert "-df.describe()\n+df.describe(include='all')" in diff
    inserted = next(e.diff for e in ends if e.name == "insert_cell")
    assert inserted is not None
    assert "+df = df.drop_duplicates()" in inserted
    assert "analysis.ipynb — file mode: no notebook frontend answered" in model.requests[0].system
    # the first tool result carried the plot as an image block
    assert any(b.type == "image" for b in results[0].content)
    assert_valid(agent.history)

    # one call undoes everything the run changed
    done = await agent.undo_notebook_changes()
    assert len(done) == 5
    assert cells_on_disk(notebook) == cells_on_disk(make_notebook(workspace / "fresh.ipynb"))


async def test_a_file_changed_on_disk_is_never_overwritten(workspace, notebook):
    bridge = FileBridge(notebook)
    await bridge.read()
    nb = nbformat.read(notebook, 4)
    nb.cells[0].source = "# Sales (edited by the user)"
    nbformat.write(nb, notebook)
    with pytest.raises(ToolError, match="changed on disk since it was last read"):
        await bridge.update("load", "x = 1")
    assert nbformat.read(notebook, 4).cells[0].source == "# Sales (edited by the user)"
    await bridge.read()  # reading again makes the next edit safe
    await bridge.update("load", "x = 1")
    assert nbformat.read(notebook, 4).cells[1].source == "x = 1"


async def test_edit_errors_tell_the_model_what_to_do(workspace, notebook):
    model = ScriptedModel(
        [
            call("update_cell", cell_id="nope", source="x"),
            call("update_cell", cell_id="load", find="missing text", replace="y"),
            call("update_cell", cell_id="describe", find="d", replace="D"),
            # A changed line cannot hold the masked value: it would be written as •••.
            call("update_cell", cell_id="secret", source="KEY = 'sk-a•••'\nprint(KEY)"),
            # A line kept as it was read keeps its real value.
            call(
                "update_cell", cell_id="secret", source="API_KEY = 'sk-a•••'\nprint(len(API_KEY))"
            ),
            call("run_cell", cell_id="load"),
            {"text": "done"},
        ]
    )
    from jupyter_agent.config.rules import Everything, Rule, Rules

    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=notebook,
        policy=Rules([Rule.allow(Everything())]),
    )
    await agent.run("edit")
    texts = [r.text for m in agent.history for r in m.tool_results]
    assert texts[0].startswith("There is no cell with id 'nope'. The cell ids are: intro, load,")
    assert texts[1].startswith("The text to find does not occur in cell load.")
    assert texts[2].startswith("The text to find occurs 2 times in cell describe;")
    assert texts[3].startswith("new_text holds masked text (•••, ‹secret:…›) that is not on")
    assert texts[4].startswith("Updated the source of cell secret.")
    assert texts[5].startswith("Cells of ") and "cannot be run here" in texts[5]
    source = nbformat.read(notebook, 4).cells[5].source
    assert source == "API_KEY = 'sk-ant-abcdefghijklmnop1234'\nprint(len(API_KEY))"  # intact


async def test_run_cell_in_file_mode_uses_the_executor_and_stores_outputs(workspace, notebook):
    async def executor(code, timeout):
        return RunResult(
            status="ok",
            execution_count=7,
            outputs=[{"output_type": "stream", "name": "stdout", "text": f"ran {code!r}\n"}],
        )

    bridge = FileBridge(notebook, executor=executor)
    model = ScriptedModel([call("run_cell", cell_id="describe"), {"text": "ok"}])
    from jupyter_agent.config.rules import Rule, Rules

    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=bridge,
        policy=Rules([Rule.allow("run_cell"), Rule.allow("task_complete")]),
    )
    await agent.run("run it")
    result = agent.history[2].tool_results[0].text
    assert result == "Cell describe ran [7].\n⤷ 1 stdout:\nran 'df.describe()'"
    stored = nbformat.read(notebook, 4).cells[2]
    assert stored.execution_count == 7
    assert stored.outputs[0]["text"] == "ran 'df.describe()'\n"


def test_planner_gets_only_reading_notebook_tools(workspace, notebook):
    agent = Agent("planner", ScriptedModel(), workspace=workspace, notebook=notebook, persist=False)
    offered = {t.name for t in agent.tools.allowed(agent.roles["planner"].permissions)}
    assert {"read_notebook", "read_cell"} <= offered
    running = {"run_cell", "wait_for_cell", "interrupt_cell"}
    assert not {"insert_cell", "update_cell", "delete_cell", "move_cell", *running} & offered
    assert [t.name for t in NOTEBOOK_TOOLS] == [
        "read_notebook",
        "read_cell",
        "insert_cell",
        "update_cell",
        "delete_cell",
        "move_cell",
        "run_cell",
        "wait_for_cell",
        "interrupt_cell",
    ]


def test_view_size_is_a_fraction_of_the_raw_notebook(workspace, notebook):
    import asyncio

    raw = notebook.read_text()
    cells = asyncio.run(FileBridge(notebook).read())
    view = render_notebook(cells, "analysis.ipynb")
    assert len(view.text) < len(raw)
    json.loads(raw)


async def test_new_cells_land_below_the_agents_cell_in_the_order_written(workspace, notebook):
    # The user ran %agent in cell "load": what the agent writes appears right under it, in
    # the order it wrote it, not at the end of the notebook out of sight.
    model = ScriptedModel(
        [
            call("insert_cell", source="first = 1"),
            call("insert_cell", source="second = 2"),
            call("task_complete", summary="added"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=notebook)
    agent.changes.anchor = "load"
    handle = await agent.run("add two cells")
    assert handle.state.value == "completed"
    disk = cells_on_disk(notebook)
    assert [c[2] for c in disk[1:4]] == [disk[1][2], "first = 1", "second = 2"]
    assert disk[1][0] == "load"
    said = [r.text for m in agent.history for r in m.tool_results]
    assert "after load." in said[0] and f"after {disk[2][0]}." in said[1]


async def test_a_new_cell_goes_to_the_end_when_its_place_is_gone(workspace, notebook):
    # The anchor cell was deleted (or the frontend named it differently from the file):
    # the cell still lands, at the end, and the model is told where.
    model = ScriptedModel(
        [call("insert_cell", source="x = 1"), call("task_complete", summary="ok")]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=notebook)
    agent.changes.anchor = "no-such-cell"
    await agent.run("add a cell")
    disk = cells_on_disk(notebook)
    assert disk[-1][2] == "x = 1"
    said = [r.text for m in agent.history for r in m.tool_results]
    assert said[0].splitlines()[0].endswith("at the end.")
