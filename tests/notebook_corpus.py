"""Notebooks as people have them: real ones from public books and courses (in
``fixtures/notebooks/real``, licences in its LICENSES.md), and generated edge cases written
the way older tools wrote them (nbformat 3, 4.0–4.4 without ids, duplicate ids, two-space
indentation, no final newline, a 20 MB line, formulas beside images, widgets, 1,000 cells).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

REAL = Path(__file__).parent / "fixtures" / "notebooks" / "real"


def real_notebooks() -> list[Path]:
    return sorted(REAL.glob("*.ipynb"))


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
