"""File mode on the notebooks people have: real ones from public books and courses and
generated edge cases (see notebook_corpus.py).

For each: ids read once still address the same cells later (and in a new session); an edit
lands, the file keeps its version and validity without conversion, no id is added to a file
that stores none, every untouched cell is byte for byte what it was, and the diff is inside
the edited cell; the edited notebook still runs with nbclient where its imports allow.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import importlib.util
import json
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest
from helpers import call, stopped_in_its_first_tool
from IPython.core.inputtransformer2 import TransformerManager
from notebook_corpus import (
    GENERATED,
    LARGE,
    measure,
    real_notebooks,
    real_properties,
    real_where,
    real_with,
    write,
)

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.ipynb import Document

pytestmark = pytest.mark.slow  # real notebooks run with nbclient

CORPUS = [*(p.name for p in real_notebooks()), *GENERATED]
EDITED = [*CORPUS, *LARGE]
"""Notebooks edited by id in every layout (the large ones too: a 20 MB line, 1,000 cells)."""


@pytest.fixture
def copy_of(tmp_path: Path):
    def make(name: str) -> Path:
        real = {p.name: p for p in real_notebooks()}
        if name in real:
            return Path(shutil.copy(real[name], tmp_path / name))
        return write(tmp_path, name)

    return make


def _valid(text: str) -> str | None:
    """The first validation error of a notebook's text, in its own version (no conversion)."""
    data = json.loads(text)
    try:
        nbformat.validate(data, version=data["nbformat"], version_minor=data["nbformat_minor"])
    except nbformat.ValidationError as e:
        return str(e.message)
    return None


def _target(cells):
    """A cell in the middle that holds code (else any cell with a source)."""
    with_source = [c for c in cells if c.source.strip()]
    code = [c for c in with_source if c.cell_type == "code"] or with_source
    return code[len(code) // 2]


def _changed_span(before: str, after: str) -> tuple[int, int]:
    """The first and last line (in ``after``) of what differs: every line above and below
    is the same in both (a deletion's span is the line where it fell). Prefix and suffix,
    not difflib: on a notebook of many repeated lines difflib took tens of seconds."""
    old, new = before.splitlines(), after.splitlines()
    assert old != new, "nothing changed"
    shorter = min(len(old), len(new))
    head = next((n for n in range(shorter) if old[n] != new[n]), shorter)
    tail = next((n for n in range(shorter - head) if old[-1 - n] != new[-1 - n]), shorter - head)
    return head, max(len(new) - 1 - tail, head)


def test_the_corpus_is_what_people_have():
    """The fixtures cover what the issue found in the wild (measured, not assumed)."""
    docs = {p.name: Document.parse(p.read_text(encoding="utf-8")) for p in real_notebooks()}
    assert len(docs) >= 10
    assert sum(not d.stores_ids for d in docs.values()) >= 8
    assert any(d.nbformat == 3 for d in docs.values())
    assert any(d.style.indent == "  " for d in docs.values())


def test_properties_json_is_what_the_files_measure():
    """Tests pick fixtures by properties.json (``real_with``): it must say what the bytes say."""
    assert sorted(real_properties()) == [p.name for p in real_notebooks()]
    for path in real_notebooks():
        assert real_properties()[path.name] == measure(path.read_bytes()), path.name


def test_the_corpus_has_the_shapes_readers_stumble_on():
    """v3 outputs stored as lists of lines (json, javascript), plotting libraries' own
    output types, and id-less notebooks whose cells repeat one another."""
    assert real_with("v3_list_json_outputs") and real_with("v3_list_javascript_outputs")
    assert len(real_with("plotly_outputs")) >= 2 and real_with("plotly_require_html")
    assert real_with("vegalite_outputs") and real_with("bokeh_outputs")
    idless = real_where(has_cell_ids=False)
    assert len([p for p in real_with("duplicate_cells") if p in idless]) >= 2
    assert any(real_properties()[p.name]["empty_code_cells"] >= 3 for p in idless)


@pytest.mark.parametrize("name", EDITED)
async def test_ids_are_stable_across_reads_and_sessions(copy_of, name):
    path = copy_of(name)
    first = [c.id for c in await FileBridge(path).read()]
    again = [c.id for c in await FileBridge(path).read()]
    assert first == again
    assert len(set(first)) == len(first)
    doc = Document.parse(path.read_text(encoding="utf-8"))
    if doc.stores_ids:
        stored = [c.value.get("id") for c in doc.cells]
        unique = [cid for n, cid in enumerate(stored) if cid not in stored[:n]]
        assert [cid for cid in first if cid in unique] == unique  # stored ids are kept


@pytest.mark.parametrize("name", EDITED)
async def test_an_edit_by_an_earlier_id_changes_only_that_cell(copy_of, name):
    path = copy_of(name)
    before = path.read_text(encoding="utf-8")
    bridge = FileBridge(path)
    target = _target(await bridge.read())
    await bridge.read()  # reads in between must not change the ids
    new_source = target.source.rstrip("\n") + "\n# checked by the agent"
    await bridge.update(target.id, new_source)
    after = path.read_text(encoding="utf-8")

    old, new = Document.parse(before), Document.parse(after)
    assert (new.nbformat, new.nbformat_minor) == (old.nbformat, old.nbformat_minor)
    if _valid(before) is None:
        assert _valid(after) is None
    if not old.stores_ids:
        assert all("id" not in c.value for c in new.cells)
    edited = [c.id for c in await bridge.read()].index(target.id)
    assert [c.text for n, c in enumerate(new.cells) if n != edited] == [
        c.text for n, c in enumerate(old.cells) if n != edited
    ]
    assert after.endswith("\n") == before.endswith("\n")
    assert ("\r\n" in after) == ("\r\n" in before)
    start = after.count("\n", 0, after.index(new.cells[edited].text))
    stop = start + new.cells[edited].text.count("\n")
    first, last = _changed_span(before, after)
    assert start <= first <= last <= stop
    assert (await bridge.read_cell(target.id)).source == new_source


@pytest.mark.parametrize("name", EDITED)
async def test_insert_move_delete_keep_every_other_cell_as_it_was(copy_of, name):
    path = copy_of(name)
    before = path.read_text(encoding="utf-8")
    bridge = FileBridge(path)
    cells = await bridge.read()
    stored = Document.parse(before).cells
    texts = dict(zip([c.id for c in cells], (c.text for c in stored), strict=True))
    first, last = cells[0].id, cells[-1].id
    added = await bridge.insert("print('inserted')", "code", after=first)
    await bridge.move(last, before=first)
    removed = cells[len(cells) // 2].id
    if removed not in (first, last):
        await bridge.delete(removed)
    after = path.read_text(encoding="utf-8")
    if _valid(before) is None:
        assert _valid(after) is None
    now = await bridge.read()
    doc = Document.parse(after)
    assert now[0].id == last and now[2].id == added.id
    for cell, saved in zip(now, doc.cells, strict=True):
        if cell.id != added.id:
            assert saved.text == texts[cell.id]
    assert removed not in [c.id for c in now] or removed in (first, last)
    if not doc.stores_ids:
        assert all("id" not in c.value for c in doc.cells)


@pytest.mark.parametrize("name", [n for n in GENERATED if "one-line" not in n])
async def test_a_one_line_change_is_a_two_line_diff(copy_of, name):
    path = copy_of(name)
    before = path.read_text(encoding="utf-8")
    bridge = FileBridge(path)
    cell = next(c for c in await bridge.read() if "print(sorted(values))" in c.source)
    await bridge.update(cell.id, cell.source.replace("sorted(values)", "sorted(values)[::-1]"))
    diff = [
        line
        for line in difflib.unified_diff(
            before.splitlines(), path.read_text(encoding="utf-8").splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert len(diff) == 2, diff
    assert "sorted(values)[::-1]" in diff[1]


async def test_a_v3_notebook_stays_v3_and_keeps_its_name(copy_of):
    path = copy_of("v3.ipynb")
    bridge = FileBridge(path)
    cells = await bridge.read()
    assert [c.cell_type for c in cells] == ["markdown", "markdown", "code", "code"]
    assert cells[0].source == "# An analysis"
    await bridge.update(cells[0].id, "# A better title")
    await bridge.update(cells[2].id, "values = [5, 4]\nprint(sorted(values))")
    await bridge.insert("## More", "markdown", after=cells[1].id)
    data = json.loads(path.read_text())
    assert data["nbformat"] == 3
    assert data["metadata"] == {"name": "old analysis"}
    stored = data["worksheets"][0]["cells"]
    assert stored[0] == {
        "cell_type": "heading",
        "level": 1,
        "metadata": {},
        "source": ["A better title"],
    }
    assert stored[2]["cell_type"] == "heading" and stored[2]["level"] == 2
    assert stored[3]["input"] == ["values = [5, 4]\n", "print(sorted(values))"]
    assert stored[3]["prompt_number"] == 1 and stored[3]["language"] == "python"
    assert _valid(path.read_text()) is None


async def test_duplicate_ids_are_told_apart_and_never_written(copy_of):
    path = copy_of("v4.5-duplicate-ids.ipynb")
    bridge = FileBridge(path)
    ids = [c.id for c in await bridge.read()]
    assert ids[1] == "same" and ids[2] != "same" and len(set(ids)) == len(ids)
    await bridge.update(ids[2], "total = 0")
    stored = [c["id"] for c in json.loads(path.read_text())["cells"]]
    assert stored == ["cell-0", "same", "same", "cell-3", "cell-4"]
    assert (await bridge.read_cell(ids[2])).source == "total = 0"


async def test_ids_follow_their_cells_when_someone_else_edits_the_file(copy_of):
    path = copy_of("v4.0.ipynb")
    bridge = FileBridge(path)
    cells = await bridge.read()
    data = json.loads(path.read_text())
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["Intro"]})
    data["cells"][3]["source"] = ["total = sum(values) * 2\n", "total"]  # edited in place
    path.write_text(json.dumps(data, indent=1))
    now = await bridge.read()
    assert [c.id for c in now[1:]] == [c.id for c in cells]
    assert now[3].source.startswith("total = sum(values) * 2")


async def test_ids_read_before_a_frontend_saved_the_file_with_its_own_ids_still_work(copy_of):
    path = copy_of("v4.4-indent-2.ipynb")
    bridge = FileBridge(path)
    cells = await bridge.read()
    nb = nbformat.read(path, as_version=4)  # what JupyterLab does on save: ids, 4.5
    nb.nbformat_minor = 5
    for n, cell in enumerate(nb.cells):
        cell["id"] = f"lab-{n}"
    nbformat.write(nb, path)
    saved = [c["id"] for c in json.loads(path.read_text())["cells"]]
    now = await bridge.read()
    assert [c.id for c in now] == saved
    updated = await bridge.update(cells[2].id, "total = 0")
    assert updated.id == saved[2]
    assert json.loads(path.read_text())["cells"][2]["source"] == ["total = 0"]


async def test_an_edit_that_would_make_a_valid_notebook_invalid_is_not_written(
    copy_of, monkeypatch
):
    path = copy_of("v4.4-indent-2.ipynb")
    original = path.read_bytes()
    real = Document._stored_form

    def broken(self, cell, old):  # a slip in how a cell is stored
        return {**real(self, cell, old), "id": "x"}  # ids are invalid before 4.5

    monkeypatch.setattr(Document, "_stored_form", broken)
    bridge = FileBridge(path)
    cell = (await bridge.read())[1]
    with pytest.raises(Exception, match=r"would make .* an invalid notebook"):
        await bridge.update(cell.id, "x = 1")
    assert path.read_bytes() == original


async def test_a_file_edited_since_the_read_is_not_overwritten(copy_of):
    path = copy_of("v4.4-indent-2.ipynb")
    bridge = FileBridge(path)
    cell = (await bridge.read())[1]
    path.write_text(path.read_text().replace("print(sorted(values))", "print(values)"))
    changed = path.read_bytes()
    with pytest.raises(Exception, match="changed on disk"):
        await bridge.update(cell.id, "x = 1")
    assert path.read_bytes() == changed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cells": [', "not valid JSON"),
        ("[1, 2]", "not a notebook"),
        ('{"nbformat": 2, "nbformat_minor": 0, "worksheets": []}', "nbformat 2"),
        (
            '{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4, "nbformat_minor": 4,'
            ' "metadata": {}}',
            "not a valid notebook cell",
        ),
        ("\udcff", "not UTF-8"),
        ('{"cells": [' + "[" * 100_000 + "]" * 100_000 + "]}", "nested too deeply"),
    ],
)
async def test_a_notebook_that_cannot_be_read_is_never_written(tmp_path, content, message):
    path = tmp_path / "broken.ipynb"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    original = path.read_bytes()
    bridge = FileBridge(path)
    with pytest.raises(Exception, match=message):
        await bridge.read()
    with pytest.raises(Exception, match=message):
        await bridge.insert("print(1)")
    assert path.read_bytes() == original


async def test_a_legacy_heading_cell_is_read_and_left_as_it_is(copy_of):
    path = copy_of("v4.4-heading-cell.ipynb")
    before = Document.parse(path.read_text())
    bridge = FileBridge(path)
    cells = await bridge.read()
    assert cells[0].cell_type == "heading" and cells[0].source == "Old title"
    await bridge.insert("print('new')", after=cells[2].id)
    after = Document.parse(path.read_text())
    assert after.cells[0].text == before.cells[0].text


# --- running the edited notebooks -------------------------------------------------------------


def _imports(text: str) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # old sources: invalid escapes, duplicate ids
        nb = nbformat.reads(text, as_version=4)
    found: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(TransformerManager().transform_cell(cell.source))
        except SyntaxError:
            return {"<magics or Python 2>"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
    return found


def _importable(module: str) -> bool:
    """Whether ``module`` is here, submodule and all: IPython 2's notebooks import
    ``IPython.html``, which IPython has long since dropped."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def _runnable() -> list[str]:
    out = []
    real = {p.name: p for p in real_notebooks()}
    for name in CORPUS:
        if name in real and real_properties()[name]["error_outputs"]:
            continue  # saved with a traceback: it never ran top to bottom either
        maker = GENERATED.get(name)
        needs = _imports(maker() if maker else real[name].read_text(encoding="utf-8"))
        if "<magics or Python 2>" in needs:
            continue
        # Packages first, so that no parent of a missing package gets imported.
        packages = {m.split(".")[0] for m in needs}
        if all(_importable(m) for m in packages) and all(_importable(m) for m in needs):
            out.append(name)
    return out


RUNNABLE = _runnable()


def test_enough_of_the_corpus_runs_here():
    assert len(RUNNABLE) >= 10, RUNNABLE
    assert len([n for n in RUNNABLE if n not in GENERATED]) >= 2, RUNNABLE


@pytest.mark.timeout(300)
async def test_edited_notebooks_still_run_with_nbclient(copy_of):
    from nbclient import NotebookClient

    failures = []
    at_once = asyncio.Semaphore(3)  # each in a kernel of its own: a few side by side

    async def edit_and_run(number: int, name: str) -> None:
        folder = copy_of(name).parent / f"run-{number}"  # what it writes stays its own
        folder.mkdir()
        path = (folder.parent / name).rename(folder / name)
        bridge = FileBridge(path)
        target = _target(await bridge.read())
        await bridge.update(target.id, target.source.rstrip("\n") + "\nedited_by_agent = True")
        await bridge.insert("assert edited_by_agent", "code")
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=60,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        async with at_once:
            try:
                await client.async_execute()
            except Exception as e:
                failures.append(f"{name}: {str(e)[-300:]}")

    await asyncio.gather(*(edit_and_run(n, name) for n, name in enumerate(RUNNABLE)))
    assert not failures, "\n".join(failures)


# --- large notebooks through the tools --------------------------------------------------------


async def test_a_thousand_cell_notebook_is_first_read_as_a_bounded_outline(tmp_path, workspace):
    path = write(workspace, "thousand-cells.ipynb")
    model = ScriptedModel([call("read_notebook"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await agent.run("look")
    result = agent.history[2].tool_results[0].text
    assert len(result) < 15_000 * 4  # about 15k tokens at most
    assert "Outline" in result and "not listed: read_notebook(start=" in result
    ids = [c.id for c in await FileBridge(path).read()]
    assert f"1 · {ids[0]} · md · ## Step 0 (+1 lines)" in result
    assert f"2 · {ids[1]} · code [1] · x1 = 1 (+1 lines) → stdout 30 lines" in result


async def test_a_twenty_megabyte_line_is_read_in_bounded_size(workspace):
    path = write(workspace, "huge-line.ipynb")
    bridge = FileBridge(path)
    cells = await bridge.read()
    model = ScriptedModel([call("read_notebook", start=1, end=len(cells)), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await agent.run("look")
    result = agent.history[2].tool_results[0].text
    assert len(result) < 12_000
    assert "characters omitted" in result and "after" in result
    before = path.read_bytes()
    await bridge.update(cells[1].id, "print('changed')")
    assert abs(len(path.read_bytes()) - len(before)) < 100


async def test_stop_during_a_read_of_huge_outputs_takes_effect_at_once(workspace):
    path = write(workspace, "huge-line.ipynb")
    model = ScriptedModel([call("read_notebook"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await stopped_in_its_first_tool(agent, "look", timeout=10)  # the read is under way
    # At once: the read was interrupted, not waited for until it finished.
    assert agent.history[-1].tool_results[0].is_error
