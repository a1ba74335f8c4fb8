"""Jupyter MCP Server 2.2.4's formatting, re-implemented for the context-size benchmark
(``peers.py``), for when ``jupyter-mcp-server`` is not installed: how its ``Notebook``
model shows cells and their outputs, and how ``results.answer`` turns a tool's value into
content blocks and structured content. Each piece names the file and function it
follows; both gave identical output on every real fixture notebook (see ``peers.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

# jupyter_mcp_server/utils.py RICH_TEXT_MIMETYPES, 2.2.4
_RICH_TEXT_MIMETYPES = ("text/markdown", "text/latex", "application/json", "text/plain")

# jupyter_mcp_server/utils.py _ANSI_ESCAPE, 2.2.4
_ANSI_ESCAPE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|[P^_X][^\x1b]*\x1b\\"
    r"|[ -/]*[0-~]"
    r")"
)


def _strip_ansi_codes(text: str) -> str:
    # jupyter_mcp_server/utils.py strip_ansi_codes, 2.2.4
    return _ANSI_ESCAPE.sub("", text)


def _coerce_bundle_text(value: Any) -> str:
    # jupyter_mcp_server/utils.py _coerce_bundle_text, 2.2.4
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return str(value)


def _get_mimebundle_text(bundle: dict[str, Any] | None, default: str | None = None) -> str | None:
    # jupyter_mcp_server/utils.py get_mimebundle_text, 2.2.4
    if not bundle:
        return default
    for mimetype in _RICH_TEXT_MIMETYPES:
        if mimetype not in bundle:
            continue
        value = bundle[mimetype]
        if mimetype == "application/json" and not isinstance(value, str):
            try:
                return json.dumps(value, indent=2, ensure_ascii=False)
            except (TypeError, ValueError):
                return _coerce_bundle_text(value)
        return _coerce_bundle_text(value)
    return default


def _image_block(data: Any, mime_type: str) -> dict[str, Any]:
    """An MCP ``ImageContent`` as ``model_dump(by_alias=True, exclude_none=True)`` gives it."""
    return {"type": "image", "data": data, "mimeType": mime_type}


def is_image(block: Any) -> bool:
    if isinstance(block, dict):
        return block.get("type") == "image"
    return getattr(block, "type", None) == "image"


def _extract_output(output: Any) -> str | dict[str, Any]:
    # jupyter_mcp_server/utils.py extract_output, 2.2.4 (the dict branches; the CRDT
    # branches do not apply to a notebook read from a file). ALLOW_IMG_OUTPUT is taken as
    # its default, True.
    if isinstance(output, list):
        return "\n".join(_extract_output(item) for item in output)  # type: ignore[misc]
    if not isinstance(output, dict):
        return _strip_ansi_codes(str(output))
    output_type = output.get("output_type")
    if output_type == "stream":
        text = output.get("text", "")
        if isinstance(text, list):
            text = "".join(text)
        return _strip_ansi_codes(str(text))
    if output_type in ["display_data", "execute_result"]:
        data = output.get("data", {})
        if "image/png" in data:
            return _image_block(data["image/png"], "image/png")
        rich_text = _get_mimebundle_text(dict(data))
        if rich_text is not None:
            return _strip_ansi_codes(rich_text)
        if "text/html" in data:
            return "[HTML Output]"
        return f"[{output_type} Data: keys={list(data.keys())}]"
    if output_type == "error":
        traceback = output.get("traceback", [])
        if isinstance(traceback, list):
            rendered = "\n".join(_strip_ansi_codes(str(line)) for line in traceback)
        else:
            rendered = _strip_ansi_codes(str(traceback))
        if rendered.strip():
            return rendered
        parts = []
        for field in ("ename", "evalue"):
            value = _strip_ansi_codes(str(output.get(field) or "")).strip()
            if value:
                parts.append(value)
        return ": ".join(parts) or "[Error output with no details]"
    return f"[Unknown output type: {output_type}]"


def _safe_extract_outputs(outputs: Any) -> list[str | dict[str, Any]]:
    # jupyter_mcp_server/utils.py safe_extract_outputs, 2.2.4
    if not outputs:
        return []
    result: list[str | dict[str, Any]] = []
    if hasattr(outputs, "__iter__") and not isinstance(outputs, (str, dict)):
        try:
            for output in outputs:
                extracted = _extract_output(output)
                if extracted:
                    result.append(extracted)
        except Exception as e:
            result.append(f"[Error extracting output: {e!s}]")
    else:
        extracted = _extract_output(outputs)
        if extracted:
            result.append(extracted)
    return result


def _normalize_cell_source(source: Any) -> list[str]:
    # jupyter_mcp_server/utils.py normalize_cell_source, 2.2.4
    if not source:
        return []
    if isinstance(source, list):
        return [str(line) for line in source]
    if not isinstance(source, str):
        source = str(source)
    lines: list[str] = source.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line + "\n" for line in lines[:-1]] + lines[-1:]


def _format_tsv(headers: list[str], rows: list[list[Any]]) -> str:
    # jupyter_mcp_server/utils.py format_TSV, 2.2.4
    if not headers or not rows:
        return "No data to display"
    result = ["\t".join(headers)]
    for row in rows:
        result.append("\t".join(str(cell) for cell in row))
    return "\n".join(result)


class Cell:
    # jupyter_mcp_server/models.py Cell, 2.2.4 (get_source, get_outputs, get_overview)
    def __init__(self, cell: dict[str, Any]) -> None:
        self.cell_type = cell.get("cell_type", "raw")
        self.source = cell.get("source", [])
        self.execution_count = cell.get("execution_count")
        self.outputs = cell.get("outputs", [])

    def get_source(self) -> str:
        return "\n".join(line.rstrip("\n") for line in _normalize_cell_source(self.source))

    def get_outputs(self) -> list[str | dict[str, Any]]:
        return _safe_extract_outputs(self.outputs)

    def get_overview(self) -> str:
        source = _normalize_cell_source(self.source)
        if len(source) == 0:
            return ""
        first_line = source[0].rstrip("\n")
        if len(source) > 1:
            first_line += f"...({len(source) - 1} lines hidden)"
        return first_line


class Notebook:
    # jupyter_mcp_server/models.py Notebook, 2.2.4 (__len__, __getitem__, format_output)
    def __init__(self, content: dict[str, Any]) -> None:
        self.cells = [Cell(c) for c in content.get("cells", [])]

    def __len__(self) -> int:
        return len(self.cells)

    def __getitem__(self, key: int) -> Cell:
        return self.cells[key]

    def format_output(
        self, response_format: str = "brief", start_index: int = 0, limit: int = 0
    ) -> str:
        total_cells = len(self.cells)
        if total_cells == 0:
            return "Notebook is empty"
        end_index = total_cells if limit == 0 else min(start_index + limit, total_cells)
        cells_to_show = self.cells[start_index:end_index]
        if len(cells_to_show) == 0:
            return "No cells in the specified range"
        if response_format == "brief":
            headers = ["Index", "Type", "Count", "First Line"]
            rows = []
            for idx, cell in enumerate(cells_to_show):
                count = cell.execution_count if cell.execution_count else "N/A"
                rows.append([start_index + idx, cell.cell_type, count, cell.get_overview()])
            return _format_tsv(headers, rows)
        info_list = []
        for idx, cell in enumerate(cells_to_show):
            count = cell.execution_count if cell.execution_count else "N/A"
            at = start_index + idx
            info_list.append(
                f"=====Cell {at} | type: {cell.cell_type} | execution count: {count}=====\n"
            )
            info_list.append(cell.get_source())
            info_list.append("\n\n")
        return "\n".join(info_list)


def _as_text(value: Any) -> str:
    # jupyter_mcp_server/results.py as_text, 2.2.4
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, indent=2, default=str)
    except (TypeError, ValueError):
        return str(value)


def content_of(value: Any) -> list[Any]:
    # jupyter_mcp_server/results.py _content_of, 2.2.4: a str is one text block, an image
    # stays an image block, a list is flattened.
    if isinstance(value, str):
        return [value]
    if is_image(value):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        blocks: list[Any] = []
        for item in value:
            blocks.extend(content_of(item))
        return blocks
    return [_as_text(value)]


def outputs_shape(value: Any) -> dict[str, Any]:
    # jupyter_mcp_server/server.py _outputs, 2.2.4: the structured shape of read_cell
    blocks = value if isinstance(value, list) else [value]
    outputs: list[Any] = []
    images = 0
    for block in blocks:
        if is_image(block):
            images += 1
            outputs.append(
                block
                if isinstance(block, dict)
                else block.model_dump(by_alias=True, exclude_none=True)
            )
            continue
        outputs.append(block if isinstance(block, str) else _as_text(block))
    return {"result": outputs, "outputs": outputs, "count": len(outputs), "images": images}


def without_image_data(value: Any) -> Any:
    # jupyter_mcp_server/results.py _without_image_data, 2.2.4
    if isinstance(value, dict):
        scrubbed = {key: without_image_data(item) for key, item in value.items()}
        if value.get("type") == "image" and isinstance(value.get("data"), str):
            digest = hashlib.sha256(value["data"].encode("utf-8")).hexdigest()[:16]
            scrubbed["data"] = f"[omitted: see image content block; sha256:{digest}]"
        return scrubbed
    if isinstance(value, (list, tuple)):
        return [without_image_data(item) for item in value]
    return value


def default_shape(value: Any) -> dict[str, Any]:
    # jupyter_mcp_server/results.py _default_shape, 2.2.4, for the values these two
    # tools return (a str, or a list of str and images)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)) and all(
        isinstance(i, (dict, str, int, float, bool)) or i is None for i in value
    ):
        return {"result": [dict(i) if isinstance(i, dict) else i for i in value]}
    return {"result": _as_text(value)}
