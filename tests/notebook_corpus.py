"""Notebooks as people have them: real ones from public books and courses (in
``fixtures/notebooks/real``, licences in its LICENSES.md), and generated edge cases written
the way older tools wrote them (nbformat 3, 4.0–4.4 without ids, duplicate ids, two-space
indentation, no final newline, a 20 MB line, formulas beside images, widgets, 1,000 cells).

Tests pick real notebooks by shape with ``real_with`` and ``real_where``, from the properties
``measure`` takes from their bytes (kept in properties.json, explained in LICENSES.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import zlib
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

REAL = Path(__file__).parent / "fixtures" / "notebooks" / "real"


def real_notebooks() -> list[Path]:
    return sorted(REAL.glob("*.ipynb"))


# --- the real notebooks' measured properties (properties.json, defined in LICENSES.md) -------


@cache
def real_properties() -> dict[str, dict[str, Any]]:
    """properties.json: each real fixture's name → its measured properties."""
    files: dict[str, dict[str, Any]] = json.loads(
        (REAL / "properties.json").read_text(encoding="utf-8")
    )["files"]
    return files


def real_with(prop: str) -> list[Path]:
    """The real fixtures whose property ``prop`` is non-zero, true or non-empty, e.g.
    ``real_with("plotly_outputs")`` or ``real_with("v3_worksheets")``."""
    properties = real_properties()
    if not any(prop in p for p in properties.values()):
        raise KeyError(f"{prop!r} is not in properties.json (see LICENSES.md for the fields)")
    return [REAL / name for name, p in sorted(properties.items()) if p.get(prop)]


def real_where(**wanted: Any) -> list[Path]:
    """The real fixtures whose properties equal every value given, e.g.
    ``real_where(nbformat=3)`` or ``real_where(has_cell_ids=False, indent=2)``."""
    return [
        REAL / name
        for name, p in sorted(real_properties().items())
        if all(p.get(key) == value for key, value in wanted.items())
    ]


_V3_MIME = {
    "text": "text/plain",
    "html": "text/html",
    "svg": "image/svg+xml",
    "png": "image/png",
    "jpeg": "image/jpeg",
    "latex": "text/latex",
    "json": "application/json",
    "javascript": "application/javascript",
    "pdf": "application/pdf",
}
_V3_LISTED = ("json", "javascript", "latex")
_BOKEH = ("application/vnd.bokehjs_exec.v0+json", "application/vnd.bokehjs_load.v0+json")
_VEGALITE = re.compile(r"application/vnd\.vegalite\.v\d+\+json")


def _joined(value: Any) -> Any:
    return "".join(value) if isinstance(value, list) else value


def measure(raw: bytes) -> dict[str, Any]:
    """A notebook's properties as LICENSES.md defines them, from its raw bytes (what
    properties.json holds for each real fixture)."""
    text = raw.decode("utf-8")
    nb = json.loads(text)
    v3 = nb["nbformat"] == 3
    cells = [c for ws in nb.get("worksheets", []) for c in ws["cells"]] if v3 else nb["cells"]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    sources = [
        (c["cell_type"], _joined(c.get("input" if "input" in c else "source", ""))) for c in cells
    ]
    repeats = Counter(sources)

    def bundle(output: dict[str, Any]) -> dict[str, Any]:
        if output["output_type"] in ("stream", "error", "pyerr"):
            return {}
        if v3:
            return {_V3_MIME[k]: v for k, v in output.items() if k in _V3_MIME}
        data: dict[str, Any] = output.get("data", {})
        return data

    bundles = [bundle(o) for o in outputs]
    images = [b for b in bundles if any(m.startswith("image/") for m in b)]
    html = [_joined(b["text/html"]) for b in bundles if "text/html" in b]
    tables = [h for h in html if "<table" in h]
    attached = [c for c in cells if c["cell_type"] == "markdown" and c.get("attachments")]
    first = next((line for line in text.splitlines()[1:] if line.strip()), "")
    kernelspec = nb["metadata"].get("kernelspec", {})
    listed = {key: sum(isinstance(o.get(key), list) for o in outputs if v3) for key in _V3_LISTED}
    return {
        "size_bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "nbformat": nb["nbformat"],
        "nbformat_minor": nb["nbformat_minor"],
        "v3_worksheets": "worksheets" in nb,
        "has_cell_ids": any("id" in c for c in cells),
        "indent": len(first) - len(first.lstrip(" ")),
        "single_line_json": "\n" not in text.rstrip("\n"),
        "two_space_cells_line": any(line.startswith('  "cells"') for line in text.splitlines()),
        "final_newline": text.endswith("\n"),
        "crlf": "\r\n" in text,
        "n_cells": len(cells),
        "cell_types": dict(sorted(Counter(c["cell_type"] for c in cells).items())),
        "heading_cells": sum(c["cell_type"] == "heading" for c in cells),
        "n_outputs": len(outputs),
        "output_types": sorted({o["output_type"] for o in outputs}),
        "mime_types": sorted({m for b in bundles for m in b}),
        "image_outputs": len(images),
        "image_with_text_plain": any("text/plain" in b for b in images),
        "image_with_text_latex": any("text/latex" in b for b in images),
        "has_latex": any("text/latex" in b for b in bundles),
        "widget_outputs": sum("application/vnd.jupyter.widget-view+json" in b for b in bundles),
        "widget_state_metadata": "widgets" in nb["metadata"],
        "html_tables": bool(tables),
        "pandas_dataframe_html": any('class="dataframe"' in t for t in tables),
        "error_outputs": sum(o["output_type"] in ("error", "pyerr") for o in outputs),
        "markdown_attachments": len(attached),
        "attachment_mime_types": sorted(
            {m for c in attached for a in c["attachments"].values() for m in a}
        ),
        "kernelspec_name": kernelspec.get("name"),
        "language": kernelspec.get("language")
        or nb["metadata"].get("language_info", {}).get("name"),
        "v3_list_json_outputs": listed["json"],
        "v3_list_javascript_outputs": listed["javascript"],
        "v3_list_latex_outputs": listed["latex"],
        "plotly_outputs": sum("application/vnd.plotly.v1+json" in b for b in bundles),
        "plotly_require_html": sum('require(["plotly"]' in h for h in html),
        "vegalite_outputs": sum(any(_VEGALITE.fullmatch(m) for m in b) for b in bundles),
        "bokeh_outputs": sum(any(m in b for m in _BOKEH) for b in bundles),
        "duplicate_cells": sum(repeats[s] > 1 for s in sources),
        "empty_code_cells": sum(t == "code" and not s.strip() for t, s in sources),
    }


def png(width: int, height: int, shade: int = 128) -> str:
    """A real PNG of the given size (grey), base64, as Jupyter stores it."""
    row = b"\x00" + bytes([shade, 64, 255 - shade]) * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")
    return base64.b64encode(data).decode()


def lines(text: str) -> list[str]:
    return text.splitlines(True)


def code(source: str, count: int | None = None, outputs: list[Any] | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "outputs": outputs or [],
        "source": lines(source),
    }


def markdown(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": lines(source)}


def stream(text: str) -> dict[str, Any]:
    return {"name": "stdout", "output_type": "stream", "text": lines(text)}


def v4(cells: list[dict[str, Any]], minor: int = 4) -> dict[str, Any]:
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def analysis_cells() -> list[dict[str, Any]]:
    return [
        markdown("# An analysis\nSome *text*."),
        code("values = [3, 1, 2]\nprint(sorted(values))", 1, [stream("[1, 2, 3]\n")]),
        code(
            "total = sum(values)\ntotal",
            2,
            [
                {
                    "data": {"text/plain": ["6"]},
                    "execution_count": 2,
                    "metadata": {},
                    "output_type": "execute_result",
                },
            ],
        ),
        markdown("## Next"),
        code("mean = total / len(values)\nprint(mean)", 3, [stream("2.0\n")]),
    ]


def dumps(
    nb: dict[str, Any],
    *,
    indent: int | None = 1,
    separators=(",", ": "),
    newline: bool = True,
    ascii: bool = False,
) -> str:
    text = json.dumps(nb, indent=indent, separators=separators, sort_keys=True, ensure_ascii=ascii)
    return text + ("\n" if newline else "")


def _v3() -> str:
    nb = {
        "metadata": {"name": "old analysis"},
        "nbformat": 3,
        "nbformat_minor": 0,
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["An analysis"]},
                    {"cell_type": "markdown", "metadata": {}, "source": ["Some *text*."]},
                    {
                        "cell_type": "code",
                        "collapsed": False,
                        "input": ["values = [3, 1, 2]\n", "print(sorted(values))"],
                        "language": "python",
                        "metadata": {},
                        "outputs": [
                            {"output_type": "stream", "stream": "stdout", "text": ["[1, 2, 3]\n"]}
                        ],
                        "prompt_number": 1,
                    },
                    {
                        "cell_type": "code",
                        "collapsed": False,
                        "input": ["total = sum(values)\n", "total"],
                        "language": "python",
                        "metadata": {},
                        "outputs": [
                            {
                                "metadata": {},
                                "output_type": "pyout",
                                "prompt_number": 2,
                                "text": ["6"],
                            }
                        ],
                        "prompt_number": 2,
                    },
                ],
                "metadata": {},
            }
        ],
    }
    return json.dumps(nb, indent=1, sort_keys=True) + "\n"


def _duplicate_ids() -> str:
    cells = analysis_cells()
    for n, cell in enumerate(cells):
        cell["id"] = "same" if n in (1, 2) else f"cell-{n}"
    return dumps(v4(cells, minor=5))


def _huge_line() -> str:
    cells = analysis_cells()
    cells.append(code("print('x' * 20_000_000)", 4, [stream("x" * 20_000_000 + "\n")]))
    cells.append(code("print('after')", 5, [stream("after\n")]))
    return dumps(v4(cells))


def _formulas_and_widgets() -> str:
    image = png(640, 480)
    cells = analysis_cells()
    cells.append(
        code(
            "from sympy import *\nx = symbols('x')\nIntegral(sqrt(1/x), x)",
            4,
            [
                {
                    "data": {
                        "image/png": image,
                        "text/latex": ["$\\displaystyle \\int \\sqrt{\\frac{1}{x}}\\, dx$"],
                        "text/plain": ["⌠\n", "⎮ √(1/x) dx\n", "⌡"],
                    },
                    "execution_count": 4,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            ],
        )
    )
    cells.append(
        code(
            "import ipywidgets as w\nw.IntSlider(value=3)",
            5,
            [
                {
                    "data": {
                        "application/vnd.jupyter.widget-view+json": {
                            "model_id": "6f0c",
                            "version_major": 2,
                            "version_minor": 0,
                        },
                        "text/plain": ["IntSlider(value=3)"],
                    },
                    "execution_count": 5,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            ],
        )
    )
    cells.append(
        code(
            "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], "
            "'population': [709037, 10092000]})\ndf.style",
            6,
            [
                {
                    "data": {
                        "text/html": [
                            "<style>td {color: red}</style><table><thead><tr><th></th>"
                            "<th>city</th><th>population</th></tr></thead><tbody>"
                            "<tr><th>0</th><td>Oslo</td><td>709037</td></tr>"
                            "<tr><th>1</th><td>Lima</td><td>10092000</td></tr>"
                            "</tbody></table>"
                        ]
                    },
                    "execution_count": 6,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            ],
        )
    )
    return dumps(v4(cells))


def _thousand_cells() -> str:
    cells = []
    for n in range(1_000):
        if n % 4 == 0:
            cells.append(markdown(f"## Step {n // 4}\nWhat this step does."))
        else:
            cells.append(code(f"x{n} = {n}\nprint(x{n} * 2)", n, [stream(f"{n * 2}\n" * 30)]))
    return dumps(v4(cells))


def _legacy_heading() -> str:
    cells = analysis_cells()
    cells.insert(0, {"cell_type": "heading", "level": 2, "metadata": {}, "source": ["Old title"]})
    return dumps(v4(cells, minor=0))


GENERATED: dict[str, Callable[[], str]] = {
    "v3.ipynb": _v3,
    "v4.0.ipynb": lambda: dumps(v4(analysis_cells(), minor=0)),
    "v4.4-indent-2.ipynb": lambda: dumps(v4(analysis_cells()), indent=2),
    "v4.4-python2-separators.ipynb": lambda: dumps(
        v4(analysis_cells()), indent=1, separators=(", ", ": ")
    ),
    "v4.4-no-final-newline.ipynb": lambda: dumps(v4(analysis_cells()), newline=False),
    "v4.4-one-line.ipynb": lambda: dumps(v4(analysis_cells()), indent=None, newline=False),
    "v4.4-crlf.ipynb": lambda: dumps(v4(analysis_cells())).replace("\n", "\r\n"),
    "v4.4-ascii-escaped.ipynb": lambda: dumps(
        v4([markdown("# Café ünïcode"), *analysis_cells()]), ascii=True
    ),
    "v4.5-duplicate-ids.ipynb": _duplicate_ids,
    "v4.4-heading-cell.ipynb": _legacy_heading,
    "formulas-and-widgets.ipynb": _formulas_and_widgets,
}
LARGE: dict[str, Callable[[], str]] = {
    "huge-line.ipynb": _huge_line,
    "thousand-cells.ipynb": _thousand_cells,
}


def write(folder: Path, name: str) -> Path:
    maker = {**GENERATED, **LARGE}[name]
    path = folder / name
    path.write_bytes(maker().encode("utf-8"))
    return path
