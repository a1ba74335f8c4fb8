"""Reading a notebook file never costs more than it must, and reads what the file holds.

- A file that begins with a UTF-8 byte-order mark is read, and an edit keeps the mark:
  the file is byte for byte what it was except the edited cell.
- A notebook path that is a folder is refused by name ("… is a folder, not a notebook
  file"), when the bridge is made and whenever the file has become one since; nothing is
  written, and no raw ``IsADirectoryError`` reaches the caller.
- The first read decides between the whole notebook and its outline before any image is
  decoded: a notebook whose view cannot fit has none downscaled, one that fits is
  rendered once, and the view is the one ``render_notebook`` gives.
- A large file is decoded in steps that each read at most ``WINDOW`` characters (so a
  50 MB output never holds the GIL, and the kernel's event loop, for its whole decode),
  and the cells read are exactly those ``json`` reads; a Stop during such a read ends the
  run. (How long the loop waits is measured in ``benchmarks/notebook_parse.py``, never
  asserted.)
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import call, stopped_in_its_first_tool
from notebook_corpus import (
    GENERATED,
    LARGE,
    analysis_cells,
    code,
    dumps,
    markdown,
    png,
    real_notebooks,
    stream,
    v4,
    write,
)

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.messages import ImageBlock
from jupyter_agent.notebook import _bounded_json, outputs
from jupyter_agent.notebook.bridge import Cell
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.ipynb import BOM, Document, NotebookFormatError
from jupyter_agent.notebook.view import WHOLE_CHARS, fits_whole, render_notebook

BOM_BYTES = BOM.encode("utf-8")


def _tool_result(agent: Agent) -> Any:
    return next(m for m in agent.history if m.tool_results).tool_results[0]


def _images(result: Any) -> list[ImageBlock]:
    return [b for b in result.content if isinstance(b, ImageBlock)]


# --- a byte-order mark ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["v4.0.ipynb", "v3.ipynb", "v4.4-crlf.ipynb"])
async def test_a_notebook_with_a_byte_order_mark_reads_and_an_edit_keeps_the_mark(
    tmp_path: Path, name: str
):
    plain = write(tmp_path, name)
    marked = tmp_path / f"marked-{name}"
    marked.write_bytes(BOM_BYTES + plain.read_bytes())

    cells = await FileBridge(plain).read()
    assert await FileBridge(marked).read() == cells

    # The same edit on both: the marked file is the plain one's bytes behind the mark,
    # so nothing but the edited cell changed there either.
    for path in (plain, marked):
        bridge = FileBridge(path)
        await bridge.read()
        await bridge.update(cells[2].id, "values = [4, 5]\nprint(values)")
    assert marked.read_bytes() == BOM_BYTES + plain.read_bytes()
    assert (await FileBridge(marked).read())[2].source == "values = [4, 5]\nprint(values)"


async def test_a_byte_order_mark_does_not_change_how_the_file_escapes_its_text(tmp_path: Path):
    escaped = write(tmp_path, "v4.4-ascii-escaped.ipynb")
    escaped.write_bytes(BOM_BYTES + escaped.read_bytes())
    bridge = FileBridge(escaped)
    cells = await bridge.read()
    await bridge.update(cells[0].id, "# Déjà vu")
    written = escaped.read_bytes()
    assert written.startswith(BOM_BYTES)
    assert written[3:].isascii() and b"D\\u00e9j\\u00e0 vu" in written


async def test_the_agent_reads_and_edits_a_notebook_with_a_byte_order_mark(workspace: Path):
    path = write(workspace, "v4.0.ipynb")
    path.write_bytes(BOM_BYTES + path.read_bytes())
    model = ScriptedModel(
        [call("read_notebook"), call("insert_cell", source="print('end')"), {"text": "ok"}]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=path)
    await agent.run("add a cell")
    results = [r for m in agent.history for r in m.tool_results]
    assert [r.is_error for r in results] == [False, False]
    assert "values = [3, 1, 2]" in results[0].text
    assert path.read_bytes().startswith(BOM_BYTES)
    assert (await FileBridge(path).read())[-1].source == "print('end')"


# --- a folder ---------------------------------------------------------------------------


def test_a_folder_given_as_the_notebook_is_refused_by_name(workspace: Path):
    folder = workspace / "analysis.ipynb"
    folder.mkdir()
    with pytest.raises(NotebookFormatError, match="is a folder, not a notebook file"):
        FileBridge(folder)
    with pytest.raises(NotebookFormatError, match="is a folder, not a notebook file"):
        Agent("actor", ScriptedModel([{"text": "ok"}]), workspace=workspace, notebook=folder)
    assert list(folder.iterdir()) == []


async def test_a_notebook_that_became_a_folder_is_refused_and_nothing_is_written(
    tmp_path: Path,
):
    path = write(tmp_path, "v4.0.ipynb")
    bridge = FileBridge(path)
    cells = await bridge.read()
    path.unlink()
    path.mkdir()
    first = cells[0].id
    edits = {
        "read": bridge.read,
        "read_cell": lambda: bridge.read_cell(first),
        "insert": lambda: bridge.insert("x = 1"),
        "update": lambda: bridge.update(first, "# changed"),
        "delete": lambda: bridge.delete(first),
        "move": lambda: bridge.move(first, after=cells[-1].id),
        "set_type": lambda: bridge.set_type(first, "raw"),
    }
    for name, edit in edits.items():
        with pytest.raises(NotebookFormatError, match="is a folder, not a notebook file") as e:
            await edit()
        assert "nothing was written" in str(e.value), name
        assert list(path.iterdir()) == [], name


async def test_the_agent_is_told_its_notebook_is_now_a_folder(workspace: Path):
    path = write(workspace, "v4.0.ipynb")
    model = ScriptedModel([call("insert_cell", source="x = 1"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, notebook=path)
    path.unlink()
    path.mkdir()
    await agent.run("add a cell")
    result = _tool_result(agent)
    assert result.is_error and "is a folder, not a notebook file" in result.text
    assert list(path.iterdir()) == []


# --- the first read ---------------------------------------------------------------------


def _cells(n: int, *, images: int, text: int, broken: int = 0, formulas: int = 0) -> list[Cell]:
    """``n`` code cells, the first ``images`` of them with a plot (``broken`` of those
    unreadable, ``formulas`` of them small pictures of LaTeX), each printing ``text``
    characters."""
    cells = []
    for i in range(n):
        outs: list[dict[str, Any]] = [
            {"output_type": "stream", "name": "stdout", "text": f"{i}: " + "v" * text + "\n"}
        ]
        if i < images:
            data: dict[str, Any] = {"image/png": png(96, 72, i), "text/plain": "<Figure>"}
            if i < broken:
                data["image/png"] = "iVBORw0KGgo" + "A" * 40
            elif i < broken + formulas:
                data = {"image/png": png(200, 40, i), "text/latex": f"$x^{i}$"}
            outs.append({"output_type": "display_data", "data": data, "metadata": {}})
        cells.append(Cell(id=f"c{i:03d}", source=f"plot({i})", execution_count=i + 1, outputs=outs))
    return cells


def _as_it_was(cells: list[Cell]) -> Any:
    """The first read's whole view as it was decided: everything rendered, then measured."""
    if sum(len(c.source) for c in cells) > WHOLE_CHARS:
        return None
    view = render_notebook(cells, "Notebook", budget=WHOLE_CHARS)
    return view if view.next_cell is None and len(view.text) <= WHOLE_CHARS else None


def _count_downscales(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = outputs.downscale

    def downscale(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(outputs, "downscale", downscale)
    return calls


async def test_a_large_notebooks_first_read_decodes_no_image(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    cells = [code(f"plot({i})", i + 1) for i in range(40)]
    for i, cell in enumerate(cells):
        plot = {"data": {"image/png": png(640, 480, i)}, "metadata": {}}
        printed = stream(f"{i:>3} " + ("value " * 15 + "\n") * 100)
        cell["outputs"] = [printed, {"output_type": "display_data", **plot}]
    path = workspace / "plots.ipynb"
    path.write_text(dumps(v4(cells)), encoding="utf-8")
    downscales = _count_downscales(monkeypatch)
    model = ScriptedModel([call("read_notebook"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await agent.run("look")
    result = _tool_result(agent)
    assert "Outline:" in result.text and not _images(result)
    assert downscales == [0]


async def test_a_notebook_that_fits_is_rendered_once_with_its_images(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    nb = v4([markdown("# Plots"), *analysis_cells()])
    nb["cells"][2]["outputs"].append(
        {"output_type": "display_data", "data": {"image/png": png(900, 600)}, "metadata": {}}
    )
    nb["cells"][3]["outputs"].append(
        {"output_type": "display_data", "data": {"image/png": png(300, 200)}, "metadata": {}}
    )
    path = workspace / "small.ipynb"
    path.write_text(dumps(nb), encoding="utf-8")
    downscales = _count_downscales(monkeypatch)
    model = ScriptedModel([call("read_notebook"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await agent.run("look")
    result = _tool_result(agent)
    assert "Outline:" not in result.text and "attached as image 2" in result.text
    assert len(_images(result)) == 2
    assert downscales == [2]


@pytest.mark.parametrize(
    ("n", "images", "broken", "formulas"),
    [
        (14, 3, 0, 0),
        (30, 12, 0, 0),  # more images than one read attaches
        (30, 12, 2, 3),  # unreadable ones and formulas among them
        (60, 60, 0, 0),
        (200, 0, 0, 0),
    ],
)
def test_the_first_read_is_the_view_it_was(n: int, images: int, broken: int, formulas: int):
    def both(size: int) -> tuple[Any, Any]:
        cells = _cells(n, images=images, text=size, broken=broken, formulas=formulas)
        return _as_it_was(cells), fits_whole(cells, None, "Notebook")

    # The output size at which the view stops fitting, then every size around it.
    low, high = 1, 3_000
    assert both(low)[0] is not None and both(high)[0] is None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if both(middle)[0] is not None else (low, middle)
    for size in range(max(1, low - 15), high + 15):
        was, now = both(size)
        assert (was is None) == (now is None), size
        if was is not None and now is not None:
            assert (now.text, now.images, now.next_cell) == (was.text, was.images, None)


async def test_the_first_read_of_each_real_notebook_is_the_view_it_was(tmp_path: Path):
    paths = [*real_notebooks(), *(write(tmp_path, name) for name in {**GENERATED, **LARGE})]
    for path in paths:
        cells = await FileBridge(path).read()
        was, now = _as_it_was(cells), fits_whole(cells, None, "Notebook")
        assert (was is None) == (now is None), path.name
        if was is not None and now is not None:
            assert (now.text, now.images) == (was.text, was.images), path.name


# --- large files in steps ---------------------------------------------------------------


def _corpus(folder: Path) -> list[Path]:
    return [*real_notebooks(), *(write(folder, name) for name in {**GENERATED, **LARGE})]


@pytest.mark.slow  # the whole corpus, twice, in windows of 64 characters
async def test_a_notebook_read_in_steps_has_the_cells_json_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for path in _corpus(tmp_path):
        text = path.read_text(encoding="utf-8")
        whole = await FileBridge(path).read()
        expected = json.loads(text)
        with monkeypatch.context() as small:
            small.setattr(_bounded_json, "WINDOW", 64)
            small.setattr(_bounded_json, "_FIRST", 16)
            doc = Document.parse(text)
            assert await FileBridge(path).read() == whole, path.name
        stored = expected["cells"] if doc.nbformat == 4 else expected["worksheets"][0]["cells"]
        assert [c.value for c in doc.cells] == stored, path.name
        assert doc.render() == text, path.name


async def test_an_edit_of_a_file_read_in_steps_is_the_same_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name in ("v4.4-indent-2.ipynb", "v4.4-one-line.ipynb", "v3.ipynb", "huge-line.ipynb"):
        (tmp_path / "whole").mkdir(exist_ok=True)
        (tmp_path / "steps").mkdir(exist_ok=True)
        whole, stepped = write(tmp_path / "whole", name), write(tmp_path / "steps", name)
        for path, window in ((whole, 1 << 30), (stepped, 100)):
            with monkeypatch.context() as patch:
                patch.setattr(_bounded_json, "WINDOW", window)
                bridge = FileBridge(path)
                cells = await bridge.read()
                await bridge.update(cells[1].id, "print('changed')")
                await bridge.insert("x = 2", after=cells[0].id)
        assert stepped.read_bytes() == whole.read_bytes(), name


async def test_a_huge_output_is_read_as_the_file_holds_it(tmp_path: Path):
    # Above the window: read in steps as shipped (5 MB of lines, a 3 MB line of text and
    # emoji with escaped surrogate pairs, a 2 MB list of numbers).
    lines = "".join(f'{n:>8} \\ "quoted" é\n' for n in range(200_000))
    line = ("naïve 😀 \\u \t" * 250_000) + "\n"
    cells = analysis_cells()
    cells.append(code("print(lines)", 4, [stream(lines)]))
    cells.append(code("print(line)", 5, [stream(line)]))
    chart = {"application/json": {"x": list(range(250_000)), "y": [0.5] * 250_000}}
    cells.append(code("chart", 6, [{"output_type": "display_data", "data": chart, "metadata": {}}]))
    for ascii_only in (False, True):
        path = tmp_path / f"huge-{ascii_only}.ipynb"
        path.write_text(dumps(v4(cells), ascii=ascii_only), encoding="utf-8")
        assert path.stat().st_size > 4 * _bounded_json.WINDOW
        read = await FileBridge(path).read()
        assert [c.outputs for c in read[-3:]] == [c["outputs"] for c in _joined(cells[-3:])]
        assert read[-3].outputs[0]["text"] == lines and read[-2].outputs[0]["text"] == line


def _joined(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for cell in cells:
        for output in cell["outputs"]:
            if isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
    return cells


async def test_no_decoding_step_reads_more_than_a_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    read: list[int] = []
    decoder, scan = _bounded_json._DECODER, _bounded_json.scanstring

    class Counting:
        def raw_decode(self, text: str, start: int = 0) -> Any:
            if text[start : start + 1] in ("{", "[", '"'):  # a number is read alone
                read.append(len(text) - start)
            return decoder.raw_decode(text, start)

    def scanstring(text: str, end: int, strict: bool = True) -> Any:
        read.append(len(text) - end)
        return scan(text, end, strict)

    monkeypatch.setattr(_bounded_json, "_DECODER", Counting())
    monkeypatch.setattr(_bounded_json, "scanstring", scanstring)
    monkeypatch.setattr(_bounded_json, "WINDOW", 4_096)
    cells = analysis_cells()
    cells.append(code("print(x)", 4, [stream("x \\ \ud83d\ude00 " * 20_000 + "\n" * 3_000)]))
    cells.append(code("print(y)", 5, [stream("y" * 200_000)]))
    path = tmp_path / "big.ipynb"
    path.write_text(dumps(v4(cells), ascii=True), encoding="utf-8")
    bridge = FileBridge(path)
    found = await bridge.read()
    await bridge.update(found[1].id, "print(1)")  # the check before the write too
    assert found[-1].outputs[0]["text"] == "y" * 200_000
    assert max(read) <= 4_096 + 8  # a surrogate pair's second half and a quote may join


STRING_PARTS = ["a", "é", "😀", "\\", '"', "\n", "\t", "\ud83d", "\ude00", "u", "D", "/", "\x00"]


@pytest.mark.parametrize("window", [7, 8, 9, 11, 13, 16, 31, 64])
def test_json_in_steps_is_json_whatever_the_cuts(window: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_bounded_json, "WINDOW", window)
    monkeypatch.setattr(_bounded_json, "_FIRST", 4)
    rnd = random.Random(window)

    def text() -> str:
        return "".join(rnd.choice(STRING_PARTS) for _ in range(rnd.randint(0, 80)))

    def value(depth: int = 0) -> Any:
        roll = rnd.random()
        if depth > 3 or roll < 0.3:
            return text()
        if roll < 0.4:
            return rnd.choice([1, -2.5e10, True, None, 12345678901234567890, 0.125, []])
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rnd.randint(0, 6))]
        return {text(): value(depth + 1) for _ in range(rnd.randint(0, 5))}

    for _ in range(400):
        source = json.dumps(value(), ensure_ascii=rnd.random() < 0.6, indent=rnd.choice([None, 1]))
        assert _bounded_json.loads(source) == json.loads(source)
        assert _bounded_json.raw_decode(source + ', "next"', 0)[1] == len(source)
        broken = list(source)
        broken[rnd.randrange(len(broken))] = rnd.choice(['"', "\\", ",", "}", "]", "x", "\x01"])
        try:
            expected: Any = json.loads("".join(broken))
        except ValueError:
            with pytest.raises(ValueError):
                _bounded_json.loads("".join(broken))
        else:
            assert _bounded_json.loads("".join(broken)) == expected


def test_utf8_in_steps_is_the_text_and_an_error_names_the_same_byte(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(_bounded_json, "WINDOW", 100)
    raw = ("é€😀 données\n" * 2_000).encode()
    assert _bounded_json.decode_utf8(raw) == raw.decode()
    for at in (0, 401, 402, 403, 1_600, len(raw) - 1):
        broken = raw[:at] + b"\xff" + raw[at + 1 :]
        with pytest.raises(UnicodeDecodeError) as whole:
            broken.decode("utf-8")
        with pytest.raises(UnicodeDecodeError) as stepped:
            _bounded_json.decode_utf8(broken)
        assert (stepped.value.start, stepped.value.reason) == (
            whole.value.start,
            whole.value.reason,
        )


def test_a_byte_order_mark_is_skipped_and_what_follows_a_value_refused():
    assert _bounded_json.loads(BOM + ' {"a": [1]} \n') == {"a": [1]}
    with pytest.raises(ValueError, match="Extra data"):
        _bounded_json.loads('{"a": 1} {"b": 2}')


async def test_stop_during_a_read_of_a_huge_output_ends_the_run(workspace: Path):
    cells = analysis_cells()
    cells.append(code("print(rows)", 4, [stream("row, row, row\n" * 2_500_000)]))
    path = workspace / "huge.ipynb"
    path.write_text(dumps(v4(cells)), encoding="utf-8")
    model = ScriptedModel([call("read_notebook"), {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace, notebook=path)
    await stopped_in_its_first_tool(agent, "look")  # the read is under way
    assert _tool_result(agent).is_error  # interrupted, not waited for
