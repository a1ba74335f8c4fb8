"""What a model pays to read a notebook: our view against two peers, on real notebooks.

    .venv/bin/python benchmarks/notebook_view.py [--corpus DIR ...] [--no-generated]
        [--real-peers]

The peers are measured through ``peers.py``: the installed packages' own code when they
are importable, else its re-implementations (the first lines printed say which;
``--real-peers`` refuses to run without the packages). The packages are not project
dependencies, and they bring Jupyter server and JupyterLab extensions that would load in
every server started from the environment they go into, so put them beside it::

    .venv/bin/python -m uv pip install --python .venv/bin/python --target /tmp/peer-site \
        jupyter-mcp-server==2.2.4 jupyter-ai-tools==0.7.0
    PYTHONPATH=/tmp/peer-site .venv/bin/python benchmarks/notebook_view.py --real-peers

(``--target`` installs every dependency again; ``uv pip install --dry-run`` into the
environment lists the 24 it lacks, which ``--no-deps`` can install alone.)

The corpus: the real notebooks kept as test fixtures (public books and courses, licences
in tests/fixtures/notebooks/real/LICENSES.md), notebooks generated now by running code
with real outputs (matplotlib figures, pandas tables, SymPy formulas, long logs, a
traceback) through nbclient, and any folders of .ipynb given with --corpus.

For each notebook it prints estimated tokens (text by a rough BPE estimate, the same for
every tool: words at 4 characters a token, punctuation at 2, runs of spaces at 8, other
characters one each; images at width × height / 750, as the Messages API counts
them, capped at 1,600 for the largest) for:

* the Jupyter MCP server reading every cell with its outputs (``read_cell`` each cell: the
  fullest form of a peer that keeps outputs; images as sent, at full size),
* jupyter-ai-tools' ``read_notebook(include_outputs=True)`` (drops images, HTML, LaTeX),
* ours, the same information: the first read, then every cell in full through
  ``read_notebook(start=…)`` pages, one image per figure cell, downscaled,
* ours, the first read alone (the outline, or the whole notebook when it is small).

Then the same figures summed by kind of notebook: those with Plotly, Altair (Vega-Lite or
Vega) or Bokeh charts (from their mime types, or their HTML's scripts), and the others. A
notebook with several kinds of chart counts in each.

Target: ours at most half the MCP server's full read, and every first read under ~15k
tokens. Nothing is asserted; the numbers are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import struct
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

from notebook_corpus import real_notebooks  # noqa: E402
from peers import AI_TOOLS_IMPL, MCP_SERVER_IMPL, ai_tools_full, mcp_server_full  # noqa: E402

from jupyter_agent.notebook.file import FileBridge  # noqa: E402
from jupyter_agent.notebook.outputs import as_text, image_info  # noqa: E402
from jupyter_agent.notebook.view import fits_whole, render_notebook, render_outline  # noqa: E402

IMAGE_TOKEN_CAP = 1_600


_PIECES = re.compile(r"\s+|[A-Za-z0-9_]+|[!-/:-@\[-^`{-~]+|[^\x00-\x7f]")


def text_tokens(text: str) -> int:
    """Estimated tokens: a word a token per 4 characters, punctuation per 2, a run of
    spaces per 8, any other character one (a rough BPE; the same for every tool)."""
    total = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first.isspace():
            total += -(-len(piece) // 8)
        elif first.isascii() and (first.isalnum() or first == "_"):
            total += -(-len(piece) // 4)
        elif first.isascii():
            total += -(-len(piece) // 2)
        else:
            total += 1
    return total


def image_tokens(width: int | None, height: int | None) -> int:
    if not width or not height:
        return IMAGE_TOKEN_CAP // 2
    return min(IMAGE_TOKEN_CAP, width * height // 750)


def png_size(data: str) -> tuple[int | None, int | None]:
    head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    return None, None


def peer_image_tokens(raw: str) -> int:
    """The MCP server sends each image/png output at its own size."""
    import nbformat

    total = 0
    for cell in nbformat.reads(raw, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            if "image/png" in data:
                info = image_info("image/png", as_text(data["image/png"]))
                total += image_tokens(info.width, info.height)
    return total


async def ours(path: Path) -> tuple[int, int, int, int, int]:
    """(first read tokens, full text tokens, image tokens, calls, figure cells)."""
    cells = await FileBridge(path).read()
    title = f"Notebook {path.name}"
    whole = fits_whole(cells, None, title)
    if whole is not None:
        images = sum(_attached(i) for i in whole.images)
        return text_tokens(whole.text) + images, text_tokens(whole.text), images, 1, 0
    first = render_outline(cells, title)
    first_tokens = text_tokens(first.text)
    text, images, calls = text_tokens(first.text), 0, 1
    start: int | None = 1
    while start is not None:
        view = render_notebook(cells, title, start=start)
        text += text_tokens(view.text)
        images += sum(_attached(i) for i in view.images)
        calls += 1
        start = view.next_cell
    return first_tokens, text, images, calls, 0


def _attached(block) -> int:
    width, height = (
        png_size(block.source.data) if block.source.media_type == "image/png" else (None, None)
    )
    if width is None:
        import io

        from PIL import Image

        with Image.open(io.BytesIO(base64.b64decode(block.source.data))) as img:
            width, height = img.size
    return image_tokens(width, height)


FIGURE = """x = np.linspace(0, 10, 200)
fig, ax = plt.subplots(figsize=(8, 5))
ax.plot(x, np.sin(x * {k}))
ax.set_title('sine {k}')
plt.show()"""
TABLE = """df{k} = pd.DataFrame(rng.normal(size=(200, 8)), columns=list('abcdefgh'))
df{k}.describe()"""
GENERATED_SOURCES = {
    "figures.ipynb": [
        "import matplotlib.pyplot as plt\nimport numpy as np\n%matplotlib inline",
        *[FIGURE.format(k=k) for k in range(1, 7)],
    ],
    "tables.ipynb": [
        "import numpy as np\nimport pandas as pd\nrng = np.random.default_rng(0)",
        *[TABLE.format(k=k) for k in range(5)],
        "df0.head(20)",
        "for epoch in range(300):\n    print(f'epoch {epoch} loss {1 / (epoch + 1):.5f}')",
        "df0['missing']",
    ],
    "formulas.ipynb": [
        "from sympy import *\ninit_printing()\nx, y = symbols('x y')",
        *[f"Integral(sin(x) ** {k} * exp(-x), x)" for k in range(1, 6)],
        "Matrix([[x, y], [y, x]]).eigenvals()",
    ],
}
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def generate(folder: Path) -> list[Path]:
    """Notebooks with real outputs, made now by running them."""
    import nbformat
    from nbclient import NotebookClient

    out = []
    for name, sources in GENERATED_SOURCES.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
        path = folder / name
        nbformat.write(nb, path)
        out.append(path)
    return out


CHART_MIMES = {
    "plotly": re.compile(r"application/vnd\.plotly\.v1\+json"),
    "altair": re.compile(r"application/vnd\.vega(lite)?\.v[0-9.]+[+.]json"),
    "bokeh": re.compile(r"application/vnd\.bokehjs_(exec|load)\.v0\+json"),
}
CHART_HTML = {
    "plotly": ("Plotly.newPlot", "plotly-graph-div"),
    "altair": ("vegaEmbed", "vega-embed"),
    "bokeh": ("bk-root", "data-root-id", "docs_json"),
}
KINDS = ("plotly", "altair", "bokeh", "any chart", "no chart")


def chart_kinds(raw: str) -> set[str]:
    """The kinds of chart a notebook's outputs hold: "plotly", "altair" (Vega-Lite or
    Vega), "bokeh", by mime type or by what their HTML's scripts call."""
    kinds: set[str] = set()
    for cell in nbformat.reads(raw, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            html = as_text(data.get("text/html", ""))
            for kind, mime in CHART_MIMES.items():
                if any(mime.fullmatch(m) for m in data) or any(m in html for m in CHART_HTML[kind]):
                    kinds.add(kind)
    return kinds | {"any chart" if kinds else "no chart"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", type=Path, default=[])
    parser.add_argument("--no-generated", action="store_true")
    parser.add_argument(
        "--real-peers", action="store_true", help="measure the peers' installed packages only"
    )
    args = parser.parse_args()
    real = True if args.real_peers else None
    print(f"MCP server: {MCP_SERVER_IMPL}\njupyter-ai-tools: {AI_TOOLS_IMPL}\n")
    paths = list(real_notebooks())
    for folder in args.corpus:
        paths += sorted(folder.rglob("*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_generated:
            paths += generate(Path(tmp))
        rows = []
        kinds: list[set[str]] = []
        floor = 0
        for path in paths:
            raw = path.read_text(encoding="utf-8")
            nb = json.loads(raw)
            mcp_text, _ = mcp_server_full(nb, real=real)
            mcp = text_tokens(mcp_text) + peer_image_tokens(raw)
            ai = text_tokens(ai_tools_full(nb, real=real)[0])
            first, text, images, calls, _ = asyncio.run(ours(path))
            rows.append((path.name[:48], text_tokens(raw), mcp, ai, text + images, calls, first))
            kinds.append(chart_kinds(raw))
            floor += text_tokens("\n".join(c.source for c in nbformat.reads(raw, 4).cells))
    head = ("notebook", "raw .ipynb", "MCP full", "ai-tools", "ours full", "calls", "ours first")
    print(_row(head))
    for row in rows:
        print(_row(row))
    numbers = [r[1:] for r in rows]
    total = [sum(n[i] for n in numbers) for i in range(6)]
    print(_row(("total", *total)))
    ratios = sorted(r[4] / r[2] for r in rows if r[2])
    print()
    print(
        f"ours full / MCP full: {total[3] / total[1]:.2f} over the corpus "
        f"(median per notebook {ratios[len(ratios) // 2]:.2f}; target ≤ 0.50)"
    )
    print(f"ours full / ai-tools (which drops images, HTML and LaTeX): {total[3] / total[2]:.2f}")
    print(
        f"the sources alone / MCP full: {floor / total[1]:.2f} (no view that keeps the "
        "sources can go below this)"
    )
    print(f"largest first read: {max(r[6] for r in rows):,} tokens (target < 15,000)")
    print()
    widths = (48, 10, 9, 9, 9, 9, 9)
    print(_row(("by kind (notebooks)", *head[1:5], "ours/MCP", "ours/ai"), widths))
    for kind in KINDS:
        picked = [n for n, k in zip(numbers, kinds, strict=True) if kind in k]
        if not picked:
            continue
        sums = [sum(n[i] for n in picked) for i in range(4)]
        shares = (f"{sums[3] / sums[1]:.2f}", f"{sums[3] / sums[2]:.2f}")
        print(_row((f"{kind} ({len(picked)})", *sums, *shares), widths))


def _row(cells: tuple[object, ...], widths: tuple[int, ...] = (48, 10, 9, 9, 9, 5, 10)) -> str:
    out = []
    for n, (cell, width) in enumerate(zip(cells, widths, strict=True)):
        text = f"{cell:,}" if isinstance(cell, int) else str(cell)
        out.append(text.ljust(width) if n == 0 else text.rjust(width))
    return " ".join(out)


if __name__ == "__main__":
    main()
