"""A notebook run by papermill with parameters, the way scheduled reports run: the task's
`{task}` and `$region` are the parameters' values; `--notebook` gives the agent the notebook
its kernel cannot know, so the notebook tools are offered and its edit lands in the file;
without it the prompt promises no notebook tools; a call that needs approval, which nobody
can give, ends the run at once (papermill has no timeout by default) and the stored output
says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.slow  # real kernels

papermill = pytest.importorskip("papermill")


def report(folder: Path, turns: list[dict[str, Any]], agent_line: str) -> Path:
    (folder / "turns.json").write_text(json.dumps(turns))
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell('task = "the default task"\nregion = "all"')
    parameters.metadata["tags"] = ["parameters"]
    parameters.id = "params"
    nb.cells = [
        parameters,
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell(f"h = {agent_line}"),
        nbformat.v4.new_code_cell(
            "await h.wait()\n"
            "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
            "asked = kernel_agent(get_ipython()).agent.model.requests[0]\n"
            "print(h.stop_reason)\n"
            "print(h.task)\n"
            "print('insert_cell' in [t['name'] for t in asked.tools])\n"
            "print('No notebook is attached' in asked.system)"
        ),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    path = folder / "report.ipynb"
    nbformat.write(nb, path)
    return path


def run(path: Path) -> nbformat.NotebookNode:
    out = path.with_name("report-out.ipynb")
    papermill.execute_notebook(
        str(path),
        str(out),
        parameters={"task": "Add a cell that totals the sales", "region": "north"},
        cwd=str(path.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    notebook: nbformat.NotebookNode = nbformat.read(out, as_version=4)
    return notebook


def printed(nb: nbformat.NotebookNode, index: int) -> list[str]:
    return "".join(o.get("text", "") for o in nb.cells[index].outputs).split("\n")


def test_parameters_reach_the_task_and_notebook_binds_its_file(tmp_path: Path) -> None:
    turns = [
        {
            "tool_calls": [
                {
                    "name": "insert_cell",
                    "input": {"source": "total = 42  # for north", "after": "params"},
                }
            ]
        },
        {"tool_calls": [{"name": "task_complete", "input": {"summary": "Added it."}}]},
    ]
    path = report(
        tmp_path,
        turns,
        "%agent act --notebook report.ipynb --model scripted:turns.json {task} for $region",
    )
    out = run(path)
    # The injected parameters' cell comes after ours: the %agent cell is the fourth.
    lines = printed(out, 4)
    assert lines[:4] == [
        "completed",
        "Add a cell that totals the sales for north",
        "True",  # the notebook tools were offered
        "False",  # and the prompt did not say there was no notebook
    ], lines
    # The edit went to the notebook named, in its file.
    sources = [c.source for c in nbformat.read(path, as_version=4).cells]
    assert "total = 42  # for north" in sources


def test_without_a_notebook_nothing_is_promised_and_an_approval_fails_fast(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "execute_command", "input": {"command": "rm scratch.tmp"}}]},
        {"tool_calls": [{"name": "task_complete", "input": {"summary": "Done."}}]},
    ]
    (tmp_path / "scratch.tmp").write_text("keep me")
    path = report(tmp_path, turns, "%agent act --model scripted:turns.json {task}")
    out = run(path)
    lines = printed(out, 4)
    assert lines[0] == "unattended", lines
    assert lines[2:4] == ["False", "True"], lines  # no notebook tools, and the prompt says so
    assert (tmp_path / "scratch.tmp").read_text() == "keep me"
    shown = out.cells[3].outputs[0]["data"]["text/plain"]
    assert "execute_command (Run: rm scratch.tmp) needs approval and nobody can give it" in shown
