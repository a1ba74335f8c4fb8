"""Notebook bridge benchmarks, measured in one run.

    .venv/bin/python benchmarks/notebook_bridge.py [--cells 1000] [--rounds 7] [--no-browser]

Prints:

* reading a notebook of ``--cells`` cells (with outputs) through the live bridge — the
  kernel asks the lab extension in real JupyterLab (headless Chromium, the browser test
  harness's server and settings) and waits for the reply — and through the FileBridge
  (nbformat on the ``.ipynb``), timed inside the kernel, interleaved, median and best of
  ``--rounds``, and their ratio; plus a ping's round trip (the fixed cost of a request);
* the compact notebook view's size (``render_notebook``, what ``read_notebook`` gives the
  model) as a ratio to the raw ``.ipynb``, for a notebook with real outputs made by running
  it in a kernel (nbclient): an image (a generated PNG through ``IPython.display.Image``), a
  pandas DataFrame's HTML repr when pandas is installed, long printed output and a
  traceback (target ≤ 0.25). Images go to the model as image blocks beside the text; their
  base64 size is printed apart.

Nothing is asserted: machines here are shared and noisy, and the numbers are ratios
measured side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# --- a notebook with outputs, run for real --------------------------------------------------


def png(width: int = 640, height: int = 400) -> bytes:
    """A chart-like PNG (white ground, axes, a curve, bars), as a plotting library makes:
    no imaging library needed."""
    white, ink, blue, orange = (255, 255, 255), (40, 40, 40), (31, 119, 180), (255, 127, 14)
    pixels = [[white] * width for _ in range(height)]
    left, bottom = 60, height - 40
    for y in range(20, bottom + 1):
        pixels[y][left] = ink
    for x in range(left, width - 20):
        pixels[bottom][x] = ink
    for i, x0 in enumerate(range(left + 20, width - 60, 60)):
        top = bottom - 40 - (i * 37) % 200
        for y in range(top, bottom):
            for x in range(x0, x0 + 30):
                pixels[y][x] = orange
    for x in range(left, width - 20):
        y = int(bottom - 150 - 100 * math.sin((x - left) / 40))
        for dy in (-1, 0, 1):
            pixels[y + dy][x] = blue
    rows = b"".join(b"\x00" + bytes(v for pixel in row for v in pixel) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def analysis_notebook(folder: Path) -> Path:
    """A typical analysis notebook, executed in a kernel so its outputs are real."""
    import nbformat
    from nbclient import NotebookClient

    (folder / "plot.png").write_bytes(png())
    try:
        import pandas  # noqa: F401

        has_pandas = True
    except ImportError:
        has_pandas = False
    cells = [
        nbformat.v4.new_markdown_cell("# Sales analysis\n\nLoad, clean, summarise, plot."),
        nbformat.v4.new_code_cell(
            "import math, random\nrandom.seed(1)\n"
            "rows = [{'region': random.choice('NESW'), 'units': random.randint(1, 90),"
            " 'price': round(random.uniform(1, 20), 2)} for _ in range(2000)]\nlen(rows)"
        ),
    ]
    if has_pandas:
        cells += [
            nbformat.v4.new_code_cell("import pandas as pd\ndf = pd.DataFrame(rows)\ndf.head(20)"),
            nbformat.v4.new_code_cell("df.describe()"),
            nbformat.v4.new_code_cell(
                "summary = df.assign(revenue=df.units * df.price).groupby('region').sum()\nsummary"
            ),
        ]
    cells += [
        nbformat.v4.new_code_cell(
            "for i, row in enumerate(rows[:300]):\n    print(i, row)",
        ),
        nbformat.v4.new_code_cell(
            "from IPython.display import Image, display\n"
            "display(Image(filename='plot.png'))\n"
            "display(Image(filename='plot.png', width=240))"
        ),
        nbformat.v4.new_markdown_cell("## Checks"),
        nbformat.v4.new_code_cell(
            "def check(row):\n    return row['units'] / (row['price'] - row['price'])\n"
            "check(rows[0])"
        ),
        nbformat.v4.new_code_cell("sum(r['units'] for r in rows)"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
    ).execute()
    path = folder / "analysis.ipynb"
    nbformat.write(nb, path)
    return path


def view_size(path: Path) -> dict[str, Any]:
    import asyncio

    from jupyter_agent.notebook.file import FileBridge
    from jupyter_agent.notebook.view import render_notebook

    cells = asyncio.run(FileBridge(path).read())
    view = render_notebook(cells, f"Notebook {path.name}")
    raw = path.stat().st_size
    image_bytes = sum(len(image.source.data) for image in view.images)
    return {
        "cells": len(cells),
        "raw": raw,
        "text": len(view.text.encode()),
        "images": len(view.images),
        "image_bytes": image_bytes,
    }


# --- a big notebook, read live in JupyterLab and from the file --------------------------------


def big_notebook(cells: int) -> list[str]:
    """Sources of a long notebook; its outputs are added by write_big_notebook."""
    return [f"value_{i} = {i} * 2\nprint('row', {i}, value_{i})" for i in range(cells)]


def write_big_notebook(path: Path, cells: int, first: str) -> None:
    """The big notebook, whose first cell (id ``bench``) holds ``first``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(first, id="bench"))
    for i, source in enumerate(big_notebook(cells)):
        if i % 10 == 0:
            nb.cells.append(nbformat.v4.new_markdown_cell(f"## Part {i // 10}", id=f"md-{i}"))
        nb.cells.append(
            nbformat.v4.new_code_cell(
                source,
                id=f"cell-{i}",
                execution_count=i + 1,
                outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text=f"row {i} {i * 2}\n")
                ],
            )
        )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


TIMING_CELL = """\
import json, statistics, time
from jupyter_agent.jupyter.bridge.live import connect_notebook, notebook_file
from jupyter_agent.notebook.file import FileBridge

live = await connect_notebook(timeout=10)
file = FileBridge(notebook_file(live.kernel_path))
await live.read(); await file.read()  # warm up both
timings = {{"live": [], "file": [], "ping": []}}
for _ in range({rounds}):
    started = time.perf_counter(); cells = await live.read()
    timings["live"].append(time.perf_counter() - started)
    started = time.perf_counter(); on_disk = await file.read()
    timings["file"].append(time.perf_counter() - started)
    started = time.perf_counter(); await live._request("ping")
    timings["ping"].append(time.perf_counter() - started)
same = [c.id for c in cells] == [c.id for c in on_disk]
medians = {{k: [statistics.median(v), min(v)] for k, v in timings.items()}}
print(json.dumps({{"mode": live.mode, "cells": len(cells), "same": same, **medians}}))
"""


PANEL = """const panelOf = path => Array.from(window.jupyterapp.shell.widgets('main'))
  .find(w => w.context?.path === path && w.content?.widgets !== undefined);"""


def live_read(cells: int, rounds: int) -> dict[str, Any]:
    """Start JupyterLab as the browser tests do, open the big notebook, time from a cell."""
    # the browser test harness (server pieces and NotebookUI): tests/browser, first on the
    # path now
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from browser_pages import CHROMIUM, CHROMIUM_ARGS
    from lab_server import start_lab_server, stop_lab_server
    from notebook_ui import PANEL_ID, NotebookUI
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bridge-bench-") as tmp:
        base = Path(tmp)
        root = base / "root"
        root.mkdir()
        write_big_notebook(root / "big.ipynb", cells, TIMING_CELL.format(rounds=rounds))
        server = start_lab_server(base)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.set_default_timeout(120_000)
                page.goto(f"{server.url}/lab/tree/big.ipynb?reset")
                handle = page.wait_for_function(PANEL_ID, arg="big.ipynb", timeout=120_000)
                notebook = NotebookUI(
                    page=page, path="big.ipynb", panel_id=str(handle.json_value())
                )
                notebook.cells.first.wait_for()
                notebook.wait_for_kernel_idle(timeout=120_000)
                # Run the first cell (it holds the timing code) as Run → Run Selected Cell
                # does; typing code in would need the last cell, which windowing may not
                # have rendered.
                page.evaluate(
                    f"""path => {{ {PANEL} panelOf(path).content.activeCellIndex = 0;
                    return window.jupyterapp.commands.execute('notebook:run-cell'); }}""",
                    "big.ipynb",
                )
                done = page.wait_for_function(
                    f"""path => {{ {PANEL}
                    const outputs = panelOf(path).content.model.cells.get(0).toJSON().outputs;
                    const error = outputs.find(o => o.output_type === 'error');
                    if (error) return JSON.stringify(error);
                    const text = outputs.map(o => o.text ?? '').join('');
                    return text.includes('"mode"') ? text : null; }}""",
                    arg="big.ipynb",
                    timeout=600_000,
                )
                shown = str(done.json_value())
                browser.close()
        finally:
            stop_lab_server(server)
    measured: dict[str, Any] = json.loads(shown)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=1000, help="code cells in the big notebook")
    parser.add_argument("--rounds", type=int, default=7, help="timed reads of each kind")
    parser.add_argument("--no-browser", action="store_true", help="only the view size")
    args = parser.parse_args()

    if not args.no_browser:
        print(f"reading a notebook of {args.cells:,} code cells (+{args.cells // 10} markdown)")
        result = live_read(args.cells, args.rounds)
        print(f"  bridge: {result['mode']}; cells read: {result['cells']}; same: {result['same']}")
        for label, key in [
            ("live bridge (JupyterLab)", "live"),
            ("file bridge (nbformat)", "file"),
            ("ping round trip", "ping"),
        ]:
            median, best = (t * 1000 for t in result[key])
            print(f"  {label:<26} median {median:8.1f} ms   best {best:8.1f} ms")
        print(f"  {'live / file (medians)':<26} {result['live'][0] / result['file'][0]:.2f}×")

    with tempfile.TemporaryDirectory(prefix="view-bench-") as tmp:
        started = time.perf_counter()
        path = analysis_notebook(Path(tmp))
        size = view_size(path)
        took = time.perf_counter() - started
    raw, text, images = size["raw"], size["text"], size["image_bytes"]
    print(f"notebook view of a {size['cells']}-cell notebook with outputs (run in {took:.1f} s)")
    print(f"  {'raw .ipynb':<26} {raw:>9,} bytes")
    print(f"  {'view text':<26} {text:>9,} bytes   ratio {text / raw:.3f} (target ≤ 0.25)")
    print(f"  {'view images':<26} {images:>9,} bytes of base64 in {size['images']} image blocks")
    print(f"  {'text + images':<26} {text + images:>9,} bytes   ratio {(text + images) / raw:.3f}")


if __name__ == "__main__":
    main()
