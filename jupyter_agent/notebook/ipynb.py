"""An ``.ipynb`` file edited the way its author wrote it.

Most notebooks people have were written by older tools: nbformat 4.0–4.4 without cell
ids, some still version 3, some with two-space indentation or no final newline.
Rewriting such a file with ``nbformat.writes`` changes every line and, with ids added to a
4.4 file, makes it invalid. So a :class:`Document` keeps the file's text and changes only
the spans of the cells an edit touches: an unchanged cell is written back byte for byte,
an edited one is serialised in the file's own style (indentation, separators, key order,
escaping, line endings), and a one-cell edit is a one-cell diff.

Version 3 files stay version 3: cells are shown converted to version 4 and written back
in version 3 form (``input``/``prompt_number``, heading cells).

Cells of a file without stored ids get ids derived from their content
(:func:`derive_ids`), the same on every read, and never written to the file.

A file that begins with a UTF-8 byte-order mark (as some Windows tools write) keeps it.
A large file is decoded in steps that each hold the GIL briefly (:mod:`._bounded_json`),
so a 50 MB output never keeps the kernel's event loop waiting while it is read.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolError
from ..secrets.shapes import mask_secrets
from . import _bounded_json

BOM = "\ufeff"
_SPACE = re.compile(r"[ \t\n\r]*")
_VALID_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ESCAPED_NON_ASCII = re.compile(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])[0-9a-fA-F]{2}")


class NotebookFormatError(ToolError):
    """The file is not a notebook this module can read; nothing is written to it."""


@dataclass(frozen=True)
class Style:
    """How the file's JSON is laid out, so what we write looks like what is there."""

    indent: str | None
    """One level of indentation, or None when the file is on one line."""
    newline: str = "\n"
    item_separator: str = ","
    key_separator: str = ": "
    ensure_ascii: bool = False
    sort_keys: bool = True
    lines: bool = True
    """Sources and text outputs as lists of lines (nbformat's writer), not strings."""

    def dumps(self, value: Any, depth: int) -> str:
        """``value`` as JSON whose continuation lines sit ``depth`` levels in."""
        text = json.dumps(
            value,
            indent=self.indent,
            separators=(self.item_separator, self.key_separator),
            ensure_ascii=self.ensure_ascii,
            sort_keys=self.sort_keys,
        )
        if self.indent is None:
            return text
        return text.replace("\n", self.newline + self.indent * depth)

    def between(self, depth: int) -> str:
        """What separates two items of a list or object whose items sit ``depth`` in."""
        if self.indent is None:
            return self.item_separator
        return self.item_separator + self.newline + self.indent * depth


@dataclass
class _Span:
    start: int
    end: int
    value: Any
    items: list[_Span] | None = None
    """A list's items with where each lies (for the lists :func:`_members` is asked to
    read item by item)."""


@dataclass
class StoredCell:
    """One cell as the file holds it: its JSON text and its value (version 3 or 4 shape)."""

    text: str
    value: dict[str, Any]


@dataclass
class Document:
    """A notebook file's text, with its cells as separately replaceable spans."""

    text: str
    style: Style
    nbformat: int
    nbformat_minor: int
    cells: list[StoredCell]
    _head: str = field(repr=False)
    """The text up to the cells list's ``[``."""
    _tail: str = field(repr=False)
    """The text from the cells list's ``]``."""
    _open: str = field(repr=False)
    _close: str = field(repr=False)
    _between: str = field(repr=False)
    bom: str = ""
    """The byte-order mark the file begins with, if any (:data:`BOM`), written back;
    ``text`` is what follows it."""

    # --- reading --------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, name: str = "the notebook") -> Document:
        """Read a notebook file's text; :class:`NotebookFormatError` says why one cannot be."""
        bom = BOM if text.startswith(BOM) else ""
        if bom:
            text = text[1:]
        start = _skip(text, 0)
        if not text.startswith("{", start):
            raise NotebookFormatError(f"{name} is not a notebook: it does not hold a JSON object.")
        try:
            top = _members(text, start, lists=_CELL_LISTS)
        except (ValueError, RecursionError) as e:
            reason = "nested too deeply" if isinstance(e, RecursionError) else str(e)
            raise NotebookFormatError(
                f"{name} is not valid JSON ({reason}); it was not changed."
            ) from None
        values = {key: span.value for key, span in top.items()}
        major, minor = values.get("nbformat"), values.get("nbformat_minor", 0)
        if not isinstance(major, int) or not isinstance(minor, int):
            raise NotebookFormatError(f"{name} has no nbformat version; it is not a notebook.")
        if major == 4:
            cells_span = top.get("cells")
            depth = 1
        elif major == 3:
            cells_span, depth = _v3_cells(text, top, name)
        else:
            raise NotebookFormatError(
                f"{name} is in nbformat {major}, which cannot be edited here "
                "(versions 3 and 4 can). Open it in Jupyter and save it to convert it."
            )
        if cells_span is None or cells_span.items is None:
            raise NotebookFormatError(f"{name} has no list of cells; it is not a notebook.")
        items = cells_span.items
        for n, item in enumerate(items, 1):
            problem = _unreadable(item.value)
            if problem:
                raise NotebookFormatError(
                    f"Cell {n} of {name} is not a valid notebook cell ({problem}); the notebook "
                    "is not read or changed here. Open it in Jupyter to repair it."
                )
        cells = [StoredCell(text[i.start : i.end], i.value) for i in items]
        style = _style(text, start, top, cells)
        opening, closing = cells_span.start, cells_span.end - 1
        if items:
            first, last = items[0].start, items[-1].end
            between = text[items[0].end : items[1].start] if len(items) > 1 else None
        else:
            first = last = opening + 1
            between = None
        return cls(
            text=text,
            style=style,
            nbformat=major,
            nbformat_minor=minor,
            cells=cells,
            _head=text[: opening + 1],
            _tail=text[closing:],
            _open=text[opening + 1 : first],
            _close=text[last:closing],
            _between=between if between is not None else style.between(depth + 1),
            bom=bom,
        )

    @property
    def stores_ids(self) -> bool:
        """Whether this version of the format has cell ids (4.5 and later)."""
        return (self.nbformat, self.nbformat_minor) >= (4, 5)

    def stored_id(self, index: int) -> str | None:
        value = self.cells[index].value.get("id") if self.stores_ids else None
        return value if isinstance(value, str) and _VALID_ID.fullmatch(value) else None

    def cell(self, index: int) -> dict[str, Any]:
        """Cell ``index`` in version 4 shape (sources and texts joined), for reading."""
        value = _as_v4(self.cells[index].value, self.nbformat)
        value.pop("id", None)  # the reader decides the id (stored or derived)
        return value

    # --- writing --------------------------------------------------------------------

    def render(self) -> str:
        if not self.cells:
            return self.bom + self._head + self._tail
        opening, closing = self._open, self._close
        if not opening and not closing and self.style.indent is not None:
            opening = self._between[len(self.style.item_separator) :]
            closing = self.style.newline + self.style.indent * self._depth()
        parts = [self.bom, self._head, opening]
        for n, cell in enumerate(self.cells):
            if n:
                parts.append(self._between)
            parts.append(cell.text)
        parts += [closing, self._tail]
        return "".join(parts)  # one copy of a file that may be tens of megabytes

    def replace(self, index: int, cell: dict[str, Any]) -> None:
        """Put ``cell`` (version 4 shape) at ``index``; only the members that differ change."""
        old = self.cells[index]
        value = self._stored_form(cell, old.value)
        self.cells[index] = StoredCell(self._respliced(old, value), value)

    def insert(self, index: int, cell: dict[str, Any]) -> None:
        value = self._stored_form(cell, None)
        self.cells.insert(index, StoredCell(self.style.dumps(value, self._depth() + 1), value))

    def delete(self, index: int) -> StoredCell:
        return self.cells.pop(index)

    def move(self, index: int, to: int) -> None:
        self.cells.insert(to, self.cells.pop(index))

    def _depth(self) -> int:
        """How deep the cells list sits: 1 in version 4, 3 in version 3 (inside a worksheet)."""
        return 1 if self.nbformat == 4 else 3

    def _stored_form(self, cell: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """``cell`` as this file stores cells: its version, its ids, its key order, lines."""
        cell = copy.deepcopy(cell)
        if self.nbformat == 3:
            value = _downgrade_v4(cell, old)
            if (
                old is not None
                and "outputs" in old
                and cell.get("outputs") == _as_v4(old, 3).get("outputs")
            ):
                # Outputs the edit left alone stay as stored: version 3 has more than one
                # way to write them (a JSON output as a string or as lines).
                value["outputs"] = copy.deepcopy(old.get("outputs", []))
        else:
            value = cell
            if self.stores_ids and old is not None and "id" in old:
                value["id"] = old["id"]
            elif not self.stores_ids:
                value.pop("id", None)
        lines = self.style.lines
        if old is not None:
            source = old.get("input", old.get("source"))
            lines = lines if not isinstance(source, str) or not source else False
        if lines:
            value = _split(value, self.nbformat)
        return _ordered(value, old, self.style.sort_keys)

    def _respliced(self, old: StoredCell, value: dict[str, Any]) -> str:
        """The text of ``old`` with only its changed members rewritten."""
        if list(old.value) != list(value):
            return self.style.dumps(value, self._depth() + 1)
        start = _skip(old.text, 0)
        spans = _members(old.text, start)
        text, shift = old.text, 0
        for key, span in spans.items():
            if value[key] == span.value and type(value[key]) is type(span.value):
                continue
            new = self.style.dumps(value[key], self._depth() + 2)
            text = text[: span.start + shift] + new + text[span.end + shift :]
            shift += len(new) - (span.end - span.start)
        return text


# --- ids for cells the file does not name ----------------------------------------------


def fingerprint(cell: dict[str, Any]) -> str:
    """What a cell holds, for recognising it across reads: its type and source, with what
    looks like a credential masked (an id derived from it is shown to the model: a hash
    of a short password would let it be guessed offline)."""
    source = cell.get("source", cell.get("input", ""))
    if isinstance(source, list):
        source = "".join(str(line) for line in source)
    masked = mask_secrets(str(source))
    digest = hashlib.sha256(f"{cell.get('cell_type')}\0{masked}".encode(errors="replace"))
    return digest.hexdigest()


def derive_ids(fingerprints: Sequence[str], taken: set[str]) -> Iterator[str]:
    """Ids from content, the same on every read of the same file and in every kernel.

    A cell whose content no other cell has gets an id from its content alone, so it keeps
    it when cells are added, moved or edited elsewhere. Cells that share their content
    (empty cells, a repeated ``df.head()``) get ids from their content and position: were
    they numbered by occurrence, filling the second of five empty cells would hand its id
    to the third. ``taken`` (ids already in use, or retired) grows.
    """
    counts = Counter(fingerprints)
    for index, fp in enumerate(fingerprints):
        base = fp if counts[fp] == 1 else f"{fp}@{index}"
        n = 0
        while (candidate := hashlib.sha256(f"{base}:{n}".encode()).hexdigest()[:8]) in taken:
            n += 1
        taken.add(candidate)
        yield candidate


# --- the JSON layout ------------------------------------------------------------------


_CELL_LISTS = frozenset({"cells", "worksheets"})
"""The lists whose items a notebook's cells are (or hold): read item by item, once."""


def _members(text: str, start: int, lists: frozenset[str] = frozenset()) -> dict[str, _Span]:
    """The members of the JSON object at ``text[start]``, with where each value lies; a
    member named in ``lists`` that is a list also has its items' places."""
    if not text.startswith("{", start):
        raise ValueError(f"expected an object at character {start}")
    out: dict[str, _Span] = {}
    i = _skip(text, start + 1)
    if text.startswith("}", i):
        return out
    while True:
        key, i = _bounded_json.raw_decode(text, i)
        if not isinstance(key, str):
            raise ValueError(f"expected a key at character {i}")
        i = _skip(text, i)
        if not text.startswith(":", i):
            raise ValueError(f"expected ':' at character {i}")
        i = _skip(text, i + 1)
        if key in lists and text.startswith("[", i):
            items, end = _elements(text, i)
            out[key] = _Span(i, end, [item.value for item in items], items)
        else:
            value, end = _bounded_json.raw_decode(text, i)
            out[key] = _Span(i, end, value)
        i = _skip(text, end)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
        elif text.startswith("}", i):
            return out
        else:
            raise ValueError(f"expected ',' or '}}' at character {i}")


def _elements(text: str, start: int) -> tuple[list[_Span], int]:
    """The items of the JSON list at ``text[start]``, with where each lies, and the index
    just past the list."""
    out: list[_Span] = []
    i = _skip(text, start + 1)
    if text.startswith("]", i):
        return out, i + 1
    while True:
        value, end = _bounded_json.raw_decode(text, i)
        out.append(_Span(i, end, value))
        i = _skip(text, end)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
        elif text.startswith("]", i):
            return out, i + 1
        else:
            raise ValueError(f"expected ',' or ']' at character {i}")


def _skip(text: str, i: int) -> int:
    """Past the JSON whitespace at ``i``."""
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]  # `[...]*` always matches


def _v3_cells(text: str, top: dict[str, _Span], name: str) -> tuple[_Span | None, int]:
    sheets = top.get("worksheets")
    if sheets is None or not isinstance(sheets.value, list) or not sheets.value:
        return None, 3
    if len(sheets.value) > 1:
        raise NotebookFormatError(
            f"{name} is an nbformat 3 notebook with {len(sheets.value)} worksheets; only "
            "single-worksheet notebooks can be edited here. It was not changed."
        )
    assert sheets.items is not None  # read item by item (_CELL_LISTS)
    sheet = sheets.items[0]
    if not isinstance(sheet.value, dict):
        return None, 3
    return _members(text, sheet.start, lists=_CELL_LISTS).get("cells"), 3


def _style(text: str, start: int, top: dict[str, _Span], cells: list[StoredCell]) -> Style:
    """The layout of the file, read from its first members (as its writer laid them out)."""
    spans = list(top.values())
    first_key = _skip(text, start + 1)
    lead = text[start + 1 : first_key]
    newline = "\r\n" if "\r\n" in lead else "\n"
    indent = lead.rsplit("\n", 1)[1] if "\n" in lead else None
    key_end = _bounded_json.raw_decode(text, first_key)[1]
    key_separator = text[key_end : spans[0].start] if spans else ": "
    item_separator = ","
    if len(spans) > 1:
        gap = text[spans[0].end : _next_key(text, spans[0].end)]
        item_separator = gap.split("\n", 1)[0].rstrip("\r") if "\n" in gap else gap
    keys = list(top)
    first_cell = list(cells[0].value) if cells else []
    sources = [c.value.get("source", c.value.get("input")) for c in cells[:20]]
    return Style(
        indent=indent,
        newline=newline,
        item_separator=item_separator or ",",
        key_separator=key_separator or ": ",
        ensure_ascii=text.isascii() and _escapes_non_ascii(text),
        sort_keys=keys == sorted(keys) and first_cell == sorted(first_cell),
        lines=not any(isinstance(s, str) and s for s in sources),
    )


def _escapes_non_ascii(text: str) -> bool:
    return _bounded_json.search(_ESCAPED_NON_ASCII, text, longest=6) is not None


def _next_key(text: str, i: int) -> int:
    i = _skip(text, i)
    if text.startswith(",", i):
        i = _skip(text, i + 1)
    return i


# --- cell shapes ------------------------------------------------------------------------


def _unreadable(cell: Any) -> str | None:
    """What makes ``cell`` unreadable as a notebook cell, if anything."""
    if not isinstance(cell, dict):
        return "it is not a JSON object"
    if not isinstance(cell.get("cell_type"), str):
        return "it has no cell_type"
    source = cell.get("source", cell.get("input", ""))
    if not isinstance(source, str) and not (
        isinstance(source, list) and all(isinstance(line, str) for line in source)
    ):
        return "its source is not text"
    outputs = cell.get("outputs", [])
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        return "its outputs are not a list of objects"
    count = cell.get("execution_count", cell.get("prompt_number"))
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        return "its execution count is not a number"
    if not isinstance(cell.get("metadata", {}), dict):
        return "its metadata is not an object"
    return None


def _as_v4(stored: dict[str, Any], version: int) -> dict[str, Any]:
    """A copy of a stored cell in version 4 shape, sources and texts joined."""
    value = _joined(copy.deepcopy(stored))
    if version == 3:
        value = _joined(_upgrade_v3(value))
    return value


def _joined(cell: dict[str, Any]) -> dict[str, Any]:
    """Sources and multi-line texts as strings (nbformat's in-memory shape)."""
    for key in ("source", "input"):
        if isinstance(cell.get(key), list):
            cell[key] = "".join(cell[key])
    for output in cell.get("outputs") or []:
        if not isinstance(output, dict):
            continue
        if isinstance(output.get("text"), list):
            output["text"] = "".join(output["text"])
        data = output.get("data")
        if isinstance(data, dict):
            for mime, value in data.items():
                lines = isinstance(value, list) and all(isinstance(v, str) for v in value)
                if lines and not _is_json(mime):
                    data[mime] = "".join(value)
    return cell


_SPLIT_MIMES = {"application/javascript", "image/svg+xml"}
_SPLIT_V3_KEYS = {"text", "html", "svg", "latex", "javascript", "json", "markdown"}
"""The version 3 output keys nbformat writes as lists of lines (its ``split_lines``)."""


def _split(cell: dict[str, Any], version: int) -> dict[str, Any]:
    """Sources and multi-line texts as lists of lines (nbformat's file shape)."""
    for key in ("source", "input"):
        if isinstance(cell.get(key), str):
            cell[key] = cell[key].splitlines(True)
    for output in cell.get("outputs") or []:
        if version == 3:
            for key in _SPLIT_V3_KEYS & set(output):
                if isinstance(output[key], str):
                    output[key] = output[key].splitlines(True)
            continue
        if isinstance(output.get("text"), str):
            output["text"] = output["text"].splitlines(True)
        data = output.get("data")
        if isinstance(data, dict):
            for mime, value in data.items():
                if isinstance(value, str) and (mime.startswith("text/") or mime in _SPLIT_MIMES):
                    data[mime] = value.splitlines(True)
    return cell


def _is_json(mime: str) -> bool:
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def _ordered(value: dict[str, Any], old: dict[str, Any] | None, sort: bool) -> dict[str, Any]:
    if sort:
        return dict(sorted(value.items()))
    if old is None:
        return value
    order = {key: n for n, key in enumerate(old)}
    return dict(sorted(value.items(), key=lambda item: order.get(item[0], len(order))))


def _upgrade_v3(cell: dict[str, Any]) -> dict[str, Any]:
    import nbformat
    from nbformat.v4.convert import upgrade_cell

    parsed: dict[int, Any] = {}
    for n, output in enumerate(cell.get("outputs") or []):
        for key in _SPLIT_V3_KEYS & set(output):
            if isinstance(output[key], list) and all(isinstance(v, str) for v in output[key]):
                output[key] = "".join(output[key])  # nbformat's reader joins them first too
        if isinstance(output.get("json"), str):
            try:  # parsed here, once: nbformat's upgrade parses it into a copy it drops
                parsed[n] = json.loads(output["json"])
            except ValueError:  # shown as the text it is, not lost
                output.setdefault("text", output["json"])
            del output["json"]
    upgraded: dict[str, Any] = _plain(upgrade_cell(nbformat.from_dict(cell)))
    outputs = upgraded.get("outputs") or []
    for n, value in parsed.items():
        data = outputs[n].get("data")
        if isinstance(data, dict):
            data["application/json"] = value
    return upgraded


def _downgrade_v4(cell: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """A version 4 cell in version 3 form, keeping what the old cell had that v4 has not."""
    import nbformat
    from nbformat.v4.convert import downgrade_cell

    node = nbformat.from_dict(_joined(cell))
    node.setdefault("metadata", {})
    node.setdefault("source", "")
    if node.cell_type == "code":
        node.setdefault("outputs", [])
        node.setdefault("execution_count", None)
    was_markdown = old is not None and old.get("cell_type") == "markdown"
    value: dict[str, Any] = _plain(downgrade_cell(node))
    if was_markdown and value.get("cell_type") == "heading":
        # a markdown cell stays markdown: only new cells and headings become heading cells
        value = {"cell_type": "markdown", "metadata": value["metadata"], "source": cell["source"]}
    if old is not None and old.get("cell_type") == value.get("cell_type"):
        for key, kept in old.items():
            value.setdefault(key, kept)
        if "language" in old:
            value["language"] = old["language"]
    return value


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node
