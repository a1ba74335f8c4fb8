"""What the model reads of a notebook: lean, bounded, nothing useful dropped, secrets masked."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from notebook_corpus import png, write
from PIL import Image

from jupyter_agent._wording import duration
from jupyter_agent.messages import ImageBlock
from jupyter_agent.notebook.bridge import Cell
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.notebook.outputs import ViewLimits, clip, render_output
from jupyter_agent.notebook.view import fits_whole, provenance, render_notebook, render_outline

KEY = "sk-ant-api03-" + "Q" * 80


def _rich(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "execute_result", "data": data, "metadata": {}, "execution_count": 1}


def test_a_formula_keeps_its_latex_and_its_small_picture_is_listed_not_attached():
    images: list[ImageBlock] = []
    text = render_output(
        _rich({"image/png": png(180, 40), "text/latex": "$x^2$", "text/plain": "x**2"}),
        ViewLimits(),
        images,
        "'c', output=1",
    )
    assert "latex: $x^2$" in text
    assert "read_cell('c', output=1) shows it" in text
    assert images == []


def test_a_figure_is_attached_downscaled_with_its_text_beside_it():
    images: list[ImageBlock] = []
    text = render_output(
        _rich({"image/png": png(1600, 1000), "text/plain": "<Figure size 1600x1000 with 1 Axes>"}),
        ViewLimits(),
        images,
    )
    assert "png 1600×1000" in text and "attached as image 1" in text
    assert "<Figure size 1600x1000 with 1 Axes>" in text
    with Image.open(io.BytesIO(base64.b64decode(images[0].source.data))) as img:
        assert max(img.size) == 512


def test_an_image_whose_header_claims_a_vast_size_is_never_decoded(monkeypatch):
    import zlib

    from PIL import ImageFile

    loads: list[tuple[int, int]] = []
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda img: loads.append(img.size))
    bomb = base64.b64decode(png(1, 1))
    ihdr = bomb[8:33]
    # 80 million pixels: under Pillow's own bomb limit, far over what a model needs
    header = ihdr[:8] + (10_000).to_bytes(4, "big") + (8_000).to_bytes(4, "big") + ihdr[16:21]
    crc = zlib.crc32(header[4:]).to_bytes(4, "big")
    data = base64.b64encode(bomb[:8] + header + crc + bomb[33:]).decode()
    images: list[ImageBlock] = []
    text = render_output(_rich({"image/png": data}), ViewLimits(), images)
    assert "png 10000×8000" in text and "unreadable or too large" in text
    assert images == [] and loads == []


def test_a_widget_shows_its_text_fallback():
    text = render_output(
        _rich(
            {
                "application/vnd.jupyter.widget-view+json": {"model_id": "1", "version_major": 2},
                "text/plain": "IntSlider(value=3)",
            }
        ),
        ViewLimits(),
        [],
    )
    assert "[widget] IntSlider(value=3)" in text


def test_an_html_table_becomes_a_compact_text_table():
    rows = "".join(f"<tr><th>{i}</th><td>city {i}</td><td>{i * 1000}</td></tr>" for i in range(50))
    html = f"<style>x</style><table><tr><th></th><th>city</th><th>pop</th></tr>{rows}</table>"
    text = render_output(_rich({"text/html": html}), ViewLimits(), [])
    assert "[table, 50 rows × 3 columns]" in text
    assert "city 0" in text and "city 49" in text and "city 25" not in text
    assert "<td>" not in text


def test_clipping_comes_before_masking_and_never_leaks_a_secret_cut_at_the_edge():
    for cut in range(1_400, 1_560, 7):  # the key straddles the kept part's edge
        text = "x" * cut + KEY + "y" * 50_000
        shown = clip(text, 20, 5, 3_000)
        assert "Q" * 20 not in shown
    many = "\n".join(f"line {i} {KEY if i in (3, 99_998) else ''}" for i in range(100_000))
    shown = clip(many, 20, 5, 3_000)
    assert "line 0" in shown and "line 99999" in shown and "Q" * 20 not in shown
    assert "lines" in shown and "omitted" in shown


def test_a_huge_output_is_masked_only_where_it_is_kept(monkeypatch):
    import jupyter_agent.notebook.outputs as output_view
    from jupyter_agent.secrets.shapes import mask_secrets

    masked: list[int] = []

    def counted(text: str) -> str:
        masked.append(len(text))
        return mask_secrets(text)

    monkeypatch.setattr(output_view, "mask_secrets", counted)
    for text in ("z" * 50_000_000, "a line\n" * 5_000_000):
        masked.clear()
        shown = clip(text, 20, 5, 3_000)
        assert len(shown) < 3_300
        assert sum(masked) <= 2 * (3_000 + output_view.MARGIN)


async def test_the_outline_is_bounded_and_tells_how_to_go_on(tmp_path):
    path = write(tmp_path, "thousand-cells.ipynb")
    cells = await FileBridge(path).read()
    view = render_outline(cells, "Notebook t")
    assert len(view.text) <= 40_500
    assert "1,000 cells (750 code, 250 markdown)" in view.text
    last = view.text.rsplit("\n", 1)[1]
    assert last.startswith("… cells ") and "read_notebook(start=" in last
    assert fits_whole(cells, None, "t") is None


async def test_a_range_stops_at_a_cell_boundary_and_says_where_to_go_on(tmp_path):
    path = write(tmp_path, "thousand-cells.ipynb")
    cells = await FileBridge(path).read()
    view = render_notebook(cells, "t", start=10, end=900, budget=5_000)
    assert "Showing cells 10–900." in view.text
    assert view.text.rstrip().endswith("end=900)")
    assert view.next_cell is not None and f"read_notebook(start={view.next_cell}," in view.text
    assert "── 10 · " in view.text


@pytest.mark.parametrize(
    ("seconds", "expected"), [(0.3, "0.3 s"), (75.0, "1 min 15 s"), (400.0, "6 min 40 s")]
)
def test_the_outline_shows_how_long_a_cell_ran(seconds, expected):
    ended = f"2024-05-01T10:{int(seconds // 60):02d}:{seconds % 60:06.3f}Z"
    cell = Cell(
        id="c1",
        source="train()",
        execution_count=1,
        metadata={
            "execution": {
                "iopub.execute_input": "2024-05-01T10:00:00.000Z",
                "shell.execute_reply": ended,
            }
        },
    )
    line = render_outline([cell], "t").text.splitlines()[-1]
    assert line.endswith(f"· took {expected}")


async def test_formulas_and_widgets_notebook_reads_whole_with_nothing_dropped(tmp_path):
    path = write(tmp_path, "formulas-and-widgets.ipynb")
    view = fits_whole(await FileBridge(path).read(), None, "t")
    assert view is not None
    assert "latex: $\\displaystyle \\int" in view.text
    assert "[widget] IntSlider(value=3)" in view.text
    assert "Oslo" in view.text and "[table, 2 rows × 3 columns]" in view.text


class KernelHistory:
    """What a kernel ran and how long each execution took (the ExecutionHistory seam)."""

    def __init__(
        self, ran: dict[int, tuple[str, float]], cells: dict[int, str] | None = None
    ) -> None:
        self.ran = ran
        self.cells = cells or {}

    def source_of(self, execution_count):
        return self.ran.get(execution_count, (None, 0.0))[0]

    def cell_of(self, execution_count):
        return self.cells.get(execution_count)

    def duration_of(self, execution_count):
        return self.ran.get(execution_count, (None, None))[1]


def test_the_view_shows_how_long_the_kernel_took_for_each_cell_it_ran():
    cells = [
        Cell(id="train", source="model.fit(X, y)", execution_count=3),
        Cell(id="quick", source="len(X)", execution_count=4),
        Cell(id="stale", source="old = 1", execution_count=2),  # count of an earlier kernel
        Cell(id="fresh", source="x = 1"),
    ]
    history = KernelHistory(
        {3: ("model.fit(X, y)", 252.4), 4: ("len(X)", 0.01), 2: ("y = 2", 9)},
        {3: "train", 4: "quick", 2: "another"},
    )
    outline = render_outline(cells, "t", history).text.splitlines()
    assert outline[-4].endswith("[3] · model.fit(X, y) · took 4 min 12 s")
    assert "took" not in "\n".join(outline[-3:])  # too quick to say, another cell's, not run
    full = render_notebook(cells, "t", history).text
    assert "── 1 · train · code [3] · took 4 min 12 s" in full
    # The count of an earlier kernel names another cell's execution here: no claim on it.
    assert "── 3 · stale · code [2] · ran out of order\n" in full
    # A cell the agent started that still runs says so, and for how long.
    running = render_outline(cells, "t", history, running={"fresh": 125.0}).text
    assert running.splitlines()[-1].endswith("· x = 1 · running (2 min 5 s so far)")


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0.42, "0.4 s"), (12.4, "12 s"), (60, "1 min"), (252.4, "4 min 12 s"), (7500, "2 h 5 min")],
)
def test_durations_are_said_compactly(seconds, words):
    assert duration(seconds) == words


def test_a_cell_edited_since_it_ran_says_its_outputs_are_of_its_earlier_source():
    """From the bridge (JupyterLab's isDirty, file mode's own record), or from this kernel
    having run that very cell with another source; never from a count another kernel
    saved."""
    cells = [
        Cell(id="a", source="x = 2", execution_count=1, edited_since_run=True),
        Cell(id="b", source="y = 2", execution_count=2),
        Cell(id="c", source="z = 2", execution_count=3),
    ]
    history = KernelHistory({2: ("y = 1", 0.5), 3: ("z = 1", 0.5)}, {2: "b", 3: "elsewhere"})
    flags = provenance(cells, history)
    stale = "edited since it ran: its outputs are from its earlier source"
    assert flags == {"a": stale, "b": stale}
    full = render_notebook(cells, "t", history).text
    assert f"── 1 · a · code [1] · {stale}" in full
    assert f"── 2 · b · code [2] · {stale}" in full
    outline = render_outline(cells, "t", history).text
    assert outline.count(stale) == 2
